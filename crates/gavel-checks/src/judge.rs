//! Judge criteria (`criteria`, `judge_prompt`, `success_criteria`).
//!
//! LLM judges are not built yet. Every criteria is planned as a `judge` check, and
//! [`JudgeCheck::verdict`] is the one place that grades it: for now it reports
//! `skipped` with [`NO_JUDGE_REASON`]. The judges issue replaces that function.

use gavel_core::{Status, Verdict};
use serde_json::json;

use crate::plan::quoted_list;

/// The kind of every judge verdict.
pub(crate) const KIND: &str = "judge";

/// Why judge verdicts are skipped until LLM judges exist.
pub(crate) const NO_JUDGE_REASON: &str =
    "no judge model is configured; LLM judges are not available yet";

/// One judge criteria of a case or round, with its pass threshold.
pub(crate) struct JudgeCheck {
    criteria: String,
    threshold: Option<f64>,
}

impl JudgeCheck {
    /// A judge of `criteria`, passing at `threshold` (0..=1) when set.
    pub(crate) fn new(criteria: &str, threshold: Option<f64>) -> Self {
        JudgeCheck {
            criteria: criteria.to_owned(),
            threshold,
        }
    }

    /// Display name: `judge "<criteria, shortened>"`.
    pub(crate) fn name(&self) -> String {
        format!(
            "judge {}",
            quoted_list(std::slice::from_ref(&self.criteria))
        )
    }

    /// Grades the answer. Placeholder: always `skipped` until LLM judges exist.
    pub(crate) fn verdict(&self, name: &str, round: Option<usize>) -> Verdict {
        let mut verdict = Verdict::new(name, KIND, Status::Skipped, NO_JUDGE_REASON)
            .in_round(round)
            .with_evidence(json!({ "criteria": self.criteria }));
        verdict.threshold = self.threshold;
        verdict
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use gavel_core::Status;

    use super::NO_JUDGE_REASON;
    use crate::plan::tests::{case, transcript, turn};

    #[test]
    fn criteria_are_planned_as_skipped_judges_after_the_code_checks() {
        let c = case(
            "threshold: 0.7\ncriteria: Lists beach houses politely and accurately\nrounds:\n  - input: a\n    judge_prompt: Greets the user\n    checks: [{type: contains, value: hi}]\n  - input: b\n",
        );
        let plan = crate::compile(&c).unwrap();
        assert_eq!(plan.len(), 3);
        let verdicts = plan.run(&transcript(vec![turn(0, "hi"), turn(1, "done")]));
        assert_eq!(verdicts[0].kind, "contains");
        let judges: Vec<_> = verdicts.iter().filter(|v| v.kind == "judge").collect();
        assert_eq!(judges.len(), 2);
        assert_eq!(judges[0].round, Some(0));
        assert_eq!(judges[0].check, "judge \"Greets the user\"");
        assert_eq!(judges[1].round, Some(1));
        assert!(
            judges[1].check.starts_with("judge \"Lists beach houses"),
            "{}",
            judges[1].check
        );
        for j in judges {
            assert_eq!(j.status, Status::Skipped);
            assert_eq!(j.reason, NO_JUDGE_REASON);
            assert_eq!(j.score, None);
            assert_eq!(j.threshold, Some(0.7));
        }
    }
}
