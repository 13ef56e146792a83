//! Actions on the arguments of the matched call: `remove_kwargs` and `set_kwargs`.

use super::arglist::{ArgList, Item};
use super::{
    ActionFailure, ActionUnit, AppliedShape, Facts, Needs, Signatures, Site, register_action,
};
use crate::edit::Edit;
use crate::pattern::template::substitute;
use crate::rules::action::{ActionSpec, Arg, ArgReader};
use crate::rules::convert::is_identifier;
use crate::rules::error::RuleError;
use crate::rules::model::{Snippet, Spanned};

/// `remove_kwargs: [name, ...]`: deletes those keyword arguments, leaving no dangling commas.
#[derive(Debug)]
pub struct RemoveKwargs;
register_action!(RemoveKwargs);

impl ActionSpec for RemoveKwargs {
    fn name(&self) -> &'static str {
        "remove_kwargs"
    }

    fn read(&self, args: &ArgReader<'_>) -> Result<Arg, RuleError> {
        let mut names = Vec::new();
        for (name, item) in args.items()? {
            if !is_identifier(&name.value) {
                return Err(item.invalid(format!("`{}` is not a keyword name", name.value)));
            }
            names.push(item.text()?);
        }
        Ok(Arg::List(names))
    }
}

impl ActionUnit for RemoveKwargs {
    fn facts(&self) -> Facts {
        Facts {
            needs: Needs::Call,
            edits_within_match: true,
        }
    }

    fn templates<'a>(&self, _: &'a Arg) -> Vec<&'a Snippet> {
        Vec::new()
    }

    fn explain(&self, args: &Arg) -> String {
        let names: Vec<String> = args.names().into_iter().map(|n| n.value).collect();
        format!("remove_kwargs {}", names.join(", "))
    }

    /// The pattern without those keywords: a call left without them is the patch in place.
    /// Unknown where the pattern names none of them (`f($$$A)` still matches after).
    fn applied_shape(&self, args: &Arg, pattern: &str) -> AppliedShape {
        let names: Vec<String> = args.names().into_iter().map(|n| n.value).collect();
        let Ok(encoded) = crate::pattern::meta::encode(pattern) else {
            return AppliedShape::Unknown;
        };
        let text = &encoded.text;
        let tree = crate::python::parse(text);
        let mut stack = vec![tree.root_node()];
        let mut cursor = tree.walk();
        while let Some(node) = stack.pop() {
            if node.kind() == "argument_list" {
                let list = ArgList::new(node, text);
                let items: Vec<Item> = (0..list.args.len())
                    .filter(|&i| {
                        list.keyword(i)
                            .is_none_or(|k| !names.iter().any(|n| n == k))
                    })
                    .map(|i| list.old(i))
                    .collect();
                if items.len() != list.args.len() {
                    // The outermost call naming them: the one the action edits.
                    let mut shape = text.clone();
                    shape.replace_range(list.inner.clone(), &list.render(&items));
                    return AppliedShape::Code(crate::pattern::meta::decode_text(&shape));
                }
            }
            let before = stack.len();
            stack.extend(node.children(&mut cursor));
            stack[before..].reverse();
        }
        AppliedShape::Unknown
    }

    fn plan(
        &self,
        args: &Arg,
        site: &Site<'_, '_>,
        _: &mut Signatures,
    ) -> Result<Vec<Edit>, ActionFailure> {
        let Some(list) = site.call_arguments() else {
            return Ok(Vec::new());
        };
        let names = args.names();
        // Most calls a broad pattern matches name none of the keywords: no need to take their
        // arguments apart to find that out.
        let text = &site.source[list.byte_range()];
        if !names.iter().any(|n| text.contains(n.value.as_str())) {
            return Ok(site.changing(None));
        }
        let list = ArgList::new(list, site.source);
        let items: Vec<Item> = (0..list.args.len())
            .filter(|&i| {
                list.keyword(i)
                    .is_none_or(|k| !names.iter().any(|n| n.value == k))
            })
            .map(|i| list.old(i))
            .collect();
        let edit = (items.len() != list.args.len()).then(|| Edit {
            range: list.inner.clone(),
            text: list.render(&items),
        });
        Ok(site.changing(edit))
    }
}

/// `set_kwargs: {name: "expr"}`: replaces the value of an existing keyword or appends
/// `name=expr`.
#[derive(Debug)]
pub struct SetKwargs;
register_action!(SetKwargs);

