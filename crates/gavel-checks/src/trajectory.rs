//! trajectory: metrics over the tool calls of a transcript (seed 003's
//! `analyzeTrajectory`) and thresholds on them.
//!
//! - length: the number of tool calls (steps);
//! - redundancy: the share of calls repeating an earlier identical call (same tool,
//!   same arguments);
//! - loopiness: the share of calls returning to a tool that was left for another
//!   one earlier (`a b a`), a circular path rather than a retry;
//! - efficiency: the optimal path's length over the actual length, at most 1.

use gavel_core::CheckKind;
use gavel_core::agent_check::TrajectorySpec;
use gavel_core::{TrajectoryReading, Turn};
use serde_json::{Value, json};

use crate::check::CodeCheck;
use crate::error::FieldError;
use crate::finding::{Finding, merge};
use crate::subject::Subject;

/// A compiled trajectory check.
pub(crate) struct TrajectoryCheck {
    spec: TrajectorySpec,
}

/// The measured metrics of one trajectory.
#[derive(Debug, PartialEq)]
pub(crate) struct Metrics {
    pub(crate) length: usize,
    pub(crate) redundancy: f64,
    pub(crate) loopiness: f64,
    pub(crate) efficiency: Option<f64>,
}

impl Metrics {
    /// Measures a path of (tool, arguments) steps against an optional optimal path.
    pub(crate) fn measure(steps: &[(&str, &Value)], optimal: &[String]) -> Self {
        let length = steps.len();
        let share = |n: usize| {
            if length == 0 {
                0.0
            } else {
                n as f64 / length as f64
            }
        };
        let repeats = (0..length)
            .filter(|&i| steps[..i].iter().any(|p| p == &steps[i]))
            .count();
        let returns = (1..length)
            .filter(|&i| {
                let name = steps[i].0;
                steps[i - 1].0 != name && steps[..i - 1].iter().any(|p| p.0 == name)
            })
            .count();
        let efficiency = (!optimal.is_empty()).then(|| match length {
            0 => 0.0,
            n => (optimal.len() as f64 / n as f64).min(1.0),
        });
        Metrics {
            length,
            redundancy: share(repeats),
            loopiness: share(returns),
            efficiency,
        }
    }
}

impl TrajectoryCheck {
    /// Compiles the thresholds: shares within 0..=1, efficiency only with a path.
    pub(crate) fn compile(spec: &TrajectorySpec) -> Result<Self, FieldError> {
        for (field, v) in [
            ("max_redundancy", spec.max_redundancy),
            ("max_loopiness", spec.max_loopiness),
            ("min_efficiency", spec.min_efficiency),
        ] {
            if v.is_some_and(|v| !(0.0..=1.0).contains(&v)) {
                return Err(FieldError::new(field, "must be between 0 and 1"));
            }
        }
        if spec.min_efficiency.is_some() && spec.optimal.is_empty() {
            return Err(FieldError::new(
                "min_efficiency",
                "needs `optimal`, the optimal path's tools",
            ));
        }
        let none = spec.max_steps.is_none()
            && spec.max_redundancy.is_none()
            && spec.max_loopiness.is_none()
            && spec.min_efficiency.is_none();
        if none {
            return Err(FieldError::new(
                "",
                "give at least one threshold: max_steps, max_redundancy, max_loopiness or min_efficiency",
            ));
        }
        Ok(TrajectoryCheck { spec: spec.clone() })
    }
}

impl CodeCheck for TrajectoryCheck {
    /// Display name, e.g. `trajectory steps<=3 redundancy<=0`.
    fn name(&self) -> String {
        let s = &self.spec;
        let mut parts = vec!["trajectory".to_owned()];
        parts.extend(s.max_steps.map(|v| format!("steps<={v}")));
        parts.extend(s.max_redundancy.map(|v| format!("redundancy<={v}")));
        parts.extend(s.max_loopiness.map(|v| format!("loopiness<={v}")));
        parts.extend(s.min_efficiency.map(|v| format!("efficiency>={v}")));
        parts.join(" ")
    }

    fn kind(&self) -> CheckKind {
        CheckKind::Trajectory
    }

