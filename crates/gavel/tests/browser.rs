//! The web UI in a real headless Chromium: `gavel serve` over a store holding the
//! quickstart suite, the example agent as its target, and a run whose answer is
//! hostile markup; tests/browser/flow.mjs (playwright-core) clicks through it.
//! Screenshots land in target/tmp/browser-screenshots/.
//!
//! Needs /usr/bin/chromium and playwright-core, which scripts/setup.d/30-chromium.sh
//! installs; without them the test says so and skips (under CI, or with
//! GAVEL_TEST_REQUIRE_CHROMIUM set, it fails).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use gavel::store::Store;
use gavel::{Execution, RunRecord, RunStatus, Status, Transcript, Turn};
use support::{agent_bin, free_port, workspace};

const HOSTILE_RUN: &str = "019a0000-5555-7000-8000-000000000005";
const HOSTILE: &str =
    "<script>window.__owned = 1</script><b>bold</b><img src=x onerror=\"window.__owned = 2\">";

struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

async fn seed_hostile_run(store: &Store) {
    store
        .create_run(&RunRecord {
            id: HOSTILE_RUN.into(),
            suite: "hostile".into(),
            status: RunStatus::Completed,
            started_at: "2026-01-01T00:00:00.000Z".into(),
            finished_at: Some("2026-01-01T00:00:01.000Z".into()),
            config: serde_json::json!({}),
            planned: None,
        })
        .await
        .unwrap();
    let execution = Execution {
        case_id: "hostile".into(),
        case_name: "An answer full of markup".into(),
        target: "agent".into(),
        repeat_index: 0,
        tags: vec![],
        status: Status::Fail,
        score: Some(0.0),
        transcript: Transcript {
            session_id: "s".into(),
            turns: vec![Turn {
                input: "hi".into(),
                output: HOSTILE.into(),
                ..Turn::default()
            }],
        },
        verdicts: vec![],
        reason: None,
        started_at: "2026-01-01T00:00:00.000Z".into(),
        duration_ms: 1,
    };
    store
        .record_execution(HOSTILE_RUN, &execution)
        .await
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_person_creates_runs_and_reads_a_case_in_chromium() {
    let browser_dir = workspace().join("crates/gavel/tests/browser");
    let chromium = Path::new("/usr/bin/chromium");
    if !chromium.exists() || !browser_dir.join("node_modules/playwright-core").exists() {
        return gavel_testkit::skip(
            gavel_testkit::Need::Chromium,
            "Chromium or playwright-core is missing (run scripts/setup)",
        );
    }
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite://{}", dir.path().join("gavel.db").display());
    let agent_port = free_port();
    let targets = dir.path().join("targets.yaml");
    std::fs::write(
        &targets,
        format!(
            "targets:\n  property-agent:\n    type: http\n    url: http://127.0.0.1:{agent_port}/chat\n    response: {{output: /reply, tool_calls: /tool_calls}}\n    start:\n      command: [{bin:?}, --addr, \"127.0.0.1:{agent_port}\"]\n      ready_url: http://127.0.0.1:{agent_port}/health\n      timeout_s: 60\n",
            bin = agent_bin().display().to_string(),
        ),
    )
    .unwrap();
    let gavel = env!("CARGO_BIN_EXE_gavel");
    let suite = workspace().join("examples/quickstart/suite.yaml");
    let imported = Command::new(gavel)
        .args(["import", suite.to_str().unwrap(), "--db", &db])
        .output()
        .unwrap();
    assert!(imported.status.success(), "{imported:?}");
    let store = Store::open(&db).await.unwrap();
    seed_hostile_run(&store).await;

    let port = free_port();
    let _server = Killed(
        Command::new(gavel)
            .args(["serve", "--bind", &format!("127.0.0.1:{port}"), "--db", &db])
            .arg("--with")
            .arg(&targets)
            .env_remove("GAVEL_WEB_TOKEN")
            .stdout(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let start = Instant::now();
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "gavel serve did not start"
        );
        std::thread::sleep(Duration::from_millis(100));
    }

    let shots = Path::new(env!("CARGO_TARGET_TMPDIR")).join("browser-screenshots");
    std::fs::create_dir_all(&shots).unwrap();
    let flow = Command::new("node")
        .arg(browser_dir.join("flow.mjs"))
        .current_dir(&browser_dir)
        .env("GAVEL_UI", format!("http://127.0.0.1:{port}"))
        .env("SHOTS", &shots)
        .env("HOSTILE_RUN", HOSTILE_RUN)
        .env("CHROMIUM", chromium)
        .output()
        .unwrap();
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&flow.stdout),
        String::from_utf8_lossy(&flow.stderr)
    );
    assert!(flow.status.success(), "the browser flow failed:\n{said}");
    for shot in [
        "1-case-field-error.png",
        "3-run-detail.png",
        "4-hostile-output-as-text.png",
        "5-trends.png",
    ] {
        let size = std::fs::metadata(shots.join(shot)).unwrap().len();
        assert!(size > 1000, "{shot} is empty");
    }

    // The run the browser started is an ordinary stored run, as from the CLI.
    let run = store.latest_run().await.unwrap().unwrap();
    assert_eq!(
        (run.suite.as_str(), run.status),
        ("quickstart", RunStatus::Completed)
    );
    let executions = store.executions(&run.id).await.unwrap();
    assert_eq!(executions.len(), 1);
    assert_eq!(executions[0].case_id, "ui-listings");
    assert_eq!(executions[0].status, Status::Pass);
    let versions = store.run_case_versions(&run.id, None).await.unwrap();
    assert!(versions.contains(&("quickstart".into(), "ui-listings".into(), 1)));
    store.close().await;
}
