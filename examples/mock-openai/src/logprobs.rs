//! Token log probabilities for `…logprobs…` models asked for them
//! (`logprobs: true`): the answer split into tokens (each digit a token of its
//! own, the text between digits one token), every token certain except a digit
//! 1-5, which comes with `top_logprobs` of 0.7 for itself, 0.2 for the digit
//! below it and 0.1 for the one below that (those in 1-5).

use serde_json::{Value, json};

/// The `logprobs` object of a choice, when the request asks for it from a
/// `…logprobs…` model.
pub(crate) fn of(request: &Value, content: &str) -> Option<Value> {
    let model = request["model"].as_str()?;
    if !model.contains("logprobs") || request["logprobs"] != true {
        return None;
    }
    let content: Vec<Value> = tokens(content).into_iter().map(token).collect();
    Some(json!({ "content": content }))
}

/// Digits alone, the text between them as one token.
fn tokens(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    for (i, c) in text.char_indices() {
        if c.is_ascii_digit() {
            if start < i {
                out.push(&text[start..i]);
            }
            out.push(&text[i..i + 1]);
            start = i + 1;
        }
    }
    if start < text.len() {
        out.push(&text[start..]);
    }
    out
}

fn token(text: &str) -> Value {
    let digit = text.parse::<u8>().ok().filter(|d| (1..=5).contains(d));
    let Some(d) = digit else {
        return json!({ "token": text, "logprob": 0.0, "top_logprobs": [] });
    };
    let top: Vec<Value> = [
        (d, 0.7_f64),
        (d.wrapping_sub(1), 0.2),
        (d.wrapping_sub(2), 0.1),
    ]
    .into_iter()
    .filter(|(s, _)| (1..=5).contains(s))
    .map(|(s, p)| json!({ "token": s.to_string(), "logprob": p.ln() }))
    .collect();
    json!({ "token": text, "logprob": 0.7_f64.ln(), "top_logprobs": top })
}
