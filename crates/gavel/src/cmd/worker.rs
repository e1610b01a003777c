//! `gavel worker`: claims executions of distributed runs from the store's queue,
//! runs them, records their results and heartbeats its leases (DESIGN.md §9).

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use clap::Args;
use gavel::runner::{
    CancellationToken, ExecuteOptions, Plan, PlannedExecution, PreparedTargets, Recorder,
};
use gavel::store::{Claim, Store};
use gavel::{Execution, Status, Suite, Transcript};
use gavel_models::ModelPool;

use super::judge_choice::JudgeChoice;
use tokio::sync::Mutex;

use super::StoreArgs;
use super::models::{self, ModelArgs};
use super::report::StoreRecorder;

#[derive(Debug, Args)]
pub(crate) struct WorkerArgs {
    /// Executions at once.
    #[arg(short = 'j', long = "jobs", default_value_t = 1)]
    jobs: usize,
    /// Seconds a claim stays this worker's without a heartbeat; after that another
    /// worker may take it again. Heartbeats come every third of it.
    #[arg(long, default_value_t = 30.0, value_parser = parse_seconds)]
    lease: f64,
    /// Seconds between looks at an empty queue.
    #[arg(long, default_value_t = 1.0, value_parser = parse_seconds)]
    poll: f64,
    /// Exit when the queue holds nothing to claim, instead of waiting for work.
    #[arg(long)]
    exit_when_idle: bool,
    /// An execution claimed this many times (each of its workers was lost) is
    /// recorded as an error instead of being run again.
    #[arg(long, default_value_t = 3)]
    max_attempts: u32,
    #[command(flatten)]
    models: ModelArgs,
    #[command(flatten)]
    store: StoreArgs,
}

fn parse_seconds(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v > 0.0 && v.is_finite() => Ok(v),
        _ => Err(format!("`{s}` is not a positive number of seconds")),
    }
}

/// What a worker keeps per run: the suite and its started targets.
struct RunContext {
    suite: Suite,
    targets: PreparedTargets,
    pool: ModelPool,
    /// The default judge model, resolved as `gavel run` does.
    judge: JudgeChoice,
    /// The embedder of `similar` checks, when the suite has any.
    embeddings: Option<gavel::checks::Embeddings>,
    timeout: Duration,
}

pub(crate) async fn worker(args: WorkerArgs) -> anyhow::Result<u8> {
    let store = Store::open(&args.store.db)
        .await
        .context("opening the store")?;
    let name = format!(
        "{}-{}-{}",
        std::env::var("HOSTNAME").unwrap_or_else(|_| "worker".to_owned()),
        std::process::id(),
        &uuid::Uuid::now_v7().simple().to_string()[24..]
    );
    eprintln!(
        "worker {name} · store {} · {} at once · lease {}s",
        gavel::store::mask_url(&args.store.db),
        args.jobs,
        args.lease
    );
    let stop = CancellationToken::new();
    let on_ctrl_c = stop.clone();
    tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            eprintln!("stopping: finishing the executions in hand");
            on_ctrl_c.cancel();
        }
    });
    let runs: Mutex<HashMap<String, Arc<RunContext>>> = Mutex::new(HashMap::new());
    let lanes = (0..args.jobs.max(1)).map(|_| lane(&store, &name, &args, &runs, &stop));
    let results = futures::future::join_all(lanes).await;
    for context in runs.into_inner().into_values() {
        if let Ok(context) = Arc::try_unwrap(context) {
            context.targets.stop().await;
        }
    }
    results.into_iter().collect::<anyhow::Result<Vec<()>>>()?;
    Ok(super::EXIT_OK)
}

/// One claim at a time until stopped (or idle, with `--exit-when-idle`).
async fn lane(
    store: &Store,
    name: &str,
    args: &WorkerArgs,
    runs: &Mutex<HashMap<String, Arc<RunContext>>>,
    stop: &CancellationToken,
) -> anyhow::Result<()> {
    let lease = Duration::from_secs_f64(args.lease);
    while !stop.is_cancelled() {
        let Some(claim) = store.claim(name, lease).await? else {
            if args.exit_when_idle {
                return Ok(());
            }
            tokio::select! {
                _ = stop.cancelled() => {}
                _ = tokio::time::sleep(Duration::from_secs_f64(args.poll)) => {}
            }
            continue;
        };
        let execution = if claim.attempts > args.max_attempts {
            unrun(
                &claim,
                format!(
                    "abandoned: {} workers were lost while running it",
                    args.max_attempts
                ),
            )
        } else {
            let outcome = async {
                let context = context(store, args, runs, &claim.run_id).await?;
                tokio::select! {
                    execution = run_claim(&context, &claim) => execution,
                    never = heartbeat(store, &claim, lease) => never,
                }
            };
            // The harness broke, not the agent: an `error`, and the next claim goes on.
            outcome
                .await
                .unwrap_or_else(|e| unrun(&claim, format!("the worker could not run it: {e:#}")))
        };
        StoreRecorder(store, &claim.run_id)
            .record(&execution)
            .await
            .map_err(anyhow::Error::msg)?;
        if store.complete(&claim).await? {
            eprintln!("run {} completed", claim.run_id);
        }
    }
    Ok(())
}

