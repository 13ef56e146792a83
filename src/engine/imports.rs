//! The imports and provided names of the rules that edit a file in a step: the imports
//! planned as one more edit of the step (each added once), the provided names handed to the
//! name check.

use std::ops::Range;

use super::step::StepInput;
use super::{Engine, PatchError};
use crate::compile::RuleId;
use crate::edit::PlannedEdit;
use crate::python::imports::{self, ImportSpec};
use crate::source::{SourceFile, span};

impl Engine<'_> {
    /// Adds to `planned` the edit bringing in what the editing rules' `imports` need. A rule
    /// whose import would rebind a name the module binds to something else fails (its edits
    /// dropped, the error recorded). Where the edit added goes, if one was.
    pub(super) fn plan_imports(
        &self,
        input: &StepInput<'_>,
        planned: &mut Vec<PlannedEdit>,
        failed: &mut Vec<RuleId>,
        errors: &mut Vec<(Vec<RuleId>, PatchError)>,
    ) -> Option<Range<usize>> {
        let mut editing: Vec<usize> = planned.iter().map(|p| p.rule).collect();
        editing.sort_unstable();
        editing.dedup();
        let specs: Vec<(usize, &ImportSpec)> = editing
            .iter()
            .flat_map(|&r| {
                self.rules
                    .rule(RuleId(r))
                    .imports
                    .iter()
                    .map(move |s| (r, s))
            })
            .collect();
        if specs.is_empty() {
            return None;
        }
        let wanted: Vec<&ImportSpec> = specs.iter().map(|(_, s)| *s).collect();
        let (import, error_at, name) = match imports::plan(input.text, &wanted) {
            Ok(None) => return None,
            Ok(Some(edit)) => {
                // Another edit in the file's header, above or where the imports go (a rule
                // rewriting the import block): code there could read a name before its import.
                let at = edit.range.clone();
                match planned.iter().find(|p| p.edit.range.start <= at.end) {
                    None => {
                        planned.push(PlannedEdit {
                            rule: specs[0].0,
                            edit,
                        });
                        // Applied in order of position; nothing overlaps it (checked above).
                        planned.sort_by_key(|p| p.edit.range.start);
                        return Some(at);
                    }
                    Some(p) => (specs[0].1.text.clone(), p.edit.range.clone(), None),
                }
            }
            Err(clash) => (clash.import, clash.at, Some(clash.name)),
        };
        let needing: Vec<RuleId> = specs
            .iter()
            .filter(|(_, s)| s.text == import)
            .map(|(r, _)| RuleId(*r))
            .collect();
        planned.retain(|p| !needing.contains(&RuleId(p.rule)));
        failed.extend(needing.iter().copied());
        let rule = self.rules.rule(needing[0]).id().to_string();
        let (path, src, at) = (
            input.path.to_string(),
            SourceFile::new(input.path, input.text).named_source(),
            span(error_at),
        );
        let error = match name {
            Some(name) => PatchError::ImportClash {
                rule,
                import,
                name,
                path,
                src,
                at,
            },
            None => PatchError::ImportPlace {
                rule,
                import,
                path,
                src,
                at,
            },
        };
        errors.push((needing, error));
        None
    }

    /// The names the imports of the rules editing in `planned` bind.
    pub(super) fn imported(&self, planned: &[PlannedEdit]) -> Vec<&str> {
        self.declared(planned, |rule| {
            rule.imports
                .iter()
                .flat_map(|spec| spec.binds.iter().map(|(name, _)| name.as_str()))
                .collect()
        })
    }

    /// The names the rules editing in `planned` declare the runtime provides.
    pub(super) fn provided(&self, planned: &[PlannedEdit]) -> Vec<&str> {
        self.declared(planned, |rule| {
            rule.rule
                .provides
                .iter()
                .map(|n| n.value.as_str())
                .collect()
        })
    }

    /// The names `names` gives for each rule editing in `planned`, each once, sorted.
    fn declared<'s>(
        &'s self,
        planned: &[PlannedEdit],
        names: impl Fn(&'s crate::compile::CompiledRule) -> Vec<&'s str>,
    ) -> Vec<&'s str> {
        let mut out: Vec<&str> = planned
            .iter()
            .flat_map(|p| names(self.rules.rule(RuleId(p.rule))))
            .collect();
        out.sort_unstable();
        out.dedup();
        out
    }
}
