//! A stored run's report, with the gate applied.

use std::collections::VecDeque;

use gavel_core::{Execution, RunRecord, RunStatus, TagStats};
use gavel_report::{CalibrationGate, Detail, Files, Gate, Report, ReportBuilder};
use gavel_store::{CasePages, DecisionStamp, ExecutionPages, PAGE_SIZE, Store, StoreError};
use serde::{Deserialize, Serialize};

use crate::config::StoredConfig;
use crate::{GateConfig, Regate, SessionError};

/// Builds the report of stored run `run_id` with its gate: the one gate of a
/// run, decided here from the store for every door (`gavel run`, local or
/// distributed, `gavel report`, the web UI and API, MCP, exports). The gate is
/// the one the run was given (stored with it: minimum pass rate, gate tags,
/// required judges, and the judge calibration decided when it was prepared),
/// changed only where `regate` says so; it fails on an unfinished plan and
/// never passes a run that decided nothing. Cases and executions are read a
/// page at a time, in report order, and folded case by case: with
/// [`Detail::Summary`] it holds only the outcomes its summary lists and their
/// cases.
pub async fn build(
    store: &Store,
    run_id: &str,
    regate: &Regate,
    detail: Detail,
) -> Result<Report, SessionError> {
    Ok(fold(store, run_id, regate, detail, None).await?.0)
}

/// The summary report of stored run `run_id` ([`build`] with
/// [`Detail::Summary`]), writing `files` as its outcomes are read: each report
/// file is written without holding the run's executions, and put in place
/// once the gate is decided.
pub async fn write(
    store: &Store,
    run_id: &str,
    regate: &Regate,
    files: Files,
) -> Result<Report, SessionError> {
    let (report, files) = fold(store, run_id, regate, Detail::Summary, Some(files)).await?;
    if let Some(files) = files {
        files.finish(&report, |_| ())?;
    }
    Ok(report)
}

/// What a run came to at its own gate: the counts, cost and gate of its
/// report ([`build`] with the default [`Regate`]), small enough to keep with
/// the run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Decision {
    /// Outcomes (case × target) by status, and the pass rate.
    pub overall: TagStats,
    /// Summed cost of the agent's and the judges' calls, when any is known.
    pub cost_usd: Option<f64>,
    /// The run's gate.
    pub gate: Gate,
}

impl Decision {
    fn of(report: &Report) -> Decision {
        Decision {
            overall: report.summary.overall.clone(),
            cost_usd: report.summary.cost_usd,
            gate: report.gate.clone(),
        }
    }
}

/// What run `run_id` came to at its own gate: the decision kept when its
/// report was last built, when the run has not changed since (so a finished
/// run's pages cost the same whatever its size); otherwise its report is
/// folded again, which keeps the new decision.
pub async fn decision(store: &Store, run_id: &str) -> Result<Decision, SessionError> {
    let stamp = store.decision_stamp(run_id).await?;
    if let Some(kept) = store.decision(run_id, &stamp).await? {
        return Ok(kept);
    }
    let report = build(store, run_id, &Regate::default(), Detail::Summary).await?;
    Ok(Decision::of(&report))
}

/// Keeps `decision` for `run` as it stood at `stamp`, once the run is no
/// longer running (a running run's is decided on every read). Keeping it only
/// saves later reads the fold: a store that cannot take it (a read-only copy)
/// is warned about, and the report stands.
async fn keep(store: &Store, run: &RunRecord, stamp: &DecisionStamp, decision: &Decision) {
    if run.status == RunStatus::Running {
        return;
    }
    if let Err(e) = store.save_decision(&run.id, stamp, decision).await {
        tracing::warn!(run = %run.id, "the run's decision was not kept: {e}");
    }
}

/// [`build`], handing each outcome to `files` as it is folded; a report at
/// the run's own gate keeps its [`Decision`].
async fn fold(
    store: &Store,
    run_id: &str,
    regate: &Regate,
    detail: Detail,
    files: Option<Files>,
) -> Result<(Report, Option<Files>), SessionError> {
    // Taken before the run is read: what is recorded meanwhile makes it stale.
    let stamp = match *regate == Regate::default() {
        true => Some(store.decision_stamp(run_id).await?),
        false => None,
    };
    let mut folding = Folding::open(store, run_id, regate, detail, files, false).await?;
    folding.read().await?;
    Ok(folding.finish(store, stamp.as_ref()).await)
}

/// A report being folded from the store, case by case in report order, as far
/// as the run is recorded.
pub(crate) struct Folding {
    builder: ReportBuilder,
    cases: CasePages,
    executions: Ahead,
    calibration: Option<CalibrationGate>,
    require_judges: bool,
    /// Every case may be read (the run is recorded).
    whole: bool,
}

