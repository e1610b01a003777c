//! Judged throughput: 1,000 cases, each one `chat` target call and one judge call,
//! against the local mock OpenAI-compatible server (a separate keep-alive process)
//! at 0 ms and 200 ms latency and `-j 1`, `-j 8`, `-j 32`. Runs the real `gavel`
//! binary with every result stored in SQLite and prints wall time, the ideal time
//! (calls × latency / concurrency), their ratio, CPU ms per case and peak RSS.
//!
//! ```sh
//! cargo build --release -p gavel -p mock-openai
//! cargo bench -p gavel --bench judged [-- CASES [LATENCY_MS,…] [JOBS,…]]
//! ```

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn release_bin(name: &str) -> PathBuf {
    let exe = std::env::current_exe().unwrap_or_else(|e| panic!("{e}"));
    // target/release/deps/judged-HASH → target/release/NAME
    let bin = exe
        .parent()
        .and_then(Path::parent)
        .map(|d| d.join(name))
        .unwrap_or_else(|| PathBuf::from(name));
    if !bin.exists() {
        panic!(
            "{} is missing: run `cargo build --release -p gavel -p mock-openai` first",
            bin.display()
        );
    }
    bin
}

fn suite(cases: usize, url: &str) -> String {
    let mut s = format!(
        "judge:\n  model: openai-compatible:judge@{url}/v1\n  concurrency: 64\ntargets:\n  agent:\n    type: chat\n    model: openai-compatible:agent@{url}/v1\n    system: You manage properties.\ncases:\n"
    );
    // No `?` in the input: the agent echoes it, and an answer ending in a question
    // would call the follow-up detector, adding model calls to the workload.
    for i in 0..cases {
        s.push_str(&format!(
            "  - id: c{i:04}\n    input: Count my listings, question {i}.\n    checks:\n      - {{type: contains, value: You said}}\n      - {{type: judge, criteria: Answers the question., scale: \"1-5\"}}\n"
        ));
    }
    s
}

/// CPU time and peak RSS (KiB) of the children reaped so far.
fn children_usage() -> (Duration, u64) {
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: getrusage only writes into the struct we own.
    unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut ru) };
    let tv = |t: libc::timeval| {
        Duration::from_secs(t.tv_sec as u64) + Duration::from_micros(t.tv_usec as u64)
    };
    (tv(ru.ru_utime) + tv(ru.ru_stime), ru.ru_maxrss as u64)
}

/// Runs `gavel run` once; returns (wall, CPU, peak RSS KiB of that process).
fn run_once(gavel: &Path, suite: &Path, dir: &Path, jobs: usize) -> (Duration, Duration, u64) {
    let db = format!(
        "sqlite://{}",
        dir.join(format!("bench-{}.db", uuid::Uuid::now_v7()))
            .display()
    );
    let (cpu0, _) = children_usage();
    let clock = Instant::now();
    let mut child = Command::new("/usr/bin/time")
        .args(["-f", "%M"])
        .arg(gavel)
        .args([
            "run",
            suite.to_str().unwrap_or_default(),
            "--db",
            &db,
            "--quiet",
            "--color",
            "never",
            "-j",
            &jobs.to_string(),
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{e}"));
    let mut peak = 0;
    let mut log = Vec::new();
    if let Some(err) = child.stderr.take() {
        for line in BufReader::new(err).lines().map_while(Result::ok) {
            match line.trim().parse::<u64>() {
                Ok(kib) => peak = kib,
                Err(_) => log.push(line),
            }
        }
    }
    let status = child.wait().unwrap_or_else(|e| panic!("{e}"));
    let wall = clock.elapsed();
    assert!(
        status.success(),
        "gavel run failed: {status}\n{}",
        log.join("\n")
    );
    let (cpu1, _) = children_usage();
    (wall, cpu1 - cpu0, peak)
}

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
    let (gavel, mock) = (release_bin("gavel"), release_bin("mock-openai"));
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    println!(
        "gavel judged throughput — {cases} cases × (1 target call + 1 judge call), results and cache in SQLite"
    );
    println!(
        "{:>8} {:>4} {:>9} {:>9} {:>7} {:>12} {:>14} {:>16}",
        "latency", "-j", "wall s", "ideal s", "ratio", "CPU ms/case", "peak RSS MiB", "budget MiB"
    );
    for &latency in &latencies {
        let mut server = Server(
            Command::new(&mock)
                .args(["--latency-ms", &latency.to_string()])
                .stdout(Stdio::piped())
                .stderr(Stdio::null())
                .spawn()
                .unwrap_or_else(|e| panic!("{e}")),
        );
        let mut line = String::new();
        if let Some(out) = server.0.stdout.take() {
            let _ = BufReader::new(out).read_line(&mut line);
        }
        let url = line
            .trim()
            .rsplit(' ')
            .next()
            .unwrap_or_default()
            .to_owned();
        let suite_path = dir.path().join(format!("suite-{latency}.yaml"));
        std::fs::write(&suite_path, suite(cases, &url)).unwrap_or_else(|e| panic!("{e}"));
        for &j in &jobs {
            let (wall, cpu, peak) = run_once(&gavel, &suite_path, dir.path(), j);
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

/// The mock server process, stopped however the bench ends.
struct Server(std::process::Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}
