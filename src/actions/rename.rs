//! `rename`: renames an identifier within the match.

use tree_sitter::Node;

use super::{
    ActionFailure, ActionUnit, AppliedShape, Facts, Needs, Signatures, Site, register_action,
};
use crate::edit::Edit;
use crate::rules::action::{ActionSpec, Arg, ArgReader};
use crate::rules::error::RuleError;
use crate::rules::model::{Snippet, Spanned};

/// `rename: {from: NAME, to: NAME, attributes: false}`: not inside strings or comments, not
/// keyword names of calls, and not attribute names unless `attributes: true`.
#[derive(Debug)]
pub struct Rename;
register_action!(Rename);

impl ActionSpec for Rename {
    fn name(&self) -> &'static str {
        "rename"
    }

    fn read(&self, args: &ArgReader<'_>) -> Result<Arg, RuleError> {
        let within = "`rename`";
        args.fields(
            &["from", "to", "attributes"],
            within,
            "a mapping {from, to}",
        )?;
        let ident = |key: &str| args.require(key, within)?.identifier();
        let attributes = match args.field("attributes") {
            Some(flag) => flag.flag("true or false")?,
            None => false,
        };
        let mut fields = vec![
            (Spanned::new("from".into(), 0..0), ident("from")?),
            (Spanned::new("to".into(), 0..0), ident("to")?),
        ];
        if attributes {
            fields.push((Spanned::new("attributes".into(), 0..0), Arg::Flag(true)));
        }
        Ok(Arg::Fields(fields))
    }
}

impl ActionUnit for Rename {
    fn facts(&self) -> Facts {
        Facts {
            needs: Needs::Anything,
            // Not a local edit for planning: whether the new name merges with another binding
            // is read off the whole file's scopes.
            edits_within_match: false,
        }
    }

    fn templates<'a>(&self, _: &'a Arg) -> Vec<&'a Snippet> {
        Vec::new()
    }

    /// The pattern with the same names renamed as at a site.
    fn applied_shape(&self, args: &Arg, pattern: &str) -> AppliedShape {
        let Ok(encoded) = crate::pattern::meta::encode(pattern) else {
            return AppliedShape::Unknown;
        };
        let tree = crate::python::parse(&encoded.text);
        let from = args.field("from").map_or("", Arg::text);
        let to = args.field("to").map_or("", Arg::text);
        let attributes = args.field("attributes").is_some_and(Arg::flag);
        let mut text = encoded.text.clone();
        for edit in rename(tree.root_node(), &encoded.text, from, to, attributes)
            .iter()
            .rev()
        {
            text.replace_range(edit.range.clone(), &edit.text);
        }
        AppliedShape::Code(crate::pattern::meta::decode_text(&text))
    }

    fn plan(
        &self,
        args: &Arg,
        site: &Site<'_, '_>,
        _: &mut Signatures,
    ) -> Result<Vec<Edit>, ActionFailure> {
        let from = args.field("from").map_or("", Arg::text);
        let to = args.field("to").map_or("", Arg::text);
        let attributes = args.field("attributes").is_some_and(Arg::flag);
        let edits = rename(site.node, site.source, from, to, attributes);
        let renamed: Vec<_> = edits.iter().map(|e| e.range.clone()).collect();
        if let Some(capture) =
            crate::python::names::rename_capture(site.root, site.source, &renamed, from, to)
        {
            return Err(ActionFailure::at(capture.at, "here", capture.why).help(
                "rename to a name no scope around these uses binds, or rename that one first",
            ));
        }
        Ok(edits)
    }
}

/// Renames identifiers `from` within `node`; attribute names only when `attributes`, keyword
/// names of calls never (they name the callee's parameters, not this variable).
fn rename(node: Node<'_>, source: &str, from: &str, to: &str, attributes: bool) -> Vec<Edit> {
    // Python reads identifiers in NFKC form: `ﬁle` (a ligature) is the name `file`.
    let from_nfkc = nfkc(from);
    let same_name = |text: &str| text == from || (!text.is_ascii() && nfkc(text) == from_nfkc);
    let mut edits = Vec::new();
    let mut stack = vec![node];
    while let Some(n) = stack.pop() {
        let mut cursor = n.walk();
        stack.extend(n.named_children(&mut cursor));
        if n.kind() != "identifier" || !same_name(&source[n.byte_range()]) {
            continue;
        }
        if crate::python::is_attribute_name(n) && !attributes {
            continue;
        }
        let keyword = n.parent().is_some_and(|p| {
            p.kind() == "keyword_argument" && p.child_by_field_name("name") == Some(n)
        });
        if keyword {
            continue;
        }
        edits.push(Edit {
            range: n.byte_range(),
            text: to.to_string(),
        });
    }
    edits.sort_by_key(|e| e.range.start);
    edits
}

/// `name` in NFKC form, as Python compares identifiers.
fn nfkc(name: &str) -> String {
    use unicode_normalization::UnicodeNormalization;
    name.nfkc().collect()
}
