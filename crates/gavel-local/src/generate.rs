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
        Some(template) => (crate::prompt::with_template(&weights.model, template, request)?, true),
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
    let mut sampler = sampler(weights, request, temperature, options.seed)?;

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
    while output_tokens < max_tokens {
        // `sample` also accepts the token into every sampler of the chain (the
        // grammar included): accepting it again would abort llama.cpp.
        let token = sampler.sample(&ctx, -1);
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

/// The sampler chain: the request's JSON Schema as a constraint (when it has
/// one), then greedy choice at temperature 0, else temperature and a seeded draw.
fn sampler(
    weights: &Weights,
    request: &ChatRequest,
    temperature: f32,
    seed: u32,
) -> Result<LlamaSampler, String> {
    let mut chain = Vec::with_capacity(3);
    if let Some(schema) = &request.schema {
        let parser = weights
            .grammars
            .create_parser(TopLevelGrammar::from_json_schema(schema.schema.clone()));
        let matcher = Matcher::new(parser);
        if let Some(e) = matcher.get_error() {
            return Err(format!(
                "the output schema `{}` cannot be turned into a grammar: {e}",
                schema.name
            ));
        }
        chain.push(LlamaSampler::from(matcher));
    }
    if temperature > 0.0 {
        chain.push(LlamaSampler::temp(temperature));
        chain.push(LlamaSampler::dist(seed));
    } else {
        chain.push(LlamaSampler::greedy());
    }
    Ok(LlamaSampler::chain_simple(chain))
}
