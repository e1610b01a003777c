//! `gavel worker`: claims units of distributed runs' executions from the store's
//! queue, runs them through the same execution path as a local run, records
//! their results and heartbeats its leases (DESIGN.md §9).

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use gavel_checks::Embeddings;
use gavel_core::{Execution, ExecutionKey, RunStatus, Status, Transcript};
use gavel_runner::{CancellationToken, Plan, PlannedExecution, PreparedTargets, Recorder};
use gavel_store::{Claim, Store};
use tokio::sync::Mutex;

use crate::events::Sinks;
use crate::record::StoreSink;
use crate::run::{Execution as With, execute_plan};
use crate::{ModelOptions, PreparedRun, RunConfig, SessionError, Sources, models};

/// How a worker works (also `gavel worker`'s flags).
#[derive(Debug, Clone)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
pub struct WorkerConfig {
    /// The worker's name in claims (default: HOST-PID-RANDOM).
    #[cfg_attr(feature = "cli", arg(long, default_value_t = default_name(), hide_default_value = true))]
    pub name: String,
    /// Executions (claimed units) at once.
    #[cfg_attr(feature = "cli", arg(short = 'j', long = "jobs", default_value_t = 1, value_parser = gavel_core::bounds::parse_jobs))]
    pub jobs: usize,
    /// Seconds a claim stays this worker's without a heartbeat; after that another
    /// worker may take it again. Heartbeats come every third of it.
    #[cfg_attr(feature = "cli", arg(long, default_value = "30", value_parser = gavel_core::bounds::parse_seconds))]
    pub lease: Duration,
    /// Seconds between looks at an empty queue (how long a new run may wait for
    /// an idle worker to notice it).
    #[cfg_attr(feature = "cli", arg(long, default_value = "0.2", value_parser = gavel_core::bounds::parse_seconds))]
    pub poll: Duration,
    /// Exit when the queue holds nothing to claim, instead of waiting for work.
    #[cfg_attr(feature = "cli", arg(long))]
    pub exit_when_idle: bool,
    /// An execution claimed this many times (each of its workers was lost) is
    /// recorded as an error instead of being run again.
    #[cfg_attr(feature = "cli", arg(long, default_value_t = 3, value_parser = gavel_core::bounds::parse_attempts))]
    pub max_attempts: u32,
    /// Model choices (the judge, the cache).
    #[cfg_attr(feature = "cli", command(flatten))]
    pub models: ModelOptions,
}

/// `worker NAME · N at once · lease Ss`.
impl std::fmt::Display for WorkerConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (name, jobs, lease) = (&self.name, self.jobs, self.lease.as_secs_f64());
        write!(f, "worker {name} · {jobs} at once · lease {lease}s")
    }
}

/// A worker name unique across machines and processes: host, pid, random tail.
pub fn default_name() -> String {
    format!(
        "{}-{}-{}",
        std::env::var("HOSTNAME").unwrap_or_else(|_| "worker".to_owned()),
        std::process::id(),
        &uuid::Uuid::now_v7().simple().to_string()[24..]
    )
}

/// What a worker keeps per run: the run prepared once from the store (as
/// `--resume` prepares it), and its started targets.
struct RunContext {
    prepared: PreparedRun,
    targets: PreparedTargets,
    embeddings: Option<Embeddings>,
}

/// Claims and runs units until `stop` is cancelled (or, with
/// `exit_when_idle`, until the queue holds nothing claimable).
pub async fn work(
    store: &Store,
    config: &WorkerConfig,
    sinks: &Sinks,
    stop: &CancellationToken,
) -> Result<(), SessionError> {
    let runs: Mutex<HashMap<String, Arc<RunContext>>> = Mutex::new(HashMap::new());
    let lanes = (0..config.jobs.max(1)).map(|_| lane(store, config, sinks, &runs, stop));
    let results = futures::future::join_all(lanes).await;
    for context in runs.into_inner().into_values() {
        if let Ok(context) = Arc::try_unwrap(context) {
            context.targets.stop().await;
        }
    }
    results.into_iter().collect()
}

