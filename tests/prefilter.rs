//! The literal prefilter never changes an outcome: every shipped rule and every benchmark-style
//! rule gives the same reports with and without it, over fixture files.

use std::fs;
use std::path::Path;

use regraft::compile::RuleSet;
use regraft::engine::{Engine, Target};

fn fixture_files() -> Vec<(String, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut out = Vec::new();
    for dir in [
        "examples/whisper",
        "tests/fixtures/explain",
        "tests/fixtures/lookups",
        "tests/fixtures/prefilter",
        "tests/fixtures/regions",
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
                    .find_map(|l| l.strip_prefix("# regraft: path "))
                    .map_or_else(|| path.display().to_string(), str::to_string);
                out.push((name, text));
            }
        }
    }
    out
}

/// The survey of `source` as the module `m.py`.
fn survey_of(engine: Engine<'_>, source: &str) -> regraft::engine::Survey {
    engine
        .survey(Target {
            path: "m.py",
            source,
        })
        .unwrap()
}

fn compare(set: &RuleSet, versions: &[&str]) {
    let env = crate::util::versions(versions);
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
                let kinds = |s: &regraft::engine::Survey| {
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
        regraft::rules::load_path(&Path::new(env!("CARGO_MANIFEST_DIR")).join("rules")).unwrap();
    let set = RuleSet::compile(rules).unwrap();
    for version in ["4.46.3", "4.51.3", "4.57.6", "5.25.0"] {
        compare(&set, &[&format!("transformers={version}")]);
    }
}

/// The benchmark patterns; the one without an anchor literal (`$X = $Y($$$A)`) last.
const BENCH_PATTERNS: [&str; 9] = [
    "$OUT = decoder_layer($$$ARGS)",
    "decoder_layer($$$ARGS)",
    "$OUT = layer($X, use_cache=$V)",
    "self.norm($X)",
    "x = layer(x, True)",
    "@torch.compile($$$A)",
    "def forward($$$P): $$$B",
    "\"Builds it.\"",
    "$X = $Y($$$A)",
];

#[test]
fn benchmark_rules_give_the_same_reports_with_and_without_the_prefilter() {
    for (i, p) in BENCH_PATTERNS.iter().enumerate() {
        for action in [
            format!("{{replace: '{p}'}}"),
            "{remove_kwargs: [output_attentions]}".to_string(),
            "{set_kwargs: {use_cache: 'False'}}".to_string(),
        ] {
            let yaml = format!("id: b{i}\nmatch: '{p}'\naction: {action}\nexpect: {{min: 0}}\n");
            let rules = regraft::rules::load_yaml("bench.yaml", &yaml).unwrap();
            // Keyword actions need a call in the pattern; `replace` takes any.
            if let Ok(set) = RuleSet::compile(rules) {
                compare(&set, &[]);
            } else {
                assert!(!action.starts_with("{replace"), "{yaml}");
            }
        }
    }
}

#[test]
fn a_rule_pack_finds_the_same_matches_from_anchor_ancestors_as_from_the_query() {
    // Above a few rules per step, candidates come from each rule's anchor occurrences and
    // their ancestors instead of the shared query; this pack (one rule per benchmark pattern
    // that has an anchor, all in one step) compares that path with the unfiltered one.
    let anchored = &BENCH_PATTERNS[..BENCH_PATTERNS.len() - 1];
    let yaml: Vec<String> = anchored
        .iter()
        .enumerate()
        .map(|(i, p)| format!("id: p{i}\nmatch: '{p}'\nexpect: {{min: 0}}\n"))
        .collect();
    let rules = regraft::rules::load_yaml("pack.yaml", &yaml.join("---\n")).unwrap();
    compare(&RuleSet::compile(rules).unwrap(), &[]);
}

/// A rule scoped to a class parses only the top-level statements that hold what the class must
/// hold; the signature it converts against is read from the statements that may bind its name
/// (each parsed alone). Both give what the whole parse gives: the last of two definitions, a
/// class defined after its use through a base imported under another name, and refusals
/// where a star import, a decorator, a rebinding in a branch or a metaclass stands between.
#[test]
fn scoped_rules_and_their_signatures_read_from_statements_give_the_whole_files_reports() {
    let scoped = "id: scoped\ninside:\n  class:\n    has: self.blocks = ModuleList([$CLS($$$B) for $I in $R])\n  function: forward\n  loop: for $L in self.blocks\nmatch: $X = $L($$$A)\naction:\n  kwargs_to_positional: {signature: $CLS.forward}\nexpect: {min: 0}\non_refuse: warn\n";
    let local = "id: local\nmatch: x = block($$$A)\naction:\n  kwargs_to_positional: {signature: Block.forward}\nexpect: {min: 0}\n";
    for (yaml, locator) in [
        (scoped, regraft::compile::Locator::TopLevel),
        (
            local,
            regraft::compile::Locator::Anchor { assignment: None },
        ),
    ] {
        let set = RuleSet::compile(regraft::rules::load_yaml("r.yaml", yaml).unwrap()).unwrap();
        assert!(matches!(
            (set.rules[0].locator, locator),
            (
                Some(regraft::compile::Locator::TopLevel),
                regraft::compile::Locator::TopLevel
            ) | (
                Some(regraft::compile::Locator::Anchor { .. }),
                regraft::compile::Locator::Anchor { .. }
            )
        ));
        compare(&set, &[]);
    }
    // A statement-local rule's edit that writes a scoped rule's match, in a later step or in
    // the same one (then the fixed point catches it): both need the statement's class.
    let a =
        "id: a\nmatch: x = block($$$A)\naction: {replace: \"x = layer($$$A)\"}\nexpect: {min: 0}\n";
    let b = "id: b\ninside: {class: Model, function: forward}\nmatch: x = layer($$$A)\naction: {remove_kwargs: [bias]}\nexpect: {min: 0}\n";
    for pack in [format!("{a}---\n{b}after: [a]\n"), format!("{a}---\n{b}")] {
        let set = RuleSet::compile(regraft::rules::load_yaml("r.yaml", &pack).unwrap()).unwrap();
        compare(&set, &[]);
    }
    // What the statements give: the second `Block` (bias before mask) is the one that runs.
    let set = RuleSet::compile(regraft::rules::load_yaml("r.yaml", scoped).unwrap()).unwrap();
    let env = crate::util::versions(&[]);
    let source = include_str!("fixtures/lookups/redefined_later.py");
    let patched = Engine::new(&set, &env, None)
        .patch(Target {
            path: "m.py",
            source,
        })
        .unwrap();
    assert!(
        patched.output.contains("x = block(x, b, m)"),
        "{}",
        patched.output
    );
}

#[test]
fn every_action_gives_the_same_reports_with_and_without_the_prefilter() {
    let rules = regraft::rules::load_yaml(
        "every-action.yaml",
        include_str!("fixtures/every-action.yaml"),
    )
    .unwrap();
    for rule in rules {
        compare(&RuleSet::compile(vec![rule]).unwrap(), &[]);
    }
}

/// Every named node stands where the grammar's node-type table says it may (the kind walk prunes by
/// that table), over the fixtures and, with `REGRAFT_CONTAINMENT_TREE=DIR`, every `*.py` below
/// DIR (a real upstream tree).
#[test]
fn the_grammar_table_admits_every_parent_child_pair() {
    let mut sources: Vec<(String, String)> = fixture_files();
    if let Ok(dir) = std::env::var("REGRAFT_CONTAINMENT_TREE") {
        for entry in ignore::WalkBuilder::new(dir)
            .standard_filters(false)
            .build()
        {
            let entry = entry.unwrap();
            if entry.path().extension().is_some_and(|e| e == "py") {
                let text = fs::read_to_string(entry.path()).unwrap_or_default();
                sources.push((entry.path().display().to_string(), text));
            }
        }
    }
    let table = regraft::python::grammar::containment();
    for (path, source) in &sources {
        let tree = regraft::python::parse(source);
        if regraft::python::first_syntax_error(tree.root_node()).is_some() {
            continue;
        }
        let mut cursor = tree.walk();
        let mut stack = vec![tree.root_node()];
        while let Some(node) = stack.pop() {
            for child in node.children(&mut cursor) {
                // Tokens hold nothing and root no pattern: the table speaks of named kinds.
                assert!(
                    !child.is_named() || table.may_contain(node.kind_id(), child.kind_id()),
                    "{path}: `{}` under `{}` at byte {}",
                    child.kind(),
                    node.kind(),
                    child.start_byte()
                );
                stack.push(child);
            }
        }
    }
}

/// Where only statement-local rules run, only the statements holding their anchors are
/// parsed by tree-sitter; a file they would change is still compiled whole once (CPython's
/// check), so a syntax error elsewhere refuses it as a rule that looks further (here, at its
/// enclosing function, whose top-level statement is parsed) does. A file no rule changes is
/// not checked, as in a file the prefilter skips.
#[test]
fn local_rules_parse_only_the_statements_they_could_match() {
    let source = "broken = = 1\n\ndef f(h):\n    out = decoder_layer(h, output_attentions=True)\n";
    let env = crate::util::versions(&[]);
    let target = Target {
        path: "m.py",
        source,
    };
    let local = crate::util::rules(
        "id: l\nmatch: '$OUT = decoder_layer($$$A)'\naction: {remove_kwargs: [output_attentions]}\n",
    );
    assert!(local.rules[0].locator.is_some());
    let refused = Engine::new(&local, &env, None).patch(target).unwrap_err();
    assert_eq!(refused.kind(), "target-syntax");
    let untouched = Target {
        path: "m.py",
        source: "broken = = 1\n\ndef f(h):\n    out = decoder_layer(h)\n",
    };
    let patched = Engine::new(&local, &env, None).patch(untouched).unwrap();
    assert_eq!(patched.output, untouched.source);
    let scoped = crate::util::rules(
        "id: s\nmatch: '$OUT = decoder_layer($$$A)'\ninside: {function: f}\naction: {remove_kwargs: [output_attentions]}\n",
    );
    assert_eq!(
        scoped.rules[0].locator,
        Some(regraft::compile::Locator::TopLevel)
    );
    let refused = Engine::new(&scoped, &env, None).patch(target).unwrap_err();
    assert_eq!(refused.kind(), "target-syntax");
}

#[test]
fn a_patch_that_is_not_a_fixed_point_is_caught_with_and_without_the_prefilter() {
    // A statement-local rule runs on the statements holding its anchor, and checks its fixed
    // point on the edited ones only (scanning only those for literals); it must still see
    // that the rule would apply again.
    let yaml = "id: grow\nmatch: '$OUT = decoder_layer($$$ARGS)'\naction: {replace: '$OUT = decoder_layer(0, $$$ARGS)'}\nexpect: {min: 0}\n";
    let set = RuleSet::compile(regraft::rules::load_yaml("grow.yaml", yaml).unwrap()).unwrap();
    compare(&set, &[]);
    let env = crate::util::versions(&[]);
    let source = "import x\n\n\ndef f(h):\n    out = decoder_layer(h)\n    return out\n";
    let survey = survey_of(Engine::new(&set, &env, None), source);
    let kinds: Vec<&str> = survey.errors.iter().map(|(_, e)| e.kind()).collect();
    assert_eq!(kinds, ["not-idempotent"]);
}

/// Rules whose literals come from `where` (a regex's alternation, a `has`), beside rules with
/// no anchor at all: anchored by what `where` requires only where the pattern binds the name.
const WHERE_RULES: &str = r#"
id: softmax-head
match: '$W = $F($X, dim=$D)'
where: {$F: {regex: '(nn\.functional|\bF)\.softmax$'}}
action: {replace: '$W = $F($X.float(), dim=$D).to($X.dtype)'}
expect: {min: 0}
---
id: projections
match: 'self.$E($X)'
where: {$E: {regex: '^(q_proj|k_proj|v_proj)$'}, $X: {regex: '^hidden_states$'}}
action: {replace: 'self.$E($X.contiguous())'}
expect: {min: 0}
---
id: dropout-suffix
match: '$Y = $F($$$A)'
where: {$F: {regex: '.*dropout'}}
expect: {min: 0}
---
id: case-folded
match: 'self.$E($X)'
where: {$E: {regex: '(?i)^softmax$'}}
expect: {min: 0}
---
id: has-literal
match: '$W = $F($$$A)'
where: {$F: {has: 'softmax'}}
expect: {min: 0}
---
id: later-statement
match: |
  x = 1
  $O = $F($A, dim=$D)
where: {$F: {regex: 'softmax$'}}
expect: {min: 0}
---
id: scope-only
inside: {class: {has: 'self.act = $C'}, function: forward}
match: 'return $X'
where: {$C: {regex: 'ACT2FN'}}
expect: {min: 0}
---
id: alternatives
match:
  any:
  - '$W = $F($X, dim=$D)'
  - 'return $F($X, dim=$D)'
where: {$F: {regex: 'softmax$'}}
expect: {min: 0}
---
id: no-anchor
match: 'import $M'
expect: {min: 0}
"#;

#[test]
fn where_anchored_rules_beside_unanchored_ones_give_the_same_reports() {
    let rules = regraft::rules::load_yaml("where.yaml", WHERE_RULES).unwrap();
    let set = RuleSet::compile(rules.clone()).unwrap();
    let clauses: Vec<(&str, Vec<Vec<String>>)> = set
        .rules
        .iter()
        .map(|r| (r.id(), r.anchor_clauses()))
        .collect();
    let c = |lists: &[&[&str]]| -> Vec<Vec<String>> {
        lists
            .iter()
            .map(|l| l.iter().map(|s| s.to_string()).collect())
            .collect()
    };
    // A name the pattern binds where its anchor lies (in every alternative): what its `where`
    // requires is in every match; a name bound in a later statement or by a scope only says
    // nothing, nor does a case-folded regex of 128 spellings.
    assert_eq!(
        clauses,
        [
            (
                "softmax-head",
                c(&[&["F.softmax", "nn.functional.softmax"], &["dim"]])
            ),
            (
                "projections",
                c(&[
                    &["hidden_states"],
                    &["k_proj", "q_proj", "v_proj"],
                    &["self"]
                ])
            ),
            ("dropout-suffix", c(&[&["dropout"]])),
            ("case-folded", c(&[&["self"]])),
            ("has-literal", c(&[&["softmax"]])),
            ("later-statement", c(&[&["x"]])),
            ("scope-only", c(&[])),
            ("alternatives", c(&[&["dim"], &["softmax"]])),
            ("no-anchor", c(&[])),
        ]
    );
    assert!(!set.prefilter.is_anchored(8) && set.prefilter.is_anchored(0));
    // Together (anchored and unanchored rules in one step) and each alone.
    compare(&set, &[]);
    for rule in rules {
        compare(&RuleSet::compile(vec![rule]).unwrap(), &[]);
    }
}

/// Adjacent statements merge into one statement region; with a rule beside them whose regions
/// are whole top-level statements, every statement of the merged region must stay (only the
/// first did: `out = decoder_layer(...)` after `x = layer(x, True)` was silently no match).
#[test]
fn a_top_level_rule_beside_statement_rules_keeps_every_statement_of_a_merged_region() {
    let yaml = r#"
id: p0
match: '$OUT = decoder_layer($$$ARGS)'
action: {remove_kwargs: [mask]}
expect: {min: 0}
---
id: p4
match: 'x = layer(x, True)'
action: {replace: 'x = layer(x, False)'}
expect: {min: 0}
---
id: p6
match: 'def forward($$$P): $$$B'
action: {replace: 'def forward($$$P): $$$B'}
expect: {min: 0}
"#;
    let set = RuleSet::compile(regraft::rules::load_yaml("r.yaml", yaml).unwrap()).unwrap();
    let env = crate::util::versions(&[]);
    let source = "x = layer(x, True)\nout = decoder_layer(h, mask=m)\n";
    let survey = survey_of(Engine::new(&set, &env, None), source);
    assert_eq!(
        survey.output,
        "x = layer(x, False)\nout = decoder_layer(h)\n"
    );
    compare(&set, &[]);
}

/// A comment indented below a block belongs to the block in tree-sitter's whole parse: the
/// top-level statement parsed alone holds it too, so a `replace` of the definition writes the
/// same with and without the prefilter (the comment was kept in one and re-indented into the
/// template's output in the other).
#[test]
fn a_definition_parsed_alone_keeps_the_indented_comment_below_it() {
    let yaml = "id: p6\nmatch: 'def forward($$$P): $$$B'\naction: {replace: 'def forward($$$P): return None'}\nexpect: {min: 0}\n";
    let set = RuleSet::compile(regraft::rules::load_yaml("r.yaml", yaml).unwrap()).unwrap();
    assert_eq!(
        set.rules[0].locator,
        Some(regraft::compile::Locator::TopLevel)
    );
    let env = crate::util::versions(&[]);
    let source = "def forward(x):\n    return x\n\n\n\t# indented comment\nif True:\n    y = 1\n";
    let with = survey_of(Engine::new(&set, &env, None), source);
    let without = survey_of(Engine::new(&set, &env, None).without_prefilter(), source);
    assert_eq!(with.output, without.output);
    assert_eq!(with.rules, without.rules);
    compare(&set, &[]);
}
