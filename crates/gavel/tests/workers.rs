//! Scale-out end to end: `gavel run --distributed` enqueues, three `gavel worker`
//! processes run the executions, one is killed (SIGKILL) mid-run, and every case
//! still ends with exactly one result. On PostgreSQL when `GAVEL_TEST_DATABASE_URL`
//! names a server (a fresh database per test), and on a SQLite file always.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use gavel::store::Store;
use sqlx::Connection;

const CASES: usize = 12;

/// A suite of slow cases against a JSON-lines agent that answers after 400 ms.
fn write_suite(dir: &Path) -> std::path::PathBuf {
    let mut yaml = String::from(
        "name: scale-out\ntargets:\n  slow:\n    type: command\n    command: [sh, -c, 'while IFS= read -r line; do sleep 0.4; printf \"{\\\"output\\\": \\\"ok\\\"}\\n\"; done']\ncases:\n",
    );
    for i in 0..CASES {
        yaml.push_str(&format!(
            "  - id: case-{i:02}\n    input: question {i}\n    checks:\n      - type: contains\n        value: ok\n"
        ));
    }
    let path = dir.join("suite.yaml");
    std::fs::write(&path, yaml).unwrap();
    path
}

fn gavel(dir: &Path, db: &str, args: &[&str]) -> Command {
    let mut cmd = support::gavel_command(dir);
    cmd.args(args)
        .arg("--db")
        .arg(db)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    cmd
}

