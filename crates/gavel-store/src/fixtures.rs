//! Sample runs and executions for the store's unit tests.

use gavel_core::{Execution, RunRecord, RunStatus, Status, ToolCall, Transcript, Turn, Verdict};
use serde_json::json;

/// A running run of suite `suite`, with a fixed id.
pub(crate) fn run(suite: &str) -> RunRecord {
    RunRecord {
        id: "019a0000-0000-7000-8000-00000000d1ec".to_owned(),
        suite: suite.to_owned(),
        status: RunStatus::Running,
        started_at: "2026-11-24T00:00:00Z".to_owned(),
        finished_at: None,
        config: json!({}),
        planned: None,
    }
}

/// A passed execution of case `case` with one turn, one tool call and one verdict.
pub(crate) fn execution(case: &str) -> Execution {
    Execution {
        case_id: case.to_owned(),
        case_name: format!("case {case}"),
        target: "agent".to_owned(),
        repeat_index: 0,
        tags: vec!["smoke".to_owned()],
        status: Status::Pass,
        score: Some(0.75),
        transcript: Transcript {
            session_id: format!("session-{case}"),
            turns: vec![Turn {
                round: 0,
                input: "hi".to_owned(),
                output: "hello".to_owned(),
                response: Some(json!({"answer": "hello"})),
                tool_calls: vec![ToolCall {
                    name: "lookup".to_owned(),
                    arguments: json!({"q": case}),
                    result: Some(json!([1, 2])),
                    ..Default::default()
                }],
                model_calls: Vec::new(),
                latency_ms: 12,
                usage: None,
                failure: None,
                followup: false,
                branch: None,
                stream: None,
                harness_usage: None,
                attempts: None,
                agent: None,
                workspace: None,
            }],
        },
        verdicts: vec![
            Verdict::new(
                "contains",
                gavel_core::CheckKind::Contains,
                Status::Pass,
                "found",
            )
            .with_score(1.0, Some(0.5))
            .with_evidence(json!({"found": ["hello"]})),
        ],
        reason: None,
        started_at: "2026-11-24T00:00:01Z".to_owned(),
        duration_ms: 30,
    }
}
