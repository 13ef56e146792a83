//! What each action does to one match: the text edits it plans, or why it cannot.

use std::collections::HashMap;
use std::ops::Range;

use tree_sitter::Node;

use super::arglist::{ArgList, Item};
use super::signature::{LookupError, ParamKind, Signature, find_signature};
use crate::pattern::matcher::Bindings;
use crate::pattern::meta::{Metavar, scan};
use crate::python::line_indent;
use crate::rules::model::Action;

/// One planned text replacement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Edit {
    /// The bytes replaced.
    pub range: Range<usize>,
    /// What replaces them.
    pub text: String,
}

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

/// Signatures already looked up in one file.
#[derive(Debug, Default)]
pub struct Signatures {
    cache: HashMap<String, Result<Signature, LookupError>>,
}

impl Signatures {
    fn get(&mut self, root: Node<'_>, source: &str, name: &str) -> &Result<Signature, LookupError> {
        self.cache
            .entry(name.to_string())
            .or_insert_with(|| find_signature(root, source, name))
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
        Action::KwargsToPositional { signature } => {
            let Some(list) = call_list() else {
                return Ok(Vec::new());
            };
            let sig = match signatures.get(site.root, site.source, &signature.value) {
                Ok(sig) => sig.clone(),
                Err(e) => return Err(lookup_failure(e, &signature.value, list.byte_range())),
            };
            kwargs_to_positional(&ArgList::new(list, site.source), &sig, site.source)?
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
    };
    Ok(edit
        .filter(|e| site.source[e.range.clone()] != e.text)
        .into_iter()
        .collect())
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
            "the signature must be defined in the file being patched; check `signature:`",
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
) -> Result<Option<Edit>, ActionFailure> {
    let keywords: Vec<usize> = (0..args.args.len())
        .filter(|&i| args.args[i].kind == "keyword_argument")
        .collect();
    if keywords.is_empty() {
        return Ok(None);
    }
    let sig_note = (sig.range.clone(), format!("`{}` is defined here", sig.name));
    let fail = |at: Range<usize>, label: &str, reason: String| {
        let mut f = ActionFailure::at(at, label, reason);
        f.labels.push(sig_note.clone());
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
    let mut given: HashMap<usize, usize> = HashMap::new();
    for &k in &keywords {
        let node = args.args[k].node;
        let name = keyword_name(args, k, source).unwrap_or("");
        let param = sig.params.iter().find(|p| p.name == name);
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
    let highest = *given.keys().max().expect("every keyword has a slot");
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
    items.extend(splats.iter().map(|&s| old(args, s)));
    Ok(Some(Edit {
        range: args.inner.clone(),
        text: args.render(&items),
    }))
}

/// Fills a template's metavariables with the text they bound; lines after the first are
/// indented like the line the match starts on.
pub fn substitute(template: &str, bindings: &Bindings<'_>, source: &str, indent: &str) -> String {
    let mut out = String::with_capacity(template.len());
    let Ok(pieces) = scan(template) else {
        // Templates are checked when rules compile; a failure here cannot happen.
        return template.to_string();
    };
    for piece in pieces {
        match &piece.var {
            None => out.push_str(&template[piece.range]),
            Some(Metavar::Single(Some(name)) | Metavar::Multi(Some(name))) => {
                if let Some(capture) = bindings.get(name) {
                    out.push_str(capture.text(source));
                }
            }
            Some(_) => {}
        }
    }
    if indent.is_empty() || !out.contains('\n') {
        return out;
    }
    let mut lines = out.split('\n');
    let mut indented = lines.next().unwrap_or("").to_string();
    for line in lines {
        indented.push('\n');
        if !line.trim().is_empty() {
            indented.push_str(indent);
        }
        indented.push_str(line);
    }
    indented
}
