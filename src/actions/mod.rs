//! What each action does to one match: the text edits it plans, or why it cannot.

use std::collections::HashMap;
use std::ops::Range;

use tree_sitter::{Node, Tree};

pub mod arglist;
pub mod signature;

use crate::edit::Edit;
use crate::pattern::matcher::{Bindings, Capture};
use crate::pattern::meta::{Metavar, scan};
use crate::python::{line_indent, significant_children};
use crate::rules::model::Action;
use arglist::{ArgList, Item};
use signature::{LookupError, ParamKind, Signature, find_signature};

/// Why an action cannot be carried out on a match.
#[derive(Debug, Clone)]
pub struct ActionFailure {
    /// What is wrong, in a sentence.
    pub reason: String,
    /// Spans of the target to point at, with a label each.
    pub labels: Vec<(Range<usize>, String)>,
    /// What to do about it.
    pub help: Option<String>,
}

impl ActionFailure {
    fn at(range: Range<usize>, label: &str, reason: String) -> Self {
        Self {
            reason,
            labels: vec![(range, label.to_string())],
            help: None,
        }
    }

    fn help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }
}

/// What an action works on: the file, its tree and the match.
pub struct Site<'a, 't> {
    /// The file's text.
    pub source: &'a str,
    /// The file's root node (signatures are looked up there).
    pub root: Node<'t>,
    /// The matched node.
    pub node: Node<'t>,
    /// The match's bindings.
    pub bindings: &'a Bindings<'t>,
}

/// Signatures already looked up in one file, and the context searched for those it lacks.
#[derive(Debug)]
pub struct Signatures<'c> {
    cache: HashMap<String, Result<Signature, LookupError>>,
    context: Option<&'c str>,
    /// The context's tree, parsed the first time the file lacks a signature.
    context_tree: Option<Tree>,
}

impl<'c> Signatures<'c> {
    /// A cache for one file; `context` is searched for names the file does not define.
    pub fn new(context: Option<&'c str>) -> Self {
        Self {
            cache: HashMap::new(),
            context,
            context_tree: None,
        }
    }

    fn get(&mut self, root: Node<'_>, source: &str, name: &str) -> &Result<Signature, LookupError> {
        if !self.cache.contains_key(name) {
            let mut found = find_signature(root, source, name);
            if found == Err(LookupError::NotFound)
                && let Some(context) = self.context
            {
                let tree = self
                    .context_tree
                    .get_or_insert_with(|| crate::python::parse(context));
                found = find_signature(tree.root_node(), context, name)
                    .map(|sig| Signature { range: None, ..sig });
            }
            self.cache.insert(name.to_string(), found);
        }
        &self.cache[name]
    }
}