/// One unit at a time until stopped (or idle).
async fn lane(
    store: &Store,
    config: &WorkerConfig,
    sinks: &Sinks,
    runs: &Mutex<HashMap<String, Arc<RunContext>>>,
    stop: &CancellationToken,
) -> Result<(), SessionError> {
    while !stop.is_cancelled() {
        let unit = store.claim(&config.name, config.lease).await?;
        let Some(head) = unit.first() else {
            if config.exit_when_idle {
                return Ok(());
            }
            tokio::select! {
                _ = stop.cancelled() => {}
                _ = tokio::time::sleep(config.poll) => {}
            }
            continue;
        };
        let run_id = head.run_id.clone();
        let lost = if head.attempts > config.max_attempts {
            Some(format!(
                "abandoned: {} workers were lost while running it",
                config.max_attempts
            ))
        } else {
            let ran = async {
                let context = context(store, config, runs, &run_id).await?;
                let Some(budget) = budget(store, &context, &run_id).await? else {
                    return Ok(());
                };
                tokio::select! {
                    done = run_unit(store, &context, &unit, budget, sinks) => done,
                    never = heartbeat(store, &unit, config.lease) => never,
                }
            };
            // The harness broke, not the agent: `error`, and the next claim goes on.
            ran.await
                .err()
                .map(|e| format!("the worker could not run it: {e}"))
        };
        if let Some(why) = lost {
            let mut lost: Vec<Execution> = unit.iter().map(|c| unrun(c, why.clone())).collect();
            lost.iter_mut().for_each(Execution::redact_secrets);
            StoreSink::new(store, &run_id, sinks)
                .record_batch(&lost)
                .await
                .map_err(|source| {
                    SessionError::Run(gavel_runner::RunnerError::Record {
                        case: head.case_id.clone(),
                        source,
                    })
                })?;
        }
        for claim in &unit {
            store.complete(claim).await?;
        }
    }
    Ok(())
}

/// The run prepared on first use from its stored suite snapshot and
/// configuration ([`PreparedRun::stored`]), with its targets started.
async fn context(
    store: &Store,
    worker: &WorkerConfig,
    runs: &Mutex<HashMap<String, Arc<RunContext>>>,
    run_id: &str,
) -> Result<Arc<RunContext>, SessionError> {
    let mut runs = runs.lock().await;
    if let Some(context) = runs.get(run_id) {
        return Ok(context.clone());
    }
    let mut config = RunConfig::new(Sources::default());
    config.models = worker.models.clone();
    config.jobs = worker.jobs;
    let prepared = PreparedRun::stored(store.clone(), run_id, config).await?;
    let targets = {
        let recorded = crate::replay::recordings(&prepared.suite, store).await?;
        let extra = models::store_targets(&prepared.pool, store, &recorded);
        PreparedTargets::prepare(&prepared.suite, &prepared.plan, &prepared.pool, &extra)
            .await
            .map_err(SessionError::Targets)?
    };
    let embeddings = crate::embeddings::for_plan(
        prepared.config.models.embedder.as_deref(),
        &prepared.suite.judge,
        &prepared.plan,
        store,
        &mut Vec::new(),
    )?;
    let context = Arc::new(RunContext {
        prepared,
        targets,
        embeddings,
    });
    runs.insert(run_id.to_owned(), context.clone());
    Ok(context)
}

/// What the run may still spend on a unit: `Some(None)` without a budget,
/// `Some(Some(usd))` what is left of it, read from the store so that every
/// worker of the run holds one budget. `None` once it is spent: the run is
/// then stopped (budget-stopped), so no worker claims more of it.
async fn budget(
    store: &Store,
    context: &RunContext,
    run_id: &str,
) -> Result<Option<Option<f64>>, SessionError> {
    let Some(max) = context.prepared.config.models.max_cost else {
        return Ok(Some(None));
    };
    let left = max - store.run_spent(run_id).await?;
    if left > 0.0 {
        return Ok(Some(Some(left)));
    }
    stop_for_budget(store, run_id).await?;
    Ok(None)
}

