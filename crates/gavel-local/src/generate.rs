//! One generation on loaded weights, blocking: prompt, decode, constrained
//! sampling until the end of the answer or the token cap.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use gavel_models::ChatRequest;
use llama_cpp_2::context::params::LlamaContextParams;
use llama_cpp_2::llama_batch::LlamaBatch;
use llama_cpp_2::sampling::LlamaSampler;
use llguidance::Matcher;
use llguidance::api::TopLevelGrammar;

use crate::options::LocalOptions;
use crate::weights::{Weights, backend};

/// Answer length cap when neither the id nor the request sets one.
const DEFAULT_MAX_TOKENS: u32 = 1024;
/// Prompt tokens decoded per llama.cpp batch.
const BATCH: u32 = 512;
/// At most this many last tokens of the budget close a constrained answer.
const CLOSING_TOKENS: u32 = 24;
/// Added to the logits of closing tokens there: enough to win over any
/// continuation the model prefers.
const CLOSING_BIAS: f32 = 30.0;

/// What one generation produced and how long each phase took.
#[derive(Debug, Clone)]
pub(crate) struct Generation {
    pub(crate) text: String,
    pub(crate) prompt_tokens: u32,
    pub(crate) output_tokens: u32,
    /// `stop` (the model ended its answer) or `length` (the cap).
    pub(crate) finish_reason: &'static str,
    pub(crate) prompt_time: Duration,
    pub(crate) generate_time: Duration,
}

/// Runs `request` on `weights`, stopping early (with an error) once `cancel` is
/// set. Blocks: call it off the async runtime.
pub(crate) fn generate(
    weights: &Weights,
    options: &LocalOptions,
    request: &ChatRequest,
    cancel: &AtomicBool,
) -> Result<Generation, String> {
    let (prompt, trusted_markup) = match &weights.template {
        Some(template) => (
            crate::prompt::with_template(&weights.model, template, request)?,
            true,
        ),
        None => (crate::prompt::plain(request)?, false),
    };
    let max_tokens = options
        .max_tokens
        .or(request.max_tokens)
        .unwrap_or(DEFAULT_MAX_TOKENS);
    let temperature = options
        .temperature
        .or(request.temperature.map(|t| t as f32))
        .unwrap_or(0.0);
    let mut grammar = grammar(weights, request)?;
    let mut pick = picker(temperature, options.seed);

    let _one_at_a_time = weights
        .busy
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    let threads = options.thread_count();
    let ctx_len = options.ctx.get();
    let params = LlamaContextParams::default()
        .with_n_ctx(Some(options.ctx))
        .with_n_batch(BATCH.min(ctx_len))
        .with_n_ubatch(BATCH.min(ctx_len))
        .with_n_threads(threads)
        .with_n_threads_batch(threads);
    let mut ctx = weights
        .model
        .new_context(backend()?, params)
        .map_err(|e| format!("cannot make a llama.cpp context of {ctx_len} tokens: {e}"))?;

    // The template's own markup (turn markers) must read as control tokens; the
    // plain transcript of a base model has none, so no text in it can pose as one.
    let vocab = weights.model.vocab();
    let tokens = vocab.tokenize(prompt.as_bytes(), true, trusted_markup);
    let prompt_len = u32::try_from(tokens.len()).unwrap_or(u32::MAX);
    if prompt_len >= ctx_len {
        return Err(format!(
            "the prompt is {prompt_len} tokens, more than the context of {ctx_len}: raise it with `?ctx=` in the local: model id"
        ));
    }
    let max_tokens = max_tokens.min(ctx_len - prompt_len);

    let started = Instant::now();
    let mut batch = LlamaBatch::new(BATCH.min(ctx_len) as usize, 1);
    let mut pos: i32 = 0;
    for chunk in tokens.chunks(BATCH.min(ctx_len) as usize) {
        batch.clear();
        for token in chunk {
            let last = pos as usize + 1 == tokens.len();
            batch
                .add(*token, pos, &[0], last)
                .map_err(|e| format!("cannot batch the prompt: {e}"))?;
            pos += 1;
        }
        ctx.decode(&mut batch)
            .map_err(|e| format!("llama.cpp failed on the prompt: {e}"))?;
        if cancel.load(Ordering::Relaxed) {
            return Err("cancelled".into());
        }
    }
    let prompt_time = started.elapsed();

    let started = Instant::now();
    let mut text = Vec::new();
    let mut output_tokens = 0;
    let mut finish_reason = "length";
    // The last tokens of the budget close the answer: among the tokens the schema
    // allows, those ending a string, object or array are favoured, so a model
    // that rambles (a base model repeating itself) still ends with valid JSON.
    let closing_from = max_tokens
        .saturating_sub(max_tokens / 4)
        .max(max_tokens.saturating_sub(CLOSING_TOKENS));
    while output_tokens < max_tokens {
        let mut candidates = ctx.token_data_array_ith(-1);
        if let Some(grammar) = grammar.as_mut() {
            grammar.apply(&mut candidates);
            if output_tokens >= closing_from {
                for token in &weights.closers {
                    if let Some(c) = candidates.data.get_mut(token.0 as usize) {
                        c.set_logit(c.logit() + CLOSING_BIAS);
                    }
                }
            }
        }
        candidates.apply_sampler(&mut pick);
        let token = candidates
            .selected_token()
            .ok_or("the sampler chose no token (the schema allows none?)")?;
        // Applied, not sampled: each sampler takes the token once, here.
        if let Some(grammar) = grammar.as_mut() {
            grammar.accept(token);
        }
        pick.accept(token);
        if vocab.is_eog(token) {
            finish_reason = "stop";
            break;
        }
        text.extend(vocab.token_to_piece(token, false, None));
        output_tokens += 1;
        batch.clear();
        batch
            .add(token, pos, &[0], true)
            .map_err(|e| format!("cannot batch a token: {e}"))?;
        pos += 1;
        ctx.decode(&mut batch)
            .map_err(|e| format!("llama.cpp failed while answering: {e}"))?;
        if cancel.load(Ordering::Relaxed) {
            return Err("cancelled".into());
        }
    }
    Ok(Generation {
        text: String::from_utf8_lossy(&text).into_owned(),
        prompt_tokens: prompt_len,
        output_tokens,
        finish_reason,
        prompt_time,
        generate_time: started.elapsed(),
    })
}

