//! `similar` checks end to end: examples/similarity against the real example
//! agent with the local MiniLM encoder (verdicts and cached vectors read back from
//! the store), without the model (skipped, saying how to install it), and with
//! provider embeddings from mock-openai, broken in each way a server can break,
//! and graded by a `gavel worker` in a distributed run.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../../gavel-embed/tests/support/mod.rs"]
mod model_support;
mod support;

use std::path::Path;

use gavel::Status;
use gavel::store::Store;
use support::{Mock, agent_bin, free_port, gavel_command, workspace};

/// The example suite, its agent started from the built binary.
fn example_suite(dir: &Path) -> std::path::PathBuf {
    let suite =
        std::fs::read_to_string(workspace().join("examples/similarity/suite.yaml")).unwrap();
    let cargo_run = "[cargo, run, --quiet, -p, property-agent, --,";
    assert!(
        suite.contains(cargo_run),
        "the suite starts the agent with cargo run"
    );
    let suite = suite.replace(
        cargo_run,
        &format!("[{:?},", agent_bin().display().to_string()),
    );
    let path = dir.join("suite.yaml");
    std::fs::write(&path, suite).unwrap();
    path
}

/// Runs `gavel run SUITE ARGS…` with a store in `dir`; returns the stored
/// verdicts (case id, kind, verdict) of the run.
fn run(
    dir: &Path,
    suite: &Path,
    args: &[&str],
    env: &[(&str, &Path)],
) -> Vec<(String, gavel::Verdict)> {
    let db = format!("sqlite://{}", dir.join("gavel.db").display());
    let mut cmd = gavel_command(dir);
    cmd.arg("run")
        .arg(suite)
        .args(["--quiet", "--db", &db])
        .args(args)
        .env("SIMILARITY_PORT", free_port().to_string());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let verdicts = stored_verdicts(&db);
    assert!(!verdicts.is_empty(), "no verdicts: {stderr}");
    verdicts
}

/// The verdicts (case id, verdict) of the latest run in the store at `db`.
fn stored_verdicts(db: &str) -> Vec<(String, gavel::Verdict)> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let store = Store::open(db).await.unwrap();
        let Some(run) = store.latest_run().await.unwrap() else {
            return Vec::new();
        };
        let mut verdicts = Vec::new();
        for e in store.executions(&run.id).await.unwrap() {
            verdicts.extend(e.verdicts.into_iter().map(|v| (e.case_id.clone(), v)));
        }
        verdicts
    })
}

fn similar(verdicts: &[(String, gavel::Verdict)]) -> Vec<&(String, gavel::Verdict)> {
    verdicts
        .iter()
        .filter(|(_, v)| v.kind == gavel_core::CheckKind::Similar)
        .collect()
}

#[test]
fn the_similarity_example_passes_with_the_local_encoder_and_caches_vectors() {
    if model_support::minilm().is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let suite = example_suite(dir.path());
    let verdicts = run(dir.path(), &suite, &[], &[]);
    let checks = similar(&verdicts);
    assert_eq!(checks.len(), 3, "{verdicts:#?}");
    for (case, v) in &checks {
        assert_eq!(v.status, Status::Pass, "{case}: {}", v.reason);
        let (score, threshold) = (v.score.unwrap(), v.threshold.unwrap());
        assert!(score >= threshold, "{case}: {score} < {threshold}");
        assert!(
            v.reason.contains(&format!("{threshold:.3}")),
            "{}",
            v.reason
        );
        assert_eq!(v.evidence.model.as_deref(), Some("all-MiniLM-L6-v2"));
    }
    let details = checks.iter().find(|(c, _)| c == "details-any-of").unwrap();
    assert_eq!(details.1.threshold, Some(0.6));
    assert_eq!(
        details.1.evidence.detail["scores"]
            .as_array()
            .unwrap()
            .len(),
        2
    );

    // The vectors are in the store: the answers and expected texts (4 distinct
    // expected, 3 answers).
    let db = format!("sqlite://{}", dir.path().join("gavel.db").display());
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let cached: i64 = rt.block_on(async {
        sqlx::any::install_default_drivers();
        let pool = sqlx::AnyPool::connect(&db).await.unwrap();
        sqlx::query_scalar("SELECT COUNT(*) FROM embedding_cache WHERE model = 'all-MiniLM-L6-v2'")
            .fetch_one(&pool)
            .await
            .unwrap()
    });
    assert_eq!(cached, 7);
}

#[test]
fn similar_checks_are_skipped_with_the_reason_when_the_model_is_missing() {
    let dir = tempfile::tempdir().unwrap();
    let empty = tempfile::tempdir().unwrap();
    let suite = example_suite(dir.path());
    let verdicts = run(
        dir.path(),
        &suite,
        &[],
        &[
            ("GAVEL_MODELS", empty.path()),
            ("HF_HUB_CACHE", empty.path()),
        ],
    );
    let checks = similar(&verdicts);
    assert_eq!(checks.len(), 3);
    for (_, v) in checks {
        assert_eq!(v.status, Status::Skipped, "{}", v.reason);
        assert!(v.reason.contains("not installed"), "{}", v.reason);
        assert!(v.reason.contains("all-MiniLM-L6-v2"), "{}", v.reason);
    }
    let contains = verdicts
        .iter()
        .find(|(_, v)| v.kind == gavel_core::CheckKind::Contains)
        .unwrap();
    assert_eq!(contains.1.status, Status::Pass, "other checks still run");
}

