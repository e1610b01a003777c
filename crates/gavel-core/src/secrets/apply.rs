//! Redaction of gavel's own records: every text field they carry.

use super::{redact_in_place, redact_json};
use crate::workspace::WorkspaceState;
use crate::{CheckKind, Evidence, Execution, TargetFailure, ToolCall, Transcript, Turn, Verdict};

impl TargetFailure {
    /// Redacts registered secrets from the message.
    pub fn redact_secrets(&mut self) {
        redact_in_place(&mut self.message);
    }
}

impl ToolCall {
    /// Redacts registered secrets from the id, name, arguments and result.
    pub fn redact_secrets(&mut self) {
        if let Some(id) = &mut self.id {
            redact_in_place(id);
        }
        redact_in_place(&mut self.name);
        redact_json(&mut self.arguments);
        if let Some(result) = &mut self.result {
            redact_json(result);
        }
    }
}

impl Turn {
    /// Redacts registered secrets from the input, output, response, tool calls
    /// and failure: an agent echoing what gavel sent it is caught here.
    pub fn redact_secrets(&mut self) {
        redact_in_place(&mut self.input);
        redact_in_place(&mut self.output);
        if let Some(response) = &mut self.response {
            redact_json(response);
        }
        self.tool_calls
            .iter_mut()
            .for_each(ToolCall::redact_secrets);
        if let Some(failure) = &mut self.failure {
            failure.redact_secrets();
        }
        if let Some(workspace) = &mut self.workspace {
            workspace.redact_secrets();
        }
    }
}

impl WorkspaceState {
    /// Redacts registered secrets from the diff, the files and the commands'
    /// output: an agent may write a key it was given into a file.
    pub fn redact_secrets(&mut self) {
        redact_in_place(&mut self.diff);
        for file in &mut self.files {
            if let Some(text) = &mut file.text {
                redact_in_place(text);
            }
        }
        for command in &mut self.commands {
            redact_in_place(&mut command.command);
            redact_in_place(&mut command.output);
            if let Some(problem) = &mut command.problem {
                redact_in_place(problem);
            }
        }
    }
}

impl Transcript {
    /// Redacts registered secrets from every turn.
    pub fn redact_secrets(&mut self) {
        self.turns.iter_mut().for_each(Turn::redact_secrets);
    }
}

impl Verdict {
    /// Redacts registered secrets from the check name, reason and evidence.
    pub fn redact_secrets(&mut self) {
        redact_in_place(&mut self.check);
        redact_in_place(&mut self.reason);
        self.evidence.redact_secrets(self.kind);
    }
}

impl Evidence {
    /// Redacts registered secrets from every string the evidence holds, typed
    /// parts included (read back as a verdict of `kind`).
    pub fn redact_secrets(&mut self, kind: CheckKind) {
        if super::process().is_empty() {
            return;
        }
        let Ok(mut json) = serde_json::to_value(&*self) else {
            return;
        };
        redact_json(&mut json);
        *self = Evidence::read(kind, json);
    }
}

impl Execution {
    /// Redacts registered secrets from the transcript, verdicts and reason.
    pub fn redact_secrets(&mut self) {
        self.transcript.redact_secrets();
        self.verdicts.iter_mut().for_each(Verdict::redact_secrets);
        if let Some(reason) = &mut self.reason {
            redact_in_place(reason);
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::{CheckKind, Execution, Status, TargetFailure, ToolCall, Turn, Verdict};

    #[test]
    fn every_text_of_an_execution_is_redacted() {
        super::super::register("apply-canary-99");
        let c = "apply-canary-99";
        let mut execution = Execution {
            case_id: "c".into(),
            case_name: "c".into(),
            target: "t".into(),
            repeat_index: 0,
            tags: vec![],
            status: Status::Error,
            score: None,
            transcript: crate::Transcript {
                session_id: "s".into(),
                turns: vec![Turn {
                    input: c.into(),
                    output: format!("echo {c}"),
                    response: Some(json!({"headers": {"authorization": c}})),
                    tool_calls: vec![ToolCall {
                        name: "t".into(),
                        arguments: json!({"k": c}),
                        result: Some(json!([c])),
                        ..Default::default()
                    }],
                    failure: Some(TargetFailure {
                        message: format!("HTTP 500: {c}"),
                        transient: true,
                    }),
                    ..Turn::default()
                }],
            },
            verdicts: vec![
                Verdict::new(
                    "v",
                    CheckKind::Judge,
                    Status::Error,
                    format!("judge said {c}"),
                )
                .with_evidence(json!({"model": c})),
            ],
            reason: Some(c.into()),
            started_at: String::new(),
            duration_ms: 0,
        };
        execution.redact_secrets();
        let text = serde_json::to_string(&execution).unwrap();
        assert!(!text.contains(c), "{text}");
        assert_eq!(text.matches("[redacted]").count(), 9, "{text}");
    }
}