/// The request's JSON Schema as a token constraint, when it has one.
fn grammar(weights: &Weights, request: &ChatRequest) -> Result<Option<LlamaSampler>, String> {
    let Some(schema) = &request.schema else {
        return Ok(None);
    };
    // Compact JSON: with free whitespace between tokens, a weak model can spend
    // its whole budget on blank lines.
    let mut constraint = schema.schema.clone();
    // Scores within the scale and a few characters long (see `bounded`).
    crate::bounded::bound_numbers(&mut constraint);
    if let Some(root) = constraint.as_object_mut() {
        root.entry("x-guidance").or_insert_with(|| {
            serde_json::json!({
                "whitespace_flexible": false,
                "item_separator": ",",
                "key_separator": ":",
            })
        });
    }
    let parser = weights
        .grammars
        .create_parser(TopLevelGrammar::from_json_schema(constraint));
    let matcher = Matcher::new(parser);
    if let Some(e) = matcher.get_error() {
        return Err(format!(
            "the output schema `{}` cannot be turned into a grammar: {e}",
            schema.name
        ));
    }
    Ok(Some(LlamaSampler::from(matcher)))
}

/// How the next token is picked among those allowed: the most likely at
/// temperature 0, else a seeded draw at that temperature.
fn picker(temperature: f32, seed: u32) -> LlamaSampler {
    if temperature > 0.0 {
        LlamaSampler::chain_simple([LlamaSampler::temp(temperature), LlamaSampler::dist(seed)])
    } else {
        LlamaSampler::greedy()
    }
}
