//! OpenTelemetry export overhead per judged case: the judged suite (1,000 cases,
//! each one `chat` target call and one judge call against the local mock-openai)
//! run by the real `gavel` binary with default settings, alternately without
//! and with `--otel` (default export settings: OTLP/HTTP protobuf, span events
//! and log records) to a local OTLP receiver in this process. Prints CPU ms per
//! case of each run, the means and the difference per case.
//!
//! ```sh
//! cargo build --release -p gavel-eval -p mock-openai
//! cargo bench -p gavel-eval --bench otel [-- CASES [PAIRS]]
//! ```

// The OpenTelemetry tests' receiver (test code: it may unwrap).
#[allow(clippy::unwrap_used, clippy::expect_used)]
#[path = "../tests/otel/mod.rs"]
mod otel;
mod support;

use std::time::Duration;

use support::{mock, release_bin, run_once, suite};

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let cases: usize = args.first().and_then(|a| a.parse().ok()).unwrap_or(1000);
    let pairs: usize = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(3);
    let gavel = release_bin("gavel");
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let rt = tokio::runtime::Runtime::new().unwrap_or_else(|e| panic!("{e}"));
    let receiver = rt.block_on(otel::receiver());
    let endpoint = receiver.uri();
    let (_server, url) = mock(0);
    let suite_path = dir.path().join("suite.yaml");
    std::fs::write(&suite_path, suite(cases, &url)).unwrap_or_else(|e| panic!("{e}"));
    println!(
        "gavel --otel overhead — {cases} cases × (1 target call + 1 judge call), default -j, {pairs} interleaved pairs"
    );
    println!(
        "{:>5} {:>8} {:>9} {:>12} {:>14} {:>15}",
        "pair", "--otel", "wall s", "CPU ms/case", "peak RSS MiB", "OTLP requests"
    );
    let per_case = |cpu: Duration| cpu.as_secs_f64() * 1000.0 / cases as f64;
    let (mut off, mut on) = (Vec::new(), Vec::new());
    for pair in 0..pairs {
        // ABBA order: neither side always runs first.
        let order = if pair % 2 == 0 {
            [false, true]
        } else {
            [true, false]
        };
        for otel in order {
            let before = rt
                .block_on(receiver.received_requests())
                .map_or(0, |r| r.len());
            let extra: Vec<&str> = if otel {
                vec!["--otel", "--otel-endpoint", &endpoint]
            } else {
                Vec::new()
            };
            let (wall, cpu, peak) = run_once(&gavel, &suite_path, dir.path(), &extra);
            let requests = rt
                .block_on(receiver.received_requests())
                .map_or(0, |r| r.len())
                - before;
            assert_eq!(
                otel,
                requests > 0,
                "--otel {otel} but {requests} OTLP requests"
            );
            println!(
                "{:>5} {:>8} {:>9.2} {:>12.3} {:>14.1} {:>15}",
                pair + 1,
                if otel { "on" } else { "off" },
                wall.as_secs_f64(),
                per_case(cpu),
                peak as f64 / 1024.0,
                requests
            );
            if otel { &mut on } else { &mut off }.push(per_case(cpu));
        }
    }
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len().max(1) as f64;
    let (a, b) = (mean(&off), mean(&on));
    println!(
        "mean CPU ms/case: without {a:.3}, with {b:.3}; export overhead {:.3} ms per judged case ({:+.1}%)",
        b - a,
        (b - a) / a * 100.0
    );
}
