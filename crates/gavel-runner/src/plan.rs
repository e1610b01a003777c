//! Expansion: which executions a run consists of.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;

use gavel_checks::{CheckPlan, JudgeUse, PairwiseSpec, SelectBestSpec};
use gavel_core::{Case, ExecutionKey, JudgeSettings, Suite};

use crate::RunnerError;
use crate::spill::{CaseText, Spill, SpillReader, SpillWriter};

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

/// The executions of a run: selected, compiled and counted when planned, and
/// expanded again case by case as they run ([`Plan::items`]). A plan made
/// from a suite keeps its cases in a temporary file, so a suite of any size is
/// held one case at a time; [`Plan::of`] holds given executions.
pub struct Plan {
    cases: Cases,
    /// Executions still to run.
    pub executions: usize,
    /// Executions skipped because they were already recorded.
    pub already_done: usize,
    facts: Facts,
}

/// Where a plan's executions come from.
enum Cases {
    /// Executions expanded already.
    Held(Vec<PlannedExecution>),
    /// The selected cases, expanded as they are read.
    Spilled { spill: Spill, expand: Box<Expand> },
}

/// What a plan knows of all its executions before any runs.
#[derive(Default)]
struct Facts {
    /// Targets with executions to run, each with the first case that runs it.
    targets: BTreeMap<String, String>,
    /// Cases with pairwise checks: their specs.
    pairwise: HashMap<String, Vec<PairwiseSpec>>,
    /// Cases with select-best checks: their specs and executions to run.
    select_best: HashMap<String, (Vec<SelectBestSpec>, usize)>,
    /// Whether any check embeds text (`similar`).
    embeddings: bool,
    /// Judge calls of one pass of every execution's judged checks.
    judge_calls: usize,
    /// Every distinct judge configuration the checks grade with, each with
    /// the first case that uses it.
    judges: Vec<(String, JudgeUse)>,
}

impl Facts {
    fn add(&mut self, item: &PlannedExecution) {
        let case = &item.case.id;
        if !self.targets.contains_key(&item.target) {
            self.targets.insert(item.target.clone(), case.clone());
        }
        if !self.pairwise.contains_key(case) {
            let found = item.checks.pairwise();
            if !found.is_empty() {
                self.pairwise.insert(case.clone(), found);
            }
        }
        let specs = item.checks.select_best();
        if !specs.is_empty() {
            self.select_best
                .entry(case.clone())
                .or_insert_with(|| (specs.to_vec(), 0))
                .1 += 1;
        }
        self.embeddings |= item.checks.uses_embeddings();
        self.judge_calls += item.checks.judge_count();
        for u in item.checks.judge_uses() {
            if !self.judges.iter().any(|(_, seen)| seen.same_judge(&u)) {
                self.judges.push((case.clone(), u));
            }
        }
    }
}

impl Plan {
    /// A plan of the given executions (a worker's claimed unit, tests).
    pub fn of(items: Vec<PlannedExecution>) -> Plan {
        let mut facts = Facts::default();
        items.iter().for_each(|item| facts.add(item));
        Plan {
            executions: items.len(),
            already_done: 0,
            cases: Cases::Held(items),
            facts,
        }
    }

