//! `group: NAME`: rules that apply together in each file. When an active member fails (or
//! misses its `expect`), the file is surveyed again without the group, so none of its edits
//! lands there, and the other members are reported as left out because of that member.

use super::{Engine, RuleStatus, Survey, Target};
use crate::compile::RuleId;
use crate::engine::PatchError;

impl Engine<'_> {
    /// `first`, or — where a group member failed in it — the survey without those groups,
    /// carrying the failing members' failures and a report for every member left out.
    pub(super) fn settle_groups(
        &self,
        target: Target<'_>,
        first: Survey,
    ) -> Result<Survey, PatchError> {
        // (group, the member that failed in it)
        let failed: Vec<(String, String)> = first
            .rules
            .iter()
            .filter(|r| r.status == RuleStatus::Failed)
            .filter_map(|r| {
                let group = self.rules.rule(r.index).rule.group.as_ref()?;
                Some((group.value.clone(), r.rule.clone()))
            })
            .collect();
        if failed.is_empty() {
            return Ok(first);
        }
        let group_of = |id: RuleId| self.rule_group(id);
        let excluded: Vec<RuleId> = self
            .group_members(failed.iter().map(|(g, _)| g.as_str()))
            .into_iter()
            .chain(self.excluded.iter().copied())
            .collect();
        let mut second = self.survey_excluding(target, &excluded)?;
        let concerns = |rules: &[RuleId]| rules.iter().any(|r| excluded.contains(r));
        let Survey {
            rules,
            errors,
            misses,
            ..
        } = first;
        second
            .errors
            .extend(errors.into_iter().filter(|(rules, _)| concerns(rules)));
        second.misses.extend(
            misses
                .into_iter()
                .filter(|(rule, _)| excluded.contains(rule)),
        );
        for mut report in rules.into_iter().filter(|r| excluded.contains(&r.index)) {
            let group = group_of(report.index).unwrap_or_default();
            let culprit = failed.iter().find(|(g, _)| g == group).map(|(_, r)| r);
            let ran = !matches!(
                report.status,
                RuleStatus::Failed | RuleStatus::Inactive | RuleStatus::Retired
            );
            if ran && let Some(culprit) = culprit {
                report.status = RuleStatus::Failed;
                report.reason = Some(format!(
                    "group `{group}` left out of this file: member `{culprit}` failed"
                ));
                for m in &mut report.matches {
                    m.edits.clear();
                }
            }
            second.rules.push(report);
        }
        Ok(second)
    }
}
