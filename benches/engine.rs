//! Micro-benchmarks of the engine's stages on the shipped example (criterion):
//! pattern compilation, the literal prefilter, parse + query of one file, the statement-region
//! scan and parse, and applying edits.

use criterion::{Criterion, criterion_group, criterion_main};
use regraft::compile::RuleSet;
use regraft::engine::{Engine, Target};
use regraft::versions::VersionEnv;

const RULES: &str = include_str!("../rules/whisper-decoder-layer-positional.yaml");
const SOURCE: &str = include_str!("../examples/whisper/modeling_whisper.py");

fn rules() -> RuleSet {
    RuleSet::compile(regraft::rules::load_yaml("rule.yaml", RULES).unwrap()).unwrap()
}

/// A larger file: the example repeated, each copy's classes renamed apart.
fn large_source() -> String {
    (0..40)
        .map(|i| SOURCE.replace("class Whisper", &format!("class W{i}")))
        .collect::<Vec<_>>()
        .join("\n")
        + SOURCE
}

fn benches(c: &mut Criterion) {
    c.bench_function("compile the Whisper rule", |b| b.iter(rules));
    let set = rules();
    let large = large_source();
    c.bench_function("prefilter one large file", |b| {
        b.iter(|| set.prefilter.possible(&set.prefilter.scan(&large)))
    });
    c.bench_function("parse one large file", |b| {
        b.iter(|| regraft::python::parse(&large))
    });
    let anchor = [regraft::python::regions::Anchor::at(
        large
            .match_indices("decoder_layer")
            .map(|(i, _)| i)
            .collect(),
    )];
    c.bench_function(
        "scan one large file for the statements around an anchor",
        |b| b.iter(|| regraft::python::regions::statement_regions(&large, &anchor, &[]).unwrap()),
    );
    let anchored = regraft::python::regions::statement_regions(&large, &anchor, &[]).unwrap();
    c.bench_function("parse only those statements", |b| {
        b.iter(|| regraft::python::parse_regions(&large, &anchored).unwrap())
    });
    let assignments = regraft::python::regions::statement_regions(
        &large,
        &[],
        // The shape of `$X = $Y($$$A)`.
        &[regraft::python::regions::AssignmentShape {
            punctuation: regraft::python::regions::punctuation("=()"),
            closes_with: Some(b')'),
        }],
    )
    .unwrap();
    c.bench_function("parse only the assignment statements", |b| {
        b.iter(|| regraft::python::parse_regions(&large, &assignments).unwrap())
    });
    let mut versions = VersionEnv::default();
    versions.insert_pair("transformers=4.57.6").unwrap();
    let engine = Engine::new(&set, &versions, None);
    let path = "models/whisper/modeling_whisper.py";
    c.bench_function("parse, query and patch one large file", |b| {
        b.iter(|| {
            engine
                .patch(Target {
                    path,
                    source: &large,
                })
                .unwrap()
        })
    });
    let mut edits: Vec<regraft::edit::PlannedEdit> = (0..large.len())
        .step_by(97)
        .map(|i| regraft::edit::PlannedEdit {
            rule: 0,
            edit: regraft::edit::Edit {
                range: i..i + 1,
                text: "x".into(),
            },
        })
        .collect();
    regraft::edit::order(&mut edits).unwrap();
    c.bench_function("apply 1000s of edits in one pass", |b| {
        b.iter(|| regraft::edit::apply(&large, &edits))
    });
}

criterion_group!(engine_benches, benches);
criterion_main!(engine_benches);
