//! `kwargs_to_positional`: a call's keywords become positionals in the order of the callee's
//! signature, or a precise refusal wherever that would change what the call binds.

use std::collections::HashMap;
use std::ops::Range;

use super::arglist::{ArgList, Item};
use super::signature::{Param, ParamKind, Signature};
use super::{
    ActionFailure, ActionUnit, Facts, Needs, Signatures, Site, register_action, signature_at,
};
use crate::edit::Edit;
use crate::rules::action::{ActionSpec, Arg, ArgReader};
use crate::rules::convert::{SIGNATURE_NAME, is_signature_name};
use crate::rules::error::{RuleError, did_you_mean};
use crate::rules::model::{Snippet, Spanned};

/// `kwargs_to_positional: {signature: Class.method, keep_keyword: [names]}`.
#[derive(Debug)]
pub struct KwargsToPositional;
register_action!(KwargsToPositional);

impl ActionSpec for KwargsToPositional {
    fn name(&self) -> &'static str {
        "kwargs_to_positional"
    }

    fn read(&self, args: &ArgReader<'_>) -> Result<Arg, RuleError> {
        let within = "`kwargs_to_positional`";
        args.fields(
            &["signature", "keep_keyword"],
            within,
            "a mapping with `signature`",
        )?;
        let signature = args.require("signature", within)?;
        let name = signature.string()?;
        if !is_signature_name(&name.value) {
            return Err(signature.invalid(SIGNATURE_NAME));
        }
        let mut fields = vec![(Spanned::new("signature".into(), 0..0), signature.text()?)];
        if let Some(keep) = args.field("keep_keyword") {
            let names = keep
                .items()?
                .into_iter()
                .map(|(_, item)| item.text())
                .collect::<Result<Vec<_>, _>>()?;
            if !names.is_empty() {
                fields.push((Spanned::new("keep_keyword".into(), 0..0), Arg::List(names)));
            }
        }
        Ok(Arg::Fields(fields))
    }
}

impl ActionUnit for KwargsToPositional {
    fn facts(&self) -> Facts {
        Facts {
            needs: Needs::Call,
            // It rewrites the argument list alone. The signature it reads lies elsewhere in
            // the file: `Signatures` reads a file parsed in regions through its own statements.
            edits_within_match: true,
        }
    }

    fn templates<'a>(&self, _: &'a Arg) -> Vec<&'a Snippet> {
        Vec::new()
    }

    fn metavar_args<'a>(&self, args: &'a Arg) -> Vec<&'a Snippet> {
        args.field("signature")
            .map(Arg::snippets)
            .unwrap_or_default()
    }

    fn explain(&self, args: &Arg) -> String {
        let signature = args.field("signature").map_or("", Arg::text);
        format!("kwargs_to_positional, in the order of `{signature}`")
    }

    fn plan(
        &self,
        args: &Arg,
        site: &Site<'_, '_>,
        signatures: &mut Signatures,
    ) -> Result<Vec<Edit>, ActionFailure> {
        let Some(list) = site.call_arguments() else {
            return Ok(Vec::new());
        };
        // A call without keywords already has the wanted shape, whatever the callee: a generic
        // rule must not fail on it for want of a signature.
        let arglist = ArgList::new(list, site.source);
        let has_keywords = arglist
            .args
            .iter()
            .any(|a| matches!(a.kind, "keyword_argument" | "dictionary_splat"));
        if !has_keywords {
            return Ok(Vec::new());
        }
        let written = args.field("signature").map_or("", Arg::text);
        let sig = signature_at(written, site, signatures, list.byte_range(), "this call")?;
        let keep = args
            .field("keep_keyword")
            .map(Arg::names)
            .unwrap_or_default();
        let keep: Vec<&str> = keep.iter().map(|k| k.value.as_str()).collect();
        // A generic signature (`$CLS.forward`) names many callees: a kept keyword one of them
        // does not take is simply not there to keep. A signature named outright must take
        // every kept keyword, or a misspelling would keep nothing.
        let keep: Vec<&str> = if written.contains('$') {
            keep.into_iter()
                .filter(|k| sig.params.iter().any(|p| p.name == *k))
                .collect()
        } else {
            check_kept(&keep, &sig, list.byte_range())?;
            keep
        };
        let edit = kwargs_to_positional(&arglist, &sig, site.source, &keep)?;
        Ok(site.changing(edit))
    }
}

