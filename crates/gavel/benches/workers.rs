//! Distributed speed-up: one latency-bound judged run (each case one `chat`
//! target call and one judge call to the local mock OpenAI-compatible server at
//! 200 ms) enqueued with `gavel run --distributed` and worked off by 1, 3 and 10
//! `gavel worker` processes at default settings, on PostgreSQL. Prints the wall
//! time, the ideal (calls × latency / workers), the speed-up over one worker and
//! the per-run overhead (wall − ideal).
//!
//! ```sh
//! cargo build --release -p gavel-eval -p mock-openai
//! GAVEL_TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test \
//!   cargo bench -p gavel-eval --bench workers [-- CASES [WORKERS,…]]
//! ```

// The judged bench's helpers; this bench uses the binaries and the mock only.
#[allow(dead_code)]
mod support;

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use support::{mock, release_bin};

const LATENCY_MS: u64 = 200;

fn suite(cases: usize, url: &str) -> String {
    let mut s = format!(
        "judge:\n  model: openai-compatible:judge@{url}/v1\ntargets:\n  agent:\n    type: chat\n    model: openai-compatible:agent@{url}/v1\n    system: You manage properties.\ncases:\n"
    );
    for i in 0..cases {
        s.push_str(&format!(
            "  - id: c{i:04}\n    input: Count my listings, question {i}.\n    checks:\n      - {{type: judge, criteria: Answers the question., scale: \"1-5\"}}\n"
        ));
    }
    s
}

/// Processes killed however the bench ends.
struct Killed(Vec<Child>);

impl Drop for Killed {
    fn drop(&mut self) {
        for c in &mut self.0 {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

fn psql(admin: &str, sql: &str) {
    let ok = Command::new("psql")
        .args([admin, "-q", "-c", sql])
        .status()
        .is_ok_and(|s| s.success());
    assert!(ok, "psql {sql} failed");
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let cases: usize = args.first().and_then(|a| a.parse().ok()).unwrap_or(200);
    let counts: Vec<usize> = args
        .get(1)
        .map(|a| a.split(',').filter_map(|x| x.parse().ok()).collect())
        .unwrap_or_else(|| vec![1, 3, 10]);
    let Ok(admin) = std::env::var("GAVEL_TEST_DATABASE_URL") else {
        eprintln!("GAVEL_TEST_DATABASE_URL is not set: the worker bench needs PostgreSQL");
        return;
    };
    let gavel = release_bin("gavel");
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let (_server, url) = mock(LATENCY_MS);
    let suite_path = dir.path().join("suite.yaml");
    std::fs::write(&suite_path, suite(cases, &url)).unwrap_or_else(|e| panic!("{e}"));
    println!(
        "gavel workers — {cases} cases × (1 target call + 1 judge call) at {LATENCY_MS} ms, PostgreSQL, default settings"
    );
    println!(
        "{:>8} {:>9} {:>9} {:>9} {:>11}",
        "workers", "wall s", "ideal s", "speed-up", "overhead s"
    );
    let mut one = None;
    for &n in &counts {
        let database = format!("gavel_bench_{}", uuid::Uuid::now_v7().simple());
        psql(&admin, &format!("CREATE DATABASE {database}"));
        let base = admin.rsplit_once('/').map_or(admin.as_str(), |(b, _)| b);
        let db = format!("{base}/{database}");
        let gavel_cmd = |args: &[&str]| {
            let mut cmd = Command::new(&gavel);
            cmd.args(args)
                .args(["--db", &db])
                .current_dir(dir.path())
                .stdout(Stdio::null())
                .stderr(Stdio::null());
            cmd
        };
        // Migrate, then start idle workers, as a team's would be.
        let migrated = gavel_cmd(&["report", "latest"]).status();
        assert!(migrated.is_ok());
        let workers = Killed(
            (0..n)
                .map(|_| {
                    gavel_cmd(&["worker"])
                        .spawn()
                        .unwrap_or_else(|e| panic!("{e}"))
                })
                .collect(),
        );
        std::thread::sleep(Duration::from_secs(2));
        let clock = Instant::now();
        let status = gavel_cmd(&[
            "run",
            suite_path.to_str().unwrap_or_default(),
            "--distributed",
            "--no-cache",
            "--quiet",
        ])
        .status()
        .unwrap_or_else(|e| panic!("{e}"));
        let wall = clock.elapsed().as_secs_f64();
        drop(workers);
        psql(&admin, &format!("DROP DATABASE {database} WITH (FORCE)"));
        assert!(status.success(), "gavel run --distributed failed: {status}");
        let ideal = (2 * cases) as f64 * LATENCY_MS as f64 / 1000.0 / n as f64;
        if n == 1 {
            one = Some(wall);
        }
        let speed_up = one.map_or_else(|| "-".to_owned(), |w| format!("{:.2}×", w / wall));
        println!(
            "{:>8} {:>9.2} {:>9.2} {:>9} {:>11.2}",
            n,
            wall,
            ideal,
            speed_up,
            wall - ideal
        );
    }
}
