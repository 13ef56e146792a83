//! Which rules run on one file, and in what order: computed once per file from the rules'
//! phases, `files` globs, version gates and planning steps, and read by every later stage.

use std::collections::HashSet;

use super::Engine;
use crate::compile::RuleId;
use crate::rules::model::Phase;
use crate::versions::Gate;

/// The rules of one phase that select a file.
#[derive(Debug)]
pub(crate) struct PhaseRules<'r> {
    /// Its rules that select the file, in load order, with their version gates.
    pub selected: Vec<(RuleId, Gate<'r>)>,
}

/// The rules that run on one file, phase by phase.
#[derive(Debug)]
pub(crate) struct Schedule<'r> {
    /// The phases that have at least one selected rule, in running order.
    pub phases: Vec<PhaseRules<'r>>,
    /// The selected rules in the order reports list them without a parse: in each phase the
    /// gated-off ones first, then the open ones by planning step.
    pub order: Vec<(RuleId, Gate<'r>)>,
    /// Whether all open rules run in one planning step: then the text after it is only
    /// checked, never planned on again.
    pub single_step: bool,
}

impl<'r> Schedule<'r> {
    /// The schedule of `engine` for the file at `path`, leaving out the rules in `excluded`.
    pub fn new(engine: &Engine<'r>, path: &str, excluded: &[RuleId]) -> Self {
        let selecting = engine.selecting(path);
        let phases: Vec<PhaseRules<'r>> = Phase::ALL
            .into_iter()
            .filter(|&phase| engine.phase.is_none_or(|p| p == phase))
            .map(|phase| PhaseRules {
                selected: engine
                    .rules
                    .rules
                    .iter()
                    .enumerate()
                    .filter(|(i, r)| {
                        r.rule.phase == phase && selecting[*i] && !excluded.contains(&RuleId(*i))
                    })
                    .map(|(i, r)| (RuleId(i), engine.versions.gate(&r.rule)))
                    .collect(),
            })
            .filter(|p| !p.selected.is_empty())
            .collect();
        let mut order = Vec::new();
        for phase in &phases {
            let mut open = Vec::new();
            for (id, gate) in &phase.selected {
                match gate {
                    Gate::Open => open.push(*id),
                    gate => order.push((*id, gate.clone())),
                }
            }
            open.sort_by_key(|&id| (engine.rules.rule(id).step, id));
            order.extend(open.into_iter().map(|id| (id, Gate::Open)));
        }
        let steps: HashSet<(Phase, usize)> = order
            .iter()
            .filter(|(_, gate)| *gate == Gate::Open)
            .map(|(id, _)| {
                let rule = engine.rules.rule(*id);
                (rule.rule.phase, rule.step)
            })
            .collect();
        Schedule {
            phases,
            order,
            single_step: steps.len() == 1,
        }
    }

    /// Whether no rule selects the file.
    pub fn is_empty(&self) -> bool {
        self.phases.is_empty()
    }

    /// The rules whose version gate is open, in running order.
    pub fn open(&self) -> impl Iterator<Item = RuleId> + '_ {
        self.order
            .iter()
            .filter(|(_, gate)| *gate == Gate::Open)
            .map(|(id, _)| *id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compile::RuleSet;
    use crate::rules::load_yaml;
    use crate::versions::VersionEnv;

    const RULES: &str = r#"
- id: late
  after: [early]
  match: "f($X)"
  action: {replace: "g($X)"}
- id: early
  match: "h($X)"
  action: {replace: "f($X)"}
- id: gated
  requires: {transformers: ">=5"}
  match: "k($X)"
  action: {replace: "m($X)"}
- id: elsewhere
  files: ["other/*.py"]
  match: "k($X)"
  action: {replace: "m($X)"}
"#;

    #[test]
    fn gated_rules_come_first_then_open_ones_by_step_and_unselected_ones_not_at_all() {
        let rules = RuleSet::compile(load_yaml("r.yaml", RULES).unwrap()).unwrap();
        let mut versions = VersionEnv::default();
        versions.insert_pair("transformers=4.57.6").unwrap();
        let engine = Engine::new(&rules, &versions, None);
        let schedule = Schedule::new(&engine, "pkg/mod.py", &[]);
        let order: Vec<(usize, bool)> = schedule
            .order
            .iter()
            .map(|(id, gate)| (id.0, *gate == Gate::Open))
            .collect();
        assert_eq!(order, [(2, false), (1, true), (0, true)]);
        assert!(
            !schedule.single_step,
            "`after` puts `late` in a second step"
        );
        assert_eq!(schedule.open().map(|id| id.0).collect::<Vec<_>>(), [1, 0]);
        assert!(
            Schedule::new(&engine.selecting_all_files(), "x.py", &[])
                .order
                .len()
                == 4
        );
    }
}
