//! A judge call on the local model: prompt and answer tokens per second, and the
//! process's peak RSS; then, in a child process, llama.cpp alone on the same file
//! and threads, measured the way `llama-bench` does (`pp512`: one batch of 512
//! prompt tokens; `tg128`: 128 single-token decodes; no sampling), timed around
//! the decode calls as llama-bench times them. (llama-cpp-sys-2 does not vendor the
//! `llama-bench` tool's source, so the bench reproduces its method.)
//!
//! `cargo bench -p gavel-local --bench judge_call` (model: `$GAVEL_BENCH_MODEL`,
//! else the installed gemma-3-270m-q4_k_m; threads: `$GAVEL_BENCH_THREADS`, else 2).
#![allow(clippy::unwrap_used)]

use std::time::{Duration, Instant};

use gavel_local::{LocalModel, Timings};
use gavel_models::{ChatRequest, Message, OutputSchema};
use serde_json::json;

/// Calls measured after one warm-up call.
const RUNS: u32 = 5;

fn main() {
    if std::env::var_os(RAW).is_some() {
        return raw_llama_cpp();
    }
    let spec = std::env::var("GAVEL_BENCH_MODEL")
        .unwrap_or_else(|_| gavel_model_files::GEMMA_270M.to_owned());
    let threads = std::env::var("GAVEL_BENCH_THREADS").unwrap_or_else(|_| "2".into());
    let id = format!("local:{spec}?threads={threads}&ctx=2048")
        .parse()
        .unwrap();
    let model = match LocalModel::open(&id) {
        Ok(model) => model,
        Err(e) => {
            eprintln!("judge_call: skipped: {e}");
            return;
        }
    };
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let started = std::time::Instant::now();
    model.load().unwrap();
    println!(
        "model {} · {threads} threads · load {:.2} s (weights + token table)",
        model.path().display(),
        started.elapsed().as_secs_f64()
    );

    for (label, request) in [
        ("judge call (JSON-Schema constrained)", judge_request()),
        ("free generation (no schema, 128 tokens)", free_request()),
    ] {
        let mut totals = (0u64, 0u64, Duration::ZERO, Duration::ZERO);
        runtime.block_on(model.chat_timed(&request)).unwrap();
        for _ in 0..RUNS {
            let (answer, Timings { prompt, generate }) =
                runtime.block_on(model.chat_timed(&request)).unwrap();
            totals.0 += answer.usage.input_tokens;
            totals.1 += answer.usage.output_tokens;
            totals.2 += prompt;
            totals.3 += generate;
        }
        let per_run = |n: u64| n / u64::from(RUNS);
        println!(
            "{label}: prompt {} tok at {:.0} tok/s · answer {} tok at {:.1} tok/s",
            per_run(totals.0),
            totals.0 as f64 / totals.2.as_secs_f64(),
            per_run(totals.1),
            totals.1 as f64 / totals.3.as_secs_f64(),
        );
    }
    println!("peak RSS {:.0} MiB", peak_rss_kib() as f64 / 1024.0);

    // llama.cpp alone, in a process of its own (one llama.cpp backend per
    // process, and a peak RSS of its own).
    let status = std::process::Command::new(std::env::current_exe().unwrap())
        .env(RAW, model.path())
        .env("GAVEL_BENCH_THREADS", &threads)
        .status()
        .unwrap();
    assert!(status.success(), "the llama.cpp baseline failed");
}

/// Set (to the GGUF path) in the child process that measures llama.cpp alone.
const RAW: &str = "GAVEL_BENCH_RAW_LLAMA_CPP";

/// `llama-bench -p 512 -n 128 -r RUNS`'s measurement through the same library.
fn raw_llama_cpp() {
    use std::num::NonZeroU32;

    use llama_cpp_2::context::params::LlamaContextParams;
    use llama_cpp_2::llama_backend::LlamaBackend;
    use llama_cpp_2::llama_batch::LlamaBatch;
    use llama_cpp_2::model::LlamaModel;
    use llama_cpp_2::model::params::LlamaModelParams;
    use llama_cpp_2::token::LlamaToken;

    let path = std::env::var(RAW).unwrap();
    let threads: i32 = std::env::var("GAVEL_BENCH_THREADS")
        .unwrap()
        .parse()
        .unwrap();
    let mut backend = LlamaBackend::init().unwrap();
    backend.void_logs();
    let model = LlamaModel::load_from_file(&backend, &path, &LlamaModelParams::default()).unwrap();
    let params = LlamaContextParams::default()
        .with_n_ctx(NonZeroU32::new(1024))
        .with_n_batch(512)
        .with_n_ubatch(512)
        .with_n_threads(threads)
        .with_n_threads_batch(threads);
    let n_vocab = model.n_vocab();
    // llama-bench decodes arbitrary tokens: the speed does not depend on them.
    let token = |i: i32| LlamaToken::new((i * 7919 + 13) % n_vocab);
    let (mut pp, mut tg) = (Duration::ZERO, Duration::ZERO);
    for run in 0..=RUNS {
        let mut ctx = model.new_context(&backend, params.clone()).unwrap();
        let mut batch = LlamaBatch::new(512, 1);
        for i in 0..512 {
            batch.add(token(i), i, &[0], i == 511).unwrap();
        }
        let started = Instant::now();
        ctx.decode(&mut batch).unwrap();
        let prompt = started.elapsed();
        let started = Instant::now();
        for i in 512..640 {
            batch.clear();
            batch.add(token(i), i, &[0], true).unwrap();
            ctx.decode(&mut batch).unwrap();
        }
        if run > 0 {
            pp += prompt;
            tg += started.elapsed();
        }
    }
    println!(
        "llama.cpp alone (llama-bench method: pp512, tg128, wall time of the decodes): pp512 {:.0} tok/s · tg128 {:.1} tok/s · peak RSS {:.0} MiB",
        f64::from(512 * RUNS) / pp.as_secs_f64(),
        f64::from(128 * RUNS) / tg.as_secs_f64(),
        peak_rss_kib() as f64 / 1024.0
    );
}

/// A pointwise judge request over an answer of about 400 tokens.
fn judge_request() -> ChatRequest {
    let answer = "The Eiffel Tower was completed in 1889 for the World's Fair and stands \
                  about 330 metres tall in Paris, France. "
        .repeat(16);
    ChatRequest {
        system: Some(
            "You grade answers. Reply with JSON: status, reasoning, score from 1 to 5.".into(),
        ),
        messages: vec![Message::user(format!(
            "Question: When was the Eiffel Tower built, and how tall is it?\nAnswer: {answer}"
        ))],
        temperature: Some(0.0),
        max_tokens: Some(256),
        schema: Some(OutputSchema {
            name: "judge_verdict".into(),
            schema: json!({
                "type": "object",
                "properties": {
                    "status": { "type": "string", "enum": ["ok", "[TRANSIENT]", "[ERROR]"] },
                    "reasoning": { "type": "string" },
                    "score": { "type": ["integer", "null"] },
                },
                "required": ["status", "reasoning", "score"],
                "additionalProperties": false,
            }),
        }),
        ..ChatRequest::default()
    }
}

/// 128 answer tokens with no constraint, as `llama-bench -n 128` generates.
fn free_request() -> ChatRequest {
    ChatRequest {
        messages: vec![Message::user(
            "Write a long story about a lighthouse keeper.",
        )],
        temperature: Some(0.0),
        max_tokens: Some(128),
        ..ChatRequest::default()
    }
}

/// The process's peak resident set (VmHWM), in KiB; 0 where /proc is absent.
fn peak_rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            status
                .lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        })
        .unwrap_or(0)
}
