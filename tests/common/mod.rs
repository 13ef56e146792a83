//! Helpers shared by the integration tests.
#![allow(dead_code)]

use regraft::compile::RuleSet;
use regraft::engine::{Engine, PatchError, Patched, Target};
use regraft::rules::load_yaml;
use regraft::versions::VersionEnv;

/// Compiles YAML rule text, panicking with the rendered diagnostic on failure.
pub fn rules(yaml: &str) -> RuleSet {
    let loaded = load_yaml("rule.yaml", yaml).unwrap_or_else(|e| panic!("{}", render(&e)));
    RuleSet::compile(loaded).unwrap_or_else(|e| panic!("{}", render(&e)))
}

/// The rule-loading or compiling error of YAML rule text, rendered.
pub fn rule_error(yaml: &str) -> String {
    let error = match load_yaml("rule.yaml", yaml) {
        Err(e) => e,
        Ok(rules) => match RuleSet::compile(rules) {
            Err(e) => e,
            Ok(_) => panic!("rule loaded without error:\n{yaml}"),
        },
    };
    render(&error)
}

/// Versions from `PKG=VER` pairs.
pub fn versions(pairs: &[&str]) -> VersionEnv {
    let mut env = VersionEnv::default();
    for p in pairs {
        env.insert_pair(p).unwrap();
    }
    env
}

/// Patches `source` (at `path`) with `rules` under `versions`.
pub fn patch(
    rules: &RuleSet,
    versions: &VersionEnv,
    path: &str,
    source: &str,
) -> Result<Patched, PatchError> {
    Engine::new(rules, versions, None).patch(Target { path, source })
}

/// Renders a diagnostic without colour, as a user sees it in a log.
pub fn render(diagnostic: &dyn miette::Diagnostic) -> String {
    regraft::report::render(diagnostic, regraft::report::Palette::new(false))
}

/// The shipped Whisper rule.
pub fn whisper_rule() -> RuleSet {
    rules(include_str!(
        "../../rules/whisper-decoder-layer-positional.yaml"
    ))
}
