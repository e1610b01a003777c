//! The two shapes of a compiled check: a [`CodeCheck`] grades the transcript
//! synchronously; an [`AwaitedCheck`] awaits something outside it (an oracle, a
//! database, the embedder, a judge model).

use futures::future::BoxFuture;
use gavel_core::CheckKind;
use gavel_core::{Transcript, Verdict};

use crate::finding::{Finding, VerdictHead};
use crate::runtime::JudgeRuntime;
use crate::subject::{Judged, Subject};

/// Which turns a case-level check reads (a round's checks read their round).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Reads {
    /// The last turn.
    Turn,
    /// The whole conversation, which must be complete and unbroken.
    Transcript,
}

/// A deterministic check: reads the transcript only, no model.
pub(crate) trait CodeCheck: Send + Sync {
    /// Display name, e.g. `contains "Beach House"`.
    fn name(&self) -> String;

    /// The check's type as written in suite files.
    fn kind(&self) -> CheckKind;

    /// Grades the turns the check's scope found.
    fn evaluate(&self, subject: &Subject<'_>) -> Finding;
}

/// What an awaited check reads: the turns its scope found, the judged turn with
/// what was seen before it, and the whole transcript.
pub(crate) struct Input<'a> {
    pub(crate) subject: Subject<'a>,
    pub(crate) judged: Judged<'a>,
    pub(crate) transcript: &'a Transcript,
    /// How many rounds the case has.
    pub(crate) rounds: usize,
}

/// A check that awaits: a probe (oracle, database, embedder) or a judge.
pub(crate) trait AwaitedCheck: Send + Sync {
    /// Display name.
    fn name(&self) -> String;

    /// The check's type as written in suite files.
    fn kind(&self) -> CheckKind;

    /// The judge configurations it grades with (none for probes).
    fn judges(&self) -> Vec<crate::JudgeUse>;

    /// Grades `input` under `head`; never panics, never passes by default.
    fn grade<'a>(
        &'a self,
        head: VerdictHead<'a>,
        input: &'a Input<'a>,
        rt: &'a JudgeRuntime<'a>,
    ) -> BoxFuture<'a, Verdict>;
}
