//! The signature a rule names at one site: its metavariables filled from the match, looked
//! up, and any failure turned into a precise refusal.

use std::ops::Range;

use super::signature::{LookupError, Signature};
use super::{ActionFailure, Signatures, Site};
use crate::rules::convert::is_identifier;
use crate::rules::model::SignatureProbe;

/// The signature `written` (`Class.method`, `$CLS.forward`) names at `site`; a refusal
/// pointing at `at` (labelled `label`) where it cannot be named or found.
pub fn signature_at(
    written: &str,
    site: &Site<'_, '_>,
    signatures: &mut Signatures,
    at: Range<usize>,
    label: &str,
) -> Result<Signature, ActionFailure> {
    let name = bound_name(written, site, at.clone(), label)?;
    match signatures.get(site.root, site.source, &name) {
        Ok(sig) => Ok(sig.clone()),
        Err(e) => Err(lookup_failure(e, &name, at, label)),
    }
}

/// Whether the callee's signature at `site` looks as `probe` says: `Ok(None)` when it does,
/// `Ok(Some(why))` when it does not, a refusal when the signature cannot be found.
pub fn probe_signature(
    probe: &SignatureProbe,
    site: &Site<'_, '_>,
    signatures: &mut Signatures,
) -> Result<Option<String>, ActionFailure> {
    let at = site.node.byte_range();
    let sig = signature_at(&probe.of.value, site, signatures, at, "this match")?;
    let names: Vec<&str> = sig.params.iter().map(|p| p.name.as_str()).collect();
    if let Some(missing) = probe
        .has
        .iter()
        .find(|p| !names.contains(&p.value.as_str()))
    {
        return Ok(Some(format!("`{}` takes no `{}`", sig.name, missing.value)));
    }
    if let Some(present) = probe
        .lacks
        .iter()
        .find(|p| names.contains(&p.value.as_str()))
    {
        return Ok(Some(format!("`{}` takes `{}`", sig.name, present.value)));
    }
    let mut position = 0;
    for wanted in &probe.order {
        match names[position..].iter().position(|n| *n == wanted.value) {
            Some(i) => position += i + 1,
            None => {
                return Ok(Some(format!(
                    "`{}` does not take {} in that order (its parameters: {})",
                    sig.name,
                    probe
                        .order
                        .iter()
                        .map(|o| format!("`{}`", o.value))
                        .collect::<Vec<_>>()
                        .join(", "),
                    names.join(", ")
                )));
            }
        }
    }
    Ok(None)
}

/// The signature's name with each metavariable replaced by the name it bound (`$CLS.forward`
/// → `LlamaDecoderLayer.forward`); a binding that is not a plain name is refused.
fn bound_name(
    written: &str,
    site: &Site<'_, '_>,
    at: Range<usize>,
    label: &str,
) -> Result<String, ActionFailure> {
    let mut parts = Vec::new();
    for part in written.split('.') {
        let Some(metavar) = part.strip_prefix('$') else {
            parts.push(part.to_string());
            continue;
        };
        let bound = site.bindings.get(metavar).map(|c| c.text(site.source));
        match bound {
            Some(name) if is_identifier(name) => parts.push(name.to_string()),
            Some(other) => {
                return Err(ActionFailure::at(
                    at,
                    label,
                    format!(
                        "`${metavar}` is bound to `{other}`, which is not a class or function name"
                    ),
                )
                .help(format!(
                    "the signature `{written}` needs a plain name there"
                )));
            }
            None => {
                return Err(ActionFailure::at(
                    at,
                    label,
                    format!("`${metavar}` is bound to nothing at this match"),
                ));
            }
        }
    }
    Ok(parts.join("."))
}

/// The refusal when the signature `name` cannot be found (or not told apart).
fn lookup_failure(e: &LookupError, name: &str, at: Range<usize>, label: &str) -> ActionFailure {
    let (reason, help) = match e {
        LookupError::NotFound { searched } if !searched.is_empty() => {
            let places: Vec<String> = searched.iter().map(|s| format!("  - {s}")).collect();
            return ActionFailure::at(at, label, format!("no definition of `{name}` was found"))
                .help(format!("searched:\n{}", places.join("\n")));
        }
        LookupError::NotFound { .. } => (
            format!("no definition of `{name}` in this file"),
            "the signature must be defined in the file being patched (or, at run time, in the signature context); check `signature:`",
        ),
        LookupError::NoMethod => (
            format!(
                "the class defines no `{}`",
                name.rsplit('.').next().unwrap_or(name)
            ),
            "no class along its method resolution order defines it",
        ),
        LookupError::Refused { reason } => (
            format!("`{name}` cannot be resolved exactly as Python would: {reason}"),
            "the engine does not guess: name the class that defines it, or make the binding plain",
        ),
        LookupError::Ambiguous(n) => (
            format!(
                "`{name}` has {n} definitions that differ (in parameters, or in whether they define it)"
            ),
            "the engine does not guess which definition applies",
        ),
    };
    ActionFailure::at(at, label, reason).help(help)
}
