//! cost: the targeted turns cost at most a budget, as the target reported usage.

use gavel_core::CheckKind;
use gavel_core::{Status, Turn};
use serde_json::json;

use crate::check::CodeCheck;
use crate::error::FieldError;
use crate::finding::Finding;
use crate::subject::Subject;

/// A compiled cost check.
pub(crate) struct CostCheck {
    max_usd: f64,
}

impl CostCheck {
    /// A budget of `max_usd` US dollars (finite, 0 or more).
    pub(crate) fn compile(max_usd: f64) -> Result<Self, FieldError> {
        let max_usd = gavel_core::bounds::usd(max_usd)
            .map_err(|e| FieldError::new("max_usd", e.to_string()))?;
        Ok(CostCheck { max_usd })
    }
}

impl CodeCheck for CostCheck {
    /// Display name, e.g. `cost <= $0.01`.
    fn name(&self) -> String {
        format!("cost <= ${}", self.max_usd)
    }

    fn kind(&self) -> CheckKind {
        CheckKind::Cost
    }

    /// The summed cost of the turns against the budget; `skipped` when no turn
    /// reported a cost (the budget cannot be checked, which is not a failure).
    fn evaluate(&self, subject: &Subject<'_>) -> Finding {
        let turns: &[&Turn] = &subject.turns;
        let max_usd = self.max_usd;
        let costs: Vec<Option<f64>> = turns
            .iter()
            .map(|t| t.usage.and_then(|u| u.cost_usd))
            .collect();
        let known: Vec<f64> = costs.iter().flatten().copied().collect();
        let evidence = json!({ "max_usd": max_usd, "costs_usd": costs });
        if known.is_empty() {
            return Finding {
                score: None,
                status: Status::Skipped,
                reason: "the target reported no cost for these turns".into(),
                evidence,
            };
        }
        let total: f64 = known.iter().sum();
        let mut evidence = evidence;
        evidence["total_usd"] = json!(total);
        let unknown = costs.len() - known.len();
        let partial = if unknown > 0 {
            format!(" ({unknown} of {} turns reported no cost)", costs.len())
        } else {
            String::new()
        };
        if total <= max_usd {
            Finding::pass(
                format!("the turns cost ${total:.6}, within ${max_usd}{partial}"),
                evidence,
            )
        } else {
            Finding::fail(
                format!("the turns cost ${total:.6}, over the ${max_usd} budget{partial}"),
                evidence,
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use gavel_core::{Status, Usage};

    use crate::testing::{case, compile_err, run_one, turn};

    fn costing(round: usize, usd: Option<f64>) -> gavel_core::Turn {
        let mut t = turn(round, "ok");
        t.usage = Some(Usage {
            input_tokens: 10,
            output_tokens: 5,
            cost_usd: usd,
        });
        t
    }

    #[test]
    fn case_cost_sums_every_turn() {
        let c = case("rounds: [{input: a}, {input: b}]\nchecks: [{type: cost, max_usd: 0.01}]\n");
        let v = run_one(&c, vec![costing(0, Some(0.004)), costing(1, Some(0.005))]);
        assert_eq!(v.status, Status::Pass, "{}", v.reason);
        assert_eq!(v.check, "cost <= $0.01");
        assert_eq!(v.round, None);
        let v = run_one(&c, vec![costing(0, Some(0.004)), costing(1, Some(0.007))]);
        assert_eq!(v.status, Status::Fail, "{}", v.reason);
        assert_eq!(v.reason, "the turns cost $0.011000, over the $0.01 budget");
    }

    #[test]
    fn unknown_costs_skip_and_broken_turns_skip() {
        let c = case("input: q\nchecks: [{type: cost, max_usd: 0.01}]\n");
        let v = run_one(&c, vec![turn(0, "ok")]);
        assert_eq!(v.status, Status::Skipped);
        assert_eq!(v.reason, "the target reported no cost for these turns");
        let mut broken = turn(0, "");
        broken.failure = Some(gavel_core::TargetFailure {
            message: "HTTP 502".into(),
            transient: true,
        });
        let v = run_one(&c, vec![broken]);
        assert_eq!(v.status, Status::Skipped);
        assert_eq!(v.reason, "no answer to check: HTTP 502");
    }

    #[test]
    fn a_negative_budget_is_refused() {
        let e = compile_err("input: q\nchecks: [{type: cost, max_usd: -1}]\n");
        assert!(e.contains("checks[0].max_usd: "), "{e}");
    }
}
