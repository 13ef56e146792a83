//! Python code patterns with metavariables: parsing them, and the pattern tree they become.
//!
//! A pattern is rewritten by [`meta`], parsed with tree-sitter-python and turned into a
//! [`PatNode`] tree. That tree compiles into a tree-sitter query ([`query`]) that finds
//! candidates fast, and the [`matcher`] then checks each candidate exactly (sequence
//! metavariables, keyword arguments in any order, repeated names binding the same text).

pub(crate) mod facts;
pub mod matcher;
pub mod meta;
mod optional;
pub mod query;
pub mod template;

use std::ops::Range;

use tree_sitter::Node;

use crate::python;
use facts::{literals_of, root_kinds};
use meta::{Encoded, Metavar, decode_identifier, encode};

/// A node of a compiled pattern.
#[derive(Debug, Clone, PartialEq)]
pub enum PatNode {
    /// `$NAME` or `$_`: exactly one node.
    Var(Option<String>),
    /// `$$$NAME` or `$$$`: any number of nodes in a sequence.
    Multi(Option<String>),
    /// A concrete syntax node.
    Node(NodePattern),
    /// `match: {any: [...]}` at the root: alternatives tried in order, the first that
    /// matches binds.
    Any(Vec<PatNode>),
    /// Several statements at the root: consecutive statements of one block (a `$$$` between
    /// two allows a gap). Starts and ends with a statement.
    Seq(Vec<PatNode>),
}

/// A concrete syntax node of a pattern.
#[derive(Debug, Clone, PartialEq)]
pub struct NodePattern {
    /// The tree-sitter kind, e.g. `call`.
    pub kind: String,
    /// The ids of that kind (one name may have several, through aliases): the matcher
    /// compares ids, not names.
    pub kind_ids: &'static [u16],
    /// Whether the kind is a named node (as opposed to a token such as `=`).
    pub named: bool,
    /// For named leaves (identifiers, numbers, string parts): the exact text.
    pub text: Option<String>,
    /// The significant children, with the field each stands in.
    pub children: Vec<(Option<String>, PatNode)>,
    /// Whether this is the call an argument action edits.
    pub is_action_call: bool,
    /// For an argument list: keyword arguments must stand in the pattern's order.
    pub ordered: bool,
}

impl PatNode {
    fn visit<'a>(&'a self, f: &mut impl FnMut(&'a PatNode)) {
        f(self);
        match self {
            PatNode::Node(n) => {
                for (_, c) in &n.children {
                    c.visit(f);
                }
            }
            PatNode::Any(parts) | PatNode::Seq(parts) => {
                for a in parts {
                    a.visit(f);
                }
            }
            PatNode::Var(_) | PatNode::Multi(_) => {}
        }
    }

    /// The tree-sitter kind this node matches, or `None` for a metavariable.
    pub fn kind(&self) -> Option<&str> {
        match self {
            PatNode::Node(n) => Some(&n.kind),
            _ => None,
        }
    }
}

/// A compiled pattern.
#[derive(Debug, Clone)]
pub struct Pattern {
    /// The pattern as written.
    pub source: String,
    /// Its tree.
    pub root: PatNode,
    /// Named metavariables, in order of first appearance.
    pub metavars: Vec<String>,
    /// The identifiers and other leaf texts any match must contain (for prefiltering).
    pub literals: Vec<String>,
    /// The node kind ids a match can stand at; `None` where any kind may (a pattern rooted in
    /// a metavariable, a statement sequence).
    pub root_kinds: Option<Vec<u16>>,
}

/// The header of a `for` loop a match must lie in.
#[derive(Debug, Clone)]
pub struct LoopPattern {
    /// The header as written.
    pub source: String,
    /// The loop target (`idx, layer`).
    pub left: PatNode,
    /// The iterable (`enumerate(self.layers)`).
    pub right: PatNode,
    /// Named metavariables, in order of first appearance.
    pub metavars: Vec<String>,
    /// The identifiers and other leaf texts the loop header must contain.
    pub literals: Vec<String>,
}

