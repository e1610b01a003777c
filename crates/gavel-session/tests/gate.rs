//! One gate, whatever the door: a run's gate is decided by the session from the
//! store, so a local run, its report rebuilt later, and the same suite run by
//! workers all give the same verdict, on a temporary SQLite store.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::{Arc, Mutex};

use gavel_core::load::SuiteSource;
use gavel_report::{Detail, EXIT_ERRORS, EXIT_GATE_FAILED, EXIT_PASSED, Gate};
use gavel_runner::CancellationToken;
use gavel_session::worker::{WorkerConfig, work};
use gavel_session::{Event, ModelOptions, PreparedRun, Regate, RunConfig, Sink, Sinks, Sources};
use gavel_store::Store;

/// An agent that answers `ok` to every line.
const ECHO: &str = "targets:\n  echo:\n    type: command\n    command: [sh, -c, 'while IFS= read -r line; do printf \"{\\\"output\\\": \\\"ok\\\"}\\n\"; done']\n";

/// A suite named `name` with `judge` settings (YAML lines under `judge:`, or
/// none) and `cases`.
fn suite(name: &str, judge: &str, cases: &str) -> String {
    let judge = if judge.is_empty() {
        String::new()
    } else {
        format!("judge:\n{judge}")
    };
    format!("name: {name}\n{judge}{ECHO}cases:\n{cases}")
}

const PASSING: &str = "  - {id: a, input: hi, checks: [{type: contains, value: ok}]}\n  - {id: b, input: hi, checks: [{type: contains, value: ok}]}\n";

async fn store(dir: &tempfile::TempDir) -> Store {
    let url = format!("sqlite://{}", dir.path().join("gavel.db").display());
    Store::open(&url).await.unwrap()
}

fn config(text: String) -> RunConfig {
    let mut config = RunConfig::new(Sources {
        suites: vec![SuiteSource::Text {
            text,
            path: "suite.yaml".into(),
        }],
        stored: None,
    });
    config.jobs = 2;
    config
}

/// Keeps the gate of the run-finished event.
#[derive(Default)]
struct Finish(Mutex<Option<Gate>>);

impl Sink for Finish {
    fn event(&self, event: &Event<'_>) {
        if let Event::RunFinished(end) = event {
            *self.0.lock().unwrap() = end.gate.clone();
        }
    }
}

/// Runs `text` here; returns the run id, the gate `execute` reported and the
/// gate its run-finished event carried.
async fn run_here(store: &Store, text: String) -> (String, Gate, Gate) {
    let finish = Arc::new(Finish::default());
    let sinks = Sinks::new().with(finish.clone());
    let prepared = PreparedRun::new(store.clone(), config(text)).await.unwrap();
    let finished = prepared
        .execute(&sinks, &CancellationToken::new())
        .await
        .unwrap();
    let event = finish
        .0
        .lock()
        .unwrap()
        .clone()
        .expect("a gate on the event");
    (finished.run.id, finished.report.gate, event)
}

/// Enqueues `text` and works it off with two in-process workers; the run id.
async fn run_on_workers(store: &Store, text: String) -> String {
    let run_id = PreparedRun::new(store.clone(), config(text))
        .await
        .unwrap()
        .enqueue()
        .await
        .unwrap();
    let worker = |name: &str| WorkerConfig {
        name: name.into(),
        jobs: 1,
        lease: std::time::Duration::from_secs(30),
        poll: std::time::Duration::from_millis(10),
        exit_when_idle: true,
        max_attempts: 3,
        models: ModelOptions::default(),
    };
    let (one, two) = (worker("one"), worker("two"));
    let stop = CancellationToken::new();
    let sinks = Sinks::new();
    let (a, b) = tokio::join!(
        work(store, &one, &sinks, &stop),
        work(store, &two, &sinks, &stop)
    );
    a.unwrap();
    b.unwrap();
    run_id
}

async fn stored_gate(store: &Store, run_id: &str, regate: &Regate) -> Gate {
    gavel_session::report::build(store, run_id, regate, Detail::Summary)
        .await
        .unwrap()
        .gate
}

#[tokio::test]
async fn a_passing_run_passes_through_every_door() {
    let dir = tempfile::tempdir().unwrap();
    let store = store(&dir).await;
    let text = suite("pass", "", PASSING);
    let (id, gate, event) = run_here(&store, text.clone()).await;
    assert_eq!(gate.exit_code(), EXIT_PASSED, "{gate:?}");
    assert_eq!(event, gate);
    assert_eq!(stored_gate(&store, &id, &Regate::default()).await, gate);
    let distributed = run_on_workers(&store, text).await;
    let gate = stored_gate(&store, &distributed, &Regate::default()).await;
    assert_eq!(gate.exit_code(), EXIT_PASSED, "{gate:?}");
}

