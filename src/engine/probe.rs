//! Whether a rule is active on a file: its version gate and its `when` probes, each with the
//! reason it is not.

use tree_sitter::Node;

use crate::compile::CompiledRule;
use crate::pattern::Pattern;
use crate::pattern::matcher::{Bindings, Matcher};
use crate::versions::Gate;

/// Checks a rule's `when` probes on a file: the text probes always, the structural ones when
/// the tree is given. `Err` says which probe failed.
pub(crate) fn probe(rule: &CompiledRule, text: &str, root: Option<Node<'_>>) -> Result<(), String> {
    let when = &rule.rule.when;
    if let Some(c) = &when.contains
        && !text.contains(c.value.as_str())
    {
        return Err(format!("when: the file does not contain `{}`", c.value));
    }
    if let Some(c) = &when.lacks_text
        && text.contains(c.value.as_str())
    {
        return Err(format!("when: the file contains `{}`", c.value));
    }
    // Scoped probes decide per site (see `find`), not for the file.
    let Some(root) = root.filter(|_| when.scope.is_none()) else {
        return Ok(());
    };
    let matcher = Matcher::new(text);
    let found = |pattern: &Pattern| matcher.occurs_in(pattern, root, &Bindings::default());

    if let Some(p) = &rule.when_has
        && !found(p)
    {
        return Err(format!("when: the file has no `{}`", p.source.trim()));
    }
    if let Some(p) = &rule.when_lacks
        && found(p)
    {
        return Err(format!("when: the file has `{}`", p.source.trim()));
    }
    Ok(())
}

/// Why a version gate is not open, in one line.
pub fn gate_reason(gate: &Gate<'_>) -> String {
    match gate {
        Gate::Open => String::new(),
        Gate::Closed {
            requirement,
            version,
        } => format!(
            "{} {} does not satisfy {}",
            requirement.package.value, version, requirement.specifiers.value
        ),
        Gate::Retired {
            requirement,
            version,
        } => format!(
            "fixed upstream in {} {} ({})",
            requirement.package.value, requirement.specifiers.value, version
        ),
        Gate::Unknown { requirement } => {
            format!("the version of {} is not known", requirement.package.value)
        }
    }
}

/// Why a rule whose version gate is `gate` is not active on a file, if it is not: the gate, or
/// (for an open gate) a failed probe.
pub(crate) fn inactive_reason(
    rule: &CompiledRule,
    gate: &Gate<'_>,
    text: &str,
    root: Option<Node<'_>>,
) -> Option<String> {
    match gate {
        Gate::Open => probe(rule, text, root).err(),
        gate => Some(gate_reason(gate)),
    }
}