    /// Measures the targeted turns' calls and holds them to the thresholds.
    fn evaluate(&self, subject: &Subject<'_>) -> Finding {
        let turns: &[&Turn] = &subject.turns;
        let steps: Vec<(&str, &Value)> = turns
            .iter()
            .flat_map(|t| t.tool_calls.iter())
            .map(|c| (c.name.as_str(), &c.arguments))
            .collect();
        let m = Metrics::measure(&steps, &self.spec.optimal);
        let s = &self.spec;
        let mut over = Vec::new();
        if let Some(max) = s.max_steps.filter(|max| m.length > *max) {
            over.push(format!("{} steps > {max}", m.length));
        }
        if let Some(max) = s.max_redundancy.filter(|max| m.redundancy > *max + 1e-9) {
            over.push(format!("redundancy {:.2} > {max}", m.redundancy));
        }
        if let Some(max) = s.max_loopiness.filter(|max| m.loopiness > *max + 1e-9) {
            over.push(format!("loopiness {:.2} > {max}", m.loopiness));
        }
        if let (Some(min), Some(e)) = (s.min_efficiency, m.efficiency)
            && e + 1e-9 < min
        {
            over.push(format!("efficiency {e:.2} < {min}"));
        }
        let missing: Vec<&String> = s
            .optimal
            .iter()
            .filter(|t| !steps.iter().any(|(n, _)| n == t))
            .collect();
        let mut evidence = json!({
            "redundancy_score": m.redundancy,
            "loopiness_score": m.loopiness,
            "efficiency": m.efficiency,
            "optimal": s.optimal,
            "optimal_missing": missing,
            "path": steps.iter().map(|(n, _)| *n).collect::<Vec<_>>(),
        });
        if let Value::Object(fields) = &mut evidence {
            merge(
                fields,
                &TrajectoryReading {
                    trajectory_length: m.length,
                },
            );
        }
        let mut measured = format!(
            "{} steps, redundancy {:.2}, loopiness {:.2}",
            m.length, m.redundancy, m.loopiness
        );
        if let Some(e) = m.efficiency {
            measured.push_str(&format!(", efficiency {e:.2}"));
        }
        if over.is_empty() {
            Finding::pass(measured, evidence)
        } else {
            Finding::fail(format!("{}; {measured}", over.join(", ")), evidence)
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use gavel_core::{Status, ToolCall, Turn};
    use serde_json::{Value, json};

    use super::Metrics;
    use crate::testing::{case, compile_err, run_one, turn};

    fn path(steps: &[(&str, Value)]) -> Turn {
        let mut t = turn(0, "done");
        t.tool_calls = steps
            .iter()
            .map(|(n, a)| ToolCall {
                name: (*n).to_owned(),
                arguments: a.clone(),
                result: None,
                ..Default::default()
            })
            .collect();
        t
    }

    #[test]
    fn metrics_tell_repeats_from_loops() {
        let (a, b, x) = (json!({}), json!({"id": 1}), json!({"id": 2}));
        let m = Metrics::measure(&[("s", &a), ("s", &a), ("d", &b), ("d", &x)], &[]);
        assert_eq!(
            (m.length, m.redundancy, m.loopiness, m.efficiency),
            (4, 0.25, 0.0, None)
        );
        let m = Metrics::measure(
            &[("s", &a), ("d", &b), ("s", &x), ("d", &b)],
            &["s".into(), "d".into()],
        );
        assert_eq!(
            (m.redundancy, m.loopiness, m.efficiency),
            (0.25, 0.5, Some(0.5))
        );
        let m = Metrics::measure(&[], &["s".into()]);
        assert_eq!((m.length, m.redundancy, m.efficiency), (0, 0.0, Some(0.0)));
    }

    #[test]
    fn thresholds_fail_with_the_figures() {
        let c = case(
            "input: q\nchecks:\n  - type: trajectory\n    max_steps: 3\n    max_redundancy: 0\n    optimal: [get_listings]\n    min_efficiency: 0.9\n",
        );
        let v = run_one(&c, vec![path(&[("get_listings", json!({}))])]);
        assert_eq!(v.status, Status::Pass, "{}", v.reason);
        assert_eq!(v.check, "trajectory steps<=3 redundancy<=0 efficiency>=0.9");
        assert_eq!(
            v.reason,
            "1 steps, redundancy 0.00, loopiness 0.00, efficiency 1.00"
        );

        let v = run_one(
            &c,
            vec![path(&[
                ("get_listings", json!({})),
                ("get_listings", json!({})),
            ])],
        );
        assert_eq!(v.status, Status::Fail);
        assert_eq!(
            v.reason,
            "redundancy 0.50 > 0, efficiency 0.50 < 0.9; 2 steps, redundancy 0.50, loopiness 0.00, efficiency 0.50"
        );
        assert_eq!(v.evidence.to_json()["trajectory_length"], json!(2));
    }

    #[test]
    fn thresholds_are_validated() {
        let e = compile_err("input: q\nchecks: [{type: trajectory}]\n");
        assert!(e.contains("give at least one threshold"), "{e}");
        let e = compile_err("input: q\nchecks: [{type: trajectory, min_efficiency: 0.5}]\n");
        assert!(
            e.contains("checks[0].min_efficiency: needs `optimal`"),
            "{e}"
        );
        let e = compile_err("input: q\nchecks: [{type: trajectory, max_loopiness: 2}]\n");
        assert!(
            e.contains("checks[0].max_loopiness: must be between 0 and 1"),
            "{e}"
        );
    }
}