impl ActionSpec for SetKwargs {
    fn name(&self) -> &'static str {
        "set_kwargs"
    }

    fn read(&self, args: &ArgReader<'_>) -> Result<Arg, RuleError> {
        let mut out = Vec::new();
        for (keyword, value) in args.entries("a mapping of name to expression")? {
            if !is_identifier(&keyword.value) {
                let reason = format!("`{}` is not a keyword name", keyword.value);
                return Err(value.invalid_under(args.key(), reason));
            }
            out.push((keyword, keyword_value(&value)?));
        }
        Ok(Arg::Fields(out))
    }
}

/// One `set_kwargs` value: an expression, or `{value: EXPR, before: KEYWORD}` (or `after:`)
/// saying where a keyword the call lacks goes (where that keyword is absent too: last).
fn keyword_value(value: &ArgReader<'_>) -> Result<Arg, RuleError> {
    if !value.is_mapping() {
        return value.text();
    }
    let within = "a `set_kwargs` value";
    value.fields(
        &["value", "before", "after"],
        within,
        "an expression or {value, before|after}",
    )?;
    let expression = value.require("value", within)?.text()?;
    let mut fields = vec![(Spanned::new("value".into(), 0..0), expression)];
    for side in ["before", "after"] {
        if let Some(anchor) = value.field(side) {
            if fields.len() > 1 {
                return Err(anchor.invalid("give `before` or `after`, not both"));
            }
            let name = anchor.string()?;
            if !is_identifier(&name.value) {
                return Err(anchor.invalid(format!("`{}` is not a keyword name", name.value)));
            }
            fields.push((Spanned::new(side.into(), 0..0), anchor.text()?));
        }
    }
    Ok(if fields.len() == 1 {
        fields.swap_remove(0).1
    } else {
        Arg::Fields(fields)
    })
}

impl ActionUnit for SetKwargs {
    fn facts(&self) -> Facts {
        Facts {
            needs: Needs::Call,
            edits_within_match: true,
        }
    }

    fn explain(&self, args: &Arg) -> String {
        let pairs: Vec<String> = args
            .fields()
            .iter()
            .map(|(k, v)| {
                let (value, place) = placed(v);
                match place {
                    Some((side, anchor)) => format!("{}={value} ({side} {anchor})", k.value),
                    None => format!("{}={value}", k.value),
                }
            })
            .collect();
        format!("set_kwargs {}", pairs.join(", "))
    }

    fn plan(
        &self,
        args: &Arg,
        site: &Site<'_, '_>,
        _: &mut Signatures,
    ) -> Result<Vec<Edit>, ActionFailure> {
        if let Some(generator) = site.bare_generator() {
            // `f(x for x in y, k=1)` is not Python: the generator needs parentheses of its own.
            return Err(ActionFailure::at(
                generator.byte_range(),
                "the call's only argument",
                "a keyword cannot follow a generator that has no parentheses of its own".into(),
            )
            .help("parenthesize the generator where the call is written: `f((x for x in y))`"));
        }
        let Some(list) = site.call_arguments() else {
            return Ok(Vec::new());
        };
        let list = ArgList::new(list, site.source);
        let mut items: Vec<Item> = (0..list.args.len()).map(|i| list.old(i)).collect();
        for (name, written) in args.fields() {
            let (template, place) = placed(written);
            let value = substitute(template, site.bindings, site.source, "");
            match (0..list.args.len()).find(|&i| list.keyword(i) == Some(name.value.as_str())) {
                Some(i) => {
                    let node = list.args[i].node;
                    let value_node = node.child_by_field_name("value").unwrap_or(node);
                    let head = &site.source[node.start_byte()..value_node.start_byte()];
                    items[i] = Item::Old {
                        index: i,
                        text: format!("{head}{value}"),
                    };
                }
                None => {
                    let new = Item::New(format!("{}={value}", name.value));
                    let anchor = place.and_then(|(side, anchor)| {
                        let at = items.iter().position(|item| {
                            matches!(item, Item::Old { index, .. } if list.keyword(*index) == Some(anchor))
                        })?;
                        Some(if side == "before" { at } else { at + 1 })
                    });
                    items.insert(anchor.unwrap_or(items.len()), new);
                }
            }
        }
        let edit = Edit {
            range: list.inner.clone(),
            text: list.render(&items),
        };
        Ok(site.changing(Some(edit)))
    }
}

/// A `set_kwargs` value's expression and, where it says, the side and keyword it goes beside.
fn placed(value: &Arg) -> (&str, Option<(&str, &str)>) {
    match value.field("value") {
        None => (value.text(), None),
        Some(expression) => {
            let place = value
                .fields()
                .get(1)
                .map(|(side, anchor)| (side.value.as_str(), anchor.text()));
            (expression.text(), place)
        }
    }
}
