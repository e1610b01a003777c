//! Token log probabilities: asked for on the OpenAI Chat Completions wire
//! (`logprobs: true, top_logprobs: N`) and read from its answer
//! (`choices[0].logprobs.content`).

use serde_json::{Value, json};

use crate::{Provider, TokenLogprob, TopLogprob};

/// Alternatives per position OpenAI accepts at most.
const MAX_TOP: u8 = 20;

/// The request fields asking for `top` alternatives per token, when `model` of
/// `provider` returns log probabilities: OpenAI-compatible servers and OpenAI's
/// non-reasoning models (its reasoning models, the ones that take
/// `max_completion_tokens`, refuse them).
pub(super) fn request(provider: Provider, model: &str, top: u8) -> Option<Value> {
    let reasoning = ["gpt-5", "gpt-6", "o1", "o3", "o4"]
        .iter()
        .any(|prefix| model.starts_with(prefix));
    let returns = match provider {
        Provider::OpenAiCompatible => true,
        Provider::OpenAi => !reasoning,
        Provider::Anthropic | Provider::Gemini | Provider::Local => false,
    };
    returns.then(|| json!({ "logprobs": true, "top_logprobs": top.clamp(1, MAX_TOP) }))
}

/// The answer tokens' log probabilities in an OpenAI answer body; empty when it
/// holds none or they are not in the documented shape.
pub(super) fn read(raw: &Value) -> Vec<TokenLogprob> {
    let Some(content) = raw
        .pointer("/choices/0/logprobs/content")
        .and_then(Value::as_array)
    else {
        return Vec::new();
    };
    content
        .iter()
        .map(|t| {
            let top = t
                .get("top_logprobs")
                .and_then(Value::as_array)
                .map(|alts| alts.iter().filter_map(top_logprob).collect())
                .unwrap_or_default();
            let TopLogprob { token, logprob } = top_logprob(t)?;
            Some(TokenLogprob {
                token,
                logprob,
                top,
            })
        })
        .collect::<Option<Vec<_>>>()
        .unwrap_or_default()
}

fn top_logprob(v: &Value) -> Option<TopLogprob> {
    Some(TopLogprob {
        token: v.get("token")?.as_str()?.to_owned(),
        logprob: v.get("logprob")?.as_f64()?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn asked_only_where_returned() {
        assert!(request(Provider::OpenAiCompatible, "llama3", 5).is_some());
        assert_eq!(
            request(Provider::OpenAi, "gpt-4o-mini", 50),
            Some(json!({"logprobs": true, "top_logprobs": 20}))
        );
        assert!(request(Provider::OpenAi, "gpt-5-mini", 5).is_none());
        assert!(request(Provider::OpenAi, "o3", 5).is_none());
        assert!(request(Provider::Anthropic, "claude", 5).is_none());
    }

    #[test]
    fn reads_the_documented_shape_and_nothing_else() {
        let raw = json!({"choices": [{"logprobs": {"content": [
            {"token": "4", "logprob": -0.1, "bytes": [52], "top_logprobs": [
                {"token": "4", "logprob": -0.1}, {"token": "5", "logprob": -2.5}
            ]},
            {"token": "}", "logprob": 0.0}
        ]}}]});
        let read = read(&raw);
        assert_eq!(read.len(), 2);
        assert_eq!(
            read[0].top[1],
            TopLogprob {
                token: "5".into(),
                logprob: -2.5
            }
        );
        assert!(read[1].top.is_empty());
        assert!(super::read(&json!({"choices": [{"logprobs": null}]})).is_empty());
        assert!(
            super::read(&json!({"choices": [{"logprobs": {"content": [{"token": 1}]}}]}))
                .is_empty()
        );
    }
}