/// A suite of two cases whose answer (mock-openai's echo) is compared with a close
/// and a distant text; failed embedding calls are retried once.
fn provider_suite(dir: &Path, url: &str) -> std::path::PathBuf {
    let suite = format!(
        "judge:\n  max_retries: 1\ntargets:\n  echo:\n    type: chat\n    model: openai-compatible:agent@{url}/v1\n    system: Echo.\ncases:\n  - id: near\n    input: the beach house is free in june\n    checks:\n      - type: similar\n        value: You said the beach house is free in june\n        threshold: 0.8\n  - id: far\n    input: the beach house is free in june\n    checks:\n      - type: similar\n        value: quarterly revenue grew while costs fell\n"
    );
    let path = dir.join("provider.yaml");
    std::fs::write(&path, suite).unwrap();
    path
}

#[test]
fn provider_embeddings_grade_and_server_failures_are_errors() {
    let mock = Mock::start();
    let dir = tempfile::tempdir().unwrap();
    let suite = provider_suite(dir.path(), &mock.url);
    let embedder = |model: &str| format!("openai-compatible:{model}@{}/v1", mock.url);

    let verdicts = run(
        dir.path(),
        &suite,
        &["--embedder", &embedder("mock-embed")],
        &[],
    );
    let by_case = |verdicts: &[(String, gavel::Verdict)], case: &str| {
        verdicts
            .iter()
            .find(|(c, v)| c == case && v.kind == gavel_core::CheckKind::Similar)
            .unwrap()
            .1
            .clone()
    };
    let near = by_case(&verdicts, "near");
    assert_eq!(near.status, Status::Pass, "{}", near.reason);
    assert!(near.score.unwrap() >= 0.8);
    assert!(
        near.evidence
            .model
            .as_deref()
            .unwrap()
            .starts_with("openai-compatible:mock-embed@")
    );
    let far = by_case(&verdicts, "far");
    assert_eq!(far.status, Status::Fail, "{}", far.reason);
    assert!(far.reason.contains("< 0.400"), "{}", far.reason);

    // Each request refused once with 429: the retry gets the vectors.
    let dir = tempfile::tempdir().unwrap();
    let suite = provider_suite(dir.path(), &mock.url);
    let verdicts = run(dir.path(), &suite, &["--embedder", &embedder("flaky")], &[]);
    assert_eq!(by_case(&verdicts, "near").status, Status::Pass);
    assert_eq!(by_case(&verdicts, "far").status, Status::Fail);

    for (model, says) in [
        ("fail-500", "500"),
        ("malformed", "malformed"),
        ("wrong-dims", "dimensions"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let suite = provider_suite(dir.path(), &mock.url);
        let verdicts = run(dir.path(), &suite, &["--embedder", &embedder(model)], &[]);
        for case in ["near", "far"] {
            let v = by_case(&verdicts, case);
            assert_eq!(v.status, Status::Error, "{model}: {}", v.reason);
            assert!(v.reason.contains(says), "{model}: {}", v.reason);
        }
    }
}

#[test]
fn workers_of_distributed_runs_grade_similar_checks() {
    let mock = Mock::start();
    let dir = tempfile::tempdir().unwrap();
    let suite = provider_suite(dir.path(), &mock.url);
    let db = format!("sqlite://{}", dir.path().join("gavel.db").display());
    let embedder = format!("openai-compatible:mock-embed@{}/v1", mock.url);
    let gavel = |args: &[&str]| {
        let mut cmd = gavel_command(dir.path());
        cmd.args(args)
            .args(["--db", &db])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null());
        cmd
    };
    // Migrate before the run and the worker race to do it.
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(async { Store::open(&db).await.unwrap().close().await });
    let mut run = gavel(&["run", suite.to_str().unwrap(), "--distributed", "--quiet"])
        .spawn()
        .unwrap();
    let mut worker = gavel(&["worker", "--poll", "0.1", "--embedder", &embedder])
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let start = std::time::Instant::now();
    while run.try_wait().unwrap().is_none() {
        if worker.try_wait().unwrap().is_some() {
            let out = worker.wait_with_output().unwrap();
            panic!(
                "the worker stopped: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        assert!(
            start.elapsed() < std::time::Duration::from_secs(120),
            "the distributed run did not finish"
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    worker.kill().unwrap();
    worker.wait().unwrap();

    let verdicts = stored_verdicts(&db);
    let statuses: Vec<(&str, Status)> = similar(&verdicts)
        .into_iter()
        .map(|(case, v)| (case.as_str(), v.status))
        .collect();
    assert_eq!(
        statuses.len(),
        2,
        "one similar verdict per case: {verdicts:?}"
    );
    assert!(statuses.contains(&("near", Status::Pass)), "{verdicts:?}");
    assert!(statuses.contains(&("far", Status::Fail)), "{verdicts:?}");
}