#[tokio::test]
async fn a_calibration_that_does_not_qualify_the_judge_fails_every_door() {
    let dir = tempfile::tempdir().unwrap();
    let store = store(&dir).await;
    let text = suite(
        "gated",
        "  model: openai:gpt-4o-mini\n  calibration: cal-missing\n",
        PASSING,
    );
    let (id, gate, event) = run_here(&store, text.clone()).await;
    assert_eq!(gate.pass_rate, Some(100.0));
    assert_eq!(gate.exit_code(), EXIT_GATE_FAILED, "{gate:?}");
    let why = gate
        .failures()
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>();
    assert!(why.iter().any(|w| w.contains("cal-missing")), "{why:?}");
    assert_eq!(event, gate);
    // Rebuilt from the store, with or without a looser pass rate.
    assert_eq!(stored_gate(&store, &id, &Regate::default()).await, gate);
    let looser = Regate {
        min_pass_rate: Some(0.0),
        ..Regate::default()
    };
    let regated = stored_gate(&store, &id, &looser).await;
    assert_eq!(regated.exit_code(), EXIT_GATE_FAILED, "{regated:?}");
    // Run by workers.
    let distributed = run_on_workers(&store, text).await;
    let gate = stored_gate(&store, &distributed, &Regate::default()).await;
    assert_eq!(gate.exit_code(), EXIT_GATE_FAILED, "{gate:?}");
    assert!(gate.calibration.is_some_and(|c| c.id == "cal-missing"));
}

#[tokio::test]
async fn a_run_that_decides_nothing_does_not_pass() {
    let dir = tempfile::tempdir().unwrap();
    let store = store(&dir).await;
    // Judged checks and no judge model or credentials: every case is skipped.
    let judged = "  - {id: a, input: hi, checks: [{type: judge, criteria: says ok}]}\n";
    let text = suite("judged", "", judged);
    let (id, gate, _) = run_here(&store, text.clone()).await;
    assert!(!gate.decided());
    assert_eq!(gate.exit_code(), EXIT_ERRORS, "{gate:?}");
    assert_eq!(gate.word(), "UNDECIDED");
    assert!(!gate.passed);
    assert_eq!(stored_gate(&store, &id, &Regate::default()).await, gate);
    let distributed = run_on_workers(&store, text).await;
    let gate = stored_gate(&store, &distributed, &Regate::default()).await;
    assert_eq!(gate.word(), "UNDECIDED");
}

#[tokio::test]
async fn the_gate_tags_and_minimum_given_to_a_run_are_its_gate_at_every_door() {
    let dir = tempfile::tempdir().unwrap();
    let store = store(&dir).await;
    let cases = "  - {id: a, tags: [smoke], input: hi, checks: [{type: contains, value: ok}]}\n  - {id: b, input: hi, checks: [{type: contains, value: nope}]}\n";
    let mut config = config(suite("tagged", "", cases));
    config.gate.tags = vec!["smoke".into()];
    config.gate.min_pass_rate = Some(100.0);
    let prepared = PreparedRun::new(store.clone(), config).await.unwrap();
    let finished = prepared
        .execute(&Sinks::new(), &CancellationToken::new())
        .await
        .unwrap();
    let gate = finished.report.gate;
    assert_eq!(gate.exit_code(), EXIT_PASSED, "only smoke gates: {gate:?}");
    assert_eq!(gate.tags, ["smoke"]);
    let stored = stored_gate(&store, &finished.run.id, &Regate::default()).await;
    assert_eq!(stored, gate);
    // `gavel report --gate-tag` is asked for on purpose.
    let every = Regate {
        tags: vec!["other".into()],
        ..Regate::default()
    };
    assert_eq!(
        stored_gate(&store, &finished.run.id, &every).await.word(),
        "UNDECIDED"
    );
}

#[tokio::test]
async fn a_resume_refuses_a_judge_template_edited_since_the_run_was_planned() {
    let dir = tempfile::tempdir().unwrap();
    let store = store(&dir).await;
    let template = dir.path().join("judge.j2");
    let builtin = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../gavel-checks/templates/judge.j2"
    );
    std::fs::copy(builtin, &template).unwrap();
    let judge = format!("  templates:\n    judge: {}\n", template.display());
    let (id, _, _) = run_here(&store, suite("templated", &judge, PASSING)).await;
    let resumed = |store: Store| {
        let mut config = RunConfig::new(Sources::default());
        config.resume = Some(id.clone());
        PreparedRun::new(store, config)
    };
    assert!(resumed(store.clone()).await.is_ok(), "nothing changed yet");
    let mut text = std::fs::read_to_string(&template).unwrap();
    text.push_str("\n{# edited #}\n");
    std::fs::write(&template, text).unwrap();
    let refused = resumed(store.clone()).await.err().expect("refused");
    let message = refused.to_string();
    assert!(message.contains("judge.templates.judge"), "{message}");
    assert!(message.contains(&id), "{message}");
}