/// The run's suite and targets, loaded and started on first use.
async fn context(
    store: &Store,
    args: &WorkerArgs,
    runs: &Mutex<HashMap<String, Arc<RunContext>>>,
    run_id: &str,
) -> anyhow::Result<Arc<RunContext>> {
    let mut runs = runs.lock().await;
    if let Some(context) = runs.get(run_id) {
        return Ok(context.clone());
    }
    let suite = store.suite(run_id).await?;
    let run = store.run(run_id).await?;
    let timeout = run
        .config
        .get("timeout_s")
        .and_then(serde_json::Value::as_f64)
        .filter(|s| *s > 0.0)
        .unwrap_or(120.0);
    let plan = gavel::runner::plan(&suite, &Default::default())
        .with_context(|| format!("planning run {run_id}"))?;
    let pool = models::pool(&args.models, &suite.judge, store, false);
    let targets =
        PreparedTargets::prepare(&suite, &plan, &pool, &models::store_targets(&pool, store))
            .await
            .with_context(|| format!("starting the targets of run {run_id}"))?;
    let embeddings =
        super::embeddings::for_plan(args.models.embedder.as_deref(), &suite.judge, &plan, store)
            .with_context(|| format!("the embedder of run {run_id}"))?;
    let context = Arc::new(RunContext {
        judge: models::default_judge(&args.models, &suite.judge).await,
        embeddings,
        suite,
        targets,
        pool,
        timeout: Duration::from_secs_f64(timeout),
    });
    runs.insert(run_id.to_owned(), context.clone());
    Ok(context)
}

/// Runs one claimed execution through the runner, as `gavel run` would.
async fn run_claim(context: &RunContext, claim: &Claim) -> anyhow::Result<Execution> {
    let suite = &context.suite;
    let case = suite
        .cases
        .iter()
        .find(|c| c.id == claim.case_id)
        .with_context(|| format!("run {} holds no case `{}`", claim.run_id, claim.case_id))?;
    let case = Arc::new(case.clone());
    let plan = Plan {
        cases: vec![case.clone()],
        items: vec![PlannedExecution {
            checks: Arc::new(gavel::checks::compile(&case, &suite.judge)?),
            case,
            target: claim.target.clone(),
            repeat_index: claim.repeat_index,
        }],
        already_done: 0,
    };
    let judges = models::RunJudges {
        pool: &context.pool,
        default: context.judge.clone(),
    };
    let baselines = Default::default();
    let options = ExecuteOptions {
        embeddings: context.embeddings.as_ref(),
        concurrency: 1,
        default_timeout: context.timeout,
        judges: &judges,
        ..ExecuteOptions::new(&suite.judge, &baselines)
    };
    let mut done: Vec<Execution> = Vec::new();
    let mut recorders: [&mut dyn Recorder; 1] = [&mut done];
    gavel::runner::execute(
        &plan,
        &context.targets,
        &claim.run_id,
        &options,
        &CancellationToken::new(),
        &mut recorders,
    )
    .await?;
    done.pop()
        .with_context(|| format!("execution {} produced no result", claim.case_id))
}

/// Renews the claim's lease every third of it; returns only on a store error.
async fn heartbeat(store: &Store, claim: &Claim, lease: Duration) -> anyhow::Result<Execution> {
    loop {
        tokio::time::sleep(lease / 3).await;
        if !store.heartbeat(claim, lease).await? {
            eprintln!(
                "warning: lost the lease on {}/{}#{}; finishing it anyway (the result is written idempotently)",
                claim.case_id, claim.target, claim.repeat_index
            );
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
        started_at: gavel::now_rfc3339(),
        duration_ms: 0,
    }
}
