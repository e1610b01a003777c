//! A check's result.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::{Attempts, CheckKind, Scale, Status};

/// The result of one check applied to a turn or a transcript.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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
    /// Structured details (missing tools, matched text, raw judge answer…).
    #[serde(default, skip_serializing_if = "Value::is_null")]
    pub evidence: Value,
    /// What the check itself cost (judge calls), in US dollars.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
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
            evidence: Value::Null,
            cost_usd: None,
        }
    }

    /// Sets the round this verdict applies to.
    pub fn in_round(mut self, round: Option<usize>) -> Self {
        self.round = round;
        self
    }

    /// Attaches structured evidence.
    pub fn with_evidence(mut self, evidence: Value) -> Self {
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
    /// normalised `0.50`: the `scale` its evidence records (pointwise judges), 1–5
    /// for a `rubric` (its overall score is always on 1–5), else `None` (the score
    /// is already on 0..=1).
    pub fn scale(&self) -> Option<Scale> {
        match self.evidence.get("scale") {
            Some(scale) => Scale::deserialize(scale).ok(),
            None => (self.kind == CheckKind::Rubric).then_some(Scale::OneToFive),
        }
    }

    /// The transport tries of the model calls behind this verdict (judges): the
    /// evidence's [`TRANSPORT_EVIDENCE`] entry, apart from the judge's own
    /// re-asks of unusable answers (`attempts`). `None` when no call was made
    /// (code checks, answers served from the cache).
    pub fn transport(&self) -> Option<Attempts> {
        Attempts::deserialize(self.evidence.get(TRANSPORT_EVIDENCE)?).ok()
    }

    /// Whether this judged check got no judgement for want of a judge model or
    /// its credentials (the evidence's [`JUDGE_UNAVAILABLE_EVIDENCE`] flag).
    pub fn judge_unavailable(&self) -> bool {
        self.evidence.get(JUDGE_UNAVAILABLE_EVIDENCE) == Some(&Value::Bool(true))
    }
}

/// The evidence key under which a verdict records its model calls' transport
/// tries ([`Verdict::transport`]).
pub const TRANSPORT_EVIDENCE: &str = "transport";

/// The evidence flag of a judged check that had no judge model or credentials
/// ([`Verdict::judge_unavailable`]).
pub const JUDGE_UNAVAILABLE_EVIDENCE: &str = "judge_unavailable";

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_scale_comes_from_the_evidence_or_the_rubric_kind() {
        let judged = Verdict::new("judge", CheckKind::Judge, Status::Pass, "ok")
            .with_evidence(json!({"scale": "1-5", "score": 4}));
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
            "attempts": 1,
            "transport": {"attempts": 3, "retries": 2, "rate_limited": 1, "malformed": 0},
        }));
        let t = v.transport().unwrap();
        assert_eq!((t.attempts, t.retries, t.rate_limited), (3, 2, 1));
        let none = Verdict::new("contains", CheckKind::Contains, Status::Pass, "found");
        assert_eq!(none.transport(), None);
    }
}
