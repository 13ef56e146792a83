//! `strip_comments`: removes the comments within the match — a patcher strips a method's
//! comments before it compares or rewrites its source. A comment alone on its line goes with
//! its line; one after code goes with the spaces before it. Comments are what tree-sitter
//! parses as comments: a `#` inside a string stays.

use regex::Regex;
use tree_sitter::Node;

use super::{ActionFailure, ActionUnit, Facts, Needs, Signatures, Site, register_action};
use crate::edit::Edit;
use crate::rules::action::{ActionSpec, Arg, ArgReader};
use crate::rules::error::RuleError;
use crate::rules::model::{Snippet, Spanned};

/// `strip_comments: true` or `{keep: REGEX}`: removes the match's comments (those `keep`
/// matches stay: `# type:` or `# noqa` ones).
#[derive(Debug)]
pub struct StripComments;
register_action!(StripComments);

impl ActionSpec for StripComments {
    fn name(&self) -> &'static str {
        "strip_comments"
    }

    fn read(&self, args: &ArgReader<'_>) -> Result<Arg, RuleError> {
        if !args.is_mapping() {
            return match args.flag("true, or {keep: REGEX}")? {
                true => Ok(Arg::Flag(true)),
                false => {
                    Err(args.invalid("`strip_comments: false` does nothing; leave the action out"))
                }
            };
        }
        args.fields(&["keep"], "`strip_comments`", "true, or {keep: REGEX}")?;
        Ok(Arg::Fields(vec![(
            Spanned::new("keep".into(), 0..0),
            args.require("keep", "`strip_comments`")?.regex()?,
        )]))
    }
}

impl ActionUnit for StripComments {
    fn facts(&self) -> Facts {
        Facts {
            needs: Needs::Anything,
            // A comment on its own line goes with the line, which may lie outside the
            // statement the match is found in.
            edits_within_match: false,
        }
    }

    fn templates<'a>(&self, _: &'a Arg) -> Vec<&'a Snippet> {
        Vec::new()
    }

    fn explain(&self, args: &Arg) -> String {
        match args.field("keep") {
            Some(keep) => format!(
                "strip the comments, keeping those matching /{}/",
                keep.text()
            ),
            None => "strip the comments".into(),
        }
    }

    fn plan(
        &self,
        args: &Arg,
        site: &Site<'_, '_>,
        _: &mut Signatures,
    ) -> Result<Vec<Edit>, ActionFailure> {
        let keep = args
            .field("keep")
            .map(|k| Regex::new(k.text()).expect("checked when the rule was read"));
        let source = site.source;
        let mut edits = Vec::new();
        for comment in comments(site) {
            let text = &source[comment.byte_range()];
            if keep.as_ref().is_some_and(|k| k.is_match(text)) {
                continue;
            }
            let start = comment.start_byte();
            let line_start = source[..start].rfind('\n').map_or(0, |i| i + 1);
            let before = &source[line_start..start];
            let range = if before.trim().is_empty() {
                // Alone on its line: the line goes, its line break with it.
                let end = source[comment.end_byte()..]
                    .find('\n')
                    .map_or(source.len(), |i| comment.end_byte() + i + 1);
                line_start..end
            } else {
                // tree-sitter's comment runs to the line break, a CRLF's `\r` included.
                let end = comment.end_byte() - usize::from(text.ends_with('\r'));
                let code_end = line_start + before.trim_end().len();
                code_end..end
            };
            edits.push(Edit {
                range,
                text: String::new(),
            });
        }
        Ok(edits)
    }
}

/// The comments within the match, in order.
fn comments<'t>(site: &Site<'_, 't>) -> Vec<Node<'t>> {
    let range = site.range();
    let mut out = Vec::new();
    let mut stack = vec![site.node];
    if site.last != site.node {
        // A statement run: every statement of it, and what lies between.
        let mut n = site.node;
        while let Some(next) = n.next_sibling() {
            if next.start_byte() >= range.end {
                break;
            }
            stack.push(next);
            n = next;
        }
    }
    while let Some(n) = stack.pop() {
        if n.kind() == "comment" {
            out.push(n);
            continue;
        }
        let mut cursor = n.walk();
        stack.extend(n.children(&mut cursor));
    }
    out.sort_by_key(|n| n.start_byte());
    out
}
