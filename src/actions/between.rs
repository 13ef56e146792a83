//! `replace: {of: $X, by: "..."}`: only what one capture bound is rewritten — the code between
//! a pattern's anchors — the rest of the match keeping its layout. What `by` writes must stand
//! where the capture stood as what it was: one expression (parenthesized where its operators
//! would bind with the code around), a run of arguments, or statements.

use tree_sitter::Node;

use super::kept::with_comments_kept;
use super::{ActionFailure, Site};
use crate::edit::Edit;
use crate::pattern::matcher::Capture;
use crate::pattern::template::substitute;
use crate::python::node_indent;

/// `replace: {of, by}` at one site: the capture's code replaced, its comments that `by` does
/// not account for kept above the statement.
pub(super) fn replace_capture(
    site: &Site<'_, '_>,
    of: &str,
    by: &str,
) -> Result<Vec<Edit>, ActionFailure> {
    let name = of.trim_start_matches('$');
    // A run (`$$$A`) is what stands there even when it holds one node: `$$$A, k=1` writes
    // arguments, not a tuple.
    let (nodes, run) = match site.bindings.get(name) {
        Some(Capture::One(node)) => (vec![*node], false),
        Some(Capture::Many(nodes)) => (nodes.clone(), true),
        None => (Vec::new(), false),
    };
    let (Some(first), Some(last)) = (nodes.first().copied(), nodes.last().copied()) else {
        return Err(ActionFailure::at(
            site.range(),
            "this match",
            format!("`{of}` bound nothing here: there is no code between its anchors to replace"),
        )
        .help("replace the whole match with a template that writes the anchors and the new code"));
    };
    let range = first.start_byte()..last.end_byte();
    let within = site.range();
    if range.start < within.start || range.end > within.end {
        return Err(ActionFailure::at(
            range,
            "bound here",
            format!("`{of}` is bound outside the match (by a scope or loop around it): `replace: {{of}}` edits within the match"),
        )
        .help("bind the code to replace in `match` itself"));
    }
    let text = substitute(
        by,
        site.bindings,
        site.source,
        node_indent(site.source, first),
    );
    let text = text.trim_end_matches(['\n', '\r']).to_string();
    let (text, expression) = fitted(text, &nodes, run, range.clone())?;
    let text = parenthesized(site, first, nodes.len(), range.clone(), text, expression);
    // A comment ending the last replaced line spoke of the replaced code: it goes above the
    // statement with the others, not onto the new code.
    let trailing = std::iter::successors(last.next_sibling(), |n| n.next_sibling())
        .take_while(|n| n.start_position().row == last.end_position().row)
        .find(|n| n.kind() == "comment");
    let around = Site {
        node: first,
        last: trailing.unwrap_or(last),
        ..*site
    };
    let Some(edit) = site.changing(Some(Edit { range, text })).pop() else {
        return Ok(Vec::new());
    };
    let mut edits = with_comments_kept(&around, by, edit);
    if let Some(comment) = trailing.filter(|c| !by.contains(site.source[c.byte_range()].trim())) {
        let before = site.source[..comment.start_byte()].trim_end_matches([' ', '\t']);
        edits.push(Edit {
            range: before.len()..comment.end_byte(),
            text: String::new(),
        });
    }
    Ok(edits)
}

/// `text`, written in place of the capture (`count` nodes from `first`, at `range`), with the
/// parentheses it needs there.
fn parenthesized(
    site: &Site<'_, '_>,
    first: Node<'_>,
    count: usize,
    range: std::ops::Range<usize>,
    text: String,
    expression: bool,
) -> String {
    // A generator that is a call's only argument shares the call's parentheses: what
    // replaces it keeps them.
    if count == 1 && crate::python::is_call_generator(first) {
        return format!("({text})");
    }
    if !expression {
        return text;
    }
    // One expression is parenthesized where the code around it would bind its operators, as a
    // template's captures are: judged on the match with it in place.
    let whole = site.range();
    let filled = format!(
        "{}{text}{}",
        &site.source[whole.start..range.start],
        &site.source[range.end..whole.end]
    );
    let at = range.start - whole.start..range.start - whole.start + text.len();
    if crate::pattern::template::needs_wrapping(&filled, at, node_indent(site.source, site.node)) {
        format!("({text})")
    } else {
        text
    }
}

