//! A check's result.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::{Attempts, CheckKind, Evidence, Scale, Status};

/// The result of one check applied to a turn or a transcript.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(from = "StoredVerdict")]
pub struct Verdict {
    /// The check's display name (its `name`, or its type with a short argument).
    pub check: String,
    /// The check's type, e.g. `contains` or `tools-called`.
    pub kind: CheckKind,
    /// The round it applies to; `None` for checks over the whole transcript.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub round: Option<usize>,
    /// pass, fail, error or skipped.
    pub status: Status,
    /// Score normalised to 0..=1, when the check scores.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub score: Option<f64>,
    /// Threshold on the same 0..=1 scale, when the check has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threshold: Option<f64>,
    /// Why: the failing detail, the judge's reasoning or the skip reason.
    pub reason: String,
    /// Structured details (missing tools, matched text, the judge's reading…).
    #[serde(default, skip_serializing_if = "Evidence::is_empty")]
    pub evidence: Evidence,
    /// What the check itself cost (judge calls), in US dollars.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
}

/// A verdict as serialised: its evidence as JSON, read by the verdict's kind.
#[derive(Deserialize)]
struct StoredVerdict {
    check: String,
    kind: CheckKind,
    #[serde(default)]
    round: Option<usize>,
    status: Status,
    #[serde(default)]
    score: Option<f64>,
    #[serde(default)]
    threshold: Option<f64>,
    reason: String,
    #[serde(default)]
    evidence: Value,
    #[serde(default)]
    cost_usd: Option<f64>,
}

impl From<StoredVerdict> for Verdict {
    fn from(v: StoredVerdict) -> Self {
        Verdict {
            evidence: Evidence::read(v.kind, v.evidence),
            check: v.check,
            kind: v.kind,
            round: v.round,
            status: v.status,
            score: v.score,
            threshold: v.threshold,
            reason: v.reason,
            cost_usd: v.cost_usd,
        }
    }
}

impl Verdict {
    /// A verdict with the given status and reason and nothing else.
    pub fn new(
        check: impl Into<String>,
        kind: CheckKind,
        status: Status,
        reason: impl Into<String>,
    ) -> Self {
        Verdict {
            check: check.into(),
            kind,
            round: None,
            status,
            score: None,
            threshold: None,
            reason: reason.into(),
            evidence: Evidence::default(),
            cost_usd: None,
        }
    }

    /// Sets the round this verdict applies to.
    pub fn in_round(mut self, round: Option<usize>) -> Self {
        self.round = round;
        self
    }

    /// Attaches evidence written as JSON, read by this verdict's kind
    /// ([`Evidence::read`]): typed parts where they have their shape, the rest detail.
    pub fn with_evidence(mut self, evidence: Value) -> Self {
        self.evidence = Evidence::read(self.kind, evidence);
        self
    }

    /// Attaches evidence the check built typed.
    pub fn with_typed_evidence(mut self, evidence: Evidence) -> Self {
        self.evidence = evidence;
        self
    }

    /// Attaches a score and threshold on the 0..=1 scale.
    pub fn with_score(mut self, score: f64, threshold: Option<f64>) -> Self {
        self.score = Some(score);
        self.threshold = threshold;
        self
    }

    /// The scale the check scored on, so that reports can show `3/5` beside the
    /// normalised `0.50`: a pointwise judge's scale, 1–5 for a `rubric` (its
    /// overall score is always on 1–5), else `None` (the score is already on 0..=1).
    pub fn scale(&self) -> Option<Scale> {
        match self.evidence.score() {
            Some(judged) => Some(judged.scale),
            None => (self.kind == CheckKind::Rubric).then_some(Scale::OneToFive),
        }
    }

    /// The transport tries of the model calls behind this verdict (judges),
    /// apart from the judge's own re-asks of unusable answers. `None` when no
    /// call was made (code checks, answers served from the cache).
    pub fn transport(&self) -> Option<Attempts> {
        self.evidence.transport
    }

    /// Whether this judged check got no judgement for want of a judge model or
    /// its credentials.
    pub fn judge_unavailable(&self) -> bool {
        self.evidence.judge_unavailable
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_scale_comes_from_the_evidence_or_the_rubric_kind() {
        let judged = Verdict::new("judge", CheckKind::Judge, Status::Pass, "ok")
            .with_evidence(json!({"scale": "1-5", "score": 4}));
        let stored: Verdict =
            serde_json::from_value(serde_json::to_value(&judged).unwrap()).unwrap();
        assert_eq!(stored, judged);
        assert_eq!(judged.scale(), Some(Scale::OneToFive));
        let ten = judged.clone().with_evidence(json!({"scale": "0-10"}));
        assert_eq!(ten.scale(), Some(Scale::ZeroToTen));
        let rubric = Verdict::new("rubric", CheckKind::Rubric, Status::Fail, "weak");
        assert_eq!(rubric.scale(), Some(Scale::OneToFive));
        let unknown = judged.with_evidence(json!({"scale": "1-7"}));
        assert_eq!(unknown.scale(), None);
        let contains = Verdict::new("contains", CheckKind::Contains, Status::Pass, "found");
        assert_eq!(contains.scale(), None);
    }

    #[test]
    fn transport_tries_come_from_the_evidence() {
        let v = Verdict::new("judge", CheckKind::Judge, Status::Pass, "ok").with_evidence(json!({
            "input_tokens": 5, "output_tokens": 1, "latency_ms": 2, "cached": false, "attempts": 1,
            "transport": {"attempts": 3, "retries": 2, "rate_limited": 1, "malformed": 0},
        }));
        let t = v.transport().unwrap();
        assert_eq!((t.attempts, t.retries, t.rate_limited), (3, 2, 1));
        let none = Verdict::new("contains", CheckKind::Contains, Status::Pass, "found");
        assert_eq!(none.transport(), None);
    }
}
