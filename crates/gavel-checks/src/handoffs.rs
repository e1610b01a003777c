//! Multi-agent checks over the agent named on each turn and tool call (seed 003's
//! cross-agent metrics), computed from the transcript without a judge:
//!
//! - `handoff-correctness`: the agents that acted, in the order they took over,
//!   against the expected ones;
//! - `collaboration-efficiency`: handoffs beyond those needed, and tool calls one
//!   agent repeats after another made the same call, lower the score.
//!
//! The steps are each turn's tool calls, then its answer; a step whose target
//! named no agent is left out. A transcript that names no agent at all is
//! `skipped`: the check cannot tell agents apart.

use gavel_core::agent_check::{CollaborationSpec, HandoffSpec};
use gavel_core::{CheckKind, Status, Turn};
use serde_json::{Value, json};

use crate::check::CodeCheck;
use crate::error::{FieldError, share_threshold};
use crate::finding::Finding;
use crate::subject::Subject;

/// Why a transcript without agent names is skipped.
const NO_AGENTS: &str = "the target named no agent on any turn or tool call (http and command targets read it at `response.agent`, `/agent` by default, and each tool call's `agent`)";

/// The agents of the turns' steps, in order: each turn's tool calls, then its answer.
fn steps<'a>(turns: &[&'a Turn]) -> Vec<&'a str> {
    turns
        .iter()
        .flat_map(|t| {
            t.tool_calls
                .iter()
                .map(|c| c.agent.as_deref())
                .chain([t.agent.as_deref()])
        })
        .flatten()
        .collect()
}

/// The agents in the order they took over: consecutive steps of one agent collapsed.
fn takeovers<'a>(steps: &[&'a str]) -> Vec<&'a str> {
    let mut out: Vec<&str> = Vec::new();
    for &agent in steps {
        if out.last() != Some(&agent) {
            out.push(agent);
        }
    }
    out
}

fn skipped(evidence: Value) -> Finding {
    Finding {
        score: None,
        status: Status::Skipped,
        reason: NO_AGENTS.to_owned(),
        evidence,
    }
}

/// A compiled handoff-correctness check.
pub(crate) struct HandoffCheck {
    spec: HandoffSpec,
}

impl HandoffCheck {
    pub(crate) fn compile(spec: &HandoffSpec) -> Result<Self, FieldError> {
        if spec.handoffs.is_empty() || spec.handoffs.iter().any(|a| a.trim().is_empty()) {
            return Err(FieldError::new(
                "handoffs",
                "give the agents expected to act, in order, as non-empty names",
            ));
        }
        Ok(HandoffCheck { spec: spec.clone() })
    }
}

impl CodeCheck for HandoffCheck {
    /// `handoff-correctness a → b`, `… (exact)` with `exact`.
    fn name(&self) -> String {
        let exact = if self.spec.exact { " (exact)" } else { "" };
        format!(
            "handoff-correctness {}{exact}",
            self.spec.handoffs.join(" → ")
        )
    }

    fn kind(&self) -> CheckKind {
        CheckKind::HandoffCorrectness
    }

    /// Pass when the expected agents took over in order (with `exact`, and no
    /// other agent); the score is the share of expected agents found in order.
    fn evaluate(&self, subject: &Subject<'_>) -> Finding {
        let steps = steps(&subject.turns);
        let observed = takeovers(&steps);
        let expected = &self.spec.handoffs;
        let evidence =
            json!({ "expected": expected, "observed": observed, "exact": self.spec.exact });
        if observed.is_empty() {
            return skipped(evidence);
        }
        // Greedy: each expected agent at its first takeover after the previous one's.
        let mut at = 0;
        let mut found = 0;
        for agent in expected {
            match observed[at..].iter().position(|o| o == agent) {
                Some(p) => {
                    found += 1;
                    at += p + 1;
                }
                None => break,
            }
        }
        let score = found as f64 / expected.len() as f64;
        let in_order = found == expected.len();
        let exact_ok = !self.spec.exact || observed.iter().eq(expected.iter());
        let seen = observed.join(" → ");
        let finding = if in_order && exact_ok {
            Finding::pass(
                format!("the agents took over as expected: {seen}"),
                evidence,
            )
        } else if in_order {
            Finding::fail(
                format!(
                    "other handoffs happened: expected exactly {}, observed {seen}",
                    expected.join(" → ")
                ),
                evidence,
            )
        } else {
            Finding::fail(
                format!(
                    "expected {}, observed {seen}: `{}` did not take over after {}",
                    expected.join(" → "),
                    expected[found],
                    if found == 0 {
                        "the start".to_owned()
                    } else {
                        format!("`{}`", expected[found - 1])
                    }
                ),
                evidence,
            )
        };
        let score = if in_order && !exact_ok { 0.0 } else { score };
        finding.scored(score, 1.0)
    }
}

