//! Start and end times of an execution's spans, from what was recorded: the
//! execution's `started_at` and duration, and each turn's latency (turns are
//! laid end to end from the start).

use std::time::{Duration, SystemTime};

use gavel_core::Execution;
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

/// A span's start and end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Interval {
    pub(crate) start: SystemTime,
    pub(crate) end: SystemTime,
}

impl Interval {
    /// The `i`-th of `n` equal slices of this interval.
    pub(crate) fn slice(self, i: usize, n: usize) -> Interval {
        let total = self.end.duration_since(self.start).unwrap_or_default();
        let n = n.max(1) as u32;
        let step = total / n;
        let start = self.start + step * i as u32;
        Interval {
            start,
            end: start + step,
        }
    }

    /// The last `length` of this interval (all of it when shorter).
    pub(crate) fn tail(self, length: Duration) -> Interval {
        let start = self
            .end
            .checked_sub(length)
            .unwrap_or(self.start)
            .max(self.start);
        Interval {
            start,
            end: self.end,
        }
    }
}

/// An RFC 3339 time; `None` when it does not parse.
pub(crate) fn parse_time(text: &str) -> Option<SystemTime> {
    OffsetDateTime::parse(text, &Rfc3339)
        .ok()
        .map(SystemTime::from)
}

/// The execution's interval and each turn's, in transcript order. An
/// unparseable `started_at` (never written by gavel) counts from `fallback`.
pub(crate) fn execution(e: &Execution, fallback: SystemTime) -> (Interval, Vec<Interval>) {
    let start = parse_time(&e.started_at).unwrap_or(fallback);
    let mut end = start + Duration::from_millis(e.duration_ms);
    let mut at = start;
    let turns: Vec<Interval> = e
        .transcript
        .turns
        .iter()
        .map(|t| {
            let turn = Interval {
                start: at,
                end: at + Duration::from_millis(t.latency_ms),
            };
            at = turn.end;
            turn
        })
        .collect();
    end = end.max(at);
    (Interval { start, end }, turns)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn turns_are_laid_end_to_end_within_the_execution() {
        let mut e: Execution = serde_json::from_value(serde_json::json!({
            "case_id": "c", "case_name": "c", "target": "t", "repeat_index": 0, "tags": [],
            "status": "pass", "score": null, "verdicts": [], "reason": null,
            "transcript": {"session_id": "s", "turns": [
                {"round": 0, "input": "a", "output": "b", "latency_ms": 100},
                {"round": 1, "input": "a", "output": "b", "latency_ms": 250}
            ]},
            "started_at": "2026-01-02T03:04:05.5Z", "duration_ms": 1000
        }))
        .unwrap();
        let t0 = parse_time("2026-01-02T03:04:05.5Z").unwrap();
        let (whole, turns) = execution(&e, SystemTime::UNIX_EPOCH);
        assert_eq!(whole.start, t0);
        assert_eq!(whole.end, t0 + Duration::from_millis(1000));
        assert_eq!(turns[1].start, t0 + Duration::from_millis(100));
        assert_eq!(turns[1].end, t0 + Duration::from_millis(350));
        // Turns longer than the recorded duration stretch the execution.
        e.duration_ms = 10;
        let (whole, _) = execution(&e, SystemTime::UNIX_EPOCH);
        assert_eq!(whole.end, t0 + Duration::from_millis(350));
        assert_eq!(whole.slice(1, 2).start, t0 + Duration::from_millis(175));
        assert_eq!(whole.tail(Duration::from_secs(9)).start, t0);
    }
}
