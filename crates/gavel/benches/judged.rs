//! Judged throughput: 1,000 cases, each one `chat` target call and one judge call,
//! against the local mock OpenAI-compatible server (a separate keep-alive process)
//! at 0 ms and 200 ms latency and `-j 1`, `-j 8`, `-j 32`. Runs the real `gavel`
//! binary with every result stored in SQLite and prints wall time, the ideal time
//! (calls × latency / concurrency), their ratio, CPU ms per case and peak RSS.
//!
//! ```sh
//! cargo build --release -p gavel-eval -p mock-openai
//! cargo bench -p gavel-eval --bench judged [-- CASES [LATENCY_MS,…] [JOBS,…]]
//! ```

mod support;

use support::{mock, release_bin, run_once, suite};

fn list(arg: Option<&String>, default: &[usize]) -> Vec<usize> {
    arg.map(|a| a.split(',').filter_map(|x| x.parse().ok()).collect())
        .unwrap_or_else(|| default.to_vec())
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let cases: usize = args.first().and_then(|a| a.parse().ok()).unwrap_or(1000);
    let latencies = list(args.get(1), &[0, 200]);
    let jobs = list(args.get(2), &[1, 8, 32]);
    let gavel = release_bin("gavel");
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    println!(
        "gavel judged throughput — {cases} cases × (1 target call + 1 judge call), results and cache in SQLite"
    );
    println!(
        "{:>8} {:>4} {:>9} {:>9} {:>7} {:>12} {:>14} {:>16}",
        "latency", "-j", "wall s", "ideal s", "ratio", "CPU ms/case", "peak RSS MiB", "budget MiB"
    );
    for &latency in &latencies {
        let (server, url) = mock(latency as u64);
        let suite_path = dir.path().join(format!("suite-{latency}.yaml"));
        std::fs::write(&suite_path, suite(cases, &url)).unwrap_or_else(|e| panic!("{e}"));
        for &j in &jobs {
            let (wall, cpu, peak) =
                run_once(&gavel, &suite_path, dir.path(), &["-j", &j.to_string()]);
            let ideal = (2 * cases) as f64 * latency as f64 / 1000.0 / j as f64;
            let ratio = if ideal > 0.0 {
                format!("{:.3}", wall.as_secs_f64() / ideal)
            } else {
                "n/a".into()
            };
            println!(
                "{:>6}ms {:>4} {:>9.2} {:>9.2} {:>7} {:>12.3} {:>14.1} {:>16.1}",
                latency,
                j,
                wall.as_secs_f64(),
                ideal,
                ratio,
                cpu.as_secs_f64() * 1000.0 / cases as f64,
                peak as f64 / 1024.0,
                50.0 + 5.0 * cases as f64 / 1024.0,
            );
        }
        drop(server);
    }
}
