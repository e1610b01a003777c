//! `rejudge: k`: the first repeat's output judged k more times, so that the
//! judges' own spread can be told apart from the agent's spread across repeats.
//! Each re-judgement is a distinct cache key (`-rejudge<n>` on the template hash),
//! so the calls are fresh samples while a re-run is served from the cache.

use gavel_checks::{CheckPlan, JudgeRuntime};
use gavel_core::{Rejudgement, Status, Transcript, Verdict};

/// Re-judges the transcript `k` times and records every re-judgement in the
/// evidence (`rejudged`) of each judge verdict that scored; their cost is added
/// to the verdict's. Nothing is re-judged when no judge scored (all skipped,
/// gated or errored).
pub(crate) async fn rejudge(
    verdicts: &mut [Verdict],
    checks: &CheckPlan,
    transcript: &Transcript,
    runtime: JudgeRuntime<'_>,
    k: u32,
) {
    let first = verdicts.len().saturating_sub(checks.judge_count());
    let judged = &mut verdicts[first..];
    if k == 0 || !judged.iter().any(scored) {
        return;
    }
    let runs = (1..=k).map(|n| async move {
        let rt = JudgeRuntime {
            rejudge: n,
            ..runtime
        };
        checks.run_judges(transcript, &rt).await
    });
    let samples = futures::future::join_all(runs).await;
    for (i, v) in judged.iter_mut().enumerate().filter(|(_, v)| scored(v)) {
        let again: Vec<&Verdict> = samples.iter().filter_map(|s| s.get(i)).collect();
        v.evidence.rejudged = again
            .iter()
            .map(|r| Rejudgement {
                status: r.status,
                score: r.score,
                cost_usd: r.cost_usd,
                cached: r.evidence.calls.map(|c| c.cached),
            })
            .collect();
        for r in &again {
            if let Some(c) = r.cost_usd {
                v.cost_usd = Some(v.cost_usd.unwrap_or(0.0) + c);
            }
        }
    }
}

fn scored(v: &Verdict) -> bool {
    matches!(v.status, Status::Pass | Status::Fail)
}
