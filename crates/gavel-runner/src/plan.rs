//! Expansion: which executions a run consists of.

use std::borrow::Cow;
use std::collections::HashSet;
use std::sync::Arc;

use gavel_checks::CheckPlan;
use gavel_core::{Case, ExecutionKey, Suite};

use crate::RunnerError;

/// Selection and expansion options.
#[derive(Debug, Clone, Default)]
pub struct PlanOptions {
    /// Keep only cases with at least one of these tags (empty: all).
    pub tags: Vec<String>,
    /// Drop cases with any of these tags.
    pub skip_tags: Vec<String>,
    /// Keep only cases whose id or name contains this text (case-insensitive).
    pub filter: Option<String>,
    /// Override every case's repeat count.
    pub repeat: Option<u32>,
    /// Run only these targets (empty: every target of each case).
    pub targets: Vec<String>,
    /// Executions already recorded, for `--resume`.
    pub done: HashSet<ExecutionKey>,
}

/// One execution to carry out.
#[derive(Clone)]
pub struct PlannedExecution {
    /// The case.
    pub case: Arc<Case>,
    /// Its compiled checks.
    pub checks: Arc<CheckPlan>,
    /// The target's name.
    pub target: String,
    /// Which repeat (0-based).
    pub repeat_index: u32,
}

impl PlannedExecution {
    /// Which execution this is.
    pub fn key(&self) -> ExecutionKey {
        ExecutionKey::new(&self.case.id, &self.target, self.repeat_index)
    }
}

/// The executions of a run, and the cases they come from.
#[derive(Clone, Default)]
pub struct Plan {
    /// Selected cases, in suite order.
    pub cases: Vec<Arc<Case>>,
    /// Executions still to run, in suite order.
    pub items: Vec<PlannedExecution>,
    /// Executions skipped because they were already recorded.
    pub already_done: usize,
}

impl Plan {
    /// The selected cases, taken out of the plan: copied only when something
    /// else still shares one.
    pub fn into_cases(self) -> Vec<Case> {
        let Plan { cases, items, .. } = self;
        drop(items);
        cases
            .into_iter()
            .map(|case| Arc::try_unwrap(case).unwrap_or_else(|shared| (*shared).clone()))
            .collect()
    }
}

/// Selects, compiles and expands the cases of `suite`, copying the selected ones.
pub fn plan(suite: &Suite, options: &PlanOptions) -> Result<Plan, RunnerError> {
    expand(suite, suite.cases.iter().map(Cow::Borrowed), options)
}

/// [`plan`], moving the suite's cases into the plan instead of copying them:
/// the suite keeps its settings and targets, and a large suite is held once.
pub fn plan_taking(suite: &mut Suite, options: &PlanOptions) -> Result<Plan, RunnerError> {
    let cases = std::mem::take(&mut suite.cases);
    expand(suite, cases.into_iter().map(Cow::Owned), options)
}

fn expand<'a>(
    suite: &Suite,
    cases: impl Iterator<Item = Cow<'a, Case>>,
    options: &PlanOptions,
) -> Result<Plan, RunnerError> {
    let filter = options.filter.as_ref().map(|f| f.to_lowercase());
    let mut out = Plan::default();
    for case in cases {
        if !selected(&case, options, filter.as_deref()) {
            continue;
        }
        let checks = Arc::new(gavel_checks::compile(&case, &suite.judge)?);
        // A robustness case runs every input (its own, then each variant) per
        // repeat: execution `r * inputs + v` is repeat r of input v.
        // Input 0 is the case itself, shared rather than copied.
        let case = Arc::new(case.into_owned());
        let inputs: Vec<Arc<Case>> = (0..case.input_count())
            .map(|v| match v {
                0 => case.clone(),
                v => Arc::new(case.with_input(v)),
            })
            .collect();
        let chosen = case
            .targets
            .iter()
            .filter(|t| options.targets.is_empty() || options.targets.contains(t));
        for target in chosen {
            if !suite.targets.contains_key(target) {
                return Err(RunnerError::UnknownTarget {
                    case: case.id.clone(),
                    target: target.clone(),
                });
            }
            let repeats = options.repeat.unwrap_or_else(|| case.repeat_count()).max(1);
            for repeat_index in 0..repeats.saturating_mul(case.input_count()) {
                if options
                    .done
                    .contains(&ExecutionKey::new(&case.id, target, repeat_index))
                {
                    out.already_done += 1;
                    continue;
                }
                out.items.push(PlannedExecution {
                    case: inputs[(repeat_index % case.input_count()) as usize].clone(),
                    checks: checks.clone(),
                    target: target.clone(),
                    repeat_index,
                });
            }
        }
        out.cases.push(case);
    }
    Ok(out)
}

