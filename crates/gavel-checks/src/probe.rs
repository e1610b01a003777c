//! Checks that read outside the transcript — an oracle, the agent's database — and
//! so run asynchronously, after the code checks.

use gavel_core::{CheckSpec, Transcript, Verdict};

use crate::database::DatabaseCheck;
use crate::error::FieldError;
use crate::grounding::GroundingCheck;
use crate::judge::VerdictHead;
use crate::plan::{Expected, Scope, resolve, unanswered};
use crate::script::ScriptCheck;
use crate::similar::{Embeddings, SimilarCheck};

/// A compiled probe.
pub(crate) enum Probe {
    Grounding(GroundingCheck),
    Database(DatabaseCheck),
    Similar(SimilarCheck),
    Script(ScriptCheck),
}

impl Probe {
    /// Compiles a `grounding`, `database`, `similar` or `script` spec.
    pub(crate) fn compile(spec: &CheckSpec, expected: &Expected<'_>) -> Result<Self, FieldError> {
        match spec {
            CheckSpec::Grounding(s) => Ok(Probe::Grounding(GroundingCheck::compile(s, None)?)),
            CheckSpec::Database(s) => Ok(Probe::Database(DatabaseCheck::compile(s)?)),
            CheckSpec::Similar { value, threshold } => Ok(Probe::Similar(SimilarCheck::compile(
                value.as_ref(),
                *threshold,
                expected,
            )?)),
            CheckSpec::Script(s) => Ok(Probe::Script(ScriptCheck::compile(s, expected)?)),
            other => Err(FieldError::new(
                "",
                format!("internal error: `{}` is not a probe", other.kind()),
            )),
        }
    }

    pub(crate) fn kind(&self) -> &'static str {
        match self {
            Probe::Grounding(_) => "grounding",
            Probe::Database(_) => "database",
            Probe::Similar(_) => "similar",
            Probe::Script(_) => "script",
        }
    }
}

/// One compiled probe with its display name and scope.
pub(crate) struct PlannedProbe {
    pub(crate) name: String,
    pub(crate) scope: Scope,
    probe: Probe,
}

impl PlannedProbe {
    pub(crate) fn new(scope: Scope, probe: Probe) -> Self {
        let name = match &probe {
            Probe::Grounding(c) => c.name(),
            Probe::Database(c) => c.name(),
            Probe::Similar(c) => c.name(),
            Probe::Script(c) => c.name(),
        };
        PlannedProbe { name, scope, probe }
    }

    /// The kind of its verdicts.
    pub(crate) fn kind(&self) -> &'static str {
        self.probe.kind()
    }

    /// Whether this probe embeds text (a `similar` check).
    pub(crate) fn embeds(&self) -> bool {
        matches!(self.probe, Probe::Similar(_))
    }

    /// Runs the probe on the turns its scope reads; unanswered turns skip it.
    pub(crate) async fn run(
        &self,
        transcript: &Transcript,
        rounds: usize,
        embeddings: Option<&Embeddings>,
    ) -> Verdict {
        let kind = self.probe.kind();
        let subject = match resolve(self.scope, transcript, rounds) {
            Ok(subject) => subject,
            Err(why) => return unanswered(&self.name, kind, self.scope, rounds, &why),
        };
        let (finding, scored) = match &self.probe {
            Probe::Grounding(c) => (
                c.evaluate(subject.answer, &transcript.session_id).await,
                None,
            ),
            Probe::Database(c) => (c.evaluate(&transcript.session_id).await, None),
            Probe::Similar(c) => {
                let (finding, similarity) = c.evaluate(subject.answer, embeddings).await;
                (finding, similarity.map(|s| (s, c.threshold())))
            }
            Probe::Script(c) => {
                let (finding, score) = c.evaluate(subject.answer, transcript).await;
                (finding, score.map(|s| (s, c.threshold())))
            }
        };
        let head = VerdictHead {
            name: &self.name,
            kind,
            round: self.scope.round(Some(subject.answer), rounds),
        };
        finding.verdict(head, scored)
    }
}