/// The edits `action` makes at `site`; empty when the match already has the wanted shape.
pub fn plan(
    action: &Action,
    site: &Site<'_, '_>,
    signatures: &mut Signatures,
) -> Result<Vec<Edit>, ActionFailure> {
    let call_list = || {
        site.bindings
            .action_call()
            .and_then(|call| call.child_by_field_name("arguments"))
            .filter(|a| a.kind() == "argument_list")
    };
    let edit = match action {
        Action::KwargsToPositional {
            signature,
            keep_keyword,
        } => {
            let Some(list) = call_list() else {
                return Ok(Vec::new());
            };
            let sig = match signatures.get(site.root, site.source, &signature.value) {
                Ok(sig) => sig.clone(),
                Err(e) => return Err(lookup_failure(e, &signature.value, list.byte_range())),
            };
            let keep: Vec<&str> = keep_keyword.iter().map(|k| k.value.as_str()).collect();
            kwargs_to_positional(&ArgList::new(list, site.source), &sig, site.source, &keep)?
        }
        Action::RemoveKwargs(names) => {
            let Some(list) = call_list() else {
                return Ok(Vec::new());
            };
            let args = ArgList::new(list, site.source);
            let items: Vec<Item> = (0..args.args.len())
                .filter(|&i| {
                    keyword_name(&args, i, site.source)
                        .is_none_or(|k| !names.iter().any(|n| n.value == k))
                })
                .map(|i| old(&args, i))
                .collect();
            (items.len() != args.args.len()).then(|| Edit {
                range: args.inner.clone(),
                text: args.render(&items),
            })
        }
        Action::SetKwargs(pairs) => {
            let Some(list) = call_list() else {
                return Ok(Vec::new());
            };
            let args = ArgList::new(list, site.source);
            let mut items: Vec<Item> = (0..args.args.len()).map(|i| old(&args, i)).collect();
            for (name, template) in pairs {
                let value = substitute(&template.text, site.bindings, site.source, "");
                let existing = (0..args.args.len())
                    .find(|&i| keyword_name(&args, i, site.source) == Some(name.value.as_str()));
                match existing {
                    Some(i) => {
                        let node = args.args[i].node;
                        let value_node = node.child_by_field_name("value").unwrap_or(node);
                        let head = &site.source[node.start_byte()..value_node.start_byte()];
                        items[i] = Item::Old {
                            index: i,
                            text: format!("{head}{value}"),
                        };
                    }
                    None => items.push(Item::New(format!("{}={value}", name.value))),
                }
            }
            Some(Edit {
                range: args.inner.clone(),
                text: args.render(&items),
            })
        }
        Action::Replace(template) => {
            let range = site.node.byte_range();
            let indent = line_indent(site.source, range.start);
            Some(Edit {
                range,
                text: substitute(&template.text, site.bindings, site.source, indent),
            })
        }
        Action::InsertBefore(template) | Action::InsertAfter(template) => {
            let before = matches!(action, Action::InsertBefore(_));
            let statement = enclosing_statement(site.node);
            let indent = line_indent(site.source, statement.start_byte());
            let code = substitute(&template.text, site.bindings, site.source, indent);
            let (siblings, at) = siblings_of(statement);
            let n = statement_count(&code);
            let neighbours = if before {
                &siblings[at.saturating_sub(n)..at]
            } else {
                &siblings[(at + 1).min(siblings.len())..(at + 1 + n).min(siblings.len())]
            };
            if same_code(neighbours, site.source, &code) {
                None
            } else if before {
                Some(Edit {
                    range: statement.start_byte()..statement.start_byte(),
                    text: format!("{code}\n{indent}"),
                })
            } else {
                Some(Edit {
                    range: statement.end_byte()..statement.end_byte(),
                    text: format!("\n{indent}{code}"),
                })
            }
        }
        Action::Delete => {
            let target = if site.node.kind() == "decorator" {
                site.node
            } else {
                enclosing_statement(site.node)
            };
            let (siblings, _) = siblings_of(target);
            if target.kind() != "decorator" && siblings.len() == 1 {
                // A block cannot be empty: the only statement becomes `pass`.
                Some(Edit {
                    range: target.byte_range(),
                    text: "pass".to_string(),
                })
            } else {
                Some(delete_lines(site.source, target.byte_range()))
            }
        }
        Action::AppendBody(template) | Action::PrependBody { code: template, .. } => {
            let function = function_of(site)?;
            let body = function.child_by_field_name("body").ok_or_else(|| {
                ActionFailure::at(
                    function.byte_range(),
                    "here",
                    "the function has no body".into(),
                )
            })?;
            let statements = significant_children(body);
            let Some(first) = statements.first() else {
                return Ok(Vec::new());
            };
            let indent = line_indent(site.source, first.start_byte());
            let code = substitute(&template.text, site.bindings, site.source, indent);
            let n = statement_count(&code);
            let (anchor, after_anchor) = match action {
                Action::AppendBody(_) => (statements.len() - 1, true),
                Action::PrependBody { after_super, .. } => {
                    if *after_super {
                        let at = statements
                            .iter()
                            .position(|s| is_super_init(*s, site.source))
                            .ok_or_else(|| {
                                ActionFailure::at(
                                    function.child_by_field_name("name").map_or(function.byte_range(), |n| n.byte_range()),
                                    "this function",
                                    "`after_super` is set but the body calls no `super().__init__(...)`".into(),
                                )
                            })?;
                        (at, true)
                    } else if is_docstring(*first) {
                        (0, true)
                    } else {
                        (0, false)
                    }
                }
                _ => unreachable!("body actions only"),
            };
            let neighbours = if after_anchor {
                &statements
                    [(anchor + 1).min(statements.len())..(anchor + 1 + n).min(statements.len())]
            } else {
                &statements[..n.min(statements.len())]
            };
            // Appending: the code already standing last counts as already applied.
            let neighbours = if matches!(action, Action::AppendBody(_)) {
                &statements[statements.len().saturating_sub(n)..]
            } else {
                neighbours
            };
            if same_code(neighbours, site.source, &code) {
                None
            } else if after_anchor {
                let end = statements[anchor].end_byte();
                Some(Edit {
                    range: end..end,
                    text: format!("\n{indent}{code}"),
                })
            } else {
                let start = first.start_byte();
                Some(Edit {
                    range: start..start,
                    text: format!("{code}\n{indent}"),
                })
            }
        }
        Action::AddDecorator(template) => {
            let function = function_of(site)?;
            let outer = function
                .parent()
                .filter(|p| p.kind() == "decorated_definition")
                .unwrap_or(function);
            let code = substitute(&template.text, site.bindings, site.source, "");
            let present = significant_children(outer)
                .into_iter()
                .filter(|d| d.kind() == "decorator")
                .any(|d| normalize(&site.source[d.byte_range()]) == normalize(&format!("@{code}")));
            if present {
                None
            } else {
                let start = outer.start_byte();
                let indent = line_indent(site.source, start);
                Some(Edit {
                    range: start..start,
                    text: format!("@{code}\n{indent}"),
                })
            }
        }
        Action::Rename {
            from,
            to,
            attributes,
        } => {
            let edits = rename(site.node, site.source, &from.value, &to.value, *attributes);
            return Ok(edits);
        }
    };
    Ok(edit
        .filter(|e| site.source[e.range.clone()] != e.text)
        .into_iter()
        .collect())
}