/// A compiled collaboration-efficiency check.
pub(crate) struct CollaborationCheck {
    max_handoffs: Option<usize>,
    threshold: f64,
}

impl CollaborationCheck {
    pub(crate) fn compile(spec: &CollaborationSpec) -> Result<Self, FieldError> {
        Ok(CollaborationCheck {
            max_handoffs: spec.max_handoffs,
            threshold: share_threshold(spec.threshold, 0.5)?,
        })
    }
}

impl CodeCheck for CollaborationCheck {
    fn name(&self) -> String {
        "collaboration-efficiency".to_owned()
    }

    fn kind(&self) -> CheckKind {
        CheckKind::CollaborationEfficiency
    }

    /// Score = handoff efficiency (needed ÷ made, at most 1) × the share of tool
    /// calls that do not repeat another agent's identical earlier call.
    fn evaluate(&self, subject: &Subject<'_>) -> Finding {
        let steps = steps(&subject.turns);
        let observed = takeovers(&steps);
        if observed.is_empty() {
            return skipped(json!({ "observed": observed }));
        }
        let made = observed.len() - 1;
        let mut agents = observed.clone();
        agents.sort_unstable();
        agents.dedup();
        let needed = self.max_handoffs.unwrap_or(agents.len() - 1);
        let handoff_efficiency = if made > needed {
            needed as f64 / made as f64
        } else {
            1.0
        };
        // A call repeats another agent's work when an earlier identical call (same
        // tool and arguments) was made by a different agent.
        let calls: Vec<(&str, &Value, Option<&str>)> = subject
            .turns
            .iter()
            .flat_map(|t| &t.tool_calls)
            .map(|c| (c.name.as_str(), &c.arguments, c.agent.as_deref()))
            .collect();
        let repeated: Vec<String> = calls
            .iter()
            .enumerate()
            .filter(|(i, (name, args, agent))| {
                calls[..*i]
                    .iter()
                    .any(|(n, a, by)| n == name && a == args && by != agent)
            })
            .map(|(_, (name, _, agent))| {
                format!("{name} by {}", agent.unwrap_or("an unnamed agent"))
            })
            .collect();
        let unrepeated = if calls.is_empty() {
            1.0
        } else {
            1.0 - repeated.len() as f64 / calls.len() as f64
        };
        let score = handoff_efficiency * unrepeated;
        let mut reason = format!(
            "{made} handoffs for {needed} needed ({}), {} of {} tool calls repeating another agent's",
            observed.join(" → "),
            repeated.len(),
            calls.len()
        );
        if !repeated.is_empty() {
            reason.push_str(": ");
            reason.push_str(&repeated.join(", "));
        }
        let evidence = json!({
            "observed": observed,
            "handoffs": made,
            "needed": needed,
            "handoff_efficiency": handoff_efficiency,
            "repeated_calls": repeated,
            "tool_calls": calls.len(),
            "threshold": self.threshold,
        });
        let finding = if score >= self.threshold {
            Finding::pass(reason, evidence)
        } else {
            Finding::fail(reason, evidence)
        };
        finding.scored(score, self.threshold)
    }
}

#[cfg(test)]
mod tests {
    use gavel_core::{Status, TargetFailure, ToolCall, Turn};
    use serde_json::json;

    use crate::testing::{case, compile_err, run_one, turn};

    /// A turn answered by `agent` after `calls` (tool, agent).
    fn by(round: usize, agent: Option<&str>, calls: &[(&str, &str)]) -> Turn {
        let mut t = turn(round, "ok");
        t.agent = agent.map(str::to_owned);
        t.tool_calls = calls
            .iter()
            .map(|(name, agent)| ToolCall {
                name: (*name).to_owned(),
                arguments: json!({"id": 1}),
                result: None,
                agent: Some((*agent).to_owned()),
                ..Default::default()
            })
            .collect();
        t
    }