/// `pattern` with the metavariable `of` (`$X` or `$$$X`, as a whole word) written as `by`;
/// `None` where it does not stand there once.
pub(super) fn replace_metavar(pattern: &str, of: &str, by: &str) -> Option<String> {
    let at: Vec<usize> = pattern
        .match_indices(of)
        .map(|(at, _)| at)
        .filter(|&at| {
            let after = pattern[at + of.len()..].chars().next();
            let before = pattern[..at].chars().next_back();
            !after.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_') && before != Some('$')
        })
        .collect();
    let [one] = at.as_slice() else {
        return None;
    };
    Some(format!(
        "{}{by}{}",
        &pattern[..*one],
        &pattern[*one + of.len()..]
    ))
}

/// Node kinds that are no expression of their own, where `by` is written as it is.
const NOT_EXPRESSIONS: &[&str] = &[
    "keyword_argument",
    "list_splat",
    "dictionary_splat",
    "pair",
    "parameters",
    "decorator",
    "block",
    "comment",
    "string_content",
    "interpolation",
];

/// How what replaces a capture among others (under `parent`) is read to check it: the text
/// around it, and what it must be. `None`: one expression, checked as such.
fn surroundings(parent: &str, count: usize) -> Option<(&'static str, &'static str, &'static str)> {
    match parent {
        "block" | "module" => Some(("", "\n", "statements")),
        "argument_list" => Some(("f(", ")\n", "a run of arguments")),
        "parameters" => Some(("def f(", "): pass\n", "parameters")),
        "lambda_parameters" => Some(("lambda ", ": 0\n", "parameters")),
        "list" | "tuple" | "set" | "expression_list" => Some(("[", "]\n", "elements")),
        "dictionary" => Some(("{", "}\n", "entries")),
        _ if count > 1 => Some(("", "\n", "what stands there")),
        _ => None,
    }
}

/// `text` (what `by` wrote) checked to be what the capture was: statements, a run of
/// arguments, parameters or elements where it stands among those, else one expression — and
/// whether it is that one expression (which its caller parenthesizes where needed).
fn fitted(
    text: String,
    nodes: &[Node<'_>],
    run: bool,
    range: std::ops::Range<usize>,
) -> Result<(String, bool), ActionFailure> {
    let refuse = |what: &str| {
        Err(ActionFailure::at(
            range.clone(),
            "the capture",
            format!("`by` writes `{text}`, which is not {what} as the capture is"),
        ))
    };
    let parent = nodes.first().map_or("", |n| {
        // A generator that is a call's only argument stands for the call's arguments.
        if crate::python::is_call_generator(*n) {
            "argument_list"
        } else {
            n.parent().map_or("", |p| p.kind())
        }
    });
    let kind = nodes.first().map_or("", |n| n.kind());
    let one_expression = !run
        && nodes.len() == 1
        && !NOT_EXPRESSIONS.contains(&kind)
        && !matches!(
            parent,
            "block" | "module" | "parameters" | "lambda_parameters"
        );
    if !one_expression {
        // Several nodes, a statement, a parameter: `by` must read as what stands there.
        if let Some((open, close, what)) = surroundings(parent, nodes.len()) {
            let whole = crate::python::parse(&format!("{open}{text}{close}"));
            if whole.root_node().has_error() {
                return refuse(what);
            }
        }
        return Ok((text, false));
    }
    let tree = crate::python::parse(&text);
    let root = tree.root_node();
    let expression = (root.named_child_count() == 1)
        .then(|| root.named_child(0))
        .flatten()
        .filter(|s| s.kind() == "expression_statement" && s.named_child_count() == 1)
        .filter(|_| !root.has_error());
    match expression {
        None => refuse("one expression"),
        Some(_) => Ok((text, true)),
    }
}
