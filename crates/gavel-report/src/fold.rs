//! A [`Report`] folded outcome by outcome: the summary, the gate's inputs and
//! the transport counts are running totals, so a report of a large run need not
//! hold every execution ([`Detail::Summary`]).

use std::collections::BTreeMap;

use gavel_core::{Case, Execution, Outcome, RunRecord, Summary, TagStats};

use crate::snapshot::Snapshot;
use crate::{Files, Gate, Report, RequiredJudges, Transport, Unfinished};

/// Which outcomes a [`Report`] keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Detail {
    /// Every outcome with every execution: what report files are written from.
    #[default]
    Full,
    /// Only the outcomes the end-of-run summary ([`crate::terminal`]) lists; its
    /// counts and the gate still cover every outcome. Such a report cannot be
    /// rendered to a file.
    Summary,
}

/// Builds a [`Report`] from the run's case snapshot and its executions (or
/// outcomes), pushed in report order: each case of the snapshot, then the
/// executions of that case; after the last case, the executions whose case is
/// not in the snapshot. [`Detail::Full`] keeps every case, and takes outcomes of
/// any case pushed before, in any order. [`Detail::Summary`] holds only the
/// case being folded and those of the outcomes it keeps: it needs that order,
/// and each case id once (as gavel-store's `CasePages::first_of_id` gives
/// them).
pub struct ReportBuilder {
    run: RunRecord,
    snapshot: Snapshot,
    min_pass_rate: f64,
    detail: Detail,
    gate_tags: Vec<String>,
    /// Executions of the (case, target) being read, not yet an outcome.
    pending: Vec<Execution>,
    outcomes: Vec<Outcome>,
    overall: Stats,
    by_tag: BTreeMap<String, Stats>,
    by_target: BTreeMap<String, Stats>,
    gated: Stats,
    cost_usd: Option<f64>,
    pairwise: gavel_core::PairwiseStats,
    select_best: gavel_core::SelectBestStats,
    transport: Transport,
    judges: RequiredJudges,
    execution_ms: u64,
    recorded: u64,
    /// Outcomes of each listed kind kept so far ([`Detail::Summary`]).
    listed: crate::terminal::Listed,
    targets: crate::targets::TargetsFold,
    /// Report files written as the outcomes come.
    files: Option<Files>,
}

impl ReportBuilder {
    /// A report of `run`, gated at `min_pass_rate` percent, keeping `detail`;
    /// its cases are pushed with [`ReportBuilder::push_case`].
    pub fn new(run: RunRecord, min_pass_rate: f64, detail: Detail) -> Self {
        ReportBuilder {
            run,
            snapshot: Snapshot::new(detail),
            min_pass_rate,
            detail,
            gate_tags: Vec::new(),
            pending: Vec::new(),
            outcomes: Vec::new(),
            overall: Stats::default(),
            by_tag: BTreeMap::new(),
            by_target: BTreeMap::new(),
            gated: Stats::default(),
            cost_usd: None,
            pairwise: Default::default(),
            select_best: Default::default(),
            transport: Transport::default(),
            judges: RequiredJudges::of(&[]),
            execution_ms: 0,
            recorded: 0,
            listed: Default::default(),
            targets: Default::default(),
            files: None,
        }
    }

    /// Writes `files` as the outcomes come ([`ReportBuilder::finish_files`]
    /// hands them back to be finished): with [`Detail::Summary`], a report
    /// of any size is written without holding its outcomes.
    pub fn files(mut self, files: Files) -> Self {
        self.files = Some(files);
        self
    }

    /// Gates on the outcomes carrying any of `tags` only (none: on every outcome).
    pub fn gate_tags(mut self, tags: Vec<String>) -> Self {
        self.gate_tags = tags;
        self
    }

    /// The run reported.
    pub fn run(&self) -> &RunRecord {
        &self.run
    }

    /// The run as it ended, for a report folded while it was recorded: its
    /// status and end are the report's.
    pub fn run_ended(&mut self, run: RunRecord) {
        self.run = run;
    }

    /// Adds the next case of the run's snapshot, after the executions of the
    /// case before it.
    pub fn push_case(&mut self, case: Case) {
        self.flush();
        self.snapshot.push(case);
    }

    /// Adds an execution, after its case. Executions of one (case, target) must
    /// come one after another, as [`gavel_store::Store::execution_pages`] gives
    /// them.
    pub fn push_execution(&mut self, execution: Execution) {
        let same = self
            .pending
            .first()
            .is_none_or(|p| p.case_id == execution.case_id && p.target == execution.target);
        if !same {
            self.flush();
        }
        self.pending.push(execution);
    }