fn wait_for(what: &str, timeout: Duration, mut ready: impl FnMut() -> bool) {
    let start = Instant::now();
    while !ready() {
        assert!(start.elapsed() < timeout, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Queue rows of the store as (case id, state, worker, attempts).
async fn queue_rows(db: &str) -> Vec<(String, String, Option<String>, i64)> {
    sqlx::any::install_default_drivers();
    let mut conn = sqlx::AnyConnection::connect(db).await.unwrap();
    let rows = sqlx::query_as("SELECT case_id, state, worker, attempts FROM queue ORDER BY seq")
        .fetch_all(&mut conn)
        .await
        .unwrap();
    conn.close().await.unwrap();
    rows
}

async fn three_workers_one_killed(db: String) {
    let dir = tempfile::tempdir().unwrap();
    let suite = write_suite(dir.path());
    let suite = suite.to_str().unwrap();
    let report = dir.path().join("report.json");
    // Migrate before anything races to do it.
    Store::open(&db).await.unwrap().close().await;

    let mut run = gavel(
        dir.path(),
        &db,
        &[
            "run",
            suite,
            "--distributed",
            "-o",
            report.to_str().unwrap(),
        ],
    )
    .spawn()
    .unwrap();
    let worker_args = ["worker", "--lease", "1.5", "--poll", "0.1"];
    let mut workers: Vec<Child> = (0..3)
        .map(|_| {
            gavel(dir.path(), &db, &worker_args)
                .stderr(Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();

    // Kill the first worker as soon as it holds a claim.
    let victim = format!("-{}-", workers[0].id());
    let runtime = tokio::runtime::Handle::current();
    let held = |db: &str| {
        let rows = tokio::task::block_in_place(|| runtime.block_on(queue_rows(db)));
        rows.into_iter()
            .filter(|(_, state, worker, _)| {
                state == "claimed" && worker.as_deref().is_some_and(|w| w.contains(&victim))
            })
            .map(|(case, ..)| case)
            .collect::<Vec<_>>()
    };
    let mut lost = Vec::new();
    wait_for("the first worker to claim", Duration::from_secs(60), || {
        lost = held(&db);
        !lost.is_empty()
    });
    workers[0].kill().unwrap();
    workers[0].wait().unwrap();

    let start = Instant::now();
    let status = loop {
        if let Some(status) = run.try_wait().unwrap() {
            break status;
        }
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "the distributed run did not finish"
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    for w in &mut workers[1..] {
        w.kill().unwrap();
        w.wait().unwrap();
    }
    let output = run.wait_with_output().unwrap();
    assert!(
        status.success(),
        "run failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );

    let store = Store::open(&db).await.unwrap();
    let run = store.latest_run().await.unwrap().unwrap();
    assert_eq!(run.status, gavel::RunStatus::Completed);
    let executions = store.executions(&run.id).await.unwrap();
    let keys: BTreeSet<_> = executions
        .iter()
        .map(|e| (e.case_id.clone(), e.target.clone(), e.repeat_index))
        .collect();
    assert_eq!(executions.len(), CASES, "exactly one result per case");
    assert_eq!(keys.len(), CASES);
    assert!(executions.iter().all(|e| e.status == gavel::Status::Pass));

    // What the killed worker held was taken again by another worker, after its lease.
    let rows = queue_rows(&db).await;
    assert!(rows.iter().all(|(_, state, ..)| state == "done"));
    for case in &lost {
        let (_, _, worker, attempts) = rows.iter().find(|(c, ..)| c == case).unwrap();
        assert!(*attempts >= 2, "{case} was claimed {attempts} time(s)");
        assert!(!worker.as_deref().unwrap().contains(&victim));
    }
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    assert_eq!(report["run"]["id"], run.id.as_str());
    store.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn workers_on_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    three_workers_one_killed(format!(
        "sqlite://{}",
        dir.path().join("gavel.db").display()
    ))
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn workers_on_postgres() {
    support::on_fresh_postgres("the PostgreSQL workers test", three_workers_one_killed).await;
}

/// Requests per minute the shared-limit suite allows: 20 a second, burst 20.
const RPM: u64 = 1200;
const RPM_CASES: usize = 120;

/// Three workers of 8 jobs each run `RPM_CASES` chat cases against the mock under
/// `rpm: RPM`. The limit is one bucket in the store, so the mock never sees more
/// than the burst plus one window's share in any one-second window (a limit per
/// process would let three bursts through at once).
async fn three_workers_share_one_rpm(db: String) {
    let mock = support::Mock::start();
    let dir = tempfile::tempdir().unwrap();
    let mut yaml = format!(
        "name: shared-rpm\njudge:\n  rpm: {RPM}\ntargets:\n  agent:\n    type: chat\n    model: openai-compatible:agent@{}/v1\ncases:\n",
        mock.url
    );
    for i in 0..RPM_CASES {
        yaml.push_str(&format!(
            "  - id: c{i:03}\n    input: question {i}\n    checks: [{{type: contains, value: You said}}]\n"
        ));
    }
    let suite = dir.path().join("suite.yaml");
    std::fs::write(&suite, yaml).unwrap();
    Store::open(&db).await.unwrap().close().await;
    let workers: Vec<Child> = (0..3)
        .map(|_| {
            gavel(dir.path(), &db, &["worker", "-j", "8", "--poll", "0.1"])
                .stderr(Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();
    let run = gavel(
        dir.path(),
        &db,
        &[
            "run",
            suite.to_str().unwrap(),
            "--distributed",
            "--no-cache",
        ],
    )
    .output()
    .unwrap();
    for mut w in workers {
        w.kill().unwrap();
        w.wait().unwrap();
    }
    assert!(
        run.status.success(),
        "run failed: {}",
        String::from_utf8_lossy(&run.stderr)
    );
    let arrivals = mock.arrivals_us();
    assert_eq!(arrivals.len(), RPM_CASES, "one call per case");
    // GCRA: in any window of length L, at most burst + L / period requests; 2 more
    // for requests released just apart that arrive closer together.
    let (per_second, burst) = (RPM / 60, RPM / 60);
    let bound = burst + per_second + 2;
    let mut sorted = arrivals;
    sorted.sort_unstable();
    for (i, &start) in sorted.iter().enumerate() {
        let in_window = sorted[i..]
            .iter()
            .take_while(|&&t| t < start + 1_000_000)
            .count() as u64;
        assert!(
            in_window <= bound,
            "{in_window} requests in the second from {start} µs; the shared limit allows {bound}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shared_rpm_on_postgres() {
    support::on_fresh_postgres(
        "the PostgreSQL shared rate-limit test",
        three_workers_share_one_rpm,
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shared_rpm_on_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    three_workers_share_one_rpm(format!(
        "sqlite://{}",
        dir.path().join("gavel.db").display()
    ))
    .await;
}

/// `gavel run --distributed` (waiting) with `extra` flags, `workers` workers of
/// one job each: the run's exit code, stderr and JSON report. The store is
/// migrated first, so that the processes do not race to do it.
fn distributed(
    dir: &Path,
    db: &str,
    suite: &Path,
    extra: &[&str],
    workers: usize,
) -> (Option<i32>, String, serde_json::Value) {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async { Store::open(db).await.unwrap().close().await });
    let report = dir.join("distributed.json");
    let mut args = vec!["run", suite.to_str().unwrap(), "--distributed", "--quiet"];
    args.extend(extra);
    args.extend(["-o", report.to_str().unwrap()]);
    let run = gavel(dir, db, &args).spawn().unwrap();
    let started: Vec<Child> = (0..workers)
        .map(|_| gavel(dir, db, &["worker", "-j", "1"]).spawn().unwrap())
        .collect();
    let out = finish(run, started);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let json = std::fs::read_to_string(&report)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_else(|| panic!("no report: {stderr}"));
    (out.status.code(), stderr, json)
}

/// Waits for a waiting `run --distributed`, then stops its workers. Should
/// every worker exit first, the run could only wait forever: it is killed and
/// the test fails with what the workers said.
fn finish(mut run: Child, mut workers: Vec<Child>) -> std::process::Output {
    loop {
        if run.try_wait().unwrap().is_some() {
            break;
        }
        if workers.iter_mut().all(|w| w.try_wait().unwrap().is_some()) {
            run.kill().unwrap();
            let said: Vec<String> = workers
                .into_iter()
                .map(|w| {
                    String::from_utf8_lossy(&w.wait_with_output().unwrap().stderr).into_owned()
                })
                .collect();
            panic!("every worker exited before the run finished: {said:#?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    for w in &mut workers {
        let _ = w.kill();
        let _ = w.wait();
    }
    run.wait_with_output().unwrap()
}

/// A suite of `n` identical chat cases against the mock, its agent priced so
/// that each case costs something.
fn priced(dir: &Path, mock: &support::Mock, n: usize) -> std::path::PathBuf {
    let mut s = format!(
        "name: budget\njudge:\n  prices:\n    \"openai-compatible:agent@{url}/v1\": {{input_per_mtok: 1000.0, output_per_mtok: 1000.0}}\ntargets:\n  agent: {{type: chat, model: \"openai-compatible:agent@{url}/v1\"}}\ncases:\n",
        url = mock.url
    );
    for i in 0..n {
        s.push_str(&format!(
            "  - {{id: c{i:02}, input: Same question, checks: [{{type: contains, value: You said}}]}}\n"
        ));
    }
    let path = dir.join(format!("priced-{n}.yaml"));
    std::fs::write(&path, s).unwrap();
    path
}

/// `--max-cost` holds across three workers (the spend is read from the store),
/// and `--no-cache` given to `run --distributed` applies on them: every case
/// asks the same question, so a cache would make all but the first free.
#[test]
fn max_cost_and_no_cache_hold_across_three_workers() {
    let mock = support::Mock::start();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let db = format!("sqlite://{}", d.join("gavel.db").display());
    let one = priced(d, &mock, 1);
    let out = gavel(d, &db, &["run", one.to_str().unwrap(), "-o", "one.json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let one: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(d.join("one.json")).unwrap()).unwrap();
    let each = one["summary"]["cost_usd"].as_f64().unwrap();

    let suite = priced(d, &mock, 30);
    let budget = format!("{}", each * 2.5);
    let (code, stderr, r) = distributed(d, &db, &suite, &["--max-cost", &budget, "--no-cache"], 3);
    assert_eq!(code, Some(3), "{stderr}");
    assert_eq!(r["gate"]["verdict"], "INCOMPLETE", "{:#}", r["gate"]);
    assert_eq!(r["gate"]["unfinished"]["reason"], "budget-stopped");
    let ran = r["summary"]["passed"].as_u64().unwrap();
    // The third case reaches the budget; each of the three workers may have
    // had one more unit in flight when it did.
    assert!(
        (3..=5).contains(&ran),
        "{ran} cases ran: {:#}",
        r["summary"]
    );
    let spent = r["summary"]["cost_usd"].as_f64().unwrap();
    assert!(spent <= each * 5.0 + 1e-12, "spent {spent}, {each} each");
}

/// `--strict` given to `run --distributed` applies on the workers: a judged
/// check without judge credentials is an error there, as it is locally.
#[test]
fn strict_applies_on_workers() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let db = format!("sqlite://{}", d.join("gavel.db").display());
    let suite = d.join("judged.yaml");
    std::fs::write(
        &suite,
        "name: judged\ntargets:\n  echo:\n    type: command\n    command: [sh, -c, 'while IFS= read -r line; do printf \"{\\\"output\\\": \\\"ok\\\"}\\n\"; done']\ncases:\n  - id: a\n    input: hi\n    checks: [{type: judge, criteria: says ok}]\n  - id: b\n    input: hi\n    checks: [{type: judge, criteria: says ok}]\n",
    )
    .unwrap();
    let (code, stderr, r) = distributed(d, &db, &suite, &[], 2);
    assert_eq!(code, Some(3), "nothing was decided: {stderr}");
    assert_eq!(r["gate"]["verdict"], "UNDECIDED", "{:#}", r["gate"]);
    assert_eq!(r["summary"]["skipped"], 2);
    let (code, stderr, r) = distributed(d, &db, &suite, &["--strict"], 2);
    assert_eq!(code, Some(3), "{stderr}");
    assert_eq!(r["summary"]["errors"], 2, "{:#}", r["summary"]);
}