/// Why a pattern did not compile: a span in the pattern as written and a reason.
#[derive(Debug, Clone)]
pub struct PatternError {
    /// Span within the pattern text.
    pub range: Range<usize>,
    /// What is wrong.
    pub reason: String,
    /// Whether the error is a malformed metavariable (rather than Python syntax).
    pub metavar: bool,
}

const MAX_PATTERN_DEPTH: usize = 200;

impl Pattern {
    /// Compiles an expression or statement pattern.
    pub fn compile(source: &str) -> Result<Pattern, PatternError> {
        let encoded = encode_pattern(source)?;
        let tree = python::parse(&encoded.text);
        // `@dec` alone is a decorator pattern; `@dec` over a `def` is a decorated definition,
        // which must match as a whole (not silently as its decorator).
        let decorated_definition = || {
            let root = tree.root_node();
            !root.has_error()
                && matches!(python::significant_children(root).as_slice(),
                    [one] if one.kind() == "decorated_definition")
        };
        if source.trim_start().starts_with('@') && !decorated_definition() {
            return Self::compile_decorator(source);
        }
        check_syntax(&encoded, &encoded.text, tree.root_node(), "")?;
        let statements = python::significant_children(tree.root_node());
        let statement = match statements.as_slice() {
            [one] => {
                // A mark on the one statement is a mistake, reported at the mark.
                optional::marked(tree.root_node(), &[*one], &encoded.text).map_err(|mut e| {
                    e.range = encoded.original_range(e.range);
                    e
                })?;
                *one
            }
            [] => return Err(shape_error(0..source.len(), "the pattern is empty")),
            several => {
                return Self::compile_sequence(source, (tree.root_node(), several), &encoded);
            }
        };
        let mut root = convert(statement, &encoded.text, &encoded, 0)?;
        // `x = f()` parses as an expression statement around an assignment: match the
        // assignment itself, so the pattern also finds it where no statement wraps it.
        if statement.kind() == "expression_statement"
            && let PatNode::Node(n) = &mut root
        {
            if n.children.len() == 1 {
                root = n.children[0].1.clone();
            } else {
                // `$A, $B` is a statement of several expressions to tree-sitter, but the tuple
                // it is in CPython's AST: find it where it is one (`x = a, b`, `return a, b`).
                n.kind = "expression_list".to_string();
                n.kind_ids = crate::python::grammar::matched_kind_ids("expression_list", true);
            }
        }
        mark_action_call(&mut root);
        Ok(Pattern {
            source: source.to_string(),
            metavars: metavars_of(&[&root]),
            literals: literals_of(&root),
            root_kinds: root_kinds(&root),
            root,
        })
    }

