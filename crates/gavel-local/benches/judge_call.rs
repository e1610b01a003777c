//! A judge call on the local model: prompt and answer tokens per second, and the
//! process's peak RSS. `scripts/bench-local-judge.sh` runs it beside llama.cpp's
//! own `llama-bench` on the same file and threads.
//!
//! `cargo bench -p gavel-local --bench judge_call` (model: `$GAVEL_BENCH_MODEL`,
//! else the installed gemma-3-270m-q4_k_m; threads: `$GAVEL_BENCH_THREADS`, else 2).
#![allow(clippy::unwrap_used)]

use std::time::Duration;

use gavel_local::{LocalModel, Timings};
use gavel_models::{ChatRequest, Message, OutputSchema};
use serde_json::json;

/// Calls measured after one warm-up call.
const RUNS: u32 = 5;

fn main() {
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
}

/// A pointwise judge request over an answer of about 400 tokens.
fn judge_request() -> ChatRequest {
    let answer = "The Eiffel Tower was completed in 1889 for the World's Fair and stands \
                  about 330 metres tall in Paris, France. "
        .repeat(16);
    ChatRequest {
        system: Some("You grade answers. Reply with JSON: status, reasoning, score from 1 to 5.".into()),
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
        messages: vec![Message::user("Write a long story about a lighthouse keeper.")],
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
