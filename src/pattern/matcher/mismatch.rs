//! Why a node does not match a pattern, in words, for near-miss reports.

use tree_sitter::Node;

use super::{Bindings, Matcher};
use crate::pattern::{NodePattern, PatNode};
use crate::python::significant_children;

/// Why a node does not match a pattern: where, in a sentence, and how deep into the pattern
/// the comparison got (deeper is nearer).
#[derive(Debug, Clone, PartialEq)]
pub struct Mismatch {
    /// The part of the target that differs.
    pub at: std::ops::Range<usize>,
    /// What differs, e.g. "argument 2 is positional, pattern wants keyword `use_cache`".
    pub reason: String,
    /// How many pattern levels matched above the difference.
    pub depth: u32,
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

use crate::python::describe_kind;

impl Matcher<'_> {
    /// The first difference between `pattern` and `node`, or `None` where they match.
    pub fn why_not<'t>(
        &self,
        pattern: &PatNode,
        node: Node<'t>,
        bindings: &mut Bindings<'t>,
    ) -> Option<Mismatch> {
        let mut probe = bindings.clone();
        if self.matches(pattern, node, &mut probe) {
            return None;
        }
        Some(self.difference(pattern, node, bindings, 0))
    }

    /// A node's text as a message shows it: its first line, marked when there is more.
    fn first_line(&self, n: Node<'_>) -> String {
        let t = &self.source[n.byte_range()];
        let first = t.lines().next().unwrap_or("");
        if first.len() < t.len() {
            format!("{first}…")
        } else {
            first.to_string()
        }
    }

    /// Why the metavariable `name` (`None`: anonymous) does not match `node`.
    fn metavar_difference(&self, name: Option<&str>, node: Node<'_>, b: &Bindings<'_>) -> String {
        let found = self.first_line(node);
        match name.map(|n| (n, b.get(n))) {
            Some((name, Some(bound))) => format!(
                "`${name}` is `{found}` here, but was bound to `{}`",
                bound.text(self.source)
            ),
            Some((name, None)) => format!("`${name}` wants a named node, found `{found}`"),
            None => format!("wants a named node, found `{found}`"),
        }
    }

    fn difference<'t>(
        &self,
        pattern: &PatNode,
        node: Node<'t>,
        b: &mut Bindings<'t>,
        depth: u32,
    ) -> Mismatch {
        let text = |n: Node<'_>| self.first_line(n);
        let here = |reason: String| Mismatch {
            at: node.byte_range(),
            reason,
            depth,
        };
        let p = match pattern {
            PatNode::Node(p) => p,
            PatNode::Seq(parts) => return self.sequence_difference(parts, node, b, depth),
            // The alternative that came closest says why none matched.
            PatNode::Any(alternatives) => {
                return alternatives
                    .iter()
                    .map(|a| self.difference(a, node, &mut b.clone(), depth))
                    .max_by_key(|m| m.depth)
                    .unwrap_or_else(|| here("no alternative".into()));
            }
            PatNode::Var(name) | PatNode::Multi(name) => {
                return here(self.metavar_difference(name.as_deref(), node, b));
            }
        };
        if node.kind() != p.kind {
            return here(format!(
                "wants {}, found {} `{}`",
                describe_kind(&p.kind),
                describe_kind(node.kind()),
                text(node)
            ));
        }
        if let Some(want) = &p.text {
            return here(format!("wants `{want}`, found `{}`", text(node)));
        }
        let targets = significant_children(node);
        let patterns: Vec<&PatNode> = p.children.iter().map(|(_, c)| c).collect();
        if p.kind == "argument_list" {
            return self.argument_difference(&patterns, &targets, node, b, depth);
        }
        let has_multi = patterns.iter().any(|c| matches!(c, PatNode::Multi(_)));
        for (pc, tc) in patterns.iter().zip(&targets) {
            if matches!(pc, PatNode::Multi(_)) {
                break;
            }
            let mut probe = b.clone();
            if self.node(pc, *tc, &mut probe) {
                *b = probe;
                continue;
            }
            // A token (`=` against `:`) says nothing alone: the node it stands in has
            // another form than the pattern's.
            if let PatNode::Node(token) = pc
                && !token.named
            {
                return here(format!(
                    "this {} has another form than the pattern's: `{}`",
                    p.kind.replace('_', " "),
                    text(node)
                ));
            }
            return self.difference(pc, *tc, b, depth + 1);
        }
        if !has_multi && patterns.len() != targets.len() {
            return here(format!(
                "wants {} parts in this {}, found {}",
                patterns.len(),
                p.kind.replace('_', " "),
                targets.len()
            ));
        }
        here(format!("does not fit the pattern here: `{}`", text(node)))
    }

    /// Why the run of statements starting at `node` is no match of the sequence `parts`: the
    /// first statement it cannot go on with, or where its block ends first. Each statement of
    /// the run that matched counts as ten levels: a run that went further is a nearer miss.
    fn sequence_difference<'t>(
        &self,
        parts: &[PatNode],
        node: Node<'t>,
        b: &mut Bindings<'t>,
        depth: u32,
    ) -> Mismatch {
        let siblings = node.parent().map(significant_children).unwrap_or_default();
        let mut at = siblings.iter().position(|s| *s == node).unwrap_or(0);
        let mut gap = false;
        for (k, part) in parts.iter().enumerate() {
            let depth = depth + 10 * k as u32;
            if matches!(part, PatNode::Multi(_)) {
                gap = true;
                continue;
            }
            let last = siblings.get(at.saturating_sub(1)).copied().unwrap_or(node);
            if gap {
                // After a gap, the first later statement of the block that fits.
                let found = (at..siblings.len()).find(|&j| self.matches(part, siblings[j], b));
                let Some(j) = found else {
                    return Mismatch {
                        at: last.byte_range(),
                        reason: format!(
                            "statement {} of the run fits no later statement of this block",
                            k + 1
                        ),
                        depth,
                    };
                };
                at = j + 1;
                gap = false;
                continue;
            }
            let Some(&statement) = siblings.get(at) else {
                return Mismatch {
                    at: last.byte_range(),
                    reason: format!(
                        "the block ends here; the run wants statement {} next",
                        k + 1
                    ),
                    depth,
                };
            };
            let mut probe = b.clone();
            if self.node(part, statement, &mut probe) {
                *b = probe;
                at += 1;
                continue;
            }
            let mut miss = self.difference(part, statement, b, depth);
            miss.reason = format!("statement {} of the run: {}", k + 1, miss.reason);
            return miss;
        }
        Mismatch {
            at: node.byte_range(),
            reason: "the run matches only with more statements than its block holds".into(),
            depth,
        }
    }

    fn argument_difference<'t>(
        &self,
        patterns: &[&PatNode],
        targets: &[Node<'t>],
        list: Node<'t>,
        b: &mut Bindings<'t>,
        depth: u32,
    ) -> Mismatch {
        let keyword_name = |n: &Node<'_>| {
            n.child_by_field_name("name")
                .map(|k| self.source[k.byte_range()].to_string())
        };
        for (i, p) in patterns.iter().enumerate() {
            let PatNode::Node(kw) = p else { continue };
            if kw.kind != "keyword_argument" {
                continue;
            }
            let want = kw
                .children
                .first()
                .and_then(|(_, n)| match n {
                    PatNode::Node(NodePattern { text: Some(t), .. }) => Some(t.clone()),
                    _ => None,
                })
                .unwrap_or_default();
            let found = targets.iter().find(|t| {
                t.kind() == "keyword_argument" && keyword_name(t).as_deref() == Some(&want)
            });
            match found {
                Some(t) => {
                    let mut probe = b.clone();
                    if !self.node(p, *t, &mut probe) {
                        return self.difference(p, *t, b, depth + 1);
                    }
                    *b = probe;
                }
                None => {
                    // Only where no `$$$` comes before does the argument at the keyword's
                    // place stand for it.
                    let aligned = !patterns[..i].iter().any(|p| matches!(p, PatNode::Multi(_)));
                    let positional = targets
                        .get(i)
                        .filter(|t| aligned && !matches!(t.kind(), "keyword_argument" | "(" | ")"));
                    return match positional {
                        Some(t) => Mismatch {
                            at: t.byte_range(),
                            reason: format!(
                                "argument {} is positional, pattern wants keyword `{want}`",
                                i
                            ),
                            depth: depth + 1,
                        },
                        None => Mismatch {
                            at: list.byte_range(),
                            reason: format!(
                                "no keyword `{want}` (the call has: {})",
                                self.argument_summary(targets)
                            ),
                            depth,
                        },
                    };
                }
            }
        }
        if let Some(miss) = self.positional_difference(patterns, targets, b, depth) {
            return miss;
        }
        self.count_difference(patterns, targets, list, depth)
    }

    /// Where the positional arguments line up (as many as the pattern's, up to its first
    /// `$$$`), the first that differs, said from inside it: "argument 1: wants `layers`,
    /// found `blocks`" rather than a count that agrees.
    fn positional_difference<'t>(
        &self,
        patterns: &[&PatNode],
        targets: &[Node<'t>],
        b: &mut Bindings<'t>,
        depth: u32,
    ) -> Option<Mismatch> {
        let positional = |k: Option<&str>| !matches!(k, Some("(" | ")" | "keyword_argument"));
        let wanted: Vec<&PatNode> = patterns
            .iter()
            .copied()
            .filter(|p| positional(p.kind()))
            .collect();
        let found: Vec<Node<'t>> = targets
            .iter()
            .copied()
            .filter(|t| positional(Some(t.kind())))
            .collect();
        let fixed = wanted
            .iter()
            .take_while(|p| !matches!(p, PatNode::Multi(_)));
        let open = fixed.clone().count() < wanted.len();
        let count = fixed.clone().count();
        if found.len() < count || (!open && found.len() != count) {
            return None;
        }
        for (i, (p, t)) in fixed.zip(&found).enumerate() {
            let mut probe = b.clone();
            if self.node(p, *t, &mut probe) {
                *b = probe;
                continue;
            }
            let mut miss = self.difference(p, *t, b, depth + 1);
            miss.reason = format!("argument {}: {}", i + 1, miss.reason);
            return Some(miss);
        }
        None
    }

    /// The arguments differ in number: how many the pattern wants, and what the call has.
    fn count_difference(
        &self,
        patterns: &[&PatNode],
        targets: &[Node<'_>],
        list: Node<'_>,
        depth: u32,
    ) -> Mismatch {
        // Metavariables are arguments too; a `$$$` stands for any number of them.
        let arguments: Vec<&&PatNode> = patterns
            .iter()
            .filter(|p| p.kind().is_none_or(|k| k != "(" && k != ")"))
            .collect();
        let fixed = arguments
            .iter()
            .filter(|p| !matches!(p, PatNode::Multi(_)))
            .count();
        let wanted = if fixed < arguments.len() {
            format!("at least {fixed} argument{}", plural(fixed))
        } else {
            format!("{fixed} argument{}", plural(fixed))
        };
        let found = targets
            .iter()
            .filter(|t| !matches!(t.kind(), "(" | ")"))
            .count();
        Mismatch {
            at: list.byte_range(),
            reason: format!(
                "the arguments do not fit: the pattern wants {wanted}, the call has {found} ({})",
                self.argument_summary(targets)
            ),
            depth,
        }
    }

    /// A call's arguments in brief: its positionals counted, its keywords named.
    fn argument_summary(&self, targets: &[Node<'_>]) -> String {
        let mut positional = 0;
        let mut parts = Vec::new();
        for t in targets {
            match t.kind() {
                "(" | ")" => {}
                "keyword_argument" => {
                    let name = t
                        .child_by_field_name("name")
                        .map_or("?", |k| &self.source[k.byte_range()]);
                    parts.push(format!("`{name}=`"));
                }
                "dictionary_splat" | "list_splat" => {
                    parts.push(format!("`{}`", self.first_line(*t)))
                }
                _ => positional += 1,
            }
        }
        if positional > 0 || parts.is_empty() {
            parts.insert(0, format!("{positional} positional"));
        }
        parts.join(", ")
    }
}
