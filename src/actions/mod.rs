//! The actions: what each one does to a match. An action is one unit — a type implementing
//! [`ActionUnit`], which carries how its arguments are read (its schema entry, through
//! [`ActionSpec`]), what compile needs to know of it ([`Facts`]), its planning and its
//! `explain` text — registered by one `register_action!` line in its own file.

pub mod arglist;
mod between;
mod bindings;
mod call;
mod check;
mod comments;
mod derive;
mod function;
mod kept;
mod lookup;
mod mro;
mod outline;
mod parameters;
mod positional;
mod rename;
mod resolve;
pub mod signature;
mod statement;
mod statements;
mod strings;

use std::ops::Range;

use tree_sitter::Node;

use crate::edit::Edit;
use crate::pattern::matcher::Bindings;
use crate::python::significant_children;
use crate::rules::action::{Action, ActionSpec, Arg};
use crate::rules::model::Snippet;
pub use lookup::{probe_signature, signature_at};
pub use resolve::Signatures;

/// What a match must be for an action to apply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Needs {
    /// Any node.
    Anything,
    /// A pattern holding a call, whose arguments the action edits.
    Call,
    /// A function definition.
    Function,
}

/// What compile needs to know of an action, before any file is seen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Facts {
    /// What the match must be.
    pub needs: Needs,
    /// Whether every edit lies within the matched node: then a rule can run on a parse of only
    /// the statements that could hold a match.
    pub edits_within_match: bool,
}

/// One action: its rule-file half ([`ActionSpec`]) and what it does.
pub trait ActionUnit: ActionSpec {
    /// What compile needs to know of it.
    fn facts(&self) -> Facts;

    /// What compile needs to know of it with these arguments (most actions: the same whatever
    /// they are given).
    fn facts_for(&self, _args: &Arg) -> Facts {
        self.facts()
    }

    /// The templates among its arguments, whose metavariables the pattern must bind: every
    /// text, unless the action says its texts are names.
    fn templates<'a>(&self, args: &'a Arg) -> Vec<&'a Snippet> {
        args.snippets()
    }

    /// Arguments that may name metavariables without being templates (a signature written
    /// `$CLS.forward`): each metavariable they use must be bound, as a template's must.
    fn metavar_args<'a>(&self, _args: &'a Arg) -> Vec<&'a Snippet> {
        Vec::new()
    }

    /// What the action leaves where `pattern` matched: read as a pattern, the code recognises
    /// the patch already applied (`--write`, then `--check`).
    fn applied_shape(&self, _args: &Arg, _pattern: &str) -> AppliedShape {
        AppliedShape::Unknown
    }

    /// One line for `explain`: what it does with these arguments.
    fn explain(&self, args: &Arg) -> String {
        let json = serde_json::to_string(&args.to_value()).unwrap_or_default();
        format!("{} {json}", self.name())
    }

    /// The edits it makes at `site`; empty when the match already has the wanted shape.
    fn plan(
        &self,
        args: &Arg,
        site: &Site<'_, '_>,
        signatures: &mut Signatures,
    ) -> Result<Vec<Edit>, ActionFailure>;
}

/// What an action leaves at a site, for recognising the patch already applied.
#[derive(Debug, Clone, PartialEq)]
pub enum AppliedShape {
    /// Nothing that can be recognised.
    Unknown,
    /// This code (a pattern's text, metavariables and all).
    Code(String),
    /// Nothing: the site is gone (`delete`), which shows as the match's absence within the
    /// rule's class or function.
    Absent,
}

/// Every action unit; `register_action!` adds one.
#[linkme::distributed_slice]
pub static ACTIONS: [&'static dyn ActionUnit];

/// Registers an action unit in both halves of the registry: the rule layer's
/// ([`crate::rules::action::ACTION_SPECS`]) and this one's ([`ACTIONS`]).
macro_rules! register_action {
    ($unit:ident) => {
        const _: () = {
            #[linkme::distributed_slice(crate::rules::action::ACTION_SPECS)]
            static SPEC: &'static dyn crate::rules::action::ActionSpec = &$unit;
            #[linkme::distributed_slice(crate::actions::ACTIONS)]
            static UNIT: &'static dyn crate::actions::ActionUnit = &$unit;
        };
    };
}
pub(crate) use register_action;

/// The unit of a loaded action (every loaded action has one: the loader found it by name).
pub fn unit(action: &Action) -> &'static dyn ActionUnit {
    ACTIONS
        .iter()
        .copied()
        .find(|u| u.name() == action.name)
        .expect("the loader reads only registered actions")
}

