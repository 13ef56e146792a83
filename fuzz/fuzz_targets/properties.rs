//! The properties the fuzz targets check, one function per target. The regression test
//! (tests/fuzz_regressions.rs) includes this file too, so every crash found is replayed by
//! `cargo test` through exactly the code that found it.
#![allow(dead_code)]

use regraft::compile::RuleSet;
use regraft::engine::{Engine, PatchError, Target};
use regraft::python::{first_syntax_error, parse};
use regraft::rules::{Syntax, load_bytes, load_text, load_yaml, write};
use regraft::versions::VersionEnv;

/// YAML rules: see [`load_compile_and_round_trip`].
pub fn yaml_loader(bytes: &[u8]) {
    load_compile_and_round_trip(bytes, Syntax::Yaml);
}

/// DSL rules: see [`load_compile_and_round_trip`].
pub fn dsl_parser(bytes: &[u8]) {
    load_compile_and_round_trip(bytes, Syntax::Dsl);
}

/// Loads `bytes` as rules of `syntax`; whatever loads must compile or be refused with a
/// diagnostic, and must survive `fmt` into either syntax: the rendering reloads and renders
/// to the same text again.
pub fn load_compile_and_round_trip(bytes: &[u8], syntax: Syntax) {
    let Ok(rules) = load_bytes("fuzz", bytes, syntax) else {
        return;
    };
    let with_comments: Vec<_> = rules.iter().map(|r| (r.clone(), String::new())).collect();
    for (to, text) in [
        (Syntax::Yaml, write::to_yaml(&with_comments)),
        (Syntax::Dsl, write::to_dsl(&with_comments)),
    ] {
        let again = load_text("fuzz-fmt", &text, to)
            .unwrap_or_else(|e| panic!("fmt output does not reload: {e}\n{text}"));
        let again: Vec<_> = again.into_iter().map(|r| (r, String::new())).collect();
        let text2 = match to {
            Syntax::Yaml => write::to_yaml(&again),
            Syntax::Dsl => write::to_dsl(&again),
        };
        assert_eq!(text, text2, "fmt is not a fixed point");
    }
    let _ = RuleSet::compile(rules);
}

/// Pattern compilation on arbitrary text in every place a pattern stands (`match`, `unless`,
/// `inside.loop`, a `replace` template): refused with a diagnostic or compiled, never a panic.
pub fn pattern_compile(bytes: &[u8]) {
    let Ok(text) = std::str::from_utf8(bytes) else {
        return;
    };
    // JSON string syntax is YAML string syntax, so any text goes in verbatim.
    let quoted = serde_json::to_string(text).expect("strings serialize");
    let rules = [
        format!("id: m\nmatch: {quoted}\naction: {{remove_kwargs: [x]}}\n"),
        format!(
            "id: u\nmatch: \"$X = $F($$$A)\"\nunless: {quoted}\naction: {{remove_kwargs: [x]}}\n"
        ),
        format!(
            "id: l\ninside: {{loop: {quoted}}}\nmatch: \"$F($$$A)\"\naction: {{remove_kwargs: [x]}}\n"
        ),
        format!("id: r\nmatch: \"$X = $F($$$A)\"\naction: {{replace: {quoted}}}\n"),
    ];
    for rule in rules {
        if let Ok(loaded) = load_yaml("fuzz.yaml", &rule) {
            let _ = RuleSet::compile(loaded);
        }
    }
}

const EVERY_ACTION: &str = include_str!("../../tests/fixtures/every-action.yaml");

const CALLEES: &[&str] = &["$F", "self.layer", "f", "$M.forward"];
const ARGS: &[&str] = &["$$$A", "$$$, x=$V, $$$", "$A, $B", "", "$A, *$S, **$K"];
const WRAPS: &[&str] = &["{}", "$X = {}", "return {}", "$X += {}"];
const ACTIONS: &[&str] = &[
    "{remove_kwargs: [x, mask]}",
    "{set_kwargs: {x: \"None\"}}",
    "{kwargs_to_positional: {signature: f}}",
    "{kwargs_to_positional: {signature: Block.forward, keep_keyword: [use_cache]}}",
    "{replace: \"g($$$A)\"}",
    "{insert_after: \"pass\"}",
    "{delete: true}",
];

/// The rules of [`EVERY_ACTION`], each compiled alone, once per process.
fn every_action() -> &'static [RuleSet] {
    static SETS: std::sync::OnceLock<Vec<RuleSet>> = std::sync::OnceLock::new();
    SETS.get_or_init(|| {
        load_yaml("every-action.yaml", EVERY_ACTION)
            .expect("the fixture loads")
            .into_iter()
            .map(|rule| RuleSet::compile(vec![rule]).expect("the fixture compiles"))
            .collect()
    })
}

