//! Actions on the arguments of the matched call: `remove_kwargs` and `set_kwargs`.

use super::arglist::{ArgList, Item};
use super::{ActionFailure, ActionUnit, Facts, Needs, Signatures, Site, register_action};
use crate::edit::Edit;
use crate::pattern::template::substitute;
use crate::rules::action::{ActionSpec, Arg, ArgReader};
use crate::rules::convert::is_identifier;
use crate::rules::error::RuleError;
use crate::rules::model::Snippet;

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
            out.push((keyword, value.text()?));
        }
        Ok(Arg::Fields(out))
    }
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
            .map(|(k, v)| format!("{}={}", k.value, v.text()))
            .collect();
        format!("set_kwargs {}", pairs.join(", "))
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
        let list = ArgList::new(list, site.source);
        let mut items: Vec<Item> = (0..list.args.len()).map(|i| list.old(i)).collect();
        for (name, template) in args.fields() {
            let value = substitute(template.text(), site.bindings, site.source, "");
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
                None => items.push(Item::New(format!("{}={value}", name.value))),
            }
        }
        let edit = Edit {
            range: list.inner.clone(),
            text: list.render(&items),
        };
        Ok(site.changing(Some(edit)))
    }
}
