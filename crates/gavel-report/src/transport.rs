//! Transport tries over a run: how often calls to targets and to judge models
//! had to be sent again (retries, 429s), so that a flaky provider shows.

use gavel_core::{Attempts, Outcome};
use serde::Serialize;

/// Transport tries of a run's calls, summed: to the targets (each turn's
/// `attempts`) and to the judge models (each verdict's `transport`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Transport {
    /// Messages sent to targets that record their tries (targets with `retry`).
    pub target: Attempts,
    /// Judge model calls made (cache hits make none).
    pub judges: Attempts,
}

impl Transport {
    /// Sums the tries of every execution of `outcomes`.
    pub fn of(outcomes: &[Outcome]) -> Transport {
        let mut t = Transport::default();
        for e in outcomes.iter().flat_map(|o| &o.executions) {
            for a in e.transcript.turns.iter().filter_map(|turn| turn.attempts) {
                t.target.add(&a);
            }
            for a in e.verdicts.iter().filter_map(|v| v.transport()) {
                t.judges.add(&a);
            }
        }
        t
    }

    /// Whether any call was sent again.
    pub fn retried(&self) -> bool {
        self.target.retries > 0 || self.judges.retries > 0
    }

    /// `Retries: targets 2 in 5 tries (1 rate-limited) · judges 3 in 9 tries (0
    /// rate-limited)`, or `None` when nothing was retried.
    pub(crate) fn line(&self) -> Option<String> {
        if !self.retried() {
            return None;
        }
        let part = |what: &str, a: &Attempts| {
            format!(
                "{what} {} in {} tries ({} rate-limited)",
                a.retries, a.attempts, a.rate_limited
            )
        };
        Some(format!(
            "Retries: {} · {}",
            part("targets", &self.target),
            part("judges", &self.judges)
        ))
    }
}
