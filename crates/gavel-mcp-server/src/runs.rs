//! `list_runs`, `get_run` and `compare_runs`: stored runs, their summary and
//! gate, and two of them compared (through `gavel_report`).

use gavel_core::{RunRecord, RunStatus, Summary};
use gavel_report::Detail;
use gavel_report::compare::{CaseChange, Comparison, Totals};
use gavel_store::{MIN_RUN_PREFIX, Page, Store, StoreError};
use serde::Serialize;

use crate::ToolError;
use crate::args::{self, CompareRunsArgs, GetRunArgs, ListRunsArgs};
use crate::cursor::{self, Cursor};

/// The run argument `field` names: an id, a unique prefix, or `latest`.
pub(crate) async fn find(store: &Store, field: &str, run: &str) -> Result<RunRecord, ToolError> {
    if run == "latest" {
        return store
            .latest_run()
            .await?
            .ok_or_else(|| ToolError::field(field, "the store holds no run yet"));
    }
    match store.run(run).await {
        Err(StoreError::NotFound(_)) if run.chars().count() < MIN_RUN_PREFIX => {
            Err(ToolError::field(
                field,
                format!(
                    "no run has the id `{run}`; give at least {MIN_RUN_PREFIX} characters \
                     of the run id (or `latest`)"
                ),
            ))
        }
        found => found.map_err(|e| ToolError::lookup(field, e)),
    }
}

/// One run in a listing.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunOut {
    /// The run id.
    pub id: String,
    /// The suite.
    pub suite: String,
    /// running, completed, failed, interrupted…
    pub status: RunStatus,
    /// When it started.
    pub started_at: String,
    /// When it finished.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub finished_at: Option<String>,
}

impl RunOut {
    fn of(run: &RunRecord) -> RunOut {
        RunOut {
            id: run.id.clone(),
            suite: run.suite.clone(),
            status: run.status,
            started_at: run.started_at.clone(),
            finished_at: run.finished_at.clone(),
        }
    }
}

/// A page of runs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunList {
    /// Newest first.
    pub runs: Vec<RunOut>,
    /// Pass it as `cursor` for the next page.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}

/// Answers `list_runs`.
pub async fn list_runs(store: &Store, args: ListRunsArgs) -> Result<RunList, ToolError> {
    let limit = args::limit(args.limit)?;
    let cursor = Cursor::decode("list_runs", args.cursor.as_deref())?;
    let mut runs = store
        .run_page(
            args.suite.as_deref(),
            Page {
                offset: cursor.offset,
                limit: u64::from(limit) + 1,
            },
        )
        .await?;
    let more = runs.len() > limit as usize;
    runs.truncate(limit as usize);
    Ok(RunList {
        next_cursor: cursor::next("list_runs", cursor.offset, runs.len(), more),
        runs: runs.iter().map(RunOut::of).collect(),
    })
}

/// A run's summary and gate.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunSummary {
    /// The run.
    pub run: RunOut,
    /// Why the run failed, when it did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Its configuration snapshot (no secrets are stored in it).
    pub config: serde_json::Value,
    /// Outcomes counted overall, by tag and by target.
    pub summary: Summary,
    /// The pass-rate gate.
    pub gate: GateOut,
}

/// The gate of a run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GateOut {
    /// PASS, FAIL, ERROR, INCOMPLETE or UNDECIDED.
    pub verdict: &'static str,
    /// The minimum pass rate, in percent (the run's own, else 80).
    pub min_pass_rate: f64,
    /// The pass rate over decided outcomes, in percent.
    pub pass_rate: Option<f64>,
    /// Whether the gate passed.
    pub passed: bool,
    /// Outcomes that errored.
    pub errors: usize,
    /// The exit code `gavel report` gives the run.
    pub exit_code: i32,
    /// Why the gate failed, one sentence per condition (the pass rate, a judge
    /// calibration that does not qualify the judge, required judges).
    pub failures: Vec<String>,
}

/// Answers `get_run`: the run's gate as every door reports it
/// ([`gavel_session::report::build`]).
pub async fn get_run(store: &Store, args: GetRunArgs) -> Result<RunSummary, ToolError> {
    let run = find(store, "run", &args.run).await?;
    let error = store.run_error(&run.id).await?;
    let regate = gavel_session::Regate::default();
    let report = gavel_session::report::build(store, &run.id, &regate, Detail::Summary)
        .await
        .map_err(|e| match e {
            gavel_session::SessionError::Store(e) => ToolError::Store(e),
            other => ToolError::NotFound(other.to_string()),
        })?;
    let gate = &report.gate;
    Ok(RunSummary {
        run: RunOut::of(&report.run),
        error,
        config: report.run.config.clone(),
        gate: GateOut {
            verdict: gate.word(),
            min_pass_rate: gate.min_pass_rate,
            pass_rate: gate.pass_rate,
            passed: gate.passed,
            errors: gate.errors,
            exit_code: gate.exit_code(),
            failures: gate.failures().iter().map(ToString::to_string).collect(),
        },
        summary: report.summary,
    })
}

/// Two runs compared, one page of their cases.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunComparison {
    /// The baseline run.
    pub run_a: String,
    /// The candidate run.
    pub run_b: String,
    /// Passed in A, fail in B.
    pub regressions: usize,
    /// Failed in A, pass in B.
    pub fixes: usize,
    /// Run A over the matched outcomes.
    pub totals_a: Totals,
    /// Run B over the matched outcomes.
    pub totals_b: Totals,
    /// The significance of the difference, in words.
    pub significance: String,
    /// Cases compared, regressions first (one page).
    pub cases: Vec<CaseChange>,
    /// Cases in all.
    pub total_cases: usize,
    /// Pass it as `cursor` for the next page of cases.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}

/// Answers `compare_runs`.
pub async fn compare_runs(
    store: &Store,
    args: CompareRunsArgs,
) -> Result<RunComparison, ToolError> {
    let limit = args::limit(args.limit)? as usize;
    let cursor = Cursor::decode("compare_runs", args.cursor.as_deref())?;
    let a = find(store, "run_a", &args.run_a).await?;
    let b = find(store, "run_b", &args.run_b).await?;
    let comparison = Comparison::new(
        &a,
        store.executions(&a.id).await?,
        &store.cases(&a.id).await?,
        &b,
        store.executions(&b.id).await?,
        &store.cases(&b.id).await?,
    );
    let total_cases = comparison.cases.len();
    let start = usize::try_from(cursor.offset)
        .unwrap_or(usize::MAX)
        .min(total_cases);
    let cases: Vec<CaseChange> = comparison
        .cases
        .into_iter()
        .skip(start)
        .take(limit)
        .collect();
    let more = start + cases.len() < total_cases;
    Ok(RunComparison {
        run_a: comparison.run_a,
        run_b: comparison.run_b,
        regressions: comparison.regressions,
        fixes: comparison.fixes,
        totals_a: comparison.totals_a,
        totals_b: comparison.totals_b,
        significance: comparison.significance,
        next_cursor: cursor::next("compare_runs", cursor.offset, cases.len(), more),
        cases,
        total_cases,
    })
}