    /// The executions to run, in suite order. A spilled plan reads, compiles
    /// and expands its cases again one at a time; an error (the temporary file
    /// unreadable) ends the iteration.
    pub fn items(&self) -> Items<'_> {
        let source = match &self.cases {
            Cases::Held(items) => Source::Held(items.iter()),
            Cases::Spilled { spill, expand } => Source::Spilled {
                reader: spill.read(),
                expand,
            },
        };
        Items {
            source,
            current: Vec::new().into_iter(),
            cases: 0,
        }
    }

    /// The executions the plan runs of `case` (one of its cases, e.g. read back
    /// from the store), compiled and expanded as [`Plan::items`] gives them:
    /// a worker plans a run once, then expands only the cases it claims.
    pub fn executions_of(&self, case: Case) -> Result<Vec<PlannedExecution>, RunnerError> {
        let mut out = Vec::new();
        match &self.cases {
            Cases::Held(items) => {
                out.extend(items.iter().filter(|i| i.case.id == case.id).cloned())
            }
            Cases::Spilled { expand, .. } => {
                expand.case(case, None, &mut |item| out.push(item))?;
            }
        }
        Ok(out)
    }

    /// The selected cases in suite order as written when planned, for storing
    /// with a run. A plan of given executions ([`Plan::of`]) keeps no cases: it
    /// has none.
    pub fn case_texts(&self) -> CaseTexts<'_> {
        CaseTexts(match &self.cases {
            Cases::Held(_) => None,
            Cases::Spilled { spill, .. } => Some(spill.read()),
        })
    }

    /// Targets with executions to run, by name.
    pub fn targets(&self) -> impl Iterator<Item = &str> {
        self.facts.targets.keys().map(String::as_str)
    }

    /// The first case that runs `target`, if any does.
    pub fn first_case_of(&self, target: &str) -> Option<&str> {
        self.facts.targets.get(target).map(String::as_str)
    }

    /// Cases with pairwise checks, with their specs.
    pub fn pairwise(&self) -> &HashMap<String, Vec<PairwiseSpec>> {
        &self.facts.pairwise
    }

    /// Cases with select-best checks: their specs and how many executions run.
    pub fn select_best(&self) -> &HashMap<String, (Vec<SelectBestSpec>, usize)> {
        &self.facts.select_best
    }

    /// Every distinct judge configuration the plan's checks grade with, each
    /// with the first case that uses it.
    pub fn judge_uses(&self) -> &[(String, JudgeUse)] {
        &self.facts.judges
    }

    /// Whether any check embeds text (`similar`).
    pub fn uses_embeddings(&self) -> bool {
        self.facts.embeddings
    }

    /// Judge calls of one pass of every execution's judged checks.
    pub fn judge_calls(&self) -> usize {
        self.facts.judge_calls
    }
}

/// A plan's selected cases as written ([`Plan::case_texts`]).
pub struct CaseTexts<'p>(Option<SpillReader<'p>>);

impl CaseTexts<'_> {
    /// The next case; `None` after the last.
    pub fn next_text(&mut self) -> Result<Option<CaseText<'_>>, RunnerError> {
        match &mut self.0 {
            Some(reader) => reader.next_text().map_err(RunnerError::Spill),
            None => Ok(None),
        }
    }
}

/// How a spilled plan expands its cases again.
struct Expand {
    judge: JudgeSettings,
    targets: Vec<String>,
    repeat: Option<u32>,
    done: HashSet<ExecutionKey>,
}

impl Expand {
    /// Compiles `case` and hands each of its executions still to run to
    /// `each`; returns how many were recorded already.
    fn case(
        &self,
        case: Case,
        checks: Option<Arc<CheckPlan>>,
        each: &mut dyn FnMut(PlannedExecution),
    ) -> Result<usize, RunnerError> {
        let checks = match checks {
            Some(checks) => checks,
            None => Arc::new(gavel_checks::compile(&case, &self.judge)?),
        };
        // A robustness case runs every input (its own, then each variant) per
        // repeat: execution `r * inputs + v` is repeat r of input v.
        // Input 0 is the case itself, shared rather than copied.
        let case = Arc::new(case);
        let inputs: Vec<Arc<Case>> = (0..case.input_count())
            .map(|v| match v {
                0 => case.clone(),
                v => Arc::new(case.with_input(v)),
            })
            .collect();
        let mut done = 0;
        let chosen = case
            .targets
            .iter()
            .filter(|t| self.targets.is_empty() || self.targets.contains(t));
        for target in chosen {
            let repeats = self.repeat.unwrap_or_else(|| case.repeat_count()).max(1);
            for repeat_index in 0..repeats.saturating_mul(case.input_count()) {
                if self
                    .done
                    .contains(&ExecutionKey::new(&case.id, target, repeat_index))
                {
                    done += 1;
                    continue;
                }
                each(PlannedExecution {
                    case: inputs[(repeat_index % case.input_count()) as usize].clone(),
                    checks: checks.clone(),
                    target: target.clone(),
                    repeat_index,
                });
            }
        }
        Ok(done)
    }
}