/// The statement holding `node`: the node itself or the ancestor that stands in a block.
fn enclosing_statement(node: Node<'_>) -> Node<'_> {
    let mut current = node;
    while let Some(parent) = current.parent() {
        if matches!(parent.kind(), "block" | "module") {
            return current;
        }
        current = parent;
    }
    current
}

/// The statements of the block holding `statement`, and its position among them.
fn siblings_of(statement: Node<'_>) -> (Vec<Node<'_>>, usize) {
    let Some(parent) = statement.parent() else {
        return (vec![statement], 0);
    };
    let siblings = significant_children(parent);
    let at = siblings.iter().position(|s| *s == statement).unwrap_or(0);
    (siblings, at)
}

/// How many statements `code` holds.
fn statement_count(code: &str) -> usize {
    let tree = crate::python::parse(code);
    significant_children(tree.root_node()).len().max(1)
}

/// Code with each line trimmed and blank lines dropped, for comparing what stands with what
/// an insertion would add.
fn normalize(code: &str) -> String {
    code.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join("\n")
}

fn same_code(statements: &[Node<'_>], source: &str, code: &str) -> bool {
    let (Some(first), Some(last)) = (statements.first(), statements.last()) else {
        return false;
    };
    normalize(&source[first.start_byte()..last.end_byte()]) == normalize(code)
}

/// Removes whole lines where the node stands alone on them, otherwise just the node.
fn delete_lines(source: &str, range: Range<usize>) -> Edit {
    let line_start = source[..range.start].rfind('\n').map_or(0, |i| i + 1);
    let line_end = source[range.end..]
        .find('\n')
        .map_or(source.len(), |i| range.end + i + 1);
    let before = &source[line_start..range.start];
    let after = source[range.end..line_end].trim();
    if before.trim().is_empty() && (after.is_empty() || after.starts_with('#')) {
        Edit {
            range: line_start..line_end,
            text: String::new(),
        }
    } else {
        Edit {
            range,
            text: String::new(),
        }
    }
}

/// The function a body or decorator action works on: the match itself.
fn function_of<'t>(site: &Site<'_, 't>) -> Result<Node<'t>, ActionFailure> {
    if site.node.kind() == "function_definition" {
        return Ok(site.node);
    }
    Err(ActionFailure::at(
        site.node.byte_range(),
        "not a function",
        "this action needs a function pattern such as `def __init__($$$P): $$$B`".into(),
    ))
}

fn is_docstring(statement: Node<'_>) -> bool {
    statement.kind() == "expression_statement"
        && statement
            .named_child(0)
            .is_some_and(|c| c.kind() == "string")
}

fn is_super_init(statement: Node<'_>, source: &str) -> bool {
    let text = &source[statement.byte_range()];
    statement.kind() == "expression_statement"
        && text.starts_with("super(")
        && text.contains(".__init__(")
}

/// Renames identifiers `from` within `node`; attribute names only when `attributes`, keyword
/// names of calls never (they name the callee's parameters, not this variable).
fn rename(node: Node<'_>, source: &str, from: &str, to: &str, attributes: bool) -> Vec<Edit> {
    let mut edits = Vec::new();
    let mut stack = vec![node];
    while let Some(n) = stack.pop() {
        let mut cursor = n.walk();
        stack.extend(n.named_children(&mut cursor));
        if n.kind() != "identifier" || &source[n.byte_range()] != from {
            continue;
        }
        let field_of = |parent: Node<'_>| -> Option<String> {
            let mut c = parent.walk();
            let mut found = None;
            if c.goto_first_child() {
                loop {
                    if c.node() == n {
                        found = c.field_name().map(str::to_string);
                        break;
                    }
                    if !c.goto_next_sibling() {
                        break;
                    }
                }
            }
            found
        };
        if let Some(parent) = n.parent() {
            let field = field_of(parent);
            let field = field.as_deref();
            if parent.kind() == "attribute" && field == Some("attribute") && !attributes {
                continue;
            }
            if parent.kind() == "keyword_argument" && field == Some("name") {
                continue;
            }
        }
        edits.push(Edit {
            range: n.byte_range(),
            text: to.to_string(),
        });
    }
    edits.sort_by_key(|e| e.range.start);
    edits
}

fn old(args: &ArgList<'_>, index: usize) -> Item {
    Item::Old {
        index,
        text: args.text(index).to_string(),
    }
}

fn keyword_name<'s>(args: &ArgList<'_>, index: usize, source: &'s str) -> Option<&'s str> {
    let node = args.args[index].node;
    (node.kind() == "keyword_argument")
        .then(|| node.child_by_field_name("name"))
        .flatten()
        .map(|n| &source[n.byte_range()])
}

fn lookup_failure(e: &LookupError, name: &str, at: Range<usize>) -> ActionFailure {
    let (reason, help) = match e {
        LookupError::NotFound => (
            format!("no definition of `{name}` in this file"),
            "the signature must be defined in the file being patched (or, at run time, in the signature context); check `signature:`",
        ),
        LookupError::NoMethod => (
            format!(
                "the class defines no `{}`",
                name.rsplit('.').next().unwrap_or(name)
            ),
            "an inherited method is not guessed at: name the class that defines it",
        ),
        LookupError::Ambiguous(n) => (
            format!("`{name}` is defined {n} times with different parameters"),
            "the engine does not guess which definition applies",
        ),
    };
    ActionFailure::at(at, "this call", reason).help(help)
}

/// Rewrites keyword arguments into positionals in the signature's order, filling skipped
/// parameters with their defaults; refuses wherever that would change what the call binds.
fn kwargs_to_positional(
    args: &ArgList<'_>,
    sig: &Signature,
    source: &str,
    keep_keyword: &[&str],
) -> Result<Option<Edit>, ActionFailure> {
    let keywords: Vec<usize> = (0..args.args.len())
        .filter(|&i| args.args[i].kind == "keyword_argument")
        .collect();
    if keywords.is_empty() {
        return Ok(None);
    }
    let sig_note = sig
        .range
        .clone()
        .map(|range| (range, format!("`{}` is defined here", sig.name)));
    let fail = |at: Range<usize>, label: &str, reason: String| {
        let mut f = ActionFailure::at(at, label, reason);
        f.labels.extend(sig_note.clone());
        f
    };
    let last_keyword = *keywords.last().expect("not empty");
    let mut positional = 0;
    let mut splats = Vec::new();
    for (i, arg) in args.args.iter().enumerate() {
        match arg.kind {
            "keyword_argument" => {}
            "list_splat" => {
                return Err(fail(
                    arg.node.byte_range(),
                    "this splat",
                    format!(
                        "`{}` hides how many positionals come before the keywords",
                        args.text(i)
                    ),
                ));
            }
            "dictionary_splat" if i < last_keyword => {
                return Err(fail(
                    arg.node.byte_range(),
                    "this splat",
                    format!(
                        "`{}` stands before keyword arguments and would have to move",
                        args.text(i)
                    ),
                )
                .help("only a `**splat` after every keyword argument can stay where it is"));
            }
            "dictionary_splat" => splats.push(i),
            _ => positional += 1,
        }
    }
    let params: Vec<_> = sig.positional().collect();
    // With `keep_keyword`, positionals stop at the first kept parameter; what follows stays
    // as keywords, which every Python call accepts after positionals.
    let limit = if keep_keyword.is_empty() {
        usize::MAX
    } else {
        params
            .iter()
            .position(|p| keep_keyword.contains(&p.name.as_str()))
            .unwrap_or(params.len())
    };
    let mut given: HashMap<usize, usize> = HashMap::new();
    let mut kept: Vec<usize> = Vec::new();
    for &k in &keywords {
        let node = args.args[k].node;
        let name = keyword_name(args, k, source).unwrap_or("");
        let param = sig.params.iter().find(|p| p.name == name);
        if limit != usize::MAX {
            let slot = params.iter().position(|p| p.name == name);
            let stays = match (slot, param.map(|p| p.kind)) {
                (Some(s), Some(ParamKind::PositionalOrKeyword)) => s >= limit,
                (_, Some(ParamKind::KeywordOnly)) => true,
                (None, None) => sig.has_var_keyword(),
                _ => false,
            };
            if stays {
                kept.push(k);
                continue;
            }
        }
        let slot = match param.map(|p| p.kind) {
            Some(ParamKind::PositionalOrKeyword) => params
                .iter()
                .position(|p| p.name == name)
                .expect("positional-or-keyword parameters are positional"),
            Some(ParamKind::KeywordOnly) => {
                return Err(fail(
                    node.byte_range(),
                    "keyword-only",
                    format!(
                        "`{name}` is keyword-only in `{}`; it has no positional form",
                        sig.name
                    ),
                ));
            }
            Some(_) | None if sig.has_var_keyword() => {
                return Err(fail(
                    node.byte_range(),
                    "not a named parameter",
                    format!(
                        "`{name}` is not a named parameter of `{}`; it goes into `**kwargs`, which has no positional form",
                        sig.name
                    ),
                ));
            }
            _ => {
                return Err(fail(
                    node.byte_range(),
                    "unknown keyword",
                    format!("`{}` has no parameter `{name}`", sig.name),
                )
                .help(
                    "the signature and the call disagree: upstream may have changed one of them",
                ));
            }
        };
        if slot < positional {
            return Err(fail(
                node.byte_range(),
                "given twice",
                format!("`{name}` is already given by position"),
            ));
        }
        given.insert(slot, k);
    }
    let Some(&highest) = given.keys().max() else {
        // Every keyword stays a keyword: nothing to move.
        return Ok(None);
    };
    let mut items: Vec<Item> = (0..positional).map(|i| old(args, i)).collect();
    for (slot, param) in params.iter().enumerate().take(highest + 1).skip(positional) {
        match given.get(&slot) {
            Some(&k) => {
                let node = args.args[k].node;
                let value = node.child_by_field_name("value").unwrap_or(node);
                items.push(Item::Old {
                    index: k,
                    text: source[value.byte_range()].to_string(),
                });
            }
            None => {
                let at = args.args[*keywords.first().expect("not empty")]
                    .node
                    .byte_range();
                if let Some(&s) = splats.first() {
                    return Err(fail(
                        args.args[s].node.byte_range(),
                        "may supply it",
                        format!(
                            "parameter `{}` is skipped and would be filled with its default, but `{}` may supply it",
                            param.name,
                            args.text(s)
                        ),
                    ));
                }
                let Some(default) = &param.default else {
                    return Err(fail(
                        at,
                        "here",
                        format!("required parameter `{}` is not given", param.name),
                    ));
                };
                items.push(Item::New(default.clone()));
            }
        }
    }
    items.extend(kept.iter().map(|&k| old(args, k)));
    items.extend(splats.iter().map(|&s| old(args, s)));
    Ok(Some(Edit {
        range: args.inner.clone(),
        text: args.render(&items),
    }))
}

/// Fills a template's metavariables with the text they bound. Lines after the template's
/// first are indented like the line the match starts on, and a capture spanning several lines
/// keeps its own layout, shifted to where it now stands. `($$$ARGS)` with every argument of a
/// call takes the call's whole argument layout (line breaks, trailing comma) along.
pub fn substitute(template: &str, bindings: &Bindings<'_>, source: &str, indent: &str) -> String {
    let Ok(pieces) = scan(template) else {
        // Templates are checked when rules compile; a failure here cannot happen.
        return template.to_string();
    };
    let mut out = String::with_capacity(template.len());
    for piece in &pieces {
        match &piece.var {
            None => {
                for (i, part) in template[piece.range.clone()].split('\n').enumerate() {
                    if i > 0 {
                        out.push('\n');
                        out.push_str(indent);
                    }
                    out.push_str(part);
                }
            }
            Some(Metavar::Single(Some(name)) | Metavar::Multi(Some(name))) => {
                let Some(capture) = bindings.get(name) else {
                    continue;
                };
                let between_parens = template[..piece.range.start].ends_with('(')
                    && template[piece.range.end..].starts_with(')');
                let (text, start) = capture_layout(capture, source, between_parens);
                // Continuation lines keep their indentation relative to the capture's base:
                // the capture's own column where it opens a line, else its line's indentation.
                let line_start = source[..start].rfind('\n').map_or(0, |i| i + 1);
                let opens_line = source[line_start..start].trim().is_empty();
                let base = if opens_line {
                    &source[line_start..start]
                } else {
                    line_indent(source, start)
                };
                let here = current_indent(&out).to_string();
                let segments: Vec<&str> = text.split('\n').collect();
                for (i, segment) in segments.iter().enumerate() {
                    if i == 0 {
                        out.push_str(segment);
                        continue;
                    }
                    out.push('\n');
                    let last = i + 1 == segments.len();
                    if segment.trim().is_empty() && !last {
                        continue;
                    }
                    out.push_str(&here);
                    out.push_str(segment.strip_prefix(base).unwrap_or(segment.trim_start()));
                }
            }
            Some(_) => {}
        }
    }
    // Lines holding only indentation are left empty.
    let mut cleaned: Vec<&str> = out.split('\n').collect();
    for line in &mut cleaned {
        if line.trim().is_empty() {
            *line = "";
        }
    }
    cleaned.join("\n")
}

/// The leading whitespace of the last line of `text`.
fn current_indent(text: &str) -> &str {
    let line = &text[text.rfind('\n').map_or(0, |i| i + 1)..];
    &line[..line.len() - line.trim_start().len()]
}

/// The text a capture writes, and where that text starts in the source.
fn capture_layout<'s>(
    capture: &Capture<'_>,
    source: &'s str,
    between_parens: bool,
) -> (&'s str, usize) {
    if between_parens
        && let Capture::Many(nodes) = capture
        && let Some(first) = nodes.first()
        && let Some(list) = first.parent().filter(|p| p.kind() == "argument_list")
    {
        let mut cursor = list.walk();
        let all: Vec<_> = list
            .named_children(&mut cursor)
            .filter(|n| n.kind() != "comment")
            .collect();
        if all == *nodes {
            let inner = list.start_byte() + 1..list.end_byte() - 1;
            return (&source[inner.clone()], inner.start);
        }
    }
    let start = capture.byte_range().map_or(0, |r| r.start);
    (capture.text(source), start)
}
