//! The one provider promptfoo and gavel both call in the parity test: an
//! OpenAI-compatible chat-completions and embeddings server whose answers are
//! derived from the request alone, so both tools see the same outputs.
//!
//! - An agent call gets `You said: <last user message> (<model>)`; a message
//!   asking for JSON gets a JSON object instead; the model `echo` gets the
//!   message itself. One message in three (by a hash of its text) gets
//!   [`UNSURE`] appended: the graders below fail exactly those answers.
//! - A grader call (promptfoo's rubric prompt, which asks for `{reason, pass,
//!   score}`, or gavel's judge, which sends a JSON Schema) passes unless the
//!   graded text holds [`UNSURE`]: promptfoo gets `{"reason", "pass", "score"}`,
//!   gavel the best (or worst) instance of its schema.
//! - A select-best call (promptfoo's `<Text index=…>` list, gavel's fenced
//!   `answer_N` list) picks the shortest answer, ties to the smaller text.
//! - Embeddings: words hashed into 64 dimensions.

use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};
use wiremock::{Request, Respond, ResponseTemplate};

/// What marks an answer the graders fail.
pub(crate) const UNSURE: &str = "I am not sure.";

/// The fake's responder, for every POST.
pub(crate) struct Fake;

impl Respond for Fake {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        let Ok(body) = serde_json::from_slice::<Value>(&request.body) else {
            return ResponseTemplate::new(400)
                .set_body_json(json!({"error": {"message": "body is not JSON"}}));
        };
        if request.url.path().ends_with("/embeddings") {
            return ResponseTemplate::new(200).set_body_json(embeddings(&body));
        }
        let content = answer(&body);
        // Usage from the messages' text, not their JSON: the same messages cost
        // the same whichever tool sent them.
        let prompt_tokens = all_text(&body).len() / 4 + 1;
        let completion_tokens = content.len() / 4 + 1;
        ResponseTemplate::new(200).set_body_json(json!({
            "id": "chatcmpl-fake",
            "object": "chat.completion",
            "created": 0,
            "model": body["model"],
            "choices": [{
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": "stop",
            }],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
        }))
    }
}

fn hash(text: &str) -> u64 {
    let digest = Sha256::digest(text.as_bytes());
    u64::from_le_bytes(digest[..8].try_into().unwrap_or_default())
}

