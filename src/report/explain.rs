//! `explain`: how the engine understands a rule, and what it found in a file.

use super::{Palette, render};
use crate::engine::explain::Explanation;

/// How the engine understands a rule: its gates, scopes, pattern and compiled query.
pub fn explain_rule(rule: &crate::compile::CompiledRule, scope: &str) -> String {
    use std::fmt::Write;
    let r = &rule.rule;
    let mut out = String::new();
    let _ = writeln!(out, "rule {}", r.id.value);
    if let Some(d) = &r.description {
        let _ = writeln!(out, "  description: {d}");
    }
    let _ = writeln!(out, "  phase:       {}", r.phase);
    out.push_str(&gates(r));
    let files = if r.files.is_empty() {
        "every file".to_string()
    } else {
        r.files
            .iter()
            .map(|f| f.value.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let _ = writeln!(out, "  files:       {files}");
    let _ = writeln!(out, "  scope:       {scope}");
    out.push_str(&binds(rule));
    if r.branch_actions.is_empty() {
        let action = crate::actions::unit(&r.action).explain(&r.action.args);
        let _ = writeln!(out, "  action:      {action}");
    }
    // Alternatives with their own action: each says what it does where it matched.
    for (i, pattern) in r
        .patterns
        .iter()
        .enumerate()
        .filter(|_| !r.branch_actions.is_empty())
    {
        let a = r.action_of(i);
        let first = pattern.text.lines().next().unwrap_or("");
        let action = crate::actions::unit(a).explain(&a.args);
        let _ = writeln!(out, "  action:      where `{first}` matched: {action}");
    }
    for (key, list) in [("imports:", &r.imports), ("provides:", &r.provides)] {
        if !list.is_empty() {
            let items: Vec<&str> = list.iter().map(|i| i.value.as_str()).collect();
            let _ = writeln!(out, "  {key:<12} {}", items.join("; "));
        }
    }
    let expect = r
        .expect
        .map_or("anything (no `expect`)".to_string(), |e| e.to_string());
    // A count over the run is one over all the selected files together.
    let per = match r.expect.is_some_and(|e| e.run) {
        true => "(all the selected files of a run together)",
        false => "per selected file",
    };
    let _ = writeln!(out, "  expect:      {expect} {per}");
    out.push_str(&conditions(r));
    let _ = writeln!(out, "  query:       {}", rule.query_source);
    let literals = if rule.pattern.literals.is_empty() {
        "(none)".to_string()
    } else {
        rule.pattern.literals.join(", ")
    };
    let _ = writeln!(out, "  literals:    {literals}");
    out
}

/// The version gates and groupings: `requires`, `fixed_upstream`, `group`, `family`.
fn gates(r: &crate::rules::model::Rule) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    let listed = |list: &[crate::rules::model::Requirement]| {
        list.iter()
            .map(|q| format!("{} {}", q.package.value, q.specifiers.value))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let requires = if r.requires.is_empty() {
        "any version".to_string()
    } else {
        listed(&r.requires)
    };
    let _ = writeln!(out, "  requires:    {requires}");
    if !r.fixed_upstream.is_empty() {
        let _ = writeln!(
            out,
            "  retired in:  {} (fixed upstream)",
            listed(&r.fixed_upstream)
        );
    }
    for (key, name) in [("group", &r.group), ("family", &r.family)] {
        if let Some(name) = name {
            let _ = writeln!(
                out,
                "  {key}:{:width$}{}",
                "",
                name.value,
                width = 12 - key.len()
            );
        }
    }
    out
}

/// What each pattern of the rule binds: the scope predicates, the loop header, the match.
fn binds(rule: &crate::compile::CompiledRule) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    let vars = |names: &[String]| {
        names
            .iter()
            .map(|n| format!("${n}"))
            .collect::<Vec<_>>()
            .join(" ")
    };
    for (key, has) in [
        ("class", &rule.class_scope.has),
        ("function", &rule.function_scope.has),
    ] {
        if let Some(p) = has {
            let _ = writeln!(out, "  {key} binds: {}", vars(&p.metavars));
        }
    }
    // Loop alternatives that bind the same names are one line.
    let mut loops: Vec<String> = rule
        .loop_patterns
        .iter()
        .map(|l| vars(&l.metavars))
        .collect();
    loops.dedup();
    for l in loops {
        let _ = writeln!(out, "  loop binds:  {l}");
    }
    let _ = writeln!(out, "  match binds: {}", vars(&rule.pattern.metavars));
    out
}

/// `text` on one line, shortened to about `max` characters with `…`.
pub fn one_line(text: &str, max: usize) -> String {
    let flat: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() <= max {
        return flat;
    }
    let cut: String = flat.chars().take(max).collect();
    format!("{cut}…")
}

/// What `explain --in` found for one rule in one file: why it would not run, its matches with
/// their bindings, and the near misses, nearest first.
pub fn explanation(path: &str, explanation: &Explanation, palette: Palette) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    let _ = writeln!(out, "\nin {path}:");
    for reason in &explanation.inactive {
        let _ = writeln!(out, "  would not run: {reason}");
    }
    let n = explanation.matches.len();
    let _ = writeln!(out, "  {n} match{}", if n == 1 { "" } else { "es" });
    for m in &explanation.matches {
        let _ = writeln!(out, "    at {}:{}", m.start.line, m.start.column);
        for (name, value) in &m.bindings {
            let value = one_line(value, 60);
            let _ = writeln!(out, "      ${name} = {value}");
        }
    }
    if explanation.near_misses.is_empty() {
        let _ = writeln!(out, "  no near misses");
    } else {
        let _ = writeln!(out, "  near misses, nearest first:");
        for near in &explanation.near_misses {
            out.push_str(&render(near, palette));
        }
    }
    out
}