/// The compiled rule the grammar builds from four bytes, built once per process; `None` where
/// the grammar builds a rule the loader refuses.
fn grammar_set(choice: &[u8]) -> Option<&'static RuleSet> {
    type Cache = std::sync::Mutex<std::collections::HashMap<String, Option<&'static RuleSet>>>;
    static CACHE: std::sync::OnceLock<Cache> = std::sync::OnceLock::new();
    let text = grammar_rule(choice)?;
    let mut cache = CACHE.get_or_init(Default::default).lock().unwrap();
    *cache.entry(text).or_insert_with_key(|text| {
        let rules = load_yaml("grammar.yaml", text).ok()?;
        // Leaked on purpose: at most a few hundred distinct rules, alive for the whole run.
        Some(Box::leak(Box::new(RuleSet::compile(rules).ok()?)))
    })
}

/// A rule from the grammar, chosen by four bytes.
fn grammar_rule(choice: &[u8]) -> Option<String> {
    let pick = |list: &[&'static str], b: u8| list[b as usize % list.len()];
    let [c, a, w, act] = choice else { return None };
    let call = format!("{}({})", pick(CALLEES, *c), pick(ARGS, *a));
    let pattern = pick(WRAPS, *w).replace("{}", &call);
    Some(format!(
        "id: g\nmatch: {}\naction: {}\nexpect: {{min: 0}}\n",
        serde_json::to_string(&pattern).ok()?,
        pick(ACTIONS, *act)
    ))
}

/// apply: a rule (one of every action, or one built from a small grammar) on arbitrary Python
/// source: the engine refuses with a diagnostic, or returns source that the same rules leave
/// unchanged and that parses (with tree-sitter and with CPython's grammar) where the input did;
/// with or without the prefilter, the outcome
/// is the same, but for syntax errors where no rule needs to look.
pub fn apply(bytes: &[u8]) {
    let Some((&which, rest)) = bytes.split_first() else {
        return;
    };
    let (set, source) = if which & 0x80 == 0 {
        let fixed = every_action();
        (&fixed[which as usize % fixed.len()], rest)
    } else {
        let Some(set) = rest.get(..4).and_then(grammar_set) else {
            return;
        };
        (set, &rest[4..])
    };
    let Ok(source) = std::str::from_utf8(source) else {
        return;
    };
    let env = VersionEnv::default();
    let engine = Engine::new(set, &env, None);
    let target = Target {
        path: "m.py",
        source,
    };
    let result = engine.patch(target);
    // The prefilter (anchored query ranges, the kind walk) must never change an outcome.
    let unfiltered = engine.without_prefilter().patch(target);
    match (&result, &unfiltered) {
        (Ok(a), Ok(b)) => {
            assert_eq!(a.output, b.output, "the prefilter changed the output");
            assert_eq!(a.rules, b.rules, "the prefilter changed the reports");
        }
        // A file CPython rejects is refused either way: as the target (compiled whole once
        // the run is done) or as the result of the first step that touched it.
        (Err(a), Err(b))
            if [a.kind(), b.kind()]
                .iter()
                .all(|k| ["target-syntax", "unparseable-result"].contains(k))
                && !regraft::python::cpython::errors(source).is_empty() => {}
        (Err(a), Err(b)) => assert_eq!(a.kind(), b.kind(), "the prefilter changed the error"),
        // A file no rule can match is not parsed at all, and where only statement-local rules
        // run only the statements they could match are: syntax errors elsewhere go unreported,
        // whether tree-sitter's or (in the statements around an edit) CPython's.
        (Ok(_), Err(PatchError::TargetSyntax { .. })) => {}
        (Ok(_), Err(PatchError::UnparseableResult { .. }))
            if !regraft::python::cpython::errors(source).is_empty() => {}
        (a, b) => panic!(
            "with the prefilter ok={}, without ok={}",
            a.is_ok(),
            b.is_ok()
        ),
    }
    let source_parses = first_syntax_error(parse(source).root_node()).is_none();
    if let Ok(patched) = result
        && patched.output != source
    {
        assert!(
            !source_parses || first_syntax_error(parse(&patched.output).root_node()).is_none(),
            "the patched source does not parse:\n{}",
            patched.output
        );
        // CPython accepts whatever regraft writes (as ruff's parser, which follows CPython's
        // grammar, reads the whole file): the engine checks only the statements it touched.
        assert!(
            regraft::python::cpython::new_error(source, &patched.output).is_none()
                || !regraft::python::cpython::errors(source).is_empty(),
            "CPython would reject the patched source:\n{}",
            patched.output
        );
        let again = engine.patch(Target {
            path: "m.py",
            source: &patched.output,
        });
        match again {
            Ok(again) => assert_eq!(again.output, patched.output, "not a fixed point"),
            // Which statements are parsed depends on the text (each rule's rarest literal), so a
            // syntax error the first run did not need to see, the second may.
            Err(PatchError::TargetSyntax { .. }) if !source_parses => {}
            Err(e) => panic!("the patched source patches again: {e:?}"),
        }
    }
}