    /// Compiles several statements into a sequence pattern: each statement kept as the
    /// statement it is (an expression statement stays one, to match a block's children).
    fn compile_sequence(
        source: &str,
        (module, statements): (Node<'_>, &[Node<'_>]),
        encoded: &Encoded,
    ) -> Result<Pattern, PatternError> {
        let parts = statements
            .iter()
            .map(|s| convert(*s, &encoded.text, encoded, 0))
            .collect::<Result<Vec<_>, _>>()?;
        let optional = optional::marked(module, statements, &encoded.text).map_err(|mut e| {
            e.range = encoded.original_range(e.range);
            e
        })?;
        if optional.contains(&true) {
            let at = |i: usize| encoded.original_range(statements[i].byte_range());
            let variants = optional::variants(&parts, &optional, at)?
                .into_iter()
                .map(|parts| Self::sequence(source, parts))
                .collect();
            return Ok(Self::combine(source.to_string(), variants));
        }
        let ends = [statements[0], statements[statements.len() - 1]];
        for (part, node) in [&parts[0], &parts[parts.len() - 1]].into_iter().zip(ends) {
            if matches!(part, PatNode::Multi(_)) {
                return Err(PatternError {
                    range: encoded.original_range(node.byte_range()),
                    reason: "a statement sequence starts and ends with a statement; `$$$` goes between two".into(),
                    metavar: true,
                });
            }
        }
        Ok(Self::sequence(source, parts))
    }

    /// The sequence pattern of `parts`: its first action call marked.
    fn sequence(source: &str, mut parts: Vec<PatNode>) -> Pattern {
        parts.iter_mut().any(mark_action_call);
        let root = PatNode::Seq(parts);
        Pattern {
            source: source.to_string(),
            metavars: metavars_of(&[&root]),
            literals: literals_of(&root),
            root_kinds: root_kinds(&root),
            root,
        }
    }

    /// Compiles a decorator pattern such as `@torch.compile($$$A)`; a call whose arguments are
    /// all sequence metavariables also matches the bare decorator (`@torch.compile`).
    fn compile_decorator(source: &str) -> Result<Pattern, PatternError> {
        let encoded = encode_pattern(source.trim_end())?;
        let text = format!("{}\ndef __rp_decorated():\n    pass\n", encoded.text);
        let tree = python::parse(&text);
        check_syntax(&encoded, &text, tree.root_node(), "incomplete decorator")?;
        let definition = python::significant_children(tree.root_node())
            .into_iter()
            .find(|n| n.kind() == "decorated_definition")
            .ok_or_else(|| shape_error(0..source.len(), "not a decorator"))?;
        let decorators: Vec<Node<'_>> = python::significant_children(definition)
            .into_iter()
            .filter(|n| n.kind() == "decorator")
            .collect();
        let [decorator] = decorators.as_slice() else {
            return Err(shape_error(
                0..source.len(),
                "a decorator pattern is one decorator",
            ));
        };
        let root = convert(*decorator, &text, &encoded, 0)?;
        Ok(Pattern {
            source: source.to_string(),
            metavars: metavars_of(&[&root]),
            literals: literals_of(&root),
            root_kinds: root_kinds(&root),
            root,
        })
    }

    /// Makes keyword order matter in every argument list of the pattern (`ordered: true`).
    pub fn keep_keyword_order(&mut self) {
        fn walk(node: &mut PatNode) {
            match node {
                PatNode::Node(n) => {
                    n.ordered |= n.kind == "argument_list";
                    n.children.iter_mut().for_each(|(_, c)| walk(c));
                }
                PatNode::Any(parts) | PatNode::Seq(parts) => parts.iter_mut().for_each(walk),
                PatNode::Var(_) | PatNode::Multi(_) => {}
            }
        }
        walk(&mut self.root);
    }

    /// Compiles `match: {any: [...]}`: each alternative as a pattern of its own. A match binds
    /// what its alternative binds, so only the metavariables every alternative binds are the
    /// pattern's (templates must be fillable at every site), and only the literals every
    /// alternative holds must be in a file. `Err` names the alternative that failed.
    pub fn compile_any(sources: &[&str]) -> Result<Pattern, (usize, PatternError)> {
        let mut compiled = sources
            .iter()
            .enumerate()
            .map(|(i, s)| Pattern::compile(s).map_err(|e| (i, e)))
            .collect::<Result<Vec<_>, _>>()?;
        if compiled.len() == 1 {
            return Ok(compiled.remove(0));
        }
        Ok(Self::combine(sources.join(" | "), compiled))
    }

    /// Alternatives as one pattern: a match binds what its alternative binds, so only the
    /// metavariables (and literals) every alternative holds are the pattern's. An alternative
    /// that is itself several (an optional statement's variants) stands as those.
    fn combine(source: String, alternatives: Vec<Pattern>) -> Pattern {
        let metavars = common(alternatives.iter().map(|p| &p.metavars).collect());
        let literals = common(alternatives.iter().map(|p| &p.literals).collect());
        let roots = alternatives
            .into_iter()
            .flat_map(|p| match p.root {
                PatNode::Any(parts) => parts,
                one => vec![one],
            })
            .collect();
        let root = PatNode::Any(roots);
        Pattern {
            source,
            metavars,
            literals,
            root_kinds: root_kinds(&root),
            root,
        }
    }

    /// The literals inside the node a match is found at, to anchor the search for candidates
    /// by: all of them, except for a statement sequence, which is found at its first statement
    /// (a literal of a later statement stands outside that node: anchoring on it missed every
    /// run whose later statements held the rarest literal).
    pub fn anchor_literals(&self) -> Vec<String> {
        at_every_match(&self.root, &literals_of)
    }

    /// The metavariables every match binds within the same part the anchor literals lie in
    /// (see [`Pattern::anchor_literals`]): what a `where` condition requires of their text is
    /// inside the match there too.
    pub fn anchor_metavars(&self) -> Vec<String> {
        at_every_match(&self.root, &|n| metavars_of(&[n]))
    }

    /// Whether the pattern contains a call an argument action can edit (in every alternative).
    pub fn has_call(&self) -> bool {
        let has = |root: &PatNode| {
            let mut found = false;
            root.visit(&mut |n| {
                if let PatNode::Node(n) = n {
                    found |= n.is_action_call;
                }
            });
            found
        };
        match &self.root {
            PatNode::Any(alternatives) => alternatives.iter().all(has),
            root => has(root),
        }
    }
}

