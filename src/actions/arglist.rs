//! Rewrites a call's argument list while keeping its layout.
//!
//! Every argument action (reordering, removing, adding) comes down to one thing: a new list of
//! items, each an old argument (perhaps with new text) or a new one. The text between old
//! arguments — commas, line breaks, indentation and comments — travels with the argument it
//! follows, so a multi-line call stays multi-line and a trailing comment stays on its line.

use std::ops::Range;

use tree_sitter::Node;

/// An argument of the list being rewritten.
#[derive(Debug, Clone)]
pub struct Argument<'t> {
    /// The argument node.
    pub node: Node<'t>,
    /// Its kind: `keyword_argument`, `list_splat`, `dictionary_splat` or an expression kind.
    pub kind: &'t str,
}

/// An item of the rewritten list.
#[derive(Debug, Clone)]
pub enum Item {
    /// Old argument `index`, written as `text`.
    Old {
        /// Position in [`ArgList::args`].
        index: usize,
        /// The text to write in its place.
        text: String,
    },
    /// A new argument.
    New(String),
}

/// A parsed argument list: its arguments and the text around them.
#[derive(Debug)]
pub struct ArgList<'t> {
    /// The arguments in order.
    pub args: Vec<Argument<'t>>,
    /// The range between `(` and `)`, exclusive of both.
    pub inner: Range<usize>,
    source: &'t str,
}

impl<'t> ArgList<'t> {
    /// Reads the `argument_list` node `list` of `source`.
    pub fn new(list: Node<'t>, source: &'t str) -> Self {
        let mut cursor = list.walk();
        let args = list
            .named_children(&mut cursor)
            .filter(|n| n.kind() != "comment")
            .map(|node| Argument {
                node,
                kind: node.kind(),
            })
            .collect();
        let start = list.start_byte() + 1;
        let end = list.end_byte().saturating_sub(1).max(start);
        Self {
            args,
            inner: start..end,
            source,
        }
    }

    /// The source text of argument `index`.
    pub fn text(&self, index: usize) -> &'t str {
        &self.source[self.args[index].node.byte_range()]
    }

    /// Argument `index` kept as it is written.
    pub fn old(&self, index: usize) -> Item {
        Item::Old {
            index,
            text: self.text(index).to_string(),
        }
    }

    /// The keyword of argument `index`, if it is a keyword argument.
    pub fn keyword(&self, index: usize) -> Option<&'t str> {
        let node = self.args[index].node;
        (node.kind() == "keyword_argument")
            .then(|| node.child_by_field_name("name"))
            .flatten()
            .map(|n| &self.source[n.byte_range()])
    }

    /// What stands between argument `index` and the next one (comma, breaks, comments).
    fn gap_after(&self, index: usize) -> &'t str {
        let end = self.args[index].node.end_byte();
        let next = self
            .args
            .get(index + 1)
            .map_or(self.inner.end, |a| a.node.start_byte());
        &self.source[end..next]
    }

    /// The separator for an item that has no gap of its own: `, ` on one line, or a comma, a
    /// line break and the indentation of the first argument in a multi-line call.
    fn plain_separator(&self) -> String {
        let Some(first) = self.args.first() else {
            return ", ".to_string();
        };
        let before = &self.source[self.inner.start..first.node.start_byte()];
        match before.rfind('\n') {
            Some(i) => format!(",\n{}", &before[i + 1..]),
            None => ", ".to_string(),
        }
    }

    /// The new text between `(` and `)` for `items`. A comment that followed an argument left
    /// out is kept, on its own line before the next argument written (or at the end).
    pub fn render(&self, items: &[Item]) -> String {
        if items.is_empty() {
            return String::new();
        }
        let Some(first) = self.args.first() else {
            return items_joined(items, ", ");
        };
        let last = self.args.len() - 1;
        // Which arguments stay, by index (a search of a list per argument was quadratic in a
        // call of 300,000 keywords).
        let mut kept = vec![false; self.args.len()];
        for item in items {
            if let Item::Old { index, .. } = item {
                kept[*index] = true;
            }
        }
        let mut orphans: Vec<(usize, &str)> = (0..last)
            .filter(|&i| !kept[i])
            .flat_map(|i| comments(self.gap_after(i)).map(move |c| (i, c)))
            .collect();
        let prefix = &self.source[self.inner.start..first.node.start_byte()];
        let suffix = &self.source[self.args[last].node.end_byte()..self.inner.end];
        let mut out = String::from(prefix);
        for (i, item) in items.iter().enumerate() {
            let text = match item {
                Item::Old { index, text } => {
                    let before: Vec<&str> = orphans
                        .iter()
                        .filter(|(at, _)| at < index)
                        .map(|(_, c)| *c)
                        .collect();
                    orphans.retain(|(at, _)| at > index);
                    self.write_comments(&mut out, &before, *index);
                    text
                }
                Item::New(text) => text,
            };
            out.push_str(text);
            if i + 1 == items.len() {
                break;
            }
            match item {
                Item::Old { index, .. } if *index < last => out.push_str(self.gap_after(*index)),
                _ => out.push_str(&self.plain_separator()),
            }
        }
        let rest: Vec<&str> = orphans.iter().map(|(_, c)| *c).collect();
        if rest.is_empty() {
            out.push_str(suffix);
        } else {
            // After the first line of what closes the list (a trailing comma, say).
            let cut = suffix.find('\n').unwrap_or(suffix.len());
            out.push_str(&suffix[..cut]);
            for c in rest {
                out.push_str("  ");
                out.push_str(c);
                out.push('\n');
            }
            out.push_str(suffix[cut..].strip_prefix('\n').unwrap_or(&suffix[cut..]));
        }
        out
    }

    /// Writes `comments` so that argument `index` then starts where it did: on a line of
    /// their own at its indentation.
    fn write_comments(&self, out: &mut String, comments: &[&str], index: usize) {
        if comments.is_empty() {
            return;
        }
        let indent = crate::python::node_indent(self.source, self.args[index].node);
        let tail = &out[out.rfind('\n').map_or(0, |i| i + 1)..];
        let at_line_start = tail.trim().is_empty() && out.contains('\n');
        if at_line_start {
            let tail = tail.to_string();
            out.truncate(out.len() - tail.len());
            for c in comments {
                out.push_str(&tail);
                out.push_str(c);
                out.push('\n');
            }
            out.push_str(&tail);
        } else {
            for c in comments {
                out.push_str("  ");
                out.push_str(c);
                out.push('\n');
            }
            out.push_str(indent);
        }
    }
}

