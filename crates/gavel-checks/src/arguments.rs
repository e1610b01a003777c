//! `argument-validity`: every tool call's arguments against the JSON Schema of
//! its tool (DeepEval's argument correctness, computed without a judge).
//!
//! The score is the share of checked calls whose arguments are valid; calls of
//! tools the check has no schema for are listed, not checked. No checked call →
//! `skipped`.

use std::collections::BTreeMap;

use gavel_core::agent_check::ArgumentValiditySpec;
use gavel_core::{CheckKind, Status};
use serde_json::json;

use crate::check::CodeCheck;
use crate::compiled::Schema;
use crate::error::{FieldError, share_threshold};
use crate::finding::Finding;
use crate::names::truncate;
use crate::subject::Subject;

/// Characters of one schema violation kept in the reason and evidence.
const MESSAGE_CHARS: usize = 200;

/// A compiled argument-validity check.
pub(crate) struct ArgumentsCheck {
    validators: BTreeMap<String, Schema>,
    threshold: f64,
}

impl ArgumentsCheck {
    /// Compiles each tool's schema; errors name `schemas.<tool>`.
    pub(crate) fn compile(spec: &ArgumentValiditySpec) -> Result<Self, FieldError> {
        if spec.schemas.is_empty() {
            return Err(FieldError::new(
                "schemas",
                "give the JSON Schema of at least one tool's arguments",
            ));
        }
        let validators = spec
            .schemas
            .iter()
            .map(|(tool, schema)| {
                crate::compiled::schema(schema)
                    .map(|v| (tool.clone(), v))
                    .map_err(|e| FieldError::new(format!("schemas.{tool}"), e))
            })
            .collect::<Result<_, _>>()?;
        Ok(ArgumentsCheck {
            validators,
            threshold: share_threshold(spec.threshold, 1.0)?,
        })
    }
}

impl CodeCheck for ArgumentsCheck {
    fn name(&self) -> String {
        "argument-validity".to_owned()
    }

    fn kind(&self) -> CheckKind {
        CheckKind::ArgumentValidity
    }

    fn evaluate(&self, subject: &Subject<'_>) -> Finding {
        let mut checked = Vec::new();
        let mut unchecked = Vec::new();
        let mut invalid = Vec::new();
        for call in subject.turns.iter().flat_map(|t| &t.tool_calls) {
            let Some(validator) = self.validators.get(&call.name) else {
                unchecked.push(call.name.clone());
                continue;
            };
            let errors: Vec<String> = validator
                .violations(&call.arguments)
                .map(|v| {
                    let at = if v.path.is_empty() { "/" } else { &v.path };
                    truncate(&format!("{at}: {}", v.message), MESSAGE_CHARS)
                })
                .collect();
            if !errors.is_empty() {
                invalid.push(format!("{}: {}", call.name, errors.join("; ")));
            }
            checked
                .push(json!({ "tool": call.name, "valid": errors.is_empty(), "errors": errors }));
        }
        let evidence = json!({
            "calls": checked,
            "unchecked_tools": unchecked,
            "threshold": self.threshold,
        });
        if checked.is_empty() {
            return Finding {
                score: None,
                status: Status::Skipped,
                reason: "no call of a tool the check has a schema for".into(),
                evidence,
            };
        }
        let valid = checked.len() - invalid.len();
        let score = valid as f64 / checked.len() as f64;
        let mut reason = format!("{valid} of {} calls with valid arguments", checked.len());
        if !invalid.is_empty() {
            reason.push_str("; invalid: ");
            reason.push_str(&invalid.join("; "));
        }
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

    const CHECK: &str = "input: q\nchecks:\n  - type: argument-validity\n    schemas:\n      refund: {type: object, required: [order], properties: {order: {type: string}, amount: {type: number, minimum: 0}}}\n";

    fn calling(calls: &[(&str, serde_json::Value)]) -> Turn {
        let mut t = turn(0, "done");
        t.tool_calls = calls
            .iter()
            .map(|(name, arguments)| ToolCall {
                name: (*name).to_owned(),
                arguments: arguments.clone(),
                result: None,
                ..Default::default()
            })
            .collect();
        t
    }

    #[test]
    fn valid_arguments_pass_and_invalid_ones_fail_naming_the_violation() {
        let c = case(CHECK);
        let v = run_one(
            &c,
            vec![calling(&[
                ("refund", json!({"order": "A1", "amount": 5})),
                ("lookup", json!("anything")),
            ])],
        );
        assert_eq!(
            (v.status, v.score),
            (Status::Pass, Some(1.0)),
            "{}",
            v.reason
        );
        assert_eq!(v.evidence.to_json()["unchecked_tools"], json!(["lookup"]));

        let v = run_one(
            &c,
            vec![calling(&[
                ("refund", json!({"order": "A1"})),
                ("refund", json!({"amount": -1})),
            ])],
        );
        assert_eq!((v.status, v.score), (Status::Fail, Some(0.5)));
        assert!(
            v.reason
                .starts_with("1 of 2 calls with valid arguments; invalid: refund: "),
            "{}",
            v.reason
        );
        assert!(
            v.reason.contains("\"order\" is a required property"),
            "{}",
            v.reason
        );
        assert!(v.reason.contains("/amount"), "{}", v.reason);
    }

    #[test]
    fn no_checked_call_or_a_broken_turn_skips() {
        let c = case(CHECK);
        let v = run_one(&c, vec![calling(&[("lookup", json!({}))])]);
        assert_eq!(v.status, Status::Skipped);
        assert_eq!(v.reason, "no call of a tool the check has a schema for");
        let mut broken = calling(&[("refund", json!({}))]);
        broken.failure = Some(TargetFailure {
            message: "HTTP 502".into(),
            transient: true,
        });
        let v = run_one(&c, vec![broken]);
        assert_eq!(v.status, Status::Skipped, "{}", v.reason);
    }

    #[test]
    fn bad_schemas_and_thresholds_are_errors_naming_the_field() {
        let e = compile_err(
            "input: q\nchecks: [{type: argument-validity, schemas: {refund: {type: 3}}}]\n",
        );
        assert!(
            e.contains("checks[0].schemas.refund: invalid JSON Schema"),
            "{e}"
        );
        let e = compile_err("input: q\nchecks: [{type: argument-validity, schemas: {}}]\n");
        assert!(e.contains("checks[0].schemas: give the JSON Schema"), "{e}");
        let e = compile_err(
            "input: q\nchecks: [{type: argument-validity, schemas: {a: {}}, threshold: 2}]\n",
        );
        assert!(
            e.contains("checks[0].threshold: threshold 2 is outside"),
            "{e}"
        );
    }
}