/// Refuses `keep_keyword` names the signature does not have: a misspelt name would silently
/// keep nothing.
fn check_kept(keep: &[&str], sig: &Signature, at: Range<usize>) -> Result<(), ActionFailure> {
    let names: Vec<&str> = sig.params.iter().map(|p| p.name.as_str()).collect();
    let Some(missing) = keep.iter().find(|k| !names.contains(k)) else {
        return Ok(());
    };
    let failure = ActionFailure::at(
        at,
        "this call",
        format!(
            "`keep_keyword` names `{missing}`, which `{}` does not take",
            sig.name
        ),
    );
    Err(match did_you_mean(missing, &names) {
        Some(s) => failure.help(format!("did you mean `{s}`?")),
        None => failure.help(format!("its parameters: {}", names.join(", "))),
    })
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
    let call = Call {
        args,
        sig,
        params: sig.positional().collect(),
    };
    let (positional, splats) = call.layout(*keywords.last().expect("not empty"))?;
    // With `keep_keyword`, positionals stop at the first kept parameter; what follows stays
    // as keywords, which every Python call accepts after positionals.
    let limit = (!keep_keyword.is_empty()).then(|| {
        call.params
            .iter()
            .position(|p| keep_keyword.contains(&p.name.as_str()))
            .unwrap_or(call.params.len())
    });
    let mut given: HashMap<usize, usize> = HashMap::new();
    let mut kept: Vec<usize> = Vec::new();
    for &k in &keywords {
        match call.place(k, positional, limit)? {
            Place::Kept => kept.push(k),
            Place::Slot(slot) => {
                given.insert(slot, k);
            }
        }
    }
    let Some(&highest) = given.keys().max() else {
        // Every keyword stays a keyword: nothing to move.
        return Ok(None);
    };
    let mut items: Vec<Item> = (0..positional).map(|i| args.old(i)).collect();
    let first_keyword = args.args[keywords[0]].node.byte_range();
    for (slot, param) in call
        .params
        .iter()
        .enumerate()
        .take(highest + 1)
        .skip(positional)
    {
        let item = match given.get(&slot) {
            Some(&k) => {
                let node = args.args[k].node;
                let value = node.child_by_field_name("value").unwrap_or(node);
                Item::Old {
                    index: k,
                    text: source[value.byte_range()].to_string(),
                }
            }
            None => call.default_for(param, &splats, first_keyword.clone())?,
        };
        items.push(item);
    }
    items.extend(kept.iter().map(|&k| args.old(k)));
    items.extend(splats.iter().map(|&s| args.old(s)));
    Ok(Some(Edit {
        range: args.inner.clone(),
        text: args.render(&items),
    }))
}

/// Where a keyword argument goes.
enum Place {
    /// It stays a keyword.
    Kept,
    /// It becomes the positional at this slot.
    Slot(usize),
}

/// A call being converted against its callee's signature.
struct Call<'a, 't> {
    args: &'a ArgList<'t>,
    sig: &'a Signature,
    /// The parameters that can be given by position, in order.
    params: Vec<&'a Param>,
}

impl Call<'_, '_> {
    /// A refusal at `at`, pointing at the signature too where it was read from the file.
    fn fail(&self, at: Range<usize>, label: &str, reason: String) -> ActionFailure {
        let mut f = ActionFailure::at(at, label, reason);
        if let Some(range) = self.sig.range.clone() {
            f.labels
                .push((range, format!("`{}` is defined here", self.sig.name)));
        }
        f
    }