impl LoopPattern {
    /// Compiles a loop header such as `for $_, $LAYER in enumerate(self.layers)`.
    pub fn compile(source: &str) -> Result<LoopPattern, PatternError> {
        let header = source.trim_end();
        let header = header.strip_suffix(':').unwrap_or(header);
        if !header.trim_start().starts_with("for ") {
            return Err(shape_error(
                0..source.len().min(3),
                "a loop pattern is a `for` header, such as `for $_, $X in enumerate(self.layers)`",
            ));
        }
        let encoded = encode_pattern(header)?;
        let text = format!("{}:\n    pass\n", encoded.text);
        let tree = python::parse(&text);
        check_syntax(&encoded, &text, tree.root_node(), "incomplete loop header")?;
        let statement = python::significant_children(tree.root_node())
            .into_iter()
            .find(|n| n.kind() == "for_statement")
            .ok_or_else(|| shape_error(0..header.len(), "not a `for` loop header"))?;
        let field = |name: &str| -> Result<PatNode, PatternError> {
            let node = statement
                .child_by_field_name(name)
                .ok_or_else(|| shape_error(0..header.len(), "incomplete `for` header"))?;
            convert(node, &text, &encoded, 0)
        };
        let left = field("left")?;
        let right = field("right")?;
        let mut literals = literals_of(&left);
        literals.extend(
            literals_of(&right)
                .into_iter()
                .filter(|l| !literals_of(&left).contains(l)),
        );
        Ok(LoopPattern {
            source: source.to_string(),
            metavars: metavars_of(&[&left, &right]),
            literals,
            left,
            right,
        })
    }
}

fn shape_error(range: Range<usize>, reason: &str) -> PatternError {
    PatternError {
        range,
        reason: reason.to_string(),
        metavar: false,
    }
}

fn encode_pattern(source: &str) -> Result<Encoded, PatternError> {
    encode(source).map_err(|e| PatternError {
        range: e.range,
        reason: e.reason,
        metavar: true,
    })
}

/// Rejects a pattern whose parse of `text` holds an error. `text` is the encoded pattern,
/// possibly followed by code that completes it (a loop body, a decorated `def`): an error
/// there means the pattern itself stopped short, reported as `incomplete`.
fn check_syntax(
    encoded: &Encoded,
    text: &str,
    root: Node<'_>,
    incomplete: &str,
) -> Result<(), PatternError> {
    let Some(error) = python::first_syntax_error(root) else {
        return Ok(());
    };
    let original_len = encoded.original_range(0..encoded.text.len()).end;
    if text.len() > encoded.text.len() && error.start_byte() >= encoded.text.len() {
        return Err(shape_error(
            original_len.saturating_sub(1)..original_len,
            incomplete,
        ));
    }
    let range = encoded.original_range(error.byte_range());
    let range = if range.is_empty() {
        range.start.saturating_sub(1)..range.start.max(1)
    } else {
        range
    };
    let reason = python::describe_syntax_error(error, text);
    Err(shape_error(range, &meta::decode_text(&reason)))
}

