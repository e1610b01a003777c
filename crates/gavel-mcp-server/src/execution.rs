//! `get_execution`: one execution in full (transcript, tool calls, verdicts),
//! with the agent fields of seed 003: `stepScores`, `toolVerifications` and
//! `trajectoryLength`, read from the step-score, tool-verification and
//! trajectory verdicts' evidence.

use gavel_core::{Execution, Verdict};
use gavel_store::Store;
use serde::Serialize;

use crate::args::GetExecutionArgs;
use crate::{ToolError, runs};

/// An execution with its agent-evaluation fields.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ExecutionOut {
    /// The run id.
    pub run: String,
    /// The execution: transcript (turns with their tool calls), verdicts, status.
    pub execution: Execution,
    /// Per-step scores of the step-score checks.
    pub step_scores: Vec<StepScore>,
    /// Tool-call verifications of the tool-verification checks.
    pub tool_verifications: Vec<ToolVerification>,
    /// Steps in the agent's trajectory: the trajectory check's count, else the
    /// number of tool calls.
    pub trajectory_length: usize,
}

/// One scored step.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StepScore {
    /// The check that scored it.
    pub check: String,
    /// The step number (1-based).
    pub step: usize,
    /// The score, 0..=1 (absent when the judge could not score it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub score: Option<f64>,
    /// The judge's explanation.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub explanation: Option<String>,
    /// The tool call the step is, when it is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
}

/// One expected tool call, verified.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolVerification {
    /// The check that verified it.
    pub check: String,
    /// The tool actually called (absent when none matched).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_name: Option<String>,
    /// The tool expected.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expected_tool: Option<String>,
    /// Whether the right tool was called.
    pub tool_correct: bool,
    /// Whether its arguments were right.
    pub args_correct: bool,
    /// Whether its result was right, when the check looked at results.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result_correct: Option<bool>,
    /// The call's score, 0..=1.
    pub score: f64,
}

/// Answers `get_execution`.
pub async fn get_execution(
    store: &Store,
    args: GetExecutionArgs,
) -> Result<ExecutionOut, ToolError> {
    let run = runs::find(store, "run", &args.run).await?;
    let of_case: Vec<Execution> = store
        .executions(&run.id)
        .await?
        .into_iter()
        .filter(|e| e.case_id == args.case && e.repeat_index == args.repeat)
        .collect();
    let targets = || {
        of_case
            .iter()
            .map(|e| e.target.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let execution = match &args.target {
        Some(target) => of_case.iter().find(|e| &e.target == target).ok_or_else(|| {
            ToolError::field(
                "target",
                format!(
                    "case `{}` repeat {} of run {} has no execution against `{target}` (targets: {})",
                    args.case,
                    args.repeat,
                    run.id,
                    targets()
                ),
            )
        })?,
        None => match of_case.as_slice() {
            [one] => one,
            [] => {
                return Err(ToolError::field(
                    "case",
                    format!(
                        "run {} has no execution of case `{}` repeat {}",
                        run.id, args.case, args.repeat
                    ),
                ));
            }
            _ => {
                return Err(ToolError::field(
                    "target",
                    format!("case `{}` ran against {}: name one", args.case, targets()),
                ));
            }
        },
    };
    Ok(of(run.id, execution.clone()))
}

/// The execution with its agent fields drawn from its verdicts.
fn of(run: String, execution: Execution) -> ExecutionOut {
    let mut step_scores = Vec::new();
    let mut tool_verifications = Vec::new();
    let mut trajectory = None;
    for v in &execution.verdicts {
        step_scores.extend(steps(v));
        tool_verifications.extend(verifications(v));
        trajectory = trajectory.or(v.evidence.trajectory_length());
    }
    let calls = execution
        .transcript
        .turns
        .iter()
        .map(|t| t.tool_calls.len())
        .sum();
    ExecutionOut {
        run,
        trajectory_length: trajectory.unwrap_or(calls),
        execution,
        step_scores,
        tool_verifications,
    }
}

fn steps(v: &Verdict) -> impl Iterator<Item = StepScore> + '_ {
    v.evidence.steps().iter().map(|s| StepScore {
        check: v.check.clone(),
        step: s.step,
        score: s.score,
        explanation: s.explanation.clone(),
        tool: s.tool.clone(),
    })
}

fn verifications(v: &Verdict) -> Vec<ToolVerification> {
    let Some(graded) = v.evidence.tools() else {
        return Vec::new();
    };
    graded
        .calls
        .iter()
        .map(|c| ToolVerification {
            check: v.check.clone(),
            tool_name: c.call_index.and_then(|i| graded.called.get(i)).cloned(),
            expected_tool: Some(c.expected.clone()),
            tool_correct: c.tool_correct,
            args_correct: c.args_correct,
            result_correct: c.result_correct,
            score: c.score,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use gavel_core::{Status, Verdict};
    use serde_json::json;

    use super::*;

    #[test]
    fn agent_fields_come_from_the_verdicts() {
        let mut e: Execution = serde_json::from_value(json!({
            "case_id": "c", "case_name": "c", "target": "t", "repeat_index": 0,
            "tags": [], "status": "pass", "started_at": "2026-11-24T00:00:00.000Z",
            "duration_ms": 1,
            "transcript": {"session_id": "s", "turns": []},
            "verdicts": []
        }))
        .unwrap();
        e.verdicts = vec![
            Verdict::new(
                "steps",
                gavel_core::CheckKind::StepScore,
                Status::Pass,
                "ok",
            )
            .with_evidence(json!({
                "steps": [{"step": 1, "round": 0, "score": 0.5, "explanation": "fine", "tool": "search"}]
            })),
            Verdict::new(
                "tools",
                gavel_core::CheckKind::ToolVerification,
                Status::Fail,
                "no",
            )
            .with_evidence(json!({
                "called": ["search", "book"],
                "calls": [
                    {"expected": "book", "call_index": 1, "tool_correct": true,
                     "args_correct": false, "result_correct": null, "score": 0.4},
                    {"expected": "pay", "call_index": null, "tool_correct": false,
                     "args_correct": false, "score": 0.0}
                ]
            })),
            Verdict::new(
                "path",
                gavel_core::CheckKind::Trajectory,
                Status::Pass,
                "ok",
            )
            .with_evidence(json!({"trajectory_length": 2})),
        ];
        let out = of("r".into(), e);
        assert_eq!(out.step_scores.len(), 1);
        assert_eq!(out.step_scores[0].score, Some(0.5));
        assert_eq!(out.tool_verifications[0].tool_name.as_deref(), Some("book"));
        assert!(!out.tool_verifications[0].args_correct);
        assert_eq!(out.tool_verifications[1].tool_name, None);
        assert_eq!(out.trajectory_length, 2);
        let shown = serde_json::to_value(&out).unwrap();
        assert!(shown["stepScores"].is_array() && shown["toolVerifications"].is_array());
    }
}
