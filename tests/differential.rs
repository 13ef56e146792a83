//! Differential test against CPython: `kwargs_to_positional` must not change what a call
//! binds. Random signatures and calls are patched by regraft; then `python3` binds the
//! original and the patched call to the signature with `inspect.signature(f).bind(...)` and
//! compares. Where regraft refuses, the call must really have no positional form.
//! `REGRAFT_DIFFERENTIAL_CASES` sets the case count (default 200).

use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::TestRunner;

#[derive(Debug, Clone)]
struct Param {
    name: String,
    kind: u8, // 0 positional-only, 1 positional-or-keyword, 2 keyword-only
    default: Option<String>,
}

#[derive(Debug, Clone)]
struct Case {
    params: Vec<Param>,
    var_positional: bool,
    var_keyword: bool,
    positional: usize,
    keywords: Vec<usize>,
    splat: bool,
    multiline: bool,
    values: Vec<String>,
    /// How `forward` is declared: 0 a method; 1–3 a static method spelt `@staticmethod  # …`,
    /// `@ staticmethod`, `@builtins.staticmethod`.
    decorator: u8,
}

/// A default: constants may be written at the call site; names and lists may not (a name can
/// be shadowed there, a list would be a new object).
fn default_text(i: usize, kind: u8) -> String {
    match kind {
        0 => i.to_string(),
        1 => "None".into(),
        2 => format!("'s{i}'"),
        3 => format!("(-{i}, 'x')"),
        4 => format!("D{i}"),
        _ => format!("[{i}]"),
    }
}

fn is_constant(default: &str) -> bool {
    !default.starts_with('D') && !default.starts_with('[')
}

fn value() -> impl Strategy<Value = String> {
    prop_oneof![
        (0..100i32).prop_map(|i| i.to_string()),
        (0..9i32).prop_map(|i| format!("g({i}, (1, 2))")),
        (0..9i32).prop_map(|i| format!("({i} if True else g(0))")),
        Just("[1, (2, 3)]".to_string()),
    ]
}

fn case() -> impl Strategy<Value = Case> {
    (
        prop::collection::vec((0u8..3, any::<bool>()), 1..7),
        any::<bool>(),
        any::<bool>(),
        any::<prop::sample::Index>(),
        prop::collection::vec(any::<bool>(), 7),
        any::<bool>(),
        any::<bool>(),
        prop::collection::vec(value(), 8),
        (prop::collection::vec(0u8..6, 7), 0u8..4),
    )
        .prop_map(
            |(
                raw,
                var_positional,
                var_keyword,
                npos,
                pick,
                splat,
                multiline,
                values,
                (defaults, decorator),
            )| {
                let mut kinds: Vec<(u8, bool)> = raw;
                kinds.sort_by_key(|(k, _)| *k);
                // Python: after a defaulted positional parameter, every positional one has a default.
                let mut seen_default = false;
                let params: Vec<Param> = kinds
                    .iter()
                    .enumerate()
                    .map(|(i, (kind, has_default))| {
                        let positional = *kind < 2;
                        let default = if positional && seen_default || *has_default {
                            Some(default_text(i, defaults[i % defaults.len()]))
                        } else {
                            None
                        };
                        if positional && default.is_some() {
                            seen_default = true;
                        }
                        Param {
                            name: format!("p{i}"),
                            kind: *kind,
                            default,
                        }
                    })
                    .collect();
                let positional_count = params.iter().filter(|p| p.kind < 2).count();
                let positional = npos.index(positional_count + 1);
                // Keywords: every required parameter not given by position, plus a random subset.
                let keywords = params
                    .iter()
                    .enumerate()
                    .filter(|(i, p)| *i >= positional && p.kind != 0 || p.kind == 2)
                    .filter(|(i, p)| p.default.is_none() || pick[*i % pick.len()])
                    .map(|(i, _)| i)
                    .collect();
                Case {
                    params,
                    var_positional,
                    var_keyword,
                    positional,
                    keywords,
                    splat,
                    multiline,
                    values,
                    decorator,
                }
            },
        )
}

fn signature(case: &Case) -> String {
    let mut parts = Vec::new();
    let mut slash_done = false;
    let mut star_done = false;
    for p in &case.params {
        if p.kind > 0 && !slash_done {
            if case.params.iter().any(|q| q.kind == 0) {
                parts.push("/".to_string());
            }
            slash_done = true;
        }
        if p.kind == 2 && !star_done {
            parts.push(if case.var_positional {
                "*args".into()
            } else {
                "*".into()
            });
            star_done = true;
        }
        parts.push(match &p.default {
            Some(d) => format!("{}={d}", p.name),
            None => p.name.clone(),
        });
    }
    if !slash_done && case.params.iter().any(|q| q.kind == 0) {
        parts.push("/".into());
    }
    if case.var_positional && !star_done {
        parts.push("*args".into());
    }
    if case.var_keyword {
        parts.push("**kwargs".into());
    }
    parts.join(", ")
}

