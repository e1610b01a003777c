//! Carrying out planned executions: sessions, rounds, deadlines, grading.

use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::StreamExt;
use gavel_core::{Case, Execution, Status, TargetFailure, Transcript, Turn};
use gavel_targets::{Target, TurnRequest};
use tokio_util::sync::CancellationToken;

use crate::{Plan, PlannedExecution, PreparedTargets, Recorder, RunnerError};

/// What [`execute`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunReport {
    /// Executions finished and recorded.
    pub finished: usize,
    /// Whether the run was cancelled before every execution finished.
    pub interrupted: bool,
}

/// Runs every planned execution with at most `concurrency` at once, each within
/// its case's `timeout_s` (else `default_timeout`), and feeds each result to every
/// recorder as it lands. Cancelling `cancel` stops new work and drops the
/// executions in flight; what was recorded stays recorded.
pub async fn execute(
    plan: &Plan,
    targets: &PreparedTargets,
    run_id: &str,
    concurrency: usize,
    default_timeout: Duration,
    cancel: &CancellationToken,
    recorders: &mut [&mut dyn Recorder],
) -> Result<RunReport, RunnerError> {
    let mut results = futures::stream::iter(plan.items.iter().map(|item| {
        let target = targets.targets.get(&item.target).cloned();
        async move {
            let Some(target) = target else {
                return Err(RunnerError::UnknownTarget {
                    case: item.case.id.clone(),
                    target: item.target.clone(),
                });
            };
            Ok(run_planned(item, target.as_ref(), run_id, default_timeout).await)
        }
    }))
    .buffer_unordered(concurrency.max(1));
    let mut finished = 0;
    loop {
        let next = tokio::select! {
            biased;
            _ = cancel.cancelled() => return Ok(RunReport { finished, interrupted: true }),
            next = results.next() => next,
        };
        let Some(result) = next else { break };
        let execution = result?;
        for r in recorders.iter_mut() {
            r.record(&execution)
                .await
                .map_err(|message| RunnerError::Record {
                    case: execution.case_id.clone(),
                    message,
                })?;
        }
        finished += 1;
    }
    Ok(RunReport {
        finished,
        interrupted: false,
    })
}

/// Runs one case once against a target and grades it: the library entry point for
/// cargo tests.
pub async fn run_case(
    case: &Case,
    target: &dyn Target,
    timeout: Duration,
) -> Result<Execution, RunnerError> {
    let item = PlannedExecution {
        case: Arc::new(case.clone()),
        checks: Arc::new(gavel_checks::compile(case)?),
        target: "target".to_owned(),
        repeat_index: 0,
    };
    let run_id = uuid::Uuid::now_v7().to_string();
    Ok(run_planned(&item, target, &run_id, timeout).await)
}

async fn run_planned(
    item: &PlannedExecution,
    target: &dyn Target,
    run_id: &str,
    default_timeout: Duration,
) -> Execution {
    let case = &item.case;
    let started_at = gavel_core::now_rfc3339();
    let clock = Instant::now();
    let timeout = case
        .timeout_s
        .filter(|s| *s > 0.0)
        .map(Duration::from_secs_f64)
        .unwrap_or(default_timeout);
    let session_id = format!(
        "gavel-{}-{}-{}-{}",
        short(run_id),
        case.id,
        item.target,
        item.repeat_index
    );
    let transcript = converse(case, target, session_id, clock + timeout, timeout).await;
    let verdicts = item.checks.run(&transcript);
    let mut execution = Execution {
        case_id: case.id.clone(),
        case_name: case.name.clone(),
        target: item.target.clone(),
        repeat_index: item.repeat_index,
        tags: case.tags.clone(),
        status: Status::Skipped,
        score: None,
        transcript,
        verdicts,
        reason: None,
        started_at,
        duration_ms: clock.elapsed().as_millis() as u64,
    };
    execution.settle();
    execution
}

/// Plays the case's rounds in one session, stopping at the first failure or at the
/// deadline; with `revival`, the session is closed after round 1 and reopened with
/// the same id.
async fn converse(
    case: &Case,
    target: &dyn Target,
    session_id: String,
    deadline: Instant,
    timeout: Duration,
) -> Transcript {
    let mut transcript = Transcript {
        session_id,
        turns: Vec::new(),
    };
    let timed_out = |round: usize, input: String| Turn {
        round,
        input,
        failure: Some(TargetFailure {
            message: format!("the execution timed out after {}", secs(timeout)),
            transient: true,
        }),
        ..Turn::default()
    };
    let mut session = match within(deadline, target.open(&transcript.session_id)).await {
        Some(Ok(s)) => s,
        Some(Err(failure)) => {
            transcript.turns.push(Turn {
                failure: Some(failure),
                ..Turn::default()
            });
            return transcript;
        }
        None => {
            transcript.turns.push(timed_out(0, String::new()));
            return transcript;
        }
    };
    for (index, round) in case.rounds.iter().enumerate() {
        let message = round.message();
        let request = TurnRequest {
            session_id: &transcript.session_id,
            case_id: &case.id,
            round: index,
            message: &message,
            context: case.context.as_ref(),
            history: &transcript.turns,
        };
        let turn = match within(deadline, session.send(&request)).await {
            Some(turn) => turn,
            None => timed_out(index, message),
        };
        let failed = turn.failure.is_some();
        transcript.turns.push(turn);
        if failed {
            break;
        }
        if case.revival && index == 0 && case.rounds.len() > 1 {
            session.close().await;
            session = match within(deadline, target.open(&transcript.session_id)).await {
                Some(Ok(s)) => s,
                Some(Err(failure)) => {
                    transcript.turns.push(Turn {
                        round: 1,
                        failure: Some(failure),
                        ..Turn::default()
                    });
                    return transcript;
                }
                None => {
                    transcript.turns.push(timed_out(1, String::new()));
                    return transcript;
                }
            };
        }
    }
    session.close().await;
    transcript
}

async fn within<F: std::future::Future>(deadline: Instant, f: F) -> Option<F::Output> {
    tokio::time::timeout_at(deadline.into(), f).await.ok()
}

fn short(run_id: &str) -> &str {
    run_id
        .get(run_id.len().saturating_sub(8)..)
        .unwrap_or(run_id)
}

fn secs(d: Duration) -> String {
    format!("{:.1}s", d.as_secs_f64())
}