/// Marks a running run budget-stopped.
async fn stop_for_budget(store: &Store, run_id: &str) -> Result<(), SessionError> {
    if store.run(run_id).await?.status == RunStatus::Running {
        let now = gavel_core::now_rfc3339();
        store
            .finish_run(run_id, RunStatus::BudgetStopped, &now)
            .await?;
    }
    Ok(())
}

/// Runs one claimed unit as a local run runs those executions: the planned
/// items (compiled checks, variant inputs) of the run's plan, paired together,
/// within what is `left` of the run's budget.
async fn run_unit(
    store: &Store,
    context: &RunContext,
    unit: &[Claim],
    left: Option<f64>,
    sinks: &Sinks,
) -> Result<(), SessionError> {
    let prepared = &context.prepared;
    // The unit's cases, each read back and expanded once.
    let mut planned: HashMap<ExecutionKey, PlannedExecution> = HashMap::new();
    let mut read = HashSet::new();
    let mut items = Vec::with_capacity(unit.len());
    for claim in unit {
        if read.insert(claim.case_id.as_str()) {
            let case = store.saved_case(&claim.run_id, &claim.case_id).await?;
            let expanded = prepared.plan.executions_of(case);
            planned.extend(
                expanded
                    .map_err(SessionError::Plan)?
                    .into_iter()
                    .map(|item| (item.key(), item)),
            );
        }
        let item = planned.remove(&claim.key()).ok_or_else(|| {
            SessionError::config(
                "queue",
                format!(
                    "run {} plans no execution {}/{}#{}",
                    claim.run_id, claim.case_id, claim.target, claim.repeat_index
                ),
            )
        })?;
        items.push(item);
    }
    let plan = Plan::of(items);
    let judges = models::RunJudges {
        pool: &prepared.pool,
        default: prepared.judge.clone(),
    };
    let mut config = prepared.config.clone();
    config.jobs = unit.len();
    config.models.max_cost = left;
    let with = With {
        config: &config,
        suite: &prepared.suite,
        judges: &judges,
        baselines: &prepared.baselines,
        embeddings: context.embeddings.as_ref(),
        live: None,
    };
    let run_id = &unit[0].run_id;
    let ran = execute_plan(
        &plan,
        &context.targets,
        run_id,
        with,
        store,
        sinks,
        &CancellationToken::new(),
    )
    .await
    .map_err(SessionError::Run)?;
    if ran.budget_stopped {
        stop_for_budget(store, run_id).await?;
    }
    Ok(())
}

/// Renews the unit's leases every third of the lease; returns only on a store error.
async fn heartbeat(store: &Store, unit: &[Claim], lease: Duration) -> Result<(), SessionError> {
    loop {
        tokio::time::sleep(lease / 3).await;
        for claim in unit {
            if !store.heartbeat(claim, lease).await? {
                // Not an error: the result is written idempotently.
                tracing::warn!(
                    "lost the lease on {}/{}#{}; finishing it anyway",
                    claim.case_id,
                    claim.target,
                    claim.repeat_index
                );
            }
        }
    }
}

/// The `error` recorded for an execution the worker could not run.
fn unrun(claim: &Claim, reason: String) -> Execution {
    Execution {
        case_id: claim.case_id.clone(),
        case_name: claim.case_id.clone(),
        target: claim.target.clone(),
        repeat_index: claim.repeat_index,
        tags: Vec::new(),
        status: Status::Error,
        score: None,
        transcript: Transcript::default(),
        verdicts: Vec::new(),
        reason: Some(reason),
        started_at: gavel_core::now_rfc3339(),
        duration_ms: 0,
    }
}
