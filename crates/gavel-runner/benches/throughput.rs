//! Runner throughput: 10,000 cases against an in-process target with deterministic
//! checks. Prints cases/s, CPU ms per case and peak RSS, first with results kept
//! in memory only, then with every result written to a SQLite store.
//!
//! `cargo bench -p gavel-runner --bench throughput [-- CASES JOBS]`

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use gavel_core::{Execution, Status, Suite};
use gavel_runner::{
    Baselines, CancellationToken, ExecuteOptions, PlanOptions, PreparedTargets, RecordError,
    Recorder,
};
use gavel_targets::{FnReply, FnTarget, Target};
use serde_json::json;

const CASE: &str = r#"
targets:
  agent: {type: command, command: [unused]}
cases:
  - id: template
    tags: [bench]
    input: What are my listings?
    expected_tools: [get_listings]
    checks:
      - {type: contains, value: [Beach House, Mountain Cabin]}
      - {type: regex, pattern: '\b3 listings\b'}
      - {type: not-contains, value: error}
      - {type: latency, max_ms: 1000}
"#;

/// Counts results and checks they passed, keeping nothing.
struct Count {
    passed: usize,
    total: usize,
}

#[async_trait::async_trait]
impl Recorder for Count {
    async fn record(&mut self, e: &Execution) -> Result<(), RecordError> {
        self.total += 1;
        self.passed += usize::from(e.status == Status::Pass);
        Ok(())
    }
}

struct StoreSink(gavel_store::Store, String);

#[async_trait::async_trait]
impl Recorder for StoreSink {
    async fn record(&mut self, e: &Execution) -> Result<(), RecordError> {
        self.0
            .record_execution(&self.1, e)
            .await
            .map_err(RecordError::new)
    }
}

fn suite(n: usize) -> Suite {
    let mut suite = gavel_core::load::parse_suite_str(CASE, Path::new("bench.yaml"))
        .unwrap_or_else(|e| panic!("{e:?}"));
    let template = suite.cases.remove(0);
    suite.cases = (0..n)
        .map(|i| {
            let mut c = template.clone();
            c.id = format!("case-{i:05}");
            c.name = c.id.clone();
            c
        })
        .collect();
    suite
}

fn agent() -> Arc<dyn Target> {
    Arc::new(FnTarget::new(|_req| async {
        FnReply::text("You have 3 listings: Beach House, Mountain Cabin and City Apartment.")
            .tool_call(
                "get_listings",
                json!({}),
                Some(json!([{"id": 1}, {"id": 2}, {"id": 3}])),
            )
    }))
}

/// (user + system CPU, peak RSS in KiB) of this process so far.
fn usage() -> (Duration, u64) {
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: getrusage only writes into the struct we own.
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    let tv = |t: libc::timeval| {
        Duration::from_secs(t.tv_sec as u64) + Duration::from_micros(t.tv_usec as u64)
    };
    (tv(ru.ru_utime) + tv(ru.ru_stime), ru.ru_maxrss as u64)
}

async fn phase(label: &str, suite: &Suite, jobs: usize, recorder: &mut dyn Recorder) {
    let plan = gavel_runner::plan(suite, &PlanOptions::default()).unwrap_or_else(|e| panic!("{e}"));
    let targets = PreparedTargets::from_targets(BTreeMap::from([("agent".to_owned(), agent())]));
    let (cpu0, _) = usage();
    let clock = Instant::now();
    let mut count = Count {
        passed: 0,
        total: 0,
    };
    let mut recorders: [&mut dyn Recorder; 2] = [recorder, &mut count];
    let baselines = Baselines::new();
    let options = ExecuteOptions {
        concurrency: jobs,
        default_timeout: Duration::from_secs(30),
        ..ExecuteOptions::new(&suite.judge, &baselines)
    };
    let report = gavel_runner::execute(
        &plan,
        &targets,
        "0190f0e0-0000-7000-8000-000000000000",
        &options,
        &CancellationToken::new(),
        &mut recorders,
    )
    .await
    .unwrap_or_else(|e| panic!("{e}"));
    let wall = clock.elapsed();
    let (cpu1, peak_kib) = usage();
    assert_eq!(count.passed, plan.executions, "every bench case must pass");
    let n = report.finished as f64;
    println!(
        "{label:<22} {:>6} cases  {:>9.0} cases/s  {:>7.3} CPU ms/case  peak RSS {:>6.1} MiB  (wall {:.2}s, jobs {jobs})",
        report.finished,
        n / wall.as_secs_f64(),
        (cpu1 - cpu0).as_secs_f64() * 1000.0 / n,
        peak_kib as f64 / 1024.0,
        wall.as_secs_f64(),
    );
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let cases = args.first().and_then(|a| a.parse().ok()).unwrap_or(10_000);
    let jobs = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(8);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    runtime.block_on(async {
        let suite = suite(cases);
        let (_, rss_before) = usage();
        println!("gavel runner throughput — {cases} cases, 4 checks + implicit tools-called each; RSS at start {:.1} MiB", rss_before as f64 / 1024.0);
        phase("in-memory recorder", &suite, jobs, &mut Count { passed: 0, total: 0 }).await;
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let url = format!("sqlite://{}", dir.path().join("bench.db").display());
        let store = gavel_store::Store::open(&url).await.unwrap_or_else(|e| panic!("{e}"));
        let run = gavel_core::RunRecord {
            id: "0190f0e0-0000-7000-8000-000000000000".into(),
            suite: "bench".into(),
            status: gavel_core::RunStatus::Running,
            started_at: gavel_core::now_rfc3339(),
            finished_at: None,
            config: json!({}),
            planned: None,
        };
        store.create_run(&run).await.unwrap_or_else(|e| panic!("{e}"));
        phase("SQLite store recorder", &suite, jobs, &mut StoreSink(store, run.id)).await;
    });
}
