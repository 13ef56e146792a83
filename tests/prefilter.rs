//! The literal prefilter never changes an outcome: every shipped rule and every benchmark-style
//! rule gives the same reports with and without it, over fixture files.

mod common;

use std::fs;
use std::path::Path;

use repatch::compile::RuleSet;
use repatch::engine::{Engine, Target};

fn fixture_files() -> Vec<(String, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut out = Vec::new();
    for dir in [
        "examples/whisper",
        "tests/fixtures/explain",
        "tests/fixtures/prefilter",
    ] {
        for entry in fs::read_dir(root.join(dir)).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "py") {
                out.push((
                    path.display().to_string(),
                    fs::read_to_string(&path).unwrap(),
                ));
            }
        }
    }
    for entry in fs::read_dir(root.join("rules")).unwrap() {
        let dir = entry.unwrap().path();
        if dir.is_dir() {
            for case in fs::read_dir(&dir).unwrap() {
                let path = case.unwrap().path();
                let text = fs::read_to_string(&path).unwrap();
                // Test cases name the path their rule's globs select.
                let name = text
                    .lines()
                    .find_map(|l| l.strip_prefix("# repatch: path "))
                    .map_or_else(|| path.display().to_string(), str::to_string);
                out.push((name, text));
            }
        }
    }
    out
}

fn compare(set: &RuleSet, versions: &[&str]) {
    let env = common::versions(versions);
    for (path, source) in fixture_files() {
        let with = Engine::new(set, &env, None).survey(Target {
            path: &path,
            source: &source,
        });
        let without = Engine::new(set, &env, None)
            .without_prefilter()
            .survey(Target {
                path: &path,
                source: &source,
            });
        match (with, without) {
            (Ok(a), Ok(b)) => {
                assert_eq!(a.output, b.output, "{path}");
                assert_eq!(a.rules, b.rules, "{path}");
                let kinds = |s: &repatch::engine::Survey| {
                    s.errors
                        .iter()
                        .map(|(r, e)| (r.clone(), e.kind()))
                        .collect::<Vec<_>>()
                };
                assert_eq!(kinds(&a), kinds(&b), "{path}");
            }
            (Err(a), Err(b)) => assert_eq!(a.kind(), b.kind(), "{path}"),
            (a, b) => panic!(
                "{path}: with prefilter {:?}, without {:?}",
                a.is_ok(),
                b.is_ok()
            ),
        }
    }
}

#[test]
fn shipped_rules_give_the_same_reports_with_and_without_the_prefilter() {
    let rules =
        repatch::rules::load_path(&Path::new(env!("CARGO_MANIFEST_DIR")).join("rules")).unwrap();
    let set = RuleSet::compile(rules).unwrap();
    for version in ["4.46.3", "4.51.3", "4.57.6", "5.25.0"] {
        compare(&set, &[&format!("transformers={version}")]);
    }
}

#[test]
fn benchmark_rules_give_the_same_reports_with_and_without_the_prefilter() {
    let patterns = [
        "$OUT = decoder_layer($$$ARGS)",
        "$X = $Y($$$A)",
        "$OUT = layer($X, use_cache=$V)",
        "self.norm($X)",
        "x = layer(x, True)",
        "@torch.compile($$$A)",
        "def forward($$$P): $$$B",
        "\"Builds it.\"",
    ];
    for (i, p) in patterns.iter().enumerate() {
        let yaml =
            format!("id: b{i}\nmatch: '{p}'\naction: {{replace: '{p}'}}\nexpect: {{min: 0}}\n");
        compare(&common::rules(&yaml), &[]);
    }
}

#[test]
fn every_action_gives_the_same_reports_with_and_without_the_prefilter() {
    let rules = repatch::rules::load_yaml(
        "every-action.yaml",
        include_str!("fixtures/every-action.yaml"),
    )
    .unwrap();
    for rule in rules {
        compare(&RuleSet::compile(vec![rule]).unwrap(), &[]);
    }
}
