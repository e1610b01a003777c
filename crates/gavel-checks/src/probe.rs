//! Checks that read outside the transcript — an oracle, the agent's database — and
//! so run asynchronously, after the code checks.

use gavel_core::{CheckSpec, Status, Transcript, Verdict};

use crate::database::DatabaseCheck;
use crate::error::FieldError;
use crate::grounding::GroundingCheck;
use crate::plan::{Scope, resolve, unanswered};

/// A compiled probe.
pub(crate) enum Probe {
    Grounding(GroundingCheck),
    Database(DatabaseCheck),
}

impl Probe {
    /// Compiles a `grounding` or `database` spec.
    pub(crate) fn compile(spec: &CheckSpec) -> Result<Self, FieldError> {
        match spec {
            CheckSpec::Grounding(s) => Ok(Probe::Grounding(GroundingCheck::compile(s)?)),
            CheckSpec::Database(s) => Ok(Probe::Database(DatabaseCheck::compile(s)?)),
            other => Err(FieldError::new(
                "",
                format!("internal error: `{}` is not a probe", other.kind()),
            )),
        }
    }

    fn kind(&self) -> &'static str {
        match self {
            Probe::Grounding(_) => "grounding",
            Probe::Database(_) => "database",
        }
    }
}

/// One compiled probe with its display name and scope.
pub(crate) struct PlannedProbe {
    pub(crate) name: String,
    scope: Scope,
    probe: Probe,
}

impl PlannedProbe {
    pub(crate) fn new(scope: Scope, probe: Probe) -> Self {
        let name = match &probe {
            Probe::Grounding(c) => c.name(),
            Probe::Database(c) => c.name(),
        };
        PlannedProbe { name, scope, probe }
    }

    /// Runs the probe on the turns its scope reads; unanswered turns skip it.
    pub(crate) async fn run(&self, transcript: &Transcript, rounds: usize) -> Verdict {
        let kind = self.probe.kind();
        let subject = match resolve(self.scope, transcript, rounds) {
            Ok(subject) => subject,
            Err(why) => return unanswered(&self.name, kind, self.scope, rounds, &why),
        };
        let finding = match &self.probe {
            Probe::Grounding(c) => c.evaluate(subject.answer, &transcript.session_id).await,
            Probe::Database(c) => c.evaluate(&transcript.session_id).await,
        };
        let verdict = Verdict::new(&self.name, kind, finding.status, finding.reason)
            .in_round(self.scope.round(Some(subject.answer), rounds))
            .with_evidence(finding.evidence);
        match finding.status {
            Status::Pass => verdict.with_score(1.0, None),
            Status::Fail => verdict.with_score(0.0, None),
            Status::Error | Status::Skipped => verdict,
        }
    }
}
