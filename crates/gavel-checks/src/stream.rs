//! stream: structural checks of streamed answers, no judge needed: enough text
//! deltas, the completion signal, non-empty text, time to first token.

use gavel_core::{Status, Turn};
use serde_json::{Value, json};

use crate::check::CodeCheck;
use crate::finding::Finding;

use crate::subject::Subject;

/// A compiled stream check.
pub(crate) struct StreamCheck {
    min_deltas: u64,
    require_done: bool,
    non_empty: bool,
    max_first_token_ms: Option<u64>,
}

impl StreamCheck {
    pub(crate) fn new(
        min_deltas: u64,
        require_done: bool,
        non_empty: bool,
        max_first_token_ms: Option<u64>,
    ) -> Self {
        StreamCheck {
            min_deltas,
            require_done,
            non_empty,
            max_first_token_ms,
        }
    }

    fn problems(&self, turn: &Turn) -> Vec<String> {
        let mut found = Vec::new();
        let Some(s) = &turn.stream else {
            return found;
        };
        if s.deltas < self.min_deltas {
            found.push(format!(
                "{} text delta(s), expected at least {}",
                s.deltas, self.min_deltas
            ));
        }
        if self.require_done && !s.done {
            found.push("no completion signal before the stream ended".into());
        }
        if self.non_empty && turn.output.trim().is_empty() {
            found.push("the streamed text is empty".into());
        }
        if let Some(max) = self.max_first_token_ms {
            match s.first_token_ms {
                Some(ms) if ms > max => {
                    found.push(format!("first token after {ms} ms, over {max} ms"));
                }
                Some(_) => {}
                None => found.push("no first token".into()),
            }
        }
        found
    }
}

impl CodeCheck for StreamCheck {
    /// Display name, e.g. `stream (deltas >= 1, done, non-empty, first token <= 500 ms)`.
    fn name(&self) -> String {
        let mut parts = vec![format!("deltas >= {}", self.min_deltas)];
        if self.require_done {
            parts.push("done".into());
        }
        if self.non_empty {
            parts.push("non-empty".into());
        }
        if let Some(ms) = self.max_first_token_ms {
            parts.push(format!("first token <= {ms} ms"));
        }
        format!("stream ({})", parts.join(", "))
    }

    fn kind(&self) -> &'static str {
        "stream"
    }

    /// Every targeted turn must have streamed soundly; the reason lists what
    /// was wrong with which turn. A turn that did not stream is `skipped`.
    fn evaluate(&self, subject: &Subject<'_>) -> Finding {
        let mut problems = Vec::new();
        let mut shown = Vec::new();
        for turn in &subject.turns {
            let Some(stats) = &turn.stream else {
                return Finding {
                    score: None,
                    status: Status::Skipped,
                    reason: format!(
                        "round {} was not streamed: give the target a `stream` mapping",
                        turn.round + 1
                    ),
                    evidence: Value::Null,
                };
            };
            shown.push(json!({"round": turn.round, "stream": stats}));
            for problem in self.problems(turn) {
                problems.push(format!("round {}: {problem}", turn.round + 1));
            }
        }
        let evidence = json!({"turns": shown});
        if problems.is_empty() {
            Finding::pass(
                format!("{} streamed turn(s) sound", subject.turns.len()),
                evidence,
            )
        } else {
            Finding::fail(problems.join("; "), evidence)
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use gavel_core::{Status, StreamStats};

    use crate::testing::{case, run_one, turn};

    fn streamed(output: &str, deltas: u64, done: bool, first: Option<u64>) -> gavel_core::Turn {
        let mut t = turn(0, output);
        t.stream = Some(StreamStats {
            events: deltas + u64::from(done),
            deltas,
            done,
            first_token_ms: first,
            ..StreamStats::default()
        });
        t
    }

    #[test]
    fn sound_streams_pass_and_each_fault_is_named() {
        let c = case("input: q\nchecks: [{type: stream, max_first_token_ms: 100}]\n");
        let v = run_one(&c, vec![streamed("Hi", 2, true, Some(5))]);
        assert_eq!(v.status, Status::Pass, "{}", v.reason);
        assert_eq!(
            v.check,
            "stream (deltas >= 1, done, non-empty, first token <= 100 ms)"
        );
        let v = run_one(&c, vec![streamed("Hi", 2, false, Some(5))]);
        assert_eq!(v.status, Status::Fail);
        assert_eq!(
            v.reason,
            "round 1: no completion signal before the stream ended"
        );
        let v = run_one(&c, vec![streamed("", 0, true, None)]);
        assert_eq!(
            v.reason,
            "round 1: 0 text delta(s), expected at least 1; round 1: the streamed text is empty; round 1: no first token"
        );
        let v = run_one(&c, vec![streamed("Hi", 1, true, Some(250))]);
        assert_eq!(v.reason, "round 1: first token after 250 ms, over 100 ms");
    }

    #[test]
    fn unstreamed_turns_are_skipped_and_options_relax() {
        let c = case("input: q\nchecks: [{type: stream}]\n");
        let v = run_one(&c, vec![turn(0, "Hi")]);
        assert_eq!(v.status, Status::Skipped);
        assert!(v.reason.contains("not streamed"), "{}", v.reason);
        let c = case(
            "input: q\nchecks: [{type: stream, require_done: false, min_deltas: 0, non_empty: false}]\n",
        );
        let v = run_one(&c, vec![streamed("", 0, false, None)]);
        assert_eq!(v.status, Status::Pass, "{}", v.reason);
    }
}
