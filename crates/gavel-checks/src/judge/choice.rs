//! Choice questions about the judged turn: the judge model picks one option,
//! several, or writes a short text. The `reactive` router and `dag` nodes ask
//! them; every call goes through [`ask`], so the model layers, schema validation
//! and re-asking apply as to any judge.

use gavel_core::{Evidence, Verdict};
use serde_json::{Map, Value, json};

use super::{Material, Question, ask};

use crate::finding::VerdictHead;

use crate::runtime::JudgeRuntime;

use crate::subject::Judged;

/// How the question is answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    /// Exactly one option.
    One,
    /// One or more options.
    Many,
    /// A short text.
    Text,
}

impl Mode {
    fn as_str(self) -> &'static str {
        match self {
            Mode::One => "one",
            Mode::Many => "many",
            Mode::Text => "text",
        }
    }

    fn schema(self, names: &[&str]) -> Value {
        let answer = match self {
            Mode::One => json!({ "type": "string", "enum": names }),
            Mode::Many => json!({
                "type": "array",
                "items": { "type": "string", "enum": names },
                "minItems": 1,
            }),
            Mode::Text => json!({ "type": "string" }),
        };
        json!({
            "type": "object",
            "properties": { "reasoning": { "type": "string" }, "answer": answer },
            "required": ["reasoning", "answer"],
            "additionalProperties": false,
        })
    }
}

/// An option: its name and what it means (empty: the name says it).
#[derive(Debug, Clone)]
pub(crate) struct Choice {
    pub(crate) name: String,
    pub(crate) description: String,
}

/// An accepted answer.
#[derive(Debug, Clone)]
pub(crate) struct Chosen {
    /// The options picked (one for [`Mode::One`]), or the text written.
    pub(crate) answer: Vec<String>,
    /// The call record: question, answer, reasoning, model, tokens, cost…
    pub(crate) evidence: Map<String, Value>,
    pub(crate) cost_usd: Option<f64>,
}

/// Asks `material.criteria` (the question) about the judged turn with the choice
/// template. Without a usable answer, the `skipped` or `error` verdict under
/// `head`, its evidence the call record.
pub(crate) async fn choose(
    material: &Material,
    mode: Mode,
    options: &[Choice],
    notes: &str,
    head: VerdictHead<'_>,
    judged: &Judged<'_>,
    rt: &JudgeRuntime<'_>,
) -> Result<Chosen, Box<Verdict>> {
    let template = &material.template;
    let mut evidence = Evidence::default();
    let detail = &mut evidence.detail;
    detail.insert("question".into(), json!(material.criteria));
    detail.insert("mode".into(), json!(mode.as_str()));
    if !options.is_empty() {
        let names: Vec<&str> = options.iter().map(|o| o.name.as_str()).collect();
        detail.insert("options".into(), json!(names));
    }
    let mut vars = material.vars(judged);
    vars.insert("mode".into(), json!(mode.as_str()));
    vars.insert(
        "options".into(),
        options
            .iter()
            .map(|o| {
                json!({
                    "name": super::prompt::neutralise(&o.name),
                    "description": super::prompt::neutralise(&o.description),
                })
            })
            .collect::<Vec<_>>()
            .into(),
    );
    vars.insert(
        "notes".into(),
        if notes.is_empty() {
            Value::Null
        } else {
            json!(super::prompt::neutralise(notes))
        },
    );
    let prompt = head
        .render(template, vars, &evidence, 0.0)
        .map_err(|mut v| {
            v.threshold = None;
            v
        })?;
    let names: Vec<&str> = options.iter().map(|o| o.name.as_str()).collect();
    let question = Question {
        top_logprobs: None,
        model: material.model.as_deref(),
        template,
        prompt,
        schema_name: "choice",
        schema: mode.schema(&names),
    };
    let (result, calls) = ask(rt, question, |v| interpret(v, mode)).await;
    match result {
        Err(failure) => Err(Box::new(failure.verdict(head, template, &calls, evidence))),
        Ok((reasoning, answer)) => {
            let mut record = evidence.detail;
            record.insert("answer".into(), json!(answer));
            record.insert("reasoning".into(), json!(reasoning));
            calls.record(template, &mut record);
            Ok(Chosen {
                answer,
                evidence: record,
                cost_usd: calls.cost_usd,
            })
        }
    }
}

/// The reasoning and the answer of a schema-valid answer; a text must not be
/// empty, and picks are kept once each.
fn interpret(value: &Value, mode: Mode) -> Result<(String, Vec<String>), String> {
    let reasoning = value["reasoning"].as_str().unwrap_or_default().trim();
    let answer: Vec<String> = match &value["answer"] {
        Value::String(s) => vec![s.trim().to_owned()],
        Value::Array(items) => {
            let mut picked: Vec<String> = Vec::new();
            for item in items.iter().filter_map(Value::as_str) {
                if !picked.iter().any(|p| p == item) {
                    picked.push(item.to_owned());
                }
            }
            picked
        }
        _ => Vec::new(),
    };
    if answer.iter().all(|a| a.is_empty()) {
        return Err(match mode {
            Mode::Text => "the answer text is empty".into(),
            Mode::One | Mode::Many => "no option was picked".into(),
        });
    }
    Ok((reasoning.to_owned(), answer))
}

#[cfg(test)]
mod tests {
    use super::{Mode, interpret};
    use serde_json::json;

    #[test]
    fn answers_are_read_and_empty_ones_refused() {
        let (why, picked) = interpret(
            &json!({"reasoning": " r ", "answer": ["a", "b", "a"]}),
            Mode::Many,
        )
        .unwrap_or_default();
        assert_eq!((why.as_str(), picked), ("r", vec!["a".into(), "b".into()]));
        assert!(interpret(&json!({"reasoning": "", "answer": "  "}), Mode::Text).is_err());
        assert!(interpret(&json!({"reasoning": "", "answer": []}), Mode::Many).is_err());
        let schema = Mode::One.schema(&["yes", "no"]);
        assert_eq!(schema["properties"]["answer"]["enum"], json!(["yes", "no"]));
    }
}