impl Folding {
    /// The report of `run_id` at its gate, changed where `regate` says;
    /// `growing`: of a run being recorded, none of whose cases is read until
    /// [`Folding::before`] says how many are whole.
    pub(crate) async fn open(
        store: &Store,
        run_id: &str,
        regate: &Regate,
        detail: Detail,
        files: Option<Files>,
        growing: bool,
    ) -> Result<Folding, SessionError> {
        let run = store.run(run_id).await?;
        // Runs stored before the configuration was typed gate at the defaults.
        let stored = StoredConfig::of(&run).ok();
        let given = stored.as_ref();
        let min_pass_rate = regate
            .min_pass_rate
            .or_else(|| given.and_then(|s| s.min_pass_rate))
            .unwrap_or(GateConfig::DEFAULT_MIN_PASS_RATE);
        let tags = match &regate.tags {
            tags if !tags.is_empty() => tags.clone(),
            _ => given.map(|s| s.gate_tags.clone()).unwrap_or_default(),
        };
        let require_judges = regate.require_judges || given.is_some_and(|s| s.require_judges);
        let calibration = given.and_then(|s| s.calibration.clone());
        let mut cases = store.case_pages(&run.id, PAGE_SIZE);
        if detail == Detail::Summary {
            cases = cases.first_of_id();
        }
        let pages = match growing {
            true => {
                cases.before(Some(0));
                store.growing_execution_pages(&run.id, PAGE_SIZE, 0)
            }
            false => store.execution_pages(&run.id, PAGE_SIZE).await?,
        };
        let mut builder = ReportBuilder::new(run, min_pass_rate, detail).gate_tags(tags);
        if let Some(files) = files {
            builder = builder.files(files);
        }
        Ok(Folding {
            builder,
            cases,
            executions: Ahead {
                pages,
                page: VecDeque::new(),
            },
            calibration,
            require_judges,
            whole: !growing,
        })
    }

    /// A growing fold may read the run's first `cases` cases (in saved
    /// order), each with every execution recorded; `None`: the run is
    /// recorded, every case and execution may be read, and the run's record
    /// (its end) is read again.
    pub(crate) async fn before(
        &mut self,
        store: &Store,
        cases: Option<usize>,
    ) -> Result<(), SessionError> {
        if self.whole {
            return Ok(());
        }
        self.cases.before(cases);
        self.executions.pages.before(cases).await?;
        if cases.is_none() {
            self.whole = true;
            let run = store.run(&self.builder.run().id).await?;
            self.builder.run_ended(run);
        }
        Ok(())
    }

    /// Folds every case that may be read now, with its executions; once the
    /// run is whole, then the executions whose case is not in the snapshot.
    pub(crate) async fn read(&mut self) -> Result<(), SessionError> {
        while let Some(page) = self.cases.next_page().await? {
            for case in page {
                let id = case.id.clone();
                self.builder.push_case(case);
                while let Some(execution) = self.executions.next(Some(&id)).await? {
                    self.builder.push_execution(execution);
                }
            }
        }
        if self.whole {
            while let Some(execution) = self.executions.next(None).await? {
                self.builder.push_execution(execution);
            }
        }
        Ok(())
    }

    /// The report, its gate final, and its files to finish; keeps its
    /// [`Decision`] when `stamp` (taken before the run was read) is given.
    pub(crate) async fn finish(
        self,
        store: &Store,
        stamp: Option<&DecisionStamp>,
    ) -> (Report, Option<Files>) {
        let (mut report, files) = self.builder.finish_files();
        if let Some(c) = self.calibration {
            report.gate = report.gate.clone().with_calibration(c);
        }
        if self.require_judges {
            report.require_judges();
        }
        if let Some(stamp) = stamp {
            keep(store, &report.run, stamp, &Decision::of(&report)).await;
        }
        (report, files)
    }
}

/// A run's executions in report order, one page read ahead.
struct Ahead {
    pages: ExecutionPages,
    page: VecDeque<Execution>,
}

impl Ahead {
    /// The next execution, when it is of case `id` (any case: `None`).
    async fn next(&mut self, id: Option<&str>) -> Result<Option<Execution>, StoreError> {
        while self.page.is_empty() {
            match self.pages.next_page().await? {
                Some(page) => self.page = page.into(),
                None => return Ok(None),
            }
        }
        let of_case = |e: &Execution| id.is_none_or(|id| e.case_id == id);
        Ok(self.page.pop_front_if(|e| of_case(e)))
    }
}