fn call_args(case: &Case) -> Vec<String> {
    let mut args: Vec<String> = (0..case.positional)
        .map(|i| case.values[i % case.values.len()].clone())
        .collect();
    for &k in &case.keywords {
        args.push(format!(
            "{}={}",
            case.params[k].name,
            case.values[(k + 3) % case.values.len()]
        ));
    }
    if case.splat {
        args.push("**extra".into());
    }
    args
}

fn layout(args: &[String], multiline: bool) -> String {
    if multiline {
        let mut s = String::from("(\n");
        for a in args {
            s.push_str(&format!("                {a},  # why\n"));
        }
        s.push_str("            )");
        s
    } else {
        format!("({})", args.join(", "))
    }
}

fn source(case: &Case) -> String {
    let (decorator, receiver) = match case.decorator {
        0 => ("", "self, "),
        1 => ("    @staticmethod  # no self\n", ""),
        2 => ("    @ staticmethod\n", ""),
        _ => ("    @builtins.staticmethod\n", ""),
    };
    format!(
        "class Layer:\n{decorator}    def forward({receiver}{}):\n        pass\n\n\nclass Model:\n    def forward(self):\n        for _, layer in enumerate(self.layers):\n            out = layer{}\n",
        signature(case),
        layout(&call_args(case), case.multiline)
    )
}

const RULE: &str = "id: positional\ninside:\n  class: Model\n  loop: \"for $_, $L in enumerate(self.layers)\"\nmatch: \"out = $L($$$A)\"\naction:\n  kwargs_to_positional: {signature: Layer.forward}\nexpect: 1\n";

const CHECK: &str = r#"
import inspect, json, sys
def g(*a): return a
results = []
for case in json.load(sys.stdin):
    defaults = {f"D{i}": ("default", i) for i in range(10)}
    scope = dict(defaults, g=g, extra={})
    exec(f"def f({case['signature']}): pass", scope)
    sig = inspect.signature(scope["f"])
    def bound(args):
        ns = dict(scope)
        exec(f"ba = sig.bind{args}", dict(ns, sig=sig), ns)
        ba = ns["ba"]; ba.apply_defaults()
        return {k: repr(v) for k, v in ba.arguments.items()}
    try:
        original = bound(case["original"])
    except TypeError as e:
        results.append(["unbindable", str(e)]); continue
    if case["patched"] is None:
        results.append(["refused", ""]); continue
    try:
        patched = bound(case["patched"])
    except TypeError as e:
        results.append(["patched-unbindable", str(e)]); continue
    results.append(["same" if original == patched else "different", json.dumps([original, patched])])
print(json.dumps(results))
"#;

/// Whether the call truly has no positional form: a keyword for a keyword-only parameter or
/// one that would go into `**kwargs`, a `**splat` with a parameter left to its default, or a
/// skipped parameter whose default is not a constant.
fn refusal_is_justified(case: &Case) -> bool {
    let keyword_only = case.keywords.iter().any(|&k| case.params[k].kind == 2);
    let highest = case
        .keywords
        .iter()
        .filter(|&&k| case.params[k].kind == 1)
        .max();
    let skipped: Vec<&Param> = highest.map_or_else(Vec::new, |&h| {
        (case.positional..h)
            .filter(|&i| case.params[i].kind < 2 && !case.keywords.contains(&i))
            .map(|i| &case.params[i])
            .collect()
    });
    let variable_default = skipped
        .iter()
        .any(|p| p.default.as_deref().is_some_and(|d| !is_constant(d)));
    keyword_only || case.splat && !skipped.is_empty() || variable_default
}