/// The edits `action` makes at `site`; empty when the match already has the wanted shape.
pub fn plan(
    action: &Action,
    site: &Site<'_, '_>,
    signatures: &mut Signatures,
) -> Result<Vec<Edit>, ActionFailure> {
    unit(action).plan(&action.args, site, signatures)
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
    /// The matched node (for a statement sequence, its first statement).
    pub node: Node<'t>,
    /// The match's last node: `node`, or a statement sequence's last statement.
    pub last: Node<'t>,
    /// The match's bindings.
    pub bindings: &'a Bindings<'t>,
}

impl<'t> Site<'_, 't> {
    /// The bytes the match spans.
    pub fn range(&self) -> std::ops::Range<usize> {
        self.node.start_byte()..self.last.end_byte()
    }

    /// The argument list of the call the action edits, if the match has one.
    fn call_arguments(&self) -> Option<Node<'t>> {
        self.bindings
            .action_call()
            .and_then(|call| call.child_by_field_name("arguments"))
            .filter(|a| a.kind() == "argument_list")
    }

    /// The generator a matched call takes as its only argument without parentheses of its
    /// own (`f(x for x in y)`: tree-sitter makes it the argument list itself).
    fn bare_generator(&self) -> Option<Node<'t>> {
        self.bindings
            .action_call()
            .and_then(|call| call.child_by_field_name("arguments"))
            .filter(|a| a.kind() == "generator_expression")
    }

    /// `edit`, unless it would leave the text as it is.
    fn changing(&self, edit: Option<Edit>) -> Vec<Edit> {
        // Edits are written with `\n`, and given the file's `\r\n` when it has them: text equal
        // but for those is no change (else a CRLF file's own output reads as a new site).
        let same = |e: &Edit| {
            let there = &self.source[e.range.clone()];
            there == e.text || (there.contains('\r') && there.replace("\r\n", "\n") == e.text)
        };
        edit.filter(|e| !same(e)).into_iter().collect()
    }
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

/// Whether `statements` are `code`, token for token: layout and comments aside, so code
/// inserted with a comment (or commented differently since) is recognised as already there.
fn same_code(statements: &[Node<'_>], source: &str, code: &str) -> bool {
    if statements.is_empty() {
        return false;
    }
    let tree = crate::python::parse(code);
    let wanted = significant_children(tree.root_node());
    wanted.len() == statements.len()
        && wanted
            .iter()
            .zip(statements)
            .all(|(w, s)| tokens(*w, code) == tokens(*s, source))
}

/// The text of `node`'s tokens, comments left out, one space apart.
fn tokens(node: Node<'_>, source: &str) -> String {
    let mut out = String::new();
    let mut cursor = node.walk();
    loop {
        let n = cursor.node();
        let leaf = n.child_count() == 0 || n.kind() == "string_content";
        if n.kind() != "comment" && leaf {
            if !out.is_empty() {
                out.push(' ');
            }
            out.push_str(&source[n.byte_range()]);
        } else if n.kind() != "comment" && cursor.goto_first_child() {
            continue;
        }
        while !cursor.goto_next_sibling() {
            if !cursor.goto_parent() || cursor.node() == node {
                return out;
            }
        }
    }
}

/// Where code inserted after the statement ending at `end` goes: after a comment that ends
/// its line (`q, k = rope(q, k)  # Ignore copy`), so the comment stays with its statement.
fn after_trailing_comment(source: &str, end: usize) -> usize {
    let line_end = source[end..].find('\n').map_or(source.len(), |i| end + i);
    let rest = source[end..line_end].trim_start();
    if rest.starts_with('#') {
        line_end - usize::from(source[..line_end].ends_with('\r'))
    } else {
        end
    }
}

#[cfg(test)]
mod tests;
