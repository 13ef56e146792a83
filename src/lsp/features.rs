//! What the server answers: diagnostics (lint of the unsaved text), hover, completion and go
//! to definition, each from the document's text and the engine's own tables.

use lsp_types::{
    CompletionItem, CompletionItemKind, CompletionResponse, Diagnostic, DiagnosticSeverity, Hover,
    HoverContents, Location, MarkupContent, MarkupKind, NumberOrString, Position, Range, Uri,
};

use super::jobs::Budget;
use super::text::{offset, position, word_at};
use crate::rules::Syntax;
use crate::rules::convert::{INSIDE_KEYS, RULE_KEYS};
use crate::rules::reference;

/// The syntax of the document at `uri`, if it is a rule file: `*.graft`, or a YAML file whose
/// text has a rule's keys (`id:` and `match:` at the start of a line).
pub(super) fn syntax(uri: &Uri, text: &str) -> Option<Syntax> {
    let path = uri.path().as_str();
    if path.ends_with(".graft") {
        return Some(Syntax::Dsl);
    }
    let yaml = path.ends_with(".yaml") || path.ends_with(".yml");
    let has = |key: &str| {
        text.lines().any(|l| {
            let l = l.trim_start().trim_start_matches("- ");
            l.starts_with(key)
        })
    };
    (yaml && has("id:") && (has("match:") || has("action:"))).then_some(Syntax::Yaml)
}

/// `lint`'s findings for the document, as LSP diagnostics at their exact ranges.
pub(super) fn diagnostics(uri: &Uri, text: &str) -> Vec<Diagnostic> {
    let Some(syntax) = syntax(uri, text) else {
        return Vec::new();
    };
    // Offsets are into the text after a byte-order mark, which the reader leaves out.
    let shift = if text.starts_with('\u{feff}') { 3 } else { 0 };
    crate::lint::lint_text(uri.path().as_str(), text, syntax)
        .into_iter()
        .map(|e| {
            let range = Range::new(
                position(text, e.span.start + shift),
                position(text, e.span.end.max(e.span.start) + shift),
            );
            let severity = match e.kind.severity() {
                miette::Severity::Error => DiagnosticSeverity::ERROR,
                miette::Severity::Warning => DiagnosticSeverity::WARNING,
                miette::Severity::Advice => DiagnosticSeverity::HINT,
            };
            let mut message = e.to_string();
            if let Some(help) = &e.help {
                message.push_str(&format!("\nhelp: {help}"));
            }
            Diagnostic {
                range,
                severity: Some(severity),
                code: Some(NumberOrString::String(e.kind.code_name().to_string())),
                source: Some("regraft".into()),
                message,
                ..Diagnostic::default()
            }
        })
        .collect()
}

/// The reference entry of the key or action under the cursor, or where a metavariable is
/// bound and what it binds in the configured targets.
pub(super) fn hover(uri: &Uri, text: &str, at: Position, budget: &Budget) -> Option<Hover> {
    let cursor = offset(text, at);
    let (word, range) = word_at(text, cursor)?;
    let markdown = if word.starts_with('$') {
        let name = word.trim_start_matches('$');
        let mut said = metavariable(text, name, cursor)?;
        let bound = syntax(uri, text)
            .and_then(|s| super::lens::bound_in_targets(uri, text, s, (cursor, name), budget));
        if let Some((values, sites, surveyed)) = bound.filter(|(_, sites, _)| *sites > 0) {
            let shown: Vec<String> = values.iter().map(|v| format!("`{v}`")).collect();
            said.push_str(&format!(
                "\n\nIn the configured targets it binds {} ({sites} site(s))",
                shown.join(", ")
            ));
            if let Some(short) = surveyed.shortfall(budget) {
                said.push_str(&format!("; {short}"));
            }
        }
        said
    } else {
        reference::entry(word)?.short()
    };
    Some(Hover {
        contents: HoverContents::Markup(MarkupContent {
            kind: MarkupKind::Markdown,
            value: markdown,
        }),
        range: Some(Range::new(
            position(text, range.start),
            position(text, range.end),
        )),
    })
}

/// The text of the rule around byte `at`: from the line that starts it (`id:` or `- id:` at
/// the margin, a `---` document, a DSL `rule`) to the next such line.
fn rule_around(text: &str, at: usize) -> &str {
    let starts = |line: &str| {
        line.starts_with("id:")
            || line.starts_with("- id:")
            || line.starts_with("---")
            || line.starts_with("rule ")
    };
    let mut start = 0;
    let mut end = text.len();
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        if starts(line) {
            if offset <= at {
                start = offset;
            } else {
                end = offset;
                break;
            }
        }
        offset += line.len();
    }
    &text[start..end]
}

