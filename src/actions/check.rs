//! `check`: a rule that edits nothing and asserts — a pin on what a patch depends on.
//!
//! `check: {binds_as_named: Class.method, aliases: {param: [names]}, signature: {of, has,
//! lacks, order}, exists: true | absent: true}`; a rule without `action` is `check: {}`, which
//! asserts its `expect` count alone. A failed assertion is a pin failure (drift, under
//! `on_miss`), not a refusal: the code is no longer as the patch assumes.

use super::arglist::ArgList;
use super::signature::ParamKind;
use super::{
    ActionFailure, ActionUnit, Facts, Needs, Signatures, Site, probe_signature, register_action,
    signature_at,
};
use crate::edit::Edit;
use crate::rules::action::{ActionSpec, Arg, ArgReader, CHECK};
use crate::rules::convert::{SIGNATURE_NAME, is_signature_name};
use crate::rules::error::RuleError;
use crate::rules::model::{SignatureProbe, Snippet, Spanned};

/// `check: {...}`.
#[derive(Debug)]
pub struct Check;
register_action!(Check);

impl ActionSpec for Check {
    fn name(&self) -> &'static str {
        CHECK
    }

    fn read(&self, args: &ArgReader<'_>) -> Result<Arg, RuleError> {
        let keys = ["binds_as_named", "aliases", "signature", "exists", "absent"];
        args.fields(&keys, "`check`", "a mapping of assertions")?;
        let mut fields = Vec::new();
        let key = |k: &str| Spanned::new(k.to_string(), 0..0);
        if let Some(sig) = args.field("binds_as_named") {
            if !is_signature_name(&sig.string()?.value) {
                return Err(sig.invalid(SIGNATURE_NAME));
            }
            fields.push((key("binds_as_named"), sig.text()?));
        }
        if let Some(aliases) = args.field("aliases") {
            let mut entries = Vec::new();
            for (param, names) in aliases.entries("a mapping of parameter to names")? {
                let names = names
                    .items()?
                    .into_iter()
                    .map(|(_, item)| item.text())
                    .collect::<Result<Vec<_>, _>>()?;
                entries.push((param, Arg::List(names)));
            }
            fields.push((key("aliases"), Arg::Fields(entries)));
        }
        if let Some(signature) = args.field("signature") {
            // Read as a probe is read, for its checks; kept as fields.
            signature.fields(
                &["of", "has", "lacks", "order"],
                "`signature`",
                "a mapping with `of`",
            )?;
            let of = signature.require("of", "`signature`")?;
            if !is_signature_name(&of.string()?.value) {
                return Err(of.invalid(SIGNATURE_NAME));
            }
            let mut entries = vec![(key("of"), of.text()?)];
            for k in ["has", "lacks", "order"] {
                if let Some(names) = signature.field(k) {
                    let names = names
                        .items()?
                        .into_iter()
                        .map(|(_, item)| item.text())
                        .collect::<Result<Vec<_>, _>>()?;
                    entries.push((key(k), Arg::List(names)));
                }
            }
            fields.push((key("signature"), Arg::Fields(entries)));
        }
        for k in ["exists", "absent"] {
            if let Some(flag) = args.field(k) {
                if !flag.flag("true")? {
                    return Err(flag.invalid(format!("write `{k}: true` or leave it out")));
                }
                fields.push((key(k), Arg::Flag(true)));
            }
        }
        if args.field("exists").is_some() && args.field("absent").is_some() {
            return Err(args.invalid("`exists` and `absent` cannot both hold"));
        }
        Ok(Arg::Fields(fields))
    }
}

impl ActionUnit for Check {
    fn facts(&self) -> Facts {
        Facts {
            needs: Needs::Anything,
            // Signatures are read from the whole file.
            edits_within_match: false,
        }
    }

    /// `check: {}` (a rule without `action`) asserts nothing beyond its matches and edits
    /// nothing: it can run on a parse of only the statements that could hold one (a
    /// check-only `$X = $Y($$$A)` parsed every file whole).
    fn facts_for(&self, args: &Arg) -> Facts {
        match args {
            Arg::Fields(fields) if fields.is_empty() => Facts {
                needs: Needs::Anything,
                edits_within_match: true,
            },
            _ => self.facts(),
        }
    }

