//! Carrying out planned executions: sessions, rounds, deadlines, grading.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use futures::StreamExt;
use gavel_checks::{JudgeModels, JudgeRuntime, NoJudgeModels};
use gavel_core::{Case, Execution, JudgeSettings, Status, Transcript};
use gavel_targets::Target;
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

use crate::conversation::{self, Played};
use crate::frontier::Frontier;
use crate::pairwise::Pairing;
use crate::select::Selecting;
use crate::{Plan, PlannedExecution, PreparedTargets, Recorder, RunnerError};

/// Most results handed to the recorders at once.
const RECORD_BATCH: usize = 256;

/// Results landed and not yet recorded, at most, beyond those in flight: when
/// the store is slower than the runs, new executions wait instead of their
/// results piling up in memory.
const RECORD_BACKLOG: usize = RECORD_BATCH;

/// How long a batch stays open for more results after its first one landed: one
/// commit then serves every result landing within it, instead of one commit each
/// when results trickle in (at 200 ms model latency and `-j 32`, about 1,000
/// commits for 1,000 results without it).
const RECORD_WINDOW: Duration = Duration::from_millis(50);

/// What [`execute`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunReport {
    /// Executions finished and recorded.
    pub finished: usize,
    /// Whether the run was cancelled before every execution finished.
    pub interrupted: bool,
    /// Whether scheduling stopped because the spend reached `max_cost`.
    pub budget_stopped: bool,
}

/// Answers of stored runs for pairwise checks against a run: run reference as
/// written (`latest`, an id) → (case id, target) → the answer text.
pub type Baselines = HashMap<String, HashMap<(String, String), String>>;

/// How to execute a plan.
pub struct ExecuteOptions<'a> {
    /// Executions at once.
    pub concurrency: usize,
    /// Deadline of an execution whose case sets no `timeout_s`.
    pub default_timeout: Duration,
    /// Where judges get their models.
    pub judges: &'a dyn JudgeModels,
    /// Temperature and length of judge calls.
    pub judge: &'a JudgeSettings,
    /// Missing credentials are errors rather than skips.
    pub strict: bool,
    /// A judged check with no judge model is an error rather than a skip (also
    /// when the suite sets `judge.required`).
    pub require_judges: bool,
    /// Stop scheduling new executions once this many dollars were spent.
    pub max_cost: Option<f64>,
    /// Stored answers for pairwise checks against a run.
    pub baselines: &'a Baselines,
    /// What `similar` checks embed with (`None`: they are skipped).
    pub embeddings: Option<&'a gavel_checks::Embeddings>,
    /// Called as each execution starts.
    pub on_start: Option<&'a (dyn Fn(&PlannedExecution) + Sync)>,
}

impl<'a> ExecuteOptions<'a> {
    /// Defaults: 4 at once, 120 s deadline, no judge model, no budget.
    pub fn new(judge: &'a JudgeSettings, baselines: &'a Baselines) -> Self {
        ExecuteOptions {
            concurrency: 4,
            default_timeout: Duration::from_secs(120),
            judges: &NoJudgeModels,
            judge,
            strict: false,
            require_judges: false,
            max_cost: None,
            baselines,
            embeddings: None,
            on_start: None,
        }
    }

    pub(crate) fn runtime(&self, sample: u32) -> JudgeRuntime<'a> {
        JudgeRuntime {
            sample,
            strict: self.strict,
            require_judges: self.require_judges || self.judge.required,
            embeddings: self.embeddings,
            ..JudgeRuntime::with_settings(self.judges, self.judge)
        }
    }
}

