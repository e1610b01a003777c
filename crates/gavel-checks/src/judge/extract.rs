//! Extracting the number an answer claims, for a `grounding` check with
//! `claim: {judge: …}`: the judge answers `{reasoning, found, value}` through
//! [`ask`], so the model layers, schema validation and re-asking apply as to any
//! judge.

use gavel_core::{Evidence, Verdict};
use serde_json::{Map, Value, json};

use super::{Material, Question, ask};

use crate::finding::VerdictHead;

use crate::runtime::JudgeRuntime;

use crate::subject::Judged;

/// An accepted extraction.
#[derive(Debug, Clone)]
pub(crate) struct Extracted {
    /// The claimed number; `None` when the answer states none.
    pub(crate) value: Option<f64>,
    /// Why, in the judge's words.
    pub(crate) reasoning: String,
    /// The call record, for the verdict's evidence: the quantity asked for, the
    /// answer, model, tokens, raw answer, template hash…
    pub(crate) evidence: Map<String, Value>,
    pub(crate) cost_usd: Option<f64>,
}

/// Asks the judge which number the judged answer claims for `material.criteria`
/// (the quantity). Without a usable answer, the `skipped` or `error` verdict under
/// `head`, its evidence `base` plus the call record.
pub(crate) async fn extract(
    material: &Material,
    head: VerdictHead<'_>,
    judged: &Judged<'_>,
    base: Evidence,
    rt: &JudgeRuntime<'_>,
) -> Result<Extracted, Box<Verdict>> {
    let template = &material.template;
    let mut record = Map::new();
    record.insert("quantity".into(), json!(material.criteria));
    record.insert("extracted_by".into(), json!("judge"));
    let prompt = head.render(template, material.vars(judged), &base, 0.0)?;
    let question = Question {
        top_logprobs: None,
        model: material.model.as_deref(),
        template,
        prompt,
        schema_name: "claim",
        schema: schema(),
    };
    let (result, calls) = ask(rt, question, interpret).await;
    match result {
        Err(failure) => {
            let mut evidence = base;
            evidence.detail.extend(record);
            Err(Box::new(failure.verdict(head, template, &calls, evidence)))
        }
        Ok((reasoning, value)) => {
            record.insert("found".into(), json!(value.is_some()));
            record.insert("reasoning".into(), json!(reasoning));
            calls.record(template, &mut record);
            Ok(Extracted {
                value,
                reasoning,
                evidence: record,
                cost_usd: calls.cost_usd,
            })
        }
    }
}

/// `{"reasoning", "found", "value"}`; `value` a number, or null when not found.
fn schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "reasoning": { "type": "string" },
            "found": { "type": "boolean" },
            "value": {
                "type": ["number", "null"],
                "description": "the claimed number as a plain JSON number; null when found is false",
            },
        },
        "required": ["reasoning", "found", "value"],
        "additionalProperties": false,
    })
}

/// The reasoning and the value of a schema-valid answer: `found` needs a finite
/// number.
fn interpret(value: &Value) -> Result<(String, Option<f64>), String> {
    let reasoning = value["reasoning"]
        .as_str()
        .unwrap_or_default()
        .trim()
        .to_owned();
    if value["found"] != Value::Bool(true) {
        return Ok((reasoning, None));
    }
    match value["value"].as_f64() {
        Some(v) if v.is_finite() => Ok((reasoning, Some(v))),
        _ => Err("found is true but value is not a number".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::interpret;
    use serde_json::json;

    #[test]
    fn found_needs_a_number_and_not_found_ignores_the_value() {
        let got = interpret(&json!({"reasoning": " r ", "found": true, "value": 4680.5}));
        assert_eq!(got, Ok(("r".into(), Some(4680.5))));
        let got = interpret(&json!({"reasoning": "", "found": false, "value": 3}));
        assert_eq!(got, Ok((String::new(), None)));
        assert!(interpret(&json!({"reasoning": "", "found": true, "value": null})).is_err());
    }
}