#[test]
fn kwargs_to_positional_binds_exactly_as_the_original_call() {
    let count: usize = std::env::var("REGRAFT_DIFFERENTIAL_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(200);
    let rules = crate::util::rules(RULE);
    let env = crate::util::versions(&[]);
    let mut runner = TestRunner::deterministic();
    let strategy = case();
    let mut cases = Vec::new();
    let mut payload = Vec::new();
    for _ in 0..count {
        let case = strategy.new_tree(&mut runner).unwrap().current();
        let text = source(&case);
        let patched = match crate::util::patch(&rules, &env, "m.py", &text) {
            Ok(out) => {
                let start = out.output.find("out = layer").unwrap() + "out = layer".len();
                let call = &out.output[start..];
                Some(call[..call.rfind(')').unwrap() + 1].to_string())
            }
            Err(e) => {
                assert_eq!(e.kind(), "action", "unexpected failure: {e}\n{text}");
                None
            }
        };
        payload.push(serde_json::json!({
            "signature": signature(&case),
            "original": layout(&call_args(&case), case.multiline),
            "patched": patched,
        }));
        cases.push((case, text));
    }
    let results: Vec<(String, String)> = crate::util::python_json(CHECK, &payload);
    let (mut same, mut refused) = (0, 0);
    for ((case, text), (verdict, detail)) in cases.iter().zip(&results) {
        match verdict.as_str() {
            "same" => same += 1,
            "unbindable" => {}
            "refused" => {
                refused += 1;
                assert!(
                    refusal_is_justified(case),
                    "refused a call that has a positional form:\n{text}"
                );
            }
            other => panic!("{other}: {detail}\n{text}"),
        }
    }
    eprintln!("differential: {same} bound the same, {refused} refused, of {count}");
    assert!(
        same > count / 4,
        "too few cases exercised: {same} same, {refused} refused of {count}"
    );
}

/// The callee `Layer.forward` declared by `header`, called as `call` in `Model.forward`.
fn converted(header: &str, call: &str) -> Result<String, String> {
    let source = format!(
        "EPS = 1e-5\n\n\nclass Layer:\n{header}\n        return x\n\n\nclass Model:\n    def forward(self):\n        EPS = 0.5\n        for _, layer in enumerate(self.layers):\n            out = layer({call})\n"
    );
    let rules = crate::util::rules(RULE);
    match crate::util::patch(&rules, &crate::util::versions(&[]), "m.py", &source) {
        Ok(out) => {
            let line = out.output.lines().last().unwrap().trim().to_string();
            Ok(line)
        }
        Err(e) => Err(crate::util::render(&e)),
    }
}

#[test]
fn static_methods_are_known_by_their_decorator_however_spelt() {
    for decorator in [
        "@staticmethod  # no self",
        "@ staticmethod",
        "@builtins.staticmethod",
    ] {
        let header = format!("    {decorator}\n    def forward(x, scale=None):");
        assert_eq!(
            converted(&header, "10, scale=3").as_deref(),
            Ok("out = layer(10, 3)"),
            "{decorator}"
        );
    }
    let class_method = "    @classmethod\n    def forward(cls, x, scale=None):";
    assert_eq!(
        converted(class_method, "10, scale=3").as_deref(),
        Ok("out = layer(10, 3)")
    );
}

#[test]
fn only_constant_defaults_fill_a_skipped_parameter() {
    let header = |default: &str| format!("    def forward(self, x, eps={default}, scale=None):");
    for constant in ["None", "1e-05", "-1", "'fast'", "(1, 'a')", "True"] {
        assert_eq!(
            converted(&header(constant), "1, scale=2"),
            Ok(format!("out = layer(1, {constant}, 2)"))
        );
    }
    // A name may be shadowed where the call stands (a local EPS = 0.5 here), a class attribute
    // is no name there at all, and a list would be a new one at every call.
    for variable in ["EPS", "Layer.EPS", "[]", "f'{EPS}'", "dict()"] {
        let refusal = converted(&header(variable), "1, scale=2").unwrap_err();
        assert!(
            refusal.contains("`eps`") && refusal.contains(variable),
            "{refusal}"
        );
        assert!(refusal.contains("keep_keyword"), "{refusal}");
    }
}

#[test]
fn keep_keyword_names_must_be_parameters() {
    let rule = RULE.replace(
        "{signature: Layer.forward}",
        "{signature: Layer.forward, keep_keyword: [use_cahce]}",
    );
    let source = "class Layer:\n    def forward(self, x, use_cache=False):\n        return x\n\n\nclass Model:\n    def forward(self):\n        for _, layer in enumerate(self.layers):\n            out = layer(x=1, use_cache=True)\n";
    let err = crate::util::patch(
        &crate::util::rules(&rule),
        &crate::util::versions(&[]),
        "m.py",
        source,
    )
    .unwrap_err();
    let text = crate::util::render(&err);
    assert!(text.contains("`use_cahce`"), "{text}");
    assert!(text.contains("did you mean `use_cache`?"), "{text}");
}