fn convert(
    node: Node<'_>,
    text: &str,
    encoded: &Encoded,
    depth: usize,
) -> Result<PatNode, PatternError> {
    if depth > MAX_PATTERN_DEPTH {
        return Err(shape_error(
            encoded.original_range(node.byte_range()),
            "the pattern nests too deeply",
        ));
    }
    let node_text = &text[node.byte_range()];
    if node.kind() == "identifier"
        && let Some(var) = decode_identifier(node_text)
    {
        return Ok(match var {
            Metavar::Single(name) => PatNode::Var(name),
            Metavar::Multi(name) => PatNode::Multi(name),
        });
    }
    if node.child_count() == 0 {
        return Ok(PatNode::Node(NodePattern {
            kind: node.kind().to_string(),
            kind_ids: crate::python::grammar::matched_kind_ids(node.kind(), node.is_named()),
            named: node.is_named(),
            text: node.is_named().then(|| node_text.to_string()),
            children: Vec::new(),
            is_action_call: false,
            ordered: false,
        }));
    }
    let mut cursor = node.walk();
    let mut children = Vec::new();
    if cursor.goto_first_child() {
        loop {
            let child = cursor.node();
            if !python::is_trivia(&child) {
                let converted = convert(child, text, encoded, depth + 1)?;
                children.push((
                    cursor.field_name().map(str::to_string),
                    converted,
                    child.byte_range(),
                ));
            }
            if !cursor.goto_next_sibling() {
                break;
            }
        }
    }
    // A wrapper that holds nothing but a metavariable (an expression statement around
    // `$$$BODY`) is that metavariable, so it can stand for any statement.
    if let [(_, var @ (PatNode::Var(_) | PatNode::Multi(_)), range)] = children.as_slice()
        && *range == node.byte_range()
    {
        return Ok(var.clone());
    }
    Ok(PatNode::Node(NodePattern {
        kind: node.kind().to_string(),
        kind_ids: crate::python::grammar::matched_kind_ids(node.kind(), node.is_named()),
        named: node.is_named(),
        text: None,
        children: children.into_iter().map(|(f, c, _)| (f, c)).collect(),
        is_action_call: false,
        ordered: false,
    }))
}

/// Marks the outermost call (first in pre-order) as the one argument actions edit.
fn mark_action_call(root: &mut PatNode) -> bool {
    let PatNode::Node(n) = root else {
        return false;
    };
    if n.kind == "call" {
        n.is_action_call = true;
        return true;
    }
    n.children.iter_mut().any(|(_, c)| mark_action_call(c))
}

/// What every list holds (in the first one's order): what alternatives share.
/// What `of` says of the part of `root` every match is found at: a sequence's first statement,
/// and of alternatives only what each says.
fn at_every_match(root: &PatNode, of: &impl Fn(&PatNode) -> Vec<String>) -> Vec<String> {
    match root {
        PatNode::Seq(parts) => parts.first().map(of).unwrap_or_default(),
        PatNode::Any(alternatives) => {
            let lists: Vec<Vec<String>> =
                alternatives.iter().map(|a| at_every_match(a, of)).collect();
            common(lists.iter().collect())
        }
        other => of(other),
    }
}

fn common(lists: Vec<&Vec<String>>) -> Vec<String> {
    let Some((first, rest)) = lists.split_first() else {
        return Vec::new();
    };
    first
        .iter()
        .filter(|x| rest.iter().all(|l| l.contains(x)))
        .cloned()
        .collect()
}

fn metavars_of(roots: &[&PatNode]) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for root in roots {
        root.visit(&mut |n| {
            if let PatNode::Var(Some(name)) | PatNode::Multi(Some(name)) = n
                && !names.contains(name)
            {
                names.push(name.clone());
            }
        });
    }
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn assignment_pattern_has_a_call_and_metavars() {
        let p = Pattern::compile("$OUT = $LAYER($$$ARGS)").unwrap();
        assert_eq!(p.root.kind(), Some("assignment"));
        assert_eq!(p.metavars, ["OUT", "LAYER", "ARGS"]);
        assert!(p.has_call());
    }

    #[test]
    fn syntax_errors_point_into_the_pattern() {
        let e = Pattern::compile("$OUT = f($X,, )").unwrap_err();
        assert!(!e.metavar);
        assert!(e.range.start >= 9 && e.range.start <= 13, "{e:?}");
    }

    #[test]
    fn loop_headers_compile_to_left_and_right() {
        let p = LoopPattern::compile("for $_, $LAYER in enumerate(self.layers)").unwrap();
        assert_eq!(p.metavars, ["LAYER"]);
        assert_eq!(p.right.kind(), Some("call"));
        assert!(LoopPattern::compile("while x").is_err());
    }
}