    /// Adds a whole outcome (after any pending executions).
    pub fn push(&mut self, mut outcome: Outcome) {
        self.flush();
        let case = self.snapshot.case(&outcome.case_id);
        if let Some(case) = case {
            crate::robust::decide(std::slice::from_mut(&mut outcome), |_| Some(case));
        }
        let keep = match self.detail {
            Detail::Full => true,
            Detail::Summary => self.listed.shows(&outcome, case),
        };
        if let Some(files) = &mut self.files {
            files.push(&self.run, &outcome, case);
        }
        self.snapshot.ran(&outcome.case_id, keep);
        self.count(&outcome);
        if keep {
            self.outcomes.push(outcome);
        }
    }

    /// The report: summary, transport and gate over every outcome pushed.
    pub fn finish(self) -> Report {
        self.finish_files().0
    }

    /// The report ([`ReportBuilder::finish`]) and the files being written,
    /// to be finished ([`Files::finish`]) once its gate is final.
    pub fn finish_files(mut self) -> (Report, Option<Files>) {
        self.flush();
        let (cases, case_positions, unrun_cases) = self.snapshot.finish();
        let unfinished = Unfinished::new(&self.run, self.recorded, unrun_cases);
        let summary = Summary {
            overall: self.overall.finish(),
            by_tag: finish_all(self.by_tag),
            by_target: finish_all(self.by_target),
            cost_usd: self.cost_usd,
            pairwise: self.pairwise,
            select_best: self.select_best,
        };
        let gated = if self.gate_tags.is_empty() {
            summary.overall.clone()
        } else {
            self.gated.finish()
        };
        let gate = Gate {
            tags: self.gate_tags,
            ..Gate::new(&gated, self.min_pass_rate, unfinished)
        };
        let report = Report {
            run: self.run,
            cases,
            outcomes: self.outcomes,
            summary,
            gate,
            transport: self.transport,
            case_positions,
            execution_ms: self.execution_ms,
            judges: self.judges,
            detail: self.detail,
            targets: self.targets.finish(),
        };
        (report, self.files)
    }

    /// Turns the pending executions into their outcome.
    fn flush(&mut self) {
        if self.pending.is_empty() {
            return;
        }
        let executions = std::mem::take(&mut self.pending);
        for outcome in Outcome::group(executions) {
            self.push(outcome);
        }
    }

    /// Adds the outcome to every running total.
    fn count(&mut self, o: &Outcome) {
        let one = Summary::of(std::slice::from_ref(o));
        self.overall.add(&one.overall, o.score);
        for tag in &o.tags {
            let stats = self.by_tag.entry(tag.clone()).or_default();
            stats.add(&one.overall, o.score);
        }
        let stats = self.by_target.entry(o.target.clone()).or_default();
        stats.add(&one.overall, o.score);
        self.targets.push(o);
        if o.tags.iter().any(|t| self.gate_tags.contains(t)) {
            self.gated.add(&one.overall, o.score);
        }
        for cost in o.executions.iter().filter_map(Execution::cost_usd) {
            self.cost_usd = Some(self.cost_usd.map_or(cost, |sum| sum + cost));
        }
        self.pairwise.comparisons += one.pairwise.comparisons;
        self.pairwise.position_bias += one.pairwise.position_bias;
        self.select_best.add(&one.select_best);
        let transport = Transport::of(std::slice::from_ref(o));
        self.transport.target.add(&transport.target);
        self.transport.judges.add(&transport.judges);
        self.judges.add(o);
        self.execution_ms += o.executions.iter().map(|e| e.duration_ms).sum::<u64>();
        self.recorded += o.executions.len() as u64;
    }
}

/// Running counts of a group of outcomes, and the sum of their scores in order
/// (so the mean is the one [`TagStats::of`] gives).
#[derive(Default)]
struct Stats {
    counts: TagStats,
    score_sum: f64,
    scored: usize,
}

impl Stats {
    /// Adds one outcome, given as its own stats and its score.
    fn add(&mut self, one: &TagStats, score: Option<f64>) {
        let c = &mut self.counts;
        c.total += one.total;
        c.passed += one.passed;
        c.passed_with_skips += one.passed_with_skips;
        c.failed += one.failed;
        c.errors += one.errors;
        c.skipped += one.skipped;
        if let Some(s) = score {
            self.score_sum += s;
            self.scored += 1;
        }
    }

    fn finish(self) -> TagStats {
        let mut s = self.counts;
        let decided = s.passed + s.failed;
        s.pass_rate = (decided > 0).then(|| 100.0 * s.passed as f64 / decided as f64);
        s.average_score = (self.scored > 0).then(|| self.score_sum / self.scored as f64);
        s
    }
}

fn finish_all(groups: BTreeMap<String, Stats>) -> BTreeMap<String, TagStats> {
    groups.into_iter().map(|(k, v)| (k, v.finish())).collect()
}
