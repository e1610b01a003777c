//! What the benches that run the real `gavel` binary share: the release
//! binaries, the judged suite, the mock server, and one measured run.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// A binary of the release build the bench belongs to.
pub(crate) fn release_bin(name: &str) -> PathBuf {
    let exe = std::env::current_exe().unwrap_or_else(|e| panic!("{e}"));
    // target/release/deps/BENCH-HASH → target/release/NAME
    let bin = exe
        .parent()
        .and_then(Path::parent)
        .map(|d| d.join(name))
        .unwrap_or_else(|| PathBuf::from(name));
    if !bin.exists() {
        panic!(
            "{} is missing: run `cargo build --release -p gavel-eval -p mock-openai` first",
            bin.display()
        );
    }
    bin
}

/// `cases` cases, each one `chat` target call and one judge call on the mock at `url`.
pub(crate) fn suite(cases: usize, url: &str) -> String {
    let mut s = format!(
        "judge:\n  model: openai-compatible:judge@{url}/v1\ntargets:\n  agent:\n    type: chat\n    model: openai-compatible:agent@{url}/v1\n    system: You manage properties.\ncases:\n"
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

/// Runs `gavel run SUITE` once with `extra` arguments, results in a new SQLite
/// file in `dir`; returns (wall, CPU, peak RSS KiB of that process).
pub(crate) fn run_once(
    gavel: &Path,
    suite: &Path,
    dir: &Path,
    extra: &[&str],
) -> (Duration, Duration, u64) {
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
        ])
        .args(extra)
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

/// The mock server process, stopped however the bench ends.
pub(crate) struct Server(std::process::Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts the release `mock-openai` at `latency` ms; returns it and its base URL.
pub(crate) fn mock(latency: u64) -> (Server, String) {
    let mut server = Server(
        Command::new(release_bin("mock-openai"))
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
    (server, url)
}