/// The comments in the text between two arguments (which holds only commas, space, line
/// continuations and comments, so every `#` starts one).
fn comments(gap: &str) -> impl Iterator<Item = &str> {
    gap.lines()
        .filter_map(|line| line.find('#').map(|i| line[i..].trim_end()))
}

fn items_joined(items: &[Item], separator: &str) -> String {
    items
        .iter()
        .map(|i| match i {
            Item::Old { text, .. } | Item::New(text) => text.as_str(),
        })
        .collect::<Vec<_>>()
        .join(separator)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::python::parse;

    fn list_of(src: &str) -> (tree_sitter::Tree, Range<usize>) {
        let tree = parse(src);
        let mut stack = vec![tree.root_node()];
        while let Some(n) = stack.pop() {
            if n.kind() == "argument_list" {
                let r = n.byte_range();
                return (tree, r);
            }
            let mut c = n.walk();
            stack.extend(n.children(&mut c));
        }
        panic!("no argument list");
    }

    fn rewrite(src: &str, f: impl Fn(&ArgList) -> Vec<Item>) -> String {
        let (tree, range) = list_of(src);
        let node = tree
            .root_node()
            .descendant_for_byte_range(range.start, range.end)
            .unwrap();
        let list = ArgList::new(node, src);
        let inner = list.inner.clone();
        let new = list.render(&f(&list));
        format!("{}{}{}", &src[..inner.start], new, &src[inner.end..])
    }

    #[test]
    fn removing_the_last_argument_keeps_the_trailing_comma_layout() {
        let src = "f(\n    a,\n    b=1,\n)\n";
        let out = rewrite(src, |l| {
            vec![Item::Old {
                index: 0,
                text: l.text(0).into(),
            }]
        });
        assert_eq!(out, "f(\n    a,\n)\n");
    }

    #[test]
    fn inserted_items_take_the_indentation_of_the_call() {
        let src = "f(\n    a,  # first\n    b,\n)\n";
        let out = rewrite(src, |l| {
            vec![
                Item::Old {
                    index: 0,
                    text: l.text(0).into(),
                },
                Item::New("None".into()),
                Item::Old {
                    index: 1,
                    text: l.text(1).into(),
                },
            ]
        });
        assert_eq!(out, "f(\n    a,  # first\n    None,\n    b,\n)\n");
    }

    #[test]
    fn one_line_calls_stay_on_one_line() {
        let out = rewrite("f(a, b)\n", |_| {
            vec![Item::New("x".into()), Item::New("y".into())]
        });
        assert_eq!(out, "f(x, y)\n");
        assert_eq!(rewrite("f(a)\n", |_| vec![]), "f()\n");
    }
}