    fn templates<'a>(&self, _: &'a Arg) -> Vec<&'a Snippet> {
        Vec::new()
    }

    fn metavar_args<'a>(&self, args: &'a Arg) -> Vec<&'a Snippet> {
        let mut out: Vec<&Snippet> = args
            .field("binds_as_named")
            .map(Arg::snippets)
            .unwrap_or_default();
        if let Some(of) = args.field("signature").and_then(|s| s.field("of")) {
            out.extend(of.snippets());
        }
        out
    }

    fn explain(&self, args: &Arg) -> String {
        if args.fields().is_empty() {
            "check (edits nothing; asserts `expect`)".to_string()
        } else {
            let json = serde_json::to_string(&args.to_value()).unwrap_or_default();
            format!("check {json} (edits nothing)")
        }
    }

    fn plan(
        &self,
        args: &Arg,
        site: &Site<'_, '_>,
        signatures: &mut Signatures,
    ) -> Result<Vec<Edit>, ActionFailure> {
        if let Some(name) = args.field("binds_as_named") {
            binds_as_named(name.text(), args.field("aliases"), site, signatures)?;
        }
        if let Some(signature) = args.field("signature") {
            let probe = probe_of(signature);
            if let Some(why) = probe_signature(&probe, site, signatures)? {
                // On a matched `def`, its parameter list is what changed, not its body.
                let (range, label) = match site.node.child_by_field_name("parameters") {
                    Some(params) if site.node.kind() == "function_definition" => {
                        (params.byte_range(), "these parameters")
                    }
                    _ => (site.range(), "this match"),
                };
                return Err(ActionFailure::at(range, label, why)
                    .help("upstream changed the signature this rule depends on"));
            }
        }
        Ok(Vec::new())
    }
}

/// The `signature` assertion as the probe `when.signature` also uses.
fn probe_of(signature: &Arg) -> SignatureProbe {
    let names = |k: &str| signature.field(k).map(Arg::names).unwrap_or_default();
    SignatureProbe {
        of: Spanned::new(
            signature.field("of").map_or("", Arg::text).to_string(),
            0..0,
        ),
        has: names("has"),
        lacks: names("lacks"),
        order: names("order"),
    }
}

/// Every positional argument of the matched call that is a bare name must bind the
/// parameter of that name, or one whose `aliases` list it.
fn binds_as_named(
    written: &str,
    aliases: Option<&Arg>,
    site: &Site<'_, '_>,
    signatures: &mut Signatures,
) -> Result<(), ActionFailure> {
    let Some(list) = site.call_arguments() else {
        return Ok(());
    };
    let sig = signature_at(written, site, signatures, list.byte_range(), "this call")?;
    let params: Vec<&str> = sig.positional().map(|p| p.name.as_str()).collect();
    let takes_rest = sig
        .params
        .iter()
        .any(|p| p.kind == ParamKind::VarPositional);
    let arglist = ArgList::new(list, site.source);
    let positionals = arglist.args.iter().take_while(|a| {
        !matches!(
            a.kind,
            "list_splat" | "keyword_argument" | "dictionary_splat"
        )
    });
    for (i, arg) in positionals.enumerate() {
        if arg.kind != "identifier" {
            continue;
        }
        let name = &site.source[arg.node.byte_range()];
        let Some(param) = params.get(i) else {
            if takes_rest {
                break;
            }
            return Err(ActionFailure::at(
                arg.node.byte_range(),
                "this argument",
                format!(
                    "argument {} `{name}` has no parameter: `{}` takes {} by position",
                    i + 1,
                    sig.name,
                    params.len()
                ),
            ));
        };
        let allowed = aliases
            .and_then(|a| a.field(param))
            .map(Arg::names)
            .unwrap_or_default();
        if name != *param && !allowed.iter().any(|a| a.value == name) {
            return Err(ActionFailure::at(
                arg.node.byte_range(),
                "this argument",
                format!("argument {} `{name}` binds parameter `{param}` of `{}`", i + 1, sig.name),
            )
            .help(format!(
                "the positional order is {}; pass it by keyword, or list `{name}` in `aliases: {{{param}: [...]}}` if that is meant",
                params.join(", ")
            )));
        }
    }
    Ok(())
}
