//! Property: for generated Python, every action either refuses with a diagnostic or produces
//! source that parses, and applying it again changes nothing.

use proptest::prelude::*;
use regraft::python::{first_syntax_error, parse};

use regraft::compile::RuleSet;
use regraft::rules::load_yaml;

/// One rule per action, each broad enough to fire on the generated code (shared with the
/// apply fuzz target).
const RULES: &str = include_str!("fixtures/every-action.yaml");

/// The `index`-th rule of [`RULES`], compiled alone.
pub(crate) fn rule(index: usize) -> RuleSet {
    let mut all = load_yaml("every-action.yaml", RULES).expect("the fixture loads");
    RuleSet::compile(vec![all.swap_remove(index)]).expect("the fixture compiles")
}

pub(crate) fn rule_count() -> usize {
    load_yaml("every-action.yaml", RULES)
        .expect("the fixture loads")
        .len()
}

fn argument() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("h".to_string()),
        Just("(a if b else (c))".to_string()),
        Just("mask=m".to_string()),
        Just("use_cache=True".to_string()),
        Just("scale=f(g(x), [1, 2])".to_string()),
    ]
}

fn call() -> impl Strategy<Value = String> {
    (
        prop::collection::vec(argument(), 0..4),
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(|(mut args, multiline, trailing)| {
            // Positional arguments come first, as Python requires.
            args.sort_by_key(|a| a.contains('='));
            args.dedup();
            if multiline && !args.is_empty() {
                let mut s = String::from("self.layer(\n");
                for a in &args {
                    s.push_str(&format!("    {a},  # note\n"));
                }
                s.push(')');
                s
            } else {
                let comma = if trailing && !args.is_empty() {
                    ","
                } else {
                    ""
                };
                format!("self.layer({}{comma})", args.join(", "))
            }
        })
}

fn statement() -> impl Strategy<Value = String> {
    prop_oneof![
        call().prop_map(|c| format!("h = {c}")),
        Just("debug(h)".to_string()),
        Just("y = h + 1".to_string()),
        call().prop_map(|c| format!("if self.training:\n    h = {c}\nelse:\n    h = h * 2")),
        call().prop_map(|c| format!("for block in self.blocks:\n    h = {c}")),
    ]
}

fn indent(code: &str, by: &str) -> String {
    code.lines().map(|l| format!("{by}{l}\n")).collect()
}

pub(crate) fn module() -> impl Strategy<Value = String> {
    (prop::collection::vec(statement(), 1..4), any::<bool>(), any::<bool>()).prop_map(
        |(statements, docstring, compiled)| {
            let mut body = String::new();
            if docstring {
                body.push_str("\"\"\"Runs the block.\"\"\"\n");
            }
            for s in &statements {
                body.push_str(s);
                body.push('\n');
            }
            body.push_str("return h\n");
            let decorator = if compiled { "    @torch.compile(mode=\"reduce-overhead\")\n" } else { "" };
            format!(
                "class Block(nn.Module):\n    def forward(self, h, mask=None, scale=1.0, use_cache=False):\n        # identity\n        return h\n\n\nclass Model(nn.Module):\n{decorator}    def run(self, h, m):\n{}",
                indent(&body, "        ")
            )
        },
    )
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: std::env::var("REGRAFT_PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(48),
        ..ProptestConfig::default()
    })]

    #[test]
    fn actions_produce_parseable_fixed_points(source in module(), which in 0..rule_count()) {
        prop_assert!(first_syntax_error(parse(&source).root_node()).is_none(), "generator made bad Python:\n{source}");
        let rules = rule(which);
        let env = crate::util::versions(&[]);
        match crate::util::patch(&rules, &env, "m.py", &source) {
            Err(e) => {
                // A refusal is fine; it must be a diagnostic, and the source stays as it was.
                prop_assert!(!e.to_string().is_empty());
            }
            Ok(out) => {
                prop_assert!(
                    first_syntax_error(parse(&out.output).root_node()).is_none(),
                    "rule {} broke the source:\n{}", which, out.output
                );
                let again = crate::util::patch(&rules, &env, "m.py", &out.output).unwrap();
                prop_assert_eq!(&again.output, &out.output);
            }
        }
    }
}

#[test]
fn every_rule_of_the_property_fires_on_a_sample() {
    let sample = "class Block(nn.Module):\n    def __init__(self, size, mask=None):\n        self.size = size\n\n    def forward(self, h, mask=None, scale=1.0, use_cache=False):\n        # identity\n        return h\n\n\nclass Model(nn.Module):\n    @torch.compile(mode=\"cuda\")\n    def run(self, h, m):\n        h = self.layer(h, mask=m, use_cache=True)\n        debug(h)\n        return h\n";
    let env = crate::util::versions(&[]);
    assert_eq!(rule_count(), 19);
    for i in 0..rule_count() {
        let rules = rule(i);
        let out = crate::util::patch(&rules, &env, "m.py", sample)
            .unwrap_or_else(|e| panic!("rule {i}: {}", crate::util::render(&e)));
        if rules.rules[0].rule.action.is_check() {
            // A pin edits nothing; it holds here (every positional is bound by position).
            assert_eq!(out.output, sample, "pin {i} changed the source");
            assert_eq!(out.rules[0].status, regraft::engine::RuleStatus::Held);
            continue;
        }
        assert_ne!(out.output, sample, "rule {i} changed nothing");
    }
}