/// A plan's executions in order ([`Plan::items`]).
pub struct Items<'p> {
    source: Source<'p>,
    /// The executions of the case being run.
    current: std::vec::IntoIter<PlannedExecution>,
    /// Cases read from a spilled plan.
    cases: usize,
}

enum Source<'p> {
    Held(std::slice::Iter<'p, PlannedExecution>),
    Spilled {
        reader: SpillReader<'p>,
        expand: &'p Expand,
    },
    Failed,
}

impl Iterator for Items<'_> {
    type Item = Result<PlannedExecution, RunnerError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some(item) = self.current.next() {
                return Some(Ok(item));
            }
            let (reader, expand) = match &mut self.source {
                Source::Held(items) => return items.next().cloned().map(Ok),
                Source::Spilled { reader, expand } => (reader, *expand),
                Source::Failed => return None,
            };
            let case = match reader.next_case() {
                Ok(Some(case)) => {
                    self.cases += 1;
                    case
                }
                Ok(None) => return None,
                Err(e) => return self.fail(RunnerError::Spill(e)),
            };
            let mut items = Vec::new();
            match expand.case(case, None, &mut |item| items.push(item)) {
                Ok(_) => self.current = items.into_iter(),
                Err(e) => return self.fail(e),
            }
        }
    }
}

impl Items<'_> {
    /// Cases read so far from a plan made from a suite, in plan order (the
    /// last item given is of case `cases() - 1`); `None` for a plan of given
    /// executions ([`Plan::of`]).
    pub fn cases(&self) -> Option<usize> {
        match self.source {
            Source::Held(_) => None,
            Source::Spilled { .. } | Source::Failed => Some(self.cases),
        }
    }

    /// Ends the iteration with `e`.
    fn fail(&mut self, e: RunnerError) -> Option<Result<PlannedExecution, RunnerError>> {
        self.source = Source::Failed;
        Some(Err(e))
    }
}

/// Plans the cases of `suite` (copying the selected ones into the plan's file):
/// for suites already in memory (previews, tests); a run plans cases as they
/// are read ([`Planner`]).
pub fn plan(suite: &Suite, options: &PlanOptions) -> Result<Plan, RunnerError> {
    let mut planner = Planner::new(suite, options)?;
    for case in &suite.cases {
        planner.add(case.clone())?;
    }
    planner.finish()
}

/// Builds a [`Plan`] one case at a time, as a suite is read: each case is
/// selected, its checks compiled and its executions counted, and then it is
/// written to the plan's temporary file and dropped.
pub struct Planner {
    spill: SpillWriter,
    expand: Expand,
    tags: Vec<String>,
    skip_tags: Vec<String>,
    filter: Option<String>,
    defined: Vec<String>,
    executions: usize,
    already_done: usize,
    facts: Facts,
}

impl Planner {
    /// A planner for cases of `suite` (its targets and judge settings).
    pub fn new(suite: &Suite, options: &PlanOptions) -> Result<Planner, RunnerError> {
        Ok(Planner {
            spill: SpillWriter::new().map_err(RunnerError::Spill)?,
            expand: Expand {
                judge: suite.judge.clone(),
                targets: options.targets.clone(),
                repeat: options.repeat,
                done: options.done.clone(),
            },
            tags: options.tags.clone(),
            skip_tags: options.skip_tags.clone(),
            filter: options.filter.as_ref().map(|f| f.to_lowercase()),
            defined: suite.targets.keys().cloned().collect(),
            executions: 0,
            already_done: 0,
            facts: Facts::default(),
        })
    }