    /// How many positionals the call has, and its `**splats` (all after the last keyword,
    /// `last_keyword`); a `*splat`, or a `**splat` that would have to move, is refused.
    fn layout(&self, last_keyword: usize) -> Result<(usize, Vec<usize>), ActionFailure> {
        let args = self.args;
        let mut positional = 0;
        let mut splats = Vec::new();
        for (i, arg) in args.args.iter().enumerate() {
            match arg.kind {
                "keyword_argument" => {}
                "list_splat" => {
                    return Err(self.fail(
                        arg.node.byte_range(),
                        "this splat",
                        format!(
                            "`{}` hides how many positionals come before the keywords",
                            args.text(i)
                        ),
                    ));
                }
                "dictionary_splat" if i < last_keyword => {
                    return Err(self
                        .fail(
                            arg.node.byte_range(),
                            "this splat",
                            format!(
                                "`{}` stands before keyword arguments and would have to move",
                                args.text(i)
                            ),
                        )
                        .help(
                            "only a `**splat` after every keyword argument can stay where it is",
                        ));
                }
                "dictionary_splat" => splats.push(i),
                _ => positional += 1,
            }
        }
        Ok((positional, splats))
    }

    /// Where keyword argument `k` goes, given `positional` positionals before it and, with
    /// `keep_keyword`, the slot where positionals stop.
    fn place(
        &self,
        k: usize,
        positional: usize,
        limit: Option<usize>,
    ) -> Result<Place, ActionFailure> {
        let (sig, params) = (self.sig, &self.params);
        let node = self.args.args[k].node;
        let name = self.args.keyword(k).unwrap_or("");
        let param = sig.params.iter().find(|p| p.name == name);
        if let Some(limit) = limit {
            let slot = params.iter().position(|p| p.name == name);
            let stays = match (slot, param.map(|p| p.kind)) {
                (Some(s), Some(ParamKind::PositionalOrKeyword)) => s >= limit,
                (_, Some(ParamKind::KeywordOnly)) => true,
                (None, None) => sig.has_var_keyword(),
                _ => false,
            };
            if stays {
                return Ok(Place::Kept);
            }
        }
        let slot = match param.map(|p| p.kind) {
            Some(ParamKind::PositionalOrKeyword) => params
                .iter()
                .position(|p| p.name == name)
                .expect("positional-or-keyword parameters are positional"),
            Some(ParamKind::KeywordOnly) => {
                return Err(self.fail(
                    node.byte_range(),
                    "keyword-only",
                    format!(
                        "`{name}` is keyword-only in `{}`; it has no positional form",
                        sig.name
                    ),
                ));
            }
            Some(_) | None if sig.has_var_keyword() => {
                return Err(self.fail(
                    node.byte_range(),
                    "not a named parameter",
                    format!(
                        "`{name}` is not a named parameter of `{}`; it goes into `**kwargs`, which has no positional form",
                        sig.name
                    ),
                ));
            }
            _ => {
                return Err(self
                    .fail(
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
            return Err(self.fail(
                node.byte_range(),
                "given twice",
                format!("`{name}` is already given by position"),
            ));
        }
        Ok(Place::Slot(slot))
    }

    /// The default that fills the skipped parameter `param`; refused where a `**splat` may
    /// supply it or it has none.
    fn default_for(
        &self,
        param: &Param,
        splats: &[usize],
        first_keyword: Range<usize>,
    ) -> Result<Item, ActionFailure> {
        if let Some(&s) = splats.first() {
            return Err(self.fail(
                self.args.args[s].node.byte_range(),
                "may supply it",
                format!(
                    "parameter `{}` is skipped and would be filled with its default, but `{}` may supply it",
                    param.name,
                    self.args.text(s)
                ),
            ));
        }
        let Some(default) = &param.default else {
            return Err(self.fail(
                first_keyword,
                "here",
                format!("required parameter `{}` is not given", param.name),
            ));
        };
        if !param.constant_default {
            // Written at the call site, `EPS` could be a local, a class attribute would be a
            // NameError, and `[]` a new list at every call: only constants mean the same there.
            return Err(self
                .fail(
                    first_keyword,
                    "here",
                    format!(
                        "parameter `{}` is skipped and would be filled with its default `{default}`, which is not a constant and could mean something else where the call stands",
                        param.name
                    ),
                )
                .help(format!(
                    "add `{}` to `keep_keyword`: it and every later argument then stay keywords",
                    param.name
                )));
        }
        Ok(Item::New(default.clone()))
    }
}