/// The `where` conditions and the non-default failure policies of a rule, a line each.
/// The `when` probes, one line each.
fn when(w: &crate::rules::model::When) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    let place = match w.scope {
        Some(per) => format!("the enclosing {}", per.name()),
        None => "the file".to_string(),
    };
    if let Some(p) = &w.has {
        let _ = writeln!(out, "  when:        {place} has `{}`", p.text.trim());
    }
    if let Some(p) = &w.lacks {
        let _ = writeln!(out, "  when:        {place} lacks `{}`", p.text.trim());
    }
    if let Some(t) = &w.contains {
        let _ = writeln!(out, "  when:        the file contains `{}`", t.value);
    }
    if let Some(t) = &w.lacks_text {
        let _ = writeln!(
            out,
            "  when:        the file does not contain `{}`",
            t.value
        );
    }
    if let Some(sig) = &w.signature {
        let names = |l: &[crate::rules::model::Spanned<String>]| {
            l.iter()
                .map(|n| n.value.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        };
        let mut parts = Vec::new();
        for (what, list) in [
            ("takes", &sig.has),
            ("lacks", &sig.lacks),
            ("takes in order", &sig.order),
        ] {
            if !list.is_empty() {
                parts.push(format!("{what} {}", names(list)));
            }
        }
        let _ = writeln!(
            out,
            "  when:        `{}` {}",
            sig.of.value,
            parts.join("; ")
        );
    }
    out
}

fn conditions(r: &crate::rules::model::Rule) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    for (name, c) in &r.constraints {
        let mut parts = Vec::new();
        if let Some(re) = &c.regex {
            parts.push(format!("matches /{}/", re.value.0.as_str()));
        }
        if let Some(re) = &c.not_regex {
            parts.push(format!("does not match /{}/", re.value.0.as_str()));
        }
        let kinds = |list: &[crate::rules::model::Spanned<String>]| {
            let names: Vec<&str> = list.iter().map(|k| k.value.as_str()).collect();
            names.join(" or ")
        };
        if !c.kind.is_empty() {
            let list = kinds(&c.kind);
            let article = if list.starts_with(['a', 'e', 'i', 'o', 'u']) {
                "an"
            } else {
                "a"
            };
            parts.push(format!("is {article} {list}"));
        }
        if !c.not_kind.is_empty() {
            parts.push(format!("is no {}", kinds(&c.not_kind)));
        }
        if let Some(has) = &c.has {
            parts.push(format!("has `{}`", has.text.trim()));
        }
        let _ = writeln!(out, "  where:       ${} {}", name.value, parts.join(", "));
    }
    out.push_str(&when(&r.when));
    if !r.at.is_empty() {
        let places: Vec<&str> = r.at.iter().map(|p| p.name()).collect();
        let _ = writeln!(
            out,
            "  at:          {} (a site elsewhere is no match)",
            places.join(" and ")
        );
    }
    if r.ordered {
        let _ = writeln!(out, "  ordered:     keyword order matters");
    }
    for (key, policy) in [("on miss", r.on_miss), ("on refuse", r.on_refuse)] {
        if policy != crate::rules::model::Policy::Error {
            let _ = writeln!(
                out,
                "  {key}:{:width$}{}",
                "",
                policy.name(),
                width = 12 - key.len()
            );
        }
    }
    out
}