    /// Plans `case` when it is selected: checks compile, targets exist.
    pub fn add(&mut self, case: Case) -> Result<(), RunnerError> {
        if !self.selected(&case) {
            return Ok(());
        }
        if let Some(target) = case.targets.iter().find(|t| !self.defined.contains(t)) {
            return Err(RunnerError::UnknownTarget {
                case: case.id.clone(),
                target: target.clone(),
            });
        }
        self.spill.push(&case).map_err(RunnerError::Spill)?;
        let checks = Arc::new(gavel_checks::compile(&case, &self.expand.judge)?);
        let (facts, executions) = (&mut self.facts, &mut self.executions);
        self.already_done += self.expand.case(case, Some(checks), &mut |item| {
            facts.add(&item);
            *executions += 1;
        })?;
        Ok(())
    }

    /// The plan of every case added.
    pub fn finish(self) -> Result<Plan, RunnerError> {
        Ok(Plan {
            cases: Cases::Spilled {
                spill: self.spill.finish().map_err(RunnerError::Spill)?,
                expand: Box::new(self.expand),
            },
            executions: self.executions,
            already_done: self.already_done,
            facts: self.facts,
        })
    }

    fn selected(&self, case: &Case) -> bool {
        let has = |tags: &[String]| tags.iter().any(|t| case.tags.contains(t));
        (self.tags.is_empty() || has(&self.tags))
            && !has(&self.skip_tags)
            && self.filter.as_deref().is_none_or(|f| {
                case.id.to_lowercase().contains(f) || case.name.to_lowercase().contains(f)
            })
    }
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

    fn items(p: &Plan) -> Vec<PlannedExecution> {
        p.items().map(Result::unwrap).collect()
    }

    fn ids(p: &Plan) -> Vec<String> {
        items(p)
            .iter()
            .map(|i| format!("{}@{}#{}", i.case.id, i.target, i.repeat_index))
            .collect()
    }

    fn cases(p: &Plan) -> Vec<Case> {
        let mut texts = p.case_texts();
        let mut out = Vec::new();
        while let Some(text) = texts.next_text().unwrap() {
            let mut case: Case = serde_json::from_str(text.json).unwrap();
            case.source = text.source;
            out.push(case);
        }
        out
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
    fn a_case_is_shared_by_its_executions_and_comes_back_out() {
        let suite = suite();
        let p = plan(&suite, &PlanOptions::default()).unwrap();
        let items = items(&p);
        for pair in items.windows(2) {
            if pair[0].case.id == pair[1].case.id {
                assert!(Arc::ptr_eq(&pair[0].case, &pair[1].case));
                assert!(Arc::ptr_eq(&pair[0].checks, &pair[1].checks));
            }
        }
        assert_eq!(cases(&p), suite.cases);
        assert_eq!(p.executions, items.len());
        assert_eq!(p.targets().collect::<Vec<_>>(), ["a", "b"]);
    }

    #[test]
    fn a_case_read_back_expands_to_its_planned_executions() {
        let mut o = PlanOptions {
            targets: vec!["a".into()],
            ..Default::default()
        };
        o.done.insert(ExecutionKey::new("two", "a", 1));
        let s = suite();
        let p = plan(&s, &o).unwrap();
        let two = s.cases.iter().find(|c| c.id == "two").unwrap().clone();
        let keys: Vec<String> = p
            .executions_of(two)
            .unwrap()
            .iter()
            .map(|i| format!("{}@{}#{}", i.case.id, i.target, i.repeat_index))
            .collect();
        assert_eq!(keys, ["two@a#0", "two@a#2"]);
    }

    #[test]
    fn a_plan_of_given_executions_runs_them_and_keeps_no_cases() {
        let p = plan(&suite(), &PlanOptions::default()).unwrap();
        let held = Plan::of(items(&p));
        assert_eq!(ids(&held), ids(&p));
        assert_eq!(held.executions, p.executions);
        assert!(cases(&held).is_empty());
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
        let all = items(&p);
        let inputs: Vec<&str> = all
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
        assert_eq!(cases(&p)[0].rounds[0].input, "What is 2+2?");
    }
}