/// The key a rule-file line belongs to: its own (`loop: ...`), or that of the nearest line
/// above it indented less (a block scalar's lines belong to `match: |`).
fn key_of(lines: &[&str], index: usize) -> String {
    let key = |l: &str| {
        let t = l.trim_start().trim_start_matches("- ");
        let word: String = t
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        let rest = &t[word.len()..];
        (!word.is_empty() && (rest.starts_with(':') || rest.starts_with(' '))).then_some(word)
    };
    if let Some(k) = key(lines[index]).filter(|k| !k.chars().all(|c| c.is_ascii_uppercase())) {
        return k;
    }
    let indent = |l: &str| l.len() - l.trim_start().len();
    let own = indent(lines[index]);
    (lines[..index].iter().rev())
        .filter(|l| !l.trim().is_empty() && indent(l) < own)
        .find_map(|l| key(l))
        .unwrap_or_default()
}

/// Where metavariable `name` is bound first — a scope's `has`, then a `loop` header, then
/// `match`, as the engine binds them — and how often it is used, in the rule around byte `at`.
fn metavariable(text: &str, name: &str, at: usize) -> Option<String> {
    let rule = rule_around(text, at);
    let start = rule.as_ptr() as usize - text.as_ptr() as usize;
    let first_line = text[..start].matches('\n').count();
    let lines: Vec<&str> = rule.lines().collect();
    let uses: Vec<(usize, &str)> = (lines.iter().enumerate())
        .filter(|(_, l)| mentions(l, name))
        .map(|(i, l)| (i, *l))
        .collect();
    let binder =
        |keys: &[&str]| (uses.iter()).find(|(i, _)| keys.contains(&key_of(&lines, *i).as_str()));
    let (line, bound) = binder(&["has"])
        .or_else(|| binder(&["loop"]))
        .or_else(|| binder(&["match", "any"]))
        .or(uses.first())?;
    let line = first_line + line;
    let run = if bound.contains(&format!("$$${name}")) {
        "a run of nodes (`$$$`)"
    } else {
        "one node"
    };
    Some(format!(
        "`${name}`: {run}, bound on line {}: `{}`; used on {} line(s)",
        line + 1,
        bound.trim(),
        uses.len()
    ))
}

fn mentions(line: &str, name: &str) -> bool {
    let needle = format!("${name}");
    line.match_indices(&needle).any(|(at, _)| {
        !line[at + needle.len()..]
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
    })
}

/// Keys valid where the cursor is (a rule's, `inside`'s, `where` conditions', an action's
/// name under `action`), or the metavariables bound so far after a `$`.
pub(super) fn completion(text: &str, at: Position) -> CompletionResponse {
    let cursor = offset(text, at);
    let line_start = text[..cursor].rfind('\n').map_or(0, |i| i + 1);
    let typed = &text[line_start..cursor];
    if typed
        .rsplit(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '$'))
        .next()
        .is_some_and(|w| w.starts_with('$'))
    {
        // The names of this rule only (another rule's are not bound here), `$_` left out: it
        // binds nothing.
        let rule = rule_around(text, cursor);
        let mut names: Vec<String> = Vec::new();
        for (at, _) in rule.match_indices('$') {
            let name: String = rule[at..]
                .trim_start_matches('$')
                .chars()
                .take_while(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || *c == '_')
                .collect();
            let binds = name.starts_with(|c: char| c.is_ascii_uppercase());
            if binds && crate::rules::convert::is_metavar_name(&name) && !names.contains(&name) {
                names.push(name);
            }
        }
        return items(
            names.iter().map(String::as_str),
            CompletionItemKind::VARIABLE,
        );
    }
    let indent = typed.len() - typed.trim_start().len();
    let parent = text[..line_start]
        .lines()
        .rev()
        .find(|l| {
            let i = l.len() - l.trim_start().len();
            !l.trim().is_empty() && i < indent && !l.trim_start().starts_with('#')
        })
        .map(|l| {
            l.trim()
                .trim_start_matches("- ")
                .split(':')
                .next()
                .unwrap_or("")
                .trim()
        });
    let actions = crate::rules::action::action_names();
    match parent {
        Some("inside") => items(INSIDE_KEYS.iter().copied(), CompletionItemKind::PROPERTY),
        Some("action") => items(actions.into_iter(), CompletionItemKind::FUNCTION),
        Some(k) if k.starts_with('$') => items(
            ["regex", "not_regex", "kind", "not_kind", "has"].into_iter(),
            CompletionItemKind::PROPERTY,
        ),
        _ => items(
            RULE_KEYS.iter().copied().chain(actions),
            CompletionItemKind::PROPERTY,
        ),
    }
}