/// Runs every planned execution with at most `concurrency` at once, each within
/// its case's `timeout_s` (else the default), grades it with its checks and
/// judges, and feeds the results to every recorder in batches, each handed over
/// at most 50 ms after its first result landed. When the recorders fall behind,
/// new executions wait once 256 results beyond those in flight are unrecorded.
/// Cancelling `cancel` stops new work and drops the executions in flight; the
/// results that had landed are still recorded.
pub async fn execute(
    plan: &Plan,
    targets: &PreparedTargets,
    run_id: &str,
    options: &ExecuteOptions<'_>,
    cancel: &CancellationToken,
    recorders: &mut [&mut dyn Recorder],
) -> Result<RunReport, RunnerError> {
    let over_budget = AtomicBool::new(false);
    let launched = AtomicUsize::new(0);
    let mut report = RunReport {
        finished: 0,
        interrupted: false,
        budget_stopped: false,
    };
    // Executions and recording run side by side: an execution parked while a result
    // is being recorded could hold a pooled store connection the recorder needs.
    // So the backlog is bounded by permits, not by a full channel: an execution
    // takes one before it starts and gives it back once its result is recorded.
    let unrecorded = Semaphore::new(options.concurrency.max(1) + RECORD_BACKLOG);
    let (done_tx, mut done_rx) = tokio::sync::mpsc::unbounded_channel();
    let spent = std::sync::Mutex::new(0.0_f64);
    let spend = |cost: f64| {
        let mut total = spent.lock().unwrap_or_else(|p| p.into_inner());
        *total += cost.max(0.0);
        if options.max_cost.is_some_and(|max| *total >= max) {
            over_budget.store(true, Ordering::Relaxed);
        }
    };
    let frontier = std::sync::Mutex::new(Frontier::default());
    let lock = || frontier.lock().unwrap_or_else(|p| p.into_inner());
    let produce = async {
        let unrecorded = &unrecorded;
        let mut items = plan.items();
        let scheduled = std::iter::from_fn(|| {
            if over_budget.load(Ordering::Relaxed) {
                return None;
            }
            let item = items.next();
            if let Some(cases) = items.cases() {
                match &item {
                    Some(Ok(item)) => lock().drew(item.key(), cases.saturating_sub(1)),
                    Some(Err(_)) => {}
                    None => lock().exhausted(cases),
                }
            }
            if item.is_some() {
                launched.fetch_add(1, Ordering::Relaxed);
            }
            item
        });
        let mut results = futures::stream::iter(scheduled.map(|item| async move {
            let permit = unrecorded.acquire().await.ok();
            let result = match item {
                Ok(item) => run_item(&item, targets, run_id, options).await,
                Err(e) => Err(e),
            };
            (result, permit)
        }))
        .buffer_unordered(options.concurrency.max(1));
        let scheduling = async {
            while let Some(landed) = results.next().await {
                if let Ok(e) = &landed.0 {
                    spend(e.cost_usd().unwrap_or(0.0));
                }
                if done_tx.send(landed).is_err() {
                    break;
                }
            }
        };
        let interrupted = tokio::select! {
            biased;
            _ = cancel.cancelled() => true,
            _ = scheduling => false,
        };
        drop(done_tx);
        interrupted
    };
    let consume = async {
        let recorded = async {
            let mut pairing = Pairing::new(plan);
            let mut selecting = Selecting::new(plan);
            let mut landed = Vec::new();
            while done_rx.recv_many(&mut landed, RECORD_BATCH).await > 0 {
                gather(&mut done_rx, &mut landed, cancel).await;
                let mut batch = Vec::with_capacity(landed.len());
                let mut permits = Vec::with_capacity(landed.len());
                for (result, permit) in landed.drain(..) {
                    permits.push(permit);
                    for paired in pairing.finished(result?, options).await {
                        batch.extend(selecting.finished(paired, options).await);
                    }
                }
                // Comparisons, judged once the other answers landed, add their cost.
                spend(
                    batch
                        .iter()
                        .flat_map(|e| &e.verdicts)
                        .filter(|v| {
                            matches!(
                                v.kind,
                                gavel_core::CheckKind::Pairwise | gavel_core::CheckKind::SelectBest
                            )
                        })
                        .filter_map(|v| v.cost_usd)
                        .sum(),
                );
                record(&mut batch, recorders).await?;
                let whole = lock().recorded(&batch);
                if let Some(cases) = whole {
                    for r in recorders.iter_mut() {
                        r.cases_recorded(cases).await;
                    }
                }
                drop(permits);
                report.finished += batch.len();
            }
            // Once interrupted, no judge is called for executions still waiting.
            if !cancel.is_cancelled() {
                let mut rest = Vec::new();
                for paired in pairing.drain(options).await {
                    rest.extend(selecting.finished(paired, options).await);
                }
                rest.extend(selecting.drain(options).await);
                record(&mut rest, recorders).await?;
                report.finished += rest.len();
            }
            Ok::<(), RunnerError>(())
        }
        .await;
        // A result that cannot be kept stops the run: no new execution starts.
        done_rx.close();
        recorded
    };
    let (interrupted, consumed) = tokio::join!(produce, consume);
    consumed?;
    report.interrupted = interrupted;
    report.budget_stopped =
        over_budget.load(Ordering::Relaxed) && launched.load(Ordering::Relaxed) < plan.executions;
    Ok(report)
}

/// An execution's result, with the permit it holds until the result is recorded.
type Landed<'a> = (
    Result<Execution, RunnerError>,
    Option<tokio::sync::SemaphorePermit<'a>>,
);

/// Adds to `landed` what arrives within [`RECORD_WINDOW`], up to [`RECORD_BATCH`]
/// results; stops early when the producer is done or the run is cancelled.
async fn gather<'a>(
    done: &mut tokio::sync::mpsc::UnboundedReceiver<Landed<'a>>,
    landed: &mut Vec<Landed<'a>>,
    cancel: &CancellationToken,
) {
    let window = tokio::time::sleep(RECORD_WINDOW);
    tokio::pin!(window);
    while landed.len() < RECORD_BATCH {
        let room = RECORD_BATCH - landed.len();
        tokio::select! {
            biased;
            _ = cancel.cancelled() => return,
            _ = &mut window => return,
            got = done.recv_many(landed, room) => if got == 0 { return },
        }
    }
}