    const HANDOFF: &str = "rounds: [{input: a}, {input: b}]\nchecks: [{type: handoff-correctness, handoffs: [triage, billing]}]\n";

    #[test]
    fn handoffs_in_order_pass_and_missing_ones_fail() {
        let c = case(HANDOFF);
        let v = run_one(
            &c,
            vec![
                by(0, Some("billing"), &[("transfer", "triage")]),
                by(1, Some("billing"), &[]),
            ],
        );
        assert_eq!(
            (v.status, v.score),
            (Status::Pass, Some(1.0)),
            "{}",
            v.reason
        );
        assert_eq!(v.check, "handoff-correctness triage → billing");
        assert_eq!(
            v.evidence.to_json()["observed"],
            json!(["triage", "billing"])
        );

        let v = run_one(
            &c,
            vec![
                by(0, Some("sales"), &[("transfer", "triage")]),
                by(1, Some("sales"), &[]),
            ],
        );
        assert_eq!((v.status, v.score), (Status::Fail, Some(0.5)));
        assert_eq!(
            v.reason,
            "expected triage → billing, observed triage → sales: `billing` did not take over after `triage`"
        );

        let exact = case(
            "rounds: [{input: a}, {input: b}]\nchecks: [{type: handoff-correctness, handoffs: [triage, billing], exact: true}]\n",
        );
        let v = run_one(
            &exact,
            vec![
                by(0, Some("sales"), &[("transfer", "triage")]),
                by(1, Some("billing"), &[]),
            ],
        );
        assert_eq!(
            (v.status, v.score),
            (Status::Fail, Some(0.0)),
            "{}",
            v.reason
        );
        assert!(
            v.reason.starts_with("other handoffs happened"),
            "{}",
            v.reason
        );
    }

    #[test]
    fn no_agent_names_or_a_broken_turn_skip_and_bad_specs_are_errors() {
        let c = case(HANDOFF);
        let v = run_one(&c, vec![by(0, None, &[]), by(1, None, &[])]);
        assert_eq!(v.status, Status::Skipped);
        assert!(
            v.reason.starts_with("the target named no agent"),
            "{}",
            v.reason
        );
        let mut broken = by(1, Some("billing"), &[]);
        broken.failure = Some(TargetFailure {
            message: "HTTP 502".into(),
            transient: true,
        });
        let v = run_one(&c, vec![by(0, Some("triage"), &[]), broken]);
        assert_eq!(v.status, Status::Skipped, "{}", v.reason);
        let e = compile_err("input: q\nchecks: [{type: handoff-correctness, handoffs: []}]\n");
        assert!(e.contains("checks[0].handoffs: give the agents"), "{e}");
        let e =
            compile_err("input: q\nchecks: [{type: collaboration-efficiency, threshold: -1}]\n");
        assert!(e.contains("checks[0].threshold"), "{e}");
    }

    #[test]
    fn collaboration_counts_extra_handoffs_and_repeated_work() {
        let c =
            case("rounds: [{input: a}, {input: b}]\nchecks: [{type: collaboration-efficiency}]\n");
        let v = run_one(
            &c,
            vec![
                by(
                    0,
                    Some("billing"),
                    &[("transfer", "triage"), ("lookup", "billing")],
                ),
                by(1, Some("billing"), &[]),
            ],
        );
        assert_eq!(
            (v.status, v.score),
            (Status::Pass, Some(1.0)),
            "{}",
            v.reason
        );

        // triage → billing → triage → billing: 3 handoffs for 1 needed, and
        // billing repeats triage's lookup.
        let v = run_one(
            &c,
            vec![
                by(
                    0,
                    Some("triage"),
                    &[("lookup", "triage"), ("transfer", "billing")],
                ),
                by(1, Some("billing"), &[("lookup", "billing")]),
            ],
        );
        assert_eq!(v.status, Status::Fail, "{}", v.reason);
        let score = v.score.unwrap();
        assert!((score - (1.0 / 3.0) * (2.0 / 3.0)).abs() < 1e-9, "{score}");
        assert!(
            v.reason.starts_with("3 handoffs for 1 needed (triage → billing → triage → billing), 1 of 3 tool calls repeating another agent's: lookup by billing"),
            "{}",
            v.reason
        );
        let v = run_one(&c, vec![by(0, None, &[]), by(1, None, &[])]);
        assert_eq!(v.status, Status::Skipped);
    }
}
