//! A compiled [`AwaitedCheck`] with its scope: finds the turns it reads and
//! awaits its grade, or says why it did not run.

use gavel_core::CheckKind;
use gavel_core::{Status, Transcript, Verdict};

use crate::check::{AwaitedCheck, Input};
use crate::finding::{VerdictHead, unanswered};
use crate::runtime::JudgeRuntime;
use crate::subject::{Judged, Scope, position, resolve, seen_before};

/// One compiled awaited check with its display name and scope.
pub(crate) struct PlannedAwaited {
    pub(crate) name: String,
    scope: Scope,
    check: Box<dyn AwaitedCheck>,
}

impl PlannedAwaited {
    /// The check, reading what `scope` finds.
    pub(crate) fn new(scope: Scope, check: Box<dyn AwaitedCheck>) -> Self {
        PlannedAwaited {
            name: check.name(),
            scope,
            check,
        }
    }

    /// The check's type as written in suite files.
    pub(crate) fn kind(&self) -> CheckKind {
        self.check.kind()
    }

    /// The judge configurations the check grades with.
    pub(crate) fn judges(&self) -> Vec<crate::JudgeUse> {
        self.check.judges()
    }

    /// The round its verdicts are of (`None`: the whole transcript).
    pub(crate) fn round(&self, rounds: usize) -> Option<usize> {
        self.scope.round(None, rounds)
    }

    /// The `error` verdict of a check whose outputs the case's `transform` could
    /// not rewrite.
    pub(crate) fn untransformed(&self, rounds: usize, why: &str) -> Verdict {
        Verdict::new(&self.name, self.check.kind(), Status::Error, why)
            .in_round(self.scope.round(None, rounds))
    }

    /// The `skipped` verdict of a judge whose gate (a failed code check) is closed.
    pub(crate) fn gated(&self, transcript: &Transcript, rounds: usize, gate: &Verdict) -> Verdict {
        let answer = resolve(self.scope, transcript, rounds)
            .ok()
            .map(|s| s.answer);
        Verdict::new(
            &self.name,
            self.check.kind(),
            Status::Skipped,
            format!("gated by {}", gate.check),
        )
        .in_round(self.scope.round(answer, rounds))
    }

    /// Grades the scope's turns: a judge sees every turn before the judged one
    /// (its branch's and the parent's), and the tool calls of the round (of the
    /// whole conversation for case-level checks).
    pub(crate) async fn run(
        &self,
        transcript: &Transcript,
        rounds: usize,
        rt: &JudgeRuntime<'_>,
    ) -> Verdict {
        let kind = self.check.kind();
        let subject = match resolve(self.scope, transcript, rounds) {
            Ok(subject) => subject,
            Err(why) => return unanswered(&self.name, kind, self.scope, rounds, &why),
        };
        let index = position(transcript, subject.answer);
        let tool_calls = match self.scope {
            Scope::Round(_) => subject
                .turns
                .iter()
                .flat_map(|t| t.tool_calls.iter())
                .collect(),
            Scope::LastTurn | Scope::Transcript => transcript.tool_calls().collect(),
        };
        let history = seen_before(transcript, index, subject.answer.branch.as_deref());
        let head = VerdictHead {
            name: &self.name,
            kind,
            round: self.scope.round(Some(subject.answer), rounds),
        };
        let input = Input {
            judged: Judged {
                withheld: None,
                history: &history,
                turn: subject.answer,
                tool_calls,
            },
            subject,
            transcript,
            rounds,
        };
        self.check.grade(head, &input, rt).await
    }
}