/// Redacts every known secret from `batch` (a target or a judge may echo one),
/// then hands it to every recorder, so no store, sink or report sees a secret;
/// the first refusal stops the run.
async fn record(
    batch: &mut [Execution],
    recorders: &mut [&mut dyn Recorder],
) -> Result<(), RunnerError> {
    batch.iter_mut().for_each(Execution::redact_secrets);
    let Some(first) = batch.first() else {
        return Ok(());
    };
    for r in recorders.iter_mut() {
        r.record_batch(batch)
            .await
            .map_err(|source| RunnerError::Record {
                case: first.case_id.clone(),
                source,
            })?;
    }
    Ok(())
}

async fn run_item(
    item: &PlannedExecution,
    targets: &PreparedTargets,
    run_id: &str,
    options: &ExecuteOptions<'_>,
) -> Result<Execution, RunnerError> {
    if let Some(reason) = targets.unavailable.get(&item.target) {
        let status = if options.strict {
            Status::Error
        } else {
            Status::Skipped
        };
        return Ok(unrun(
            item,
            status,
            format!("target `{}` is unavailable: {reason}", item.target),
        ));
    }
    let target = targets
        .targets
        .get(&item.target)
        .ok_or_else(|| RunnerError::UnknownTarget {
            case: item.case.id.clone(),
            target: item.target.clone(),
        })?;
    if let Some(started) = options.on_start {
        started(item);
    }
    Ok(run_planned(item, target.as_ref(), run_id, options).await)
}

/// Runs one case once against a target and grades it with code checks and, when
/// `judges` resolves models, LLM judges: the library entry point for cargo tests.
pub async fn run_case(
    case: &Case,
    target: &dyn Target,
    timeout: Duration,
    judges: &dyn JudgeModels,
) -> Result<Execution, RunnerError> {
    let settings = JudgeSettings::default();
    let item = PlannedExecution {
        case: Arc::new(case.clone()),
        checks: Arc::new(gavel_checks::compile(case, &settings)?),
        target: "target".to_owned(),
        repeat_index: 0,
    };
    let baselines = Baselines::new();
    let options = ExecuteOptions {
        default_timeout: timeout,
        judges,
        ..ExecuteOptions::new(&settings, &baselines)
    };
    let run_id = uuid::Uuid::now_v7().to_string();
    Ok(run_planned(&item, target, &run_id, &options).await)
}

fn unrun(item: &PlannedExecution, status: Status, reason: String) -> Execution {
    Execution {
        case_id: item.case.id.clone(),
        case_name: item.case.name.clone(),
        target: item.target.clone(),
        repeat_index: item.repeat_index,
        tags: item.case.tags.clone(),
        status,
        score: None,
        transcript: Transcript::default(),
        verdicts: Vec::new(),
        reason: Some(reason),
        started_at: gavel_core::now_rfc3339(),
        duration_ms: 0,
    }
}

async fn run_planned(
    item: &PlannedExecution,
    target: &dyn Target,
    run_id: &str,
    options: &ExecuteOptions<'_>,
) -> Execution {
    let case = &item.case;
    let started_at = gavel_core::now_rfc3339();
    let clock = Instant::now();
    let timeout = case
        .timeout_s
        .filter(|s| *s > 0.0)
        .map(Duration::from_secs_f64)
        .unwrap_or(options.default_timeout);
    let session_id = format!(
        "gavel-{}-{}-{}-{}",
        short(run_id),
        case.id,
        item.target,
        item.repeat_index
    );
    let runtime = options.runtime(item.repeat_index);
    let played =
        conversation::converse(case, target, session_id, clock + timeout, timeout, &runtime).await;
    let transcript = match played {
        Played::Transcript(transcript) => transcript,
        Played::Skipped(reason) => return unrun(item, Status::Skipped, reason),
    };
    let mut verdicts = item.checks.run(&transcript, &runtime).await;
    if item.repeat_index == 0 {
        crate::rejudge::rejudge(
            &mut verdicts,
            &item.checks,
            &transcript,
            runtime,
            case.rejudge_count(),
        )
        .await;
    }
    let mut execution = Execution {
        verdicts,
        transcript,
        started_at,
        duration_ms: clock.elapsed().as_millis() as u64,
        ..unrun(item, Status::Skipped, String::new())
    };
    execution.reason = None;
    execution.settle();
    execution
}

fn short(run_id: &str) -> &str {
    run_id
        .get(run_id.len().saturating_sub(8)..)
        .unwrap_or(run_id)
}