/// Every message's text, joined.
fn all_text(body: &Value) -> String {
    body["messages"]
        .as_array()
        .map(|m| {
            m.iter()
                .map(|m| match &m["content"] {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                })
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default()
}

fn answer(body: &Value) -> String {
    let text = all_text(body);
    if let Some(schema) = body.pointer("/response_format/json_schema/schema") {
        if let Some(best) = gavel_select_best(&text) {
            return json!({"reasoning": "the shortest answer", "best": best}).to_string();
        }
        return instance(schema, !text.contains(UNSURE)).to_string();
    }
    if text.contains("<Text index=\"") {
        return promptfoo_select_best(&text).to_string();
    }
    if text.contains("pass: boolean") || text.contains("{pass:") {
        let pass = !text.contains(UNSURE);
        return json!({"reason": "fake grader", "pass": pass, "score": if pass { 1.0 } else { 0.0 }})
            .to_string();
    }
    agent(body)
}

fn agent(body: &Value) -> String {
    let message = body["messages"]
        .as_array()
        .and_then(|m| m.iter().rev().find(|m| m["role"] == "user"))
        .map(|m| match &m["content"] {
            Value::String(s) => s.trim().to_owned(),
            other => other.to_string(),
        })
        .unwrap_or_default();
    let model = body["model"].as_str().unwrap_or("model");
    if model == "echo" {
        return message;
    }
    if message.to_lowercase().contains("json") {
        return json!({"answer": message, "model": model}).to_string();
    }
    let mut out = format!("You said: {message} ({model})");
    if hash(&message).is_multiple_of(3) {
        out.push(' ');
        out.push_str(UNSURE);
    }
    out
}

/// The index (0-based) of the shortest `<Text index="i">…</Text>`.
fn promptfoo_select_best(text: &str) -> usize {
    let mut texts = Vec::new();
    for part in text.split("<Text index=\"").skip(1) {
        let Some((index, rest)) = part.split_once("\">") else {
            continue;
        };
        let body = rest.split("</Text>").next().unwrap_or_default().trim();
        if let Ok(i) = index.parse::<usize>() {
            texts.push((i, body.to_owned()));
        }
    }
    shortest(texts).unwrap_or(0)
}

/// gavel's select-best answers are fenced `<<<answer_N nonce>>> … <<<end
/// answer_N nonce>>>`; the 1-based number of the shortest.
fn gavel_select_best(text: &str) -> Option<usize> {
    let mut texts = Vec::new();
    for part in text.split("<<<answer_").skip(1) {
        let (number, rest) = part.split_once(' ')?;
        let body = rest.split_once(">>>")?.1;
        let end = format!("<<<end answer_{number}");
        let body = body.split(end.as_str()).next().unwrap_or_default().trim();
        texts.push((number.parse::<usize>().ok()?, body.to_owned()));
    }
    shortest(texts)
}

fn shortest(mut texts: Vec<(usize, String)>) -> Option<usize> {
    texts.sort_by(|a, b| a.1.len().cmp(&b.1.len()).then_with(|| a.1.cmp(&b.1)));
    texts.first().map(|(i, _)| *i)
}

/// The best (`good`) or worst instance of a judge's JSON Schema: enums their
/// first value (`ok`), numbers their maximum (or minimum), booleans `good`.
fn instance(schema: &Value, good: bool) -> Value {
    if let Some(first) = schema["enum"].as_array().and_then(|v| v.first()) {
        return first.clone();
    }
    let kind = match &schema["type"] {
        Value::Array(types) => types
            .iter()
            .find(|t| *t != "null")
            .cloned()
            .unwrap_or(Value::Null),
        other => other.clone(),
    };
    match kind.as_str() {
        Some("object") => {
            let mut out = Map::new();
            if let Some(props) = schema["properties"].as_object() {
                for (name, sub) in props {
                    out.insert(name.clone(), instance(sub, good));
                }
            }
            Value::Object(out)
        }
        Some("array") => json!([instance(&schema["items"], good)]),
        Some("integer" | "number") => {
            let bound = if good { "maximum" } else { "minimum" };
            schema[bound]
                .clone()
                .as_f64()
                .map_or(json!(if good { 1 } else { 0 }), |n| {
                    if kind == "integer" {
                        json!(n as i64)
                    } else {
                        json!(n)
                    }
                })
        }
        Some("boolean") => json!(good),
        _ => json!("fake judge"),
    }
}

/// Vectors of 64 dimensions, each word of the text hashed into one.
fn embeddings(body: &Value) -> Value {
    let inputs: Vec<String> = match &body["input"] {
        Value::Array(items) => items
            .iter()
            .map(|i| i.as_str().unwrap_or_default().to_owned())
            .collect(),
        Value::String(s) => vec![s.clone()],
        _ => Vec::new(),
    };
    let data: Vec<Value> = inputs
        .iter()
        .enumerate()
        .map(|(i, text)| {
            let mut v = vec![0.0f64; 64];
            for word in text
                .split(|c: char| !c.is_alphanumeric())
                .filter(|w| !w.is_empty())
            {
                v[(hash(&word.to_lowercase()) % 64) as usize] += 1.0;
            }
            let norm = v.iter().map(|x| x * x).sum::<f64>().sqrt().max(1e-9);
            let v: Vec<f64> = v.iter().map(|x| x / norm).collect();
            json!({"object": "embedding", "index": i, "embedding": v})
        })
        .collect();
    json!({"object": "list", "data": data, "model": body["model"], "usage": {"prompt_tokens": 1, "total_tokens": 1}})
}
