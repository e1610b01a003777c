//! Distributed runs grade exactly like local runs: one suite with pairwise and
//! select-best (against another target of the run), rejudge and paraphrase variants runs
//! locally and through `gavel run --distributed` with two `gavel worker`
//! processes, and every execution's status, score and verdicts match. On a
//! SQLite file always, on PostgreSQL when `GAVEL_TEST_DATABASE_URL` names a server.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Stdio};

use gavel::store::Store;
use support::Mock;

fn suite(url: &str) -> String {
    format!(
        r#"
name: parity
judge:
  model: openai-compatible:judge@{url}/v1
targets:
  agent:
    type: chat
    model: openai-compatible:agent@{url}/v1
    system: You manage properties.
  other:
    type: chat
    model: openai-compatible:other@{url}/v1
    system: You manage properties, tersely.
cases:
  - id: paired
    input: What are my listings?
    criteria: Names the user's listings.
    targets: [agent, other]
    checks:
      - {{type: pairwise, against: {{target: other}}}}
      - {{type: select-best}}
  - id: rejudged
    input: How many bookings do I have?
    criteria: Gives a number.
    rejudge: 2
    targets: [agent]
    checks:
      - {{type: judge, scale: "1-5", threshold: 3}}
  - id: robust
    input: List my listings.
    variants: [Which listings do I have?, Show me my properties.]
    max_stddev: 0.5
    targets: [agent]
    checks:
      - {{type: contains, value: "You said"}}
"#
    )
}

/// Each execution as (case, target, repeat) → (status, score, verdicts as
/// (kind, status, score)).
type Graded = BTreeMap<gavel::ExecutionKey, (String, Option<String>, Vec<String>)>;

async fn graded(db: &str) -> Graded {
    let store = Store::open(db).await.unwrap();
    let run = store.latest_run().await.unwrap().unwrap();
    let executions = store.executions(&run.id).await.unwrap();
    store.close().await;
    executions
        .into_iter()
        .map(|e| {
            let verdicts = e
                .verdicts
                .iter()
                .map(|v| {
                    format!(
                        "{} {} {:?} rejudged {}",
                        v.kind,
                        v.status,
                        v.score,
                        v.evidence.rejudged.len()
                    )
                })
                .collect();
            (
                e.key(),
                (
                    e.status.to_string(),
                    e.score.map(|s| format!("{s:.6}")),
                    verdicts,
                ),
            )
        })
        .collect()
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

async fn local_equals_distributed(local_db: String, distributed_db: String) {
    let mock = Mock::start();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("suite.yaml");
    std::fs::write(&path, suite(&mock.url)).unwrap();
    let suite = path.to_str().unwrap();

    let local = gavel(dir.path(), &local_db, &["run", suite, "--no-cache"])
        .output()
        .unwrap();
    assert!(
        local.status.code() == Some(0) || local.status.code() == Some(1),
        "local run: {}",
        String::from_utf8_lossy(&local.stderr)
    );

    // Enqueue (detached: the run id is printed once the queue holds the
    // executions), then two workers work the queue off.
    let enqueued = gavel(
        dir.path(),
        &distributed_db,
        &[
            "run",
            suite,
            "--distributed",
            "--detach",
            "--no-cache",
            "--quiet",
        ],
    )
    .output()
    .unwrap();
    assert!(
        enqueued.status.success(),
        "{}",
        String::from_utf8_lossy(&enqueued.stderr)
    );
    let run_id = String::from_utf8_lossy(&enqueued.stdout).trim().to_owned();
    let workers: Vec<_> = (0..2)
        .map(|_| {
            gavel(
                dir.path(),
                &distributed_db,
                &["worker", "--exit-when-idle", "--no-cache", "-j", "2"],
            )
            .spawn()
            .unwrap()
        })
        .collect();
    for w in workers {
        let out = w.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "worker: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let report = gavel(dir.path(), &distributed_db, &["report", &run_id])
        .output()
        .unwrap();
    assert_eq!(
        report.status.code(),
        local.status.code(),
        "the distributed run gates like the local one: {}",
        String::from_utf8_lossy(&report.stdout)
    );

    let here = graded(&local_db).await;
    let there = graded(&distributed_db).await;
    // 2 paired + 1 rejudged + 3 inputs of the robust case.
    assert_eq!(here.len(), 6, "{here:#?}");
    assert_eq!(here, there);
    let rejudged = &here[&gavel::ExecutionKey::new("rejudged", "agent", 0)].2;
    assert!(
        rejudged.iter().any(|v| v.ends_with("rejudged 2")),
        "the judge was asked again: {rejudged:?}"
    );
    let pairwise = &here[&gavel::ExecutionKey::new("paired", "agent", 0)].2;
    assert!(
        pairwise
            .iter()
            .any(|v| v.starts_with("pairwise ") && !v.contains(" skipped ")),
        "the pairwise check was graded, not skipped: {pairwise:?}"
    );
    assert!(
        pairwise
            .iter()
            .any(|v| v.starts_with("select-best ") && !v.contains(" skipped ")),
        "the select-best check compared both targets: {pairwise:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn distributed_grades_like_local_on_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    let db = |name: &str| format!("sqlite://{}", dir.path().join(name).display());
    local_equals_distributed(db("local.db"), db("distributed.db")).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn distributed_grades_like_local_on_postgres() {
    let dir = tempfile::tempdir().unwrap();
    let local = format!("sqlite://{}", dir.path().join("local.db").display());
    support::on_fresh_postgres("the PostgreSQL parity test", |db| {
        local_equals_distributed(local, db)
    })
    .await;
}
