//! What checks produce: a [`Finding`] on the turns they read, and the verdict it
//! becomes under a [`VerdictHead`].

use gavel_core::{CheckKind, Evidence, Status, Verdict};
use serde::Serialize;
use serde_json::{Map, Value};

use crate::subject::Scope;

/// A verdict's name, kind and round.
#[derive(Debug, Clone, Copy)]
pub(crate) struct VerdictHead<'a> {
    pub(crate) name: &'a str,
    pub(crate) kind: CheckKind,
    pub(crate) round: Option<usize>,
}

impl VerdictHead<'_> {
    /// The verdict with this head.
    pub(crate) fn verdict(self, status: Status, reason: impl Into<String>) -> Verdict {
        Verdict::new(self.name, self.kind, status, reason).in_round(self.round)
    }
}

/// Adds a typed evidence part (a `gavel_core` evidence type) to an evidence
/// object, as the fields it is serialised as.
pub(crate) fn merge(into: &mut Map<String, Value>, part: &impl Serialize) {
    if let Ok(Value::Object(fields)) = serde_json::to_value(part) {
        into.extend(fields);
    }
}

/// `evidence` (a JSON object) with the model that judged or embedded, typed.
pub(crate) fn with_model(mut evidence: Value, model: &str) -> Value {
    if let Value::Object(fields) = &mut evidence {
        let typed = Evidence {
            model: Some(model.to_owned()),
            ..Evidence::default()
        };
        merge(fields, &typed);
    }
    evidence
}

/// A check's finding on a subject, before it becomes a verdict.
pub(crate) struct Finding {
    /// The score and its threshold when the check scores on its own scale;
    /// `None`: 1 for a pass, 0 for a fail.
    pub(crate) score: Option<(f64, f64)>,
    pub(crate) status: Status,
    pub(crate) reason: String,
    pub(crate) evidence: Value,
}

impl Finding {
    /// A pass.
    pub(crate) fn pass(reason: impl Into<String>, evidence: Value) -> Self {
        Finding {
            score: None,
            status: Status::Pass,
            reason: reason.into(),
            evidence,
        }
    }

    /// A fail.
    pub(crate) fn fail(reason: impl Into<String>, evidence: Value) -> Self {
        Finding {
            score: None,
            status: Status::Fail,
            reason: reason.into(),
            evidence,
        }
    }

    /// The finding scored `score` against `threshold` on the check's own scale.
    pub(crate) fn scored(mut self, score: f64, threshold: f64) -> Self {
        self.score = Some((score, threshold));
        self
    }

    /// The verdict under `head`, scored 1 for a pass and 0 for a fail unless
    /// the finding has its own score.
    pub(crate) fn verdict(self, head: VerdictHead<'_>) -> Verdict {
        let status = self.status;
        let verdict = head
            .verdict(status, self.reason)
            .with_evidence(self.evidence);
        match (self.score, status) {
            (Some((score, threshold)), _) => verdict.with_score(score, Some(threshold)),
            (None, Status::Pass) => verdict.with_score(1.0, None),
            (None, Status::Fail) => verdict.with_score(0.0, None),
            (None, Status::Error | Status::Skipped) => verdict,
        }
    }
}

/// The verdict of a check whose turns are missing or broke.
pub(crate) fn unanswered(
    name: &str,
    kind: CheckKind,
    scope: Scope,
    rounds: usize,
    why: &str,
) -> Verdict {
    Verdict::new(
        name,
        kind,
        Status::Skipped,
        format!("no answer to check: {why}"),
    )
    .in_round(scope.round(None, rounds))
}