fn selected(case: &Case, o: &PlanOptions, filter: Option<&str>) -> bool {
    let has = |tags: &[String]| tags.iter().any(|t| case.tags.contains(t));
    (o.tags.is_empty() || has(&o.tags))
        && !has(&o.skip_tags)
        && filter.is_none_or(|f| {
            case.id.to_lowercase().contains(f) || case.name.to_lowercase().contains(f)
        })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use std::path::Path;

    const SUITE: &str = "
targets:
  a: {type: command, command: [cat]}
  b: {type: command, command: [cat]}
cases:
  - id: one
    tags: [smoke]
    input: hi
  - id: two
    tags: [slow, smoke]
    input: hi
    repeat: 3
    targets: [a]
  - id: three
    name: Third thing
    input: hi
";

    fn suite() -> Suite {
        gavel_core::load::parse_suite_str(SUITE, Path::new("s.yaml")).unwrap()
    }

    fn ids(p: &Plan) -> Vec<String> {
        p.items
            .iter()
            .map(|i| format!("{}@{}#{}", i.case.id, i.target, i.repeat_index))
            .collect()
    }

    #[test]
    fn expands_targets_and_repeats() {
        let p = plan(&suite(), &PlanOptions::default()).unwrap();
        assert_eq!(
            ids(&p),
            [
                "one@a#0",
                "one@b#0",
                "two@a#0",
                "two@a#1",
                "two@a#2",
                "three@a#0",
                "three@b#0"
            ]
        );
    }

    #[test]
    fn taking_plans_the_same_and_leaves_the_suite_its_settings() {
        let o = PlanOptions {
            filter: Some("T".into()),
            ..Default::default()
        };
        let copied = plan(&suite(), &o).unwrap();
        let mut taken_from = suite();
        let taken = plan_taking(&mut taken_from, &o).unwrap();
        assert_eq!(ids(&taken), ids(&copied));
        assert_eq!(taken.into_cases(), copied.into_cases());
        assert!(taken_from.cases.is_empty());
        assert_eq!(taken_from.targets, suite().targets);
    }

    #[test]
    fn tags_skip_tags_filter_and_repeat_override() {
        let o = PlanOptions {
            tags: vec!["smoke".into()],
            skip_tags: vec!["slow".into()],
            ..Default::default()
        };
        assert_eq!(ids(&plan(&suite(), &o).unwrap()), ["one@a#0", "one@b#0"]);
        let o = PlanOptions {
            filter: Some("THIRD".into()),
            repeat: Some(2),
            ..Default::default()
        };
        assert_eq!(
            ids(&plan(&suite(), &o).unwrap()),
            ["three@a#0", "three@a#1", "three@b#0", "three@b#1"]
        );
        let o = PlanOptions {
            filter: Some("THIRD".into()),
            targets: vec!["b".into()],
            ..Default::default()
        };
        assert_eq!(ids(&plan(&suite(), &o).unwrap()), ["three@b#0"]);
    }

    #[test]
    fn cases_are_shared_not_copied_and_come_back_out() {
        let suite = suite();
        let p = plan(&suite, &PlanOptions::default()).unwrap();
        for item in &p.items {
            let case = p.cases.iter().find(|c| c.id == item.case.id).unwrap();
            assert!(Arc::ptr_eq(case, &item.case), "{} is a copy", item.case.id);
        }
        assert_eq!(p.into_cases(), suite.cases);
    }

    #[test]
    fn resume_skips_recorded_executions() {
        let mut o = PlanOptions::default();
        o.done.insert(ExecutionKey::new("two", "a", 1));
        let p = plan(&suite(), &o).unwrap();
        assert_eq!(p.already_done, 1);
        assert!(!ids(&p).contains(&"two@a#1".to_owned()));
    }

    #[test]
    fn variants_run_each_input_every_repeat() {
        let yaml = "targets:\n  a: {type: command, command: [cat]}\ncases:\n  - id: r\n    input: What is 2+2?\n    variants: [Add two and two., 2 plus 2?]\n    repeat: 2\n    max_stddev: 0.1\n";
        let suite = gavel_core::load::parse_suite_str(yaml, Path::new("s.yaml")).unwrap();
        let p = plan(&suite, &PlanOptions::default()).unwrap();
        assert_eq!(
            ids(&p),
            ["r@a#0", "r@a#1", "r@a#2", "r@a#3", "r@a#4", "r@a#5"]
        );
        let inputs: Vec<&str> = p
            .items
            .iter()
            .map(|i| i.case.rounds[0].input.as_str().unwrap())
            .collect();
        assert_eq!(
            inputs,
            [
                "What is 2+2?",
                "Add two and two.",
                "2 plus 2?",
                "What is 2+2?",
                "Add two and two.",
                "2 plus 2?"
            ]
        );
        assert_eq!(p.cases[0].rounds[0].input, "What is 2+2?");
    }
}
