//! `after`: which rules run on the output of which, as planning steps.

use std::collections::HashMap;

use super::CompiledRule;
use crate::rules::error::{RuleError, RuleErrorKind, did_you_mean};

/// Resolves `after` into rule indexes and planning steps; unknown ids, later phases and
/// cycles are errors.
pub(super) fn order(
    rules: &mut [CompiledRule],
    ids: &HashMap<String, usize>,
) -> Result<(), RuleError> {
    for i in 0..rules.len() {
        rules[i].after = resolve_after(rules, i, ids)?;
    }
    let steps = steps(rules)?;
    for (rule, step) in rules.iter_mut().zip(steps) {
        rule.step = step;
    }
    Ok(())
}

/// The indexes of the rules rule `i` names in `after`.
fn resolve_after(
    rules: &[CompiledRule],
    i: usize,
    ids: &HashMap<String, usize>,
) -> Result<Vec<usize>, RuleError> {
    let mut after = Vec::new();
    for name in &rules[i].rule.after {
        let error = |kind| RuleError::new(kind, &rules[i].rule.origin.file, name.span.clone());
        // A bare id names the rule of the same pack first (ids shared by packs are
        // qualified, `pack/id`), then any.
        let own = format!("{}/{}", rules[i].rule.origin.pack(), name.value);
        let Some(&j) = ids.get(&own).or_else(|| ids.get(&name.value)) else {
            let known: Vec<&str> = ids.keys().map(String::as_str).collect();
            let e = error(RuleErrorKind::UnknownAfter {
                id: name.value.clone(),
            });
            return Err(match did_you_mean(&name.value, &known) {
                Some(s) => e.with_help(format!("did you mean `{s}`?")),
                None => e,
            });
        };
        if rules[j].rule.phase > rules[i].rule.phase {
            return Err(error(RuleErrorKind::AfterLaterPhase {
                id: name.value.clone(),
                phase: rules[j].rule.phase.to_string(),
            }));
        }
        after.push(j);
    }
    Ok(after)
}

/// Each rule's planning step: 0, or one more than the deepest rule of its phase it runs after,
/// by depth-first search; a rule met again while still open closes a cycle.
fn steps(rules: &[CompiledRule]) -> Result<Vec<usize>, RuleError> {
    let mut search = Search {
        rules,
        state: vec![Visit::New; rules.len()],
        steps: vec![0; rules.len()],
        path: Vec::new(),
    };
    for i in 0..rules.len() {
        if let Err(cycle) = search.visit(i) {
            let names: Vec<&str> = cycle.iter().map(|&c| rules[c].id()).collect();
            let first = &rules[cycle[0]];
            let span = first
                .rule
                .after
                .first()
                .map_or(first.rule.id.span.clone(), |a| a.span.clone());
            return Err(RuleError::new(
                RuleErrorKind::AfterCycle {
                    cycle: names.join(" → "),
                },
                &first.rule.origin.file,
                span,
            ));
        }
    }
    Ok(search.steps)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Visit {
    New,
    Open,
    Done,
}

/// The depth-first search over `after` edges.
struct Search<'r> {
    rules: &'r [CompiledRule],
    state: Vec<Visit>,
    steps: Vec<usize>,
    path: Vec<usize>,
}

impl Search<'_> {
    /// Rule `i`'s step, or the cycle (as rule indexes, closed) it lies on.
    fn visit(&mut self, i: usize) -> Result<usize, Vec<usize>> {
        match self.state[i] {
            Visit::Done => return Ok(self.steps[i]),
            Visit::Open => {
                let start = self.path.iter().position(|&p| p == i).unwrap_or(0);
                let mut cycle = self.path[start..].to_vec();
                cycle.push(i);
                return Err(cycle);
            }
            Visit::New => {}
        }
        self.state[i] = Visit::Open;
        self.path.push(i);
        let mut step = 0;
        let rules = self.rules;
        for &j in &rules[i].after {
            let s = self.visit(j)?;
            if rules[j].rule.phase == rules[i].rule.phase {
                step = step.max(s + 1);
            }
        }
        self.path.pop();
        self.state[i] = Visit::Done;
        self.steps[i] = step;
        Ok(step)
    }
}