fn items<'a>(
    labels: impl Iterator<Item = &'a str>,
    kind: CompletionItemKind,
) -> CompletionResponse {
    CompletionResponse::Array(
        labels
            .map(|label| CompletionItem {
                label: label.to_string(),
                kind: Some(kind),
                documentation: reference::entry(label).map(|d| {
                    lsp_types::Documentation::MarkupContent(MarkupContent {
                        kind: MarkupKind::Markdown,
                        value: d.short(),
                    })
                }),
                ..CompletionItem::default()
            })
            .collect(),
    )
}

/// From `Class.method` on a `signature` line to its definition in the Python files of the
/// project (the folder holding the rule file's `regraft.toml`, `pyproject.toml` or `.git`).
pub(super) fn definition(uri: &Uri, text: &str, at: Position, budget: &Budget) -> Option<Location> {
    let cursor = offset(text, at);
    let line_start = text[..cursor].rfind('\n').map_or(0, |i| i + 1);
    let line_end = text[cursor..].find('\n').map_or(text.len(), |i| cursor + i);
    let line = &text[line_start..line_end];
    if !line.contains("signature") && !line.contains("binds_as_named") && !line.contains("of:") {
        return None;
    }
    let is_part = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '.';
    let start = text[..cursor]
        .rfind(|c: char| !is_part(c))
        .map_or(0, |i| i + 1);
    let end = text[cursor..]
        .find(|c: char| !is_part(c))
        .map_or(text.len(), |i| cursor + i);
    let dotted = &text[start..end];
    let (class, method) = dotted.rsplit_once('.')?;
    let rule_file = std::path::PathBuf::from(uri.path().as_str());
    let root = rule_file.ancestors().skip(1).find(|d| {
        ["regraft.toml", "pyproject.toml", ".git"]
            .iter()
            .any(|m| d.join(m).exists())
    })?;
    let (path, source, range) = find_method(root, (class, method), budget)?;
    let file = crate::source::path_uri(&std::path::absolute(&path).ok()?.to_string_lossy());
    Some(Location {
        uri: file.parse().ok()?,
        range: Range::new(position(&source, range.start), position(&source, range.end)),
    })
}

/// The first `def method` of a `class Class` in the Python files under `root` (at most 20,000
/// files are looked at, and only those that mention the class), within the budget.
fn find_method(
    root: &std::path::Path,
    (class, method): (&str, &str),
    budget: &Budget,
) -> Option<(std::path::PathBuf, String, std::ops::Range<usize>)> {
    let header = format!("class {class}");
    for entry in ignore::Walk::new(root).flatten().take(20_000) {
        if budget.spent() {
            return None;
        }
        let path = entry.path();
        if path.extension().is_none_or(|e| e != "py") {
            continue;
        }
        let Ok(source) = std::fs::read_to_string(path) else {
            continue;
        };
        if !source.contains(&header) {
            continue;
        }
        let tree = crate::python::parse(&source);
        let found = crate::python::significant_children(tree.root_node())
            .into_iter()
            .map(|n| {
                if n.kind() == "decorated_definition" {
                    n.child_by_field_name("definition").unwrap_or(n)
                } else {
                    n
                }
            })
            .filter(|n| n.kind() == "class_definition")
            .filter(|n| {
                n.child_by_field_name("name")
                    .is_some_and(|i| &source[i.byte_range()] == class)
            })
            .find_map(|c| {
                let body = c.child_by_field_name("body")?;
                crate::python::significant_children(body)
                    .into_iter()
                    .find_map(|m| {
                        let m = if m.kind() == "decorated_definition" {
                            m.child_by_field_name("definition")?
                        } else {
                            m
                        };
                        let name = m.child_by_field_name("name")?;
                        (m.kind() == "function_definition" && &source[name.byte_range()] == method)
                            .then(|| name.byte_range())
                    })
            });
        if let Some(range) = found {
            return Some((path.to_path_buf(), source, range));
        }
    }
    None
}
