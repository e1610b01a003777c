//! latency: every targeted turn answered within a time budget.

use gavel_core::CheckKind;
use gavel_core::Turn;
use serde_json::json;

use crate::check::CodeCheck;
use crate::finding::Finding;
use crate::subject::Subject;

/// A compiled latency check.
pub(crate) struct LatencyCheck {
    max_ms: u64,
}

impl LatencyCheck {
    /// A budget of `max_ms` milliseconds per turn.
    pub(crate) fn new(max_ms: u64) -> Self {
        LatencyCheck { max_ms }
    }
}

impl CodeCheck for LatencyCheck {
    /// Display name, e.g. `latency <= 3000 ms`.
    fn name(&self) -> String {
        format!("latency <= {} ms", self.max_ms)
    }

    fn kind(&self) -> CheckKind {
        CheckKind::Latency
    }

    /// Every turn must be within budget; the reason names the slowest.
    fn evaluate(&self, subject: &Subject<'_>) -> Finding {
        let turns: &[&Turn] = &subject.turns;
        let max_ms = self.max_ms;
        let Some(slowest) = turns.iter().max_by_key(|t| t.latency_ms) else {
            return Finding::pass("no turn to time", json!({ "max_ms": max_ms }));
        };
        let over: Vec<&&Turn> = turns.iter().filter(|t| t.latency_ms > max_ms).collect();
        let evidence = json!({
            "max_ms": max_ms,
            "slowest": { "round": slowest.round, "latency_ms": slowest.latency_ms },
            "latencies_ms": turns.iter().map(|t| t.latency_ms).collect::<Vec<_>>(),
            "over_budget": over.iter().map(|t| json!({ "round": t.round, "latency_ms": t.latency_ms })).collect::<Vec<_>>(),
        });
        let slowest_text = format!(
            "the slowest turn (round {}) took {} ms",
            slowest.round + 1,
            slowest.latency_ms
        );
        if over.is_empty() {
            Finding::pass(format!("{slowest_text}, within {max_ms} ms"), evidence)
        } else {
            Finding::fail(
                format!(
                    "{} of {} turns took over {max_ms} ms; {slowest_text}",
                    over.len(),
                    turns.len()
                ),
                evidence,
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use gavel_core::Status;

    use crate::testing::{case, run_one, turn};

    fn timed(round: usize, ms: u64) -> gavel_core::Turn {
        let mut t = turn(round, "ok");
        t.latency_ms = ms;
        t
    }

    #[test]
    fn case_latency_holds_for_every_turn_and_names_the_slowest() {
        let c = case("rounds: [{input: a}, {input: b}]\nchecks: [{type: latency, max_ms: 1000}]\n");
        let v = run_one(&c, vec![timed(0, 900), timed(1, 300)]);
        assert_eq!(v.status, Status::Pass, "{}", v.reason);
        assert_eq!(v.check, "latency <= 1000 ms");
        assert_eq!(v.round, None);
        assert_eq!(
            v.reason,
            "the slowest turn (round 1) took 900 ms, within 1000 ms"
        );

        let v = run_one(&c, vec![timed(0, 900), timed(1, 1500)]);
        assert_eq!(v.status, Status::Fail);
        assert_eq!(
            v.reason,
            "1 of 2 turns took over 1000 ms; the slowest turn (round 2) took 1500 ms"
        );
        assert_eq!(v.evidence.to_json()["slowest"]["latency_ms"], 1500);
        assert_eq!(v.evidence.to_json()["over_budget"][0]["round"], 1);
    }

    #[test]
    fn round_latency_reads_that_round_only() {
        let c = case(
            "rounds:\n  - input: a\n    checks: [{type: latency, max_ms: 1000}]\n  - input: b\n",
        );
        let v = run_one(&c, vec![timed(0, 200), timed(1, 5000)]);
        assert_eq!((v.status, v.round), (Status::Pass, Some(0)));
        let v = run_one(&c, vec![timed(0, 2000), timed(1, 10)]);
        assert_eq!(v.status, Status::Fail);
    }
}
