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

/// The judge the stored calibrations below were made with.
const JUDGE: &str = "openai-compatible:judge@http://127.0.0.1:9/v1";

/// A calibration run `id` of 40 binary items judged perfectly, bound to
/// `JUDGE` with the template `kind` (`scored`: its pointwise scale and threshold).
fn calibration(
    id: &str,
    kind: gavel_checks::TemplateKind,
    scored: Option<(gavel_core::Scale, Option<f64>)>,
) -> gavel_core::CalibrationRun {
    use gavel_calibration::{GatePolicy, ItemVerdict, Record, Report};
    let records: Vec<Record> = (0..40)
        .map(|i| {
            serde_json::from_value(serde_json::json!({
                "id": format!("r{i}"), "task": "pointwise", "criterion": "c", "input": "i",
                "response": "r", "human_label": if i % 2 == 0 { "fail" } else { "pass" },
                "scale": {"type": "binary", "labels": ["pass", "fail"]}
            }))
            .unwrap()
        })
        .collect();
    let verdicts: Vec<ItemVerdict> = records
        .iter()
        .map(|r| ItemVerdict {
            label: r.human_label.clone(),
            score: None,
            orders: None,
            error: None,
            reasoning: Some("r".into()),
            cost_usd: None,
        })
        .collect();
    let report = Report::new("set", JUDGE, &records, &verdicts, &GatePolicy::default()).unwrap();
    let settings = gavel_core::JudgeSettings::default();
    gavel_core::CalibrationRun {
        id: id.into(),
        created_at: gavel_core::now_rfc3339(),
        dataset: "set".into(),
        judge: JUDGE.into(),
        items: 40,
        judged: 40,
        agreement: report.agreement,
        kappa: report.kappa,
        fit_to_gate: report.fit_to_gate,
        fingerprint: Some(
            gavel_calibration::fingerprint(JUDGE, &settings, &[kind], scored).unwrap(),
        ),
        report: serde_json::to_value(&report).unwrap(),
    }
}

/// The calibration gate a suite gated on `ids` with `checks` (YAML flow
/// lists of one case each) is prepared with: passed, and why not.
async fn prepared_gate(store: &Store, ids: &str, checks: &[&str]) -> (bool, String) {
    let cases: String = checks
        .iter()
        .enumerate()
        .map(|(i, c)| format!("  - {{id: c{i}, input: hi, targets: [echo], checks: [{c}]}}\n"))
        .collect();
    let text = format!(
        "name: bound\njudge:\n  model: {JUDGE}\n  calibration: {ids}\n{ECHO}  other:\n    type: command\n    command: [cat]\ncases:\n{cases}"
    );
    let mut prepared = PreparedRun::new(store.clone(), config(text)).await.unwrap();
    prepared.store_run().await.unwrap();
    let run = store.find_run(prepared.run_id()).await.unwrap();
    let gate = &run.config["calibration"];
    (
        gate["passed"].as_bool().unwrap(),
        gate["reason"].as_str().unwrap_or_default().to_owned(),
    )
}

/// Every judge a suite grades with must be calibrated: each escape fails the
/// gate naming the judge and the check using it.
#[tokio::test]
async fn every_grading_judge_is_bound_to_a_calibration() {
    use gavel_checks::TemplateKind;
    use gavel_core::Scale;
    let dir = tempfile::tempdir().unwrap();
    let store = store(&dir).await;
    let point = calibration(
        "cal-point",
        TemplateKind::Judge,
        Some((Scale::ZeroToOne, Some(0.7))),
    );
    let pair = calibration("cal-pair", TemplateKind::Pairwise, None);
    store.save_calibration(&point).await.unwrap();
    store.save_calibration(&pair).await.unwrap();

    let judged = "{type: judge, criteria: says ok}";
    assert_eq!(
        prepared_gate(&store, "cal-point", &[judged]).await,
        (true, String::new())
    );
    let other = "openai-compatible:other@http://127.0.0.1:9/v1";
    let escapes = [
        (
            format!("{{type: judge, criteria: c, model: \"{other}\"}}"),
            "model other ≠ judge at calibration",
        ),
        (
            "{type: judge, criteria: c, scale: 1-5}".to_owned(),
            "scale 1-5 ≠ 0-1 at calibration",
        ),
        (
            "{type: judge, criteria: c, threshold: 0.5}".to_owned(),
            "threshold 0.5 ≠ 0.7 at calibration",
        ),
        (
            format!("{{type: consensus, criteria: c, judges: [{{}}, {{model: \"{other}\"}}]}}"),
            "model other ≠ judge",
        ),
        (
            "{type: rubric, criteria: c}".to_owned(),
            "`rubric` judge not calibrated (the calibration covers `judge`)",
        ),
        (
            "{type: pairwise, criteria: c, against: {target: other}}".to_owned(),
            "`pairwise` judge not calibrated (the calibration covers `judge`)",
        ),
    ];
    for (check, why) in &escapes {
        let (passed, reason) = prepared_gate(&store, "cal-point", &[judged, check]).await;
        assert!(!passed, "{check}: {reason}");
        assert!(reason.contains(why), "{check}: {reason}");
        assert!(reason.contains("in case `c1`"), "names where: {reason}");
        assert!(
            !reason.contains("in case `c0`"),
            "the calibrated judge is not named: {reason}"
        );
    }
    // A pairwise calibration covers the pairwise check, and both together pass.
    let pairwise = "{type: pairwise, criteria: c, against: {target: other}}";
    let both = "[cal-point, cal-pair]";
    assert_eq!(
        prepared_gate(&store, both, &[judged, pairwise]).await,
        (true, String::new())
    );
    // A pointwise judge after a pairwise-only calibration.
    let (passed, reason) = prepared_gate(&store, "cal-pair", &[judged]).await;
    assert!(!passed);
    assert!(
        reason.contains("`judge` judge not calibrated (the calibration covers `pairwise`)"),
        "{reason}"
    );
}

#[tokio::test]
async fn a_finished_run_keeps_its_decision_until_the_run_changes() {
    use gavel_session::report::{Decision, decision};
    let dir = tempfile::tempdir().unwrap();
    let store = store(&dir).await;
    let cases = "  - {id: a, input: hi, checks: [{type: contains, value: ok}]}\n  - {id: b, input: hi, checks: [{type: contains, value: nope}]}\n";
    let (id, gate, _) = run_here(&store, suite("kept", "", cases)).await;
    assert_eq!(gate.word(), "FAIL", "{gate:?}");
    // The run's end kept what it came to; a regated report does not replace it.
    let stamp = store.decision_stamp(&id).await.unwrap();
    let kept: Option<Decision> = store.decision(&id, &stamp).await.unwrap();
    let kept = kept.expect("kept when the run finished");
    assert_eq!(kept.gate, gate);
    assert_eq!((kept.overall.passed, kept.overall.failed), (1, 1));
    let lenient = Regate {
        min_pass_rate: Some(0.0),
        ..Regate::default()
    };
    assert_eq!(stored_gate(&store, &id, &lenient).await.word(), "PASS");
    assert_eq!(decision(&store, &id).await.unwrap(), kept);
    // What is kept is what is read: the executions are not folded again.
    let mut planted = kept.clone();
    planted.overall.total = 99;
    store.save_decision(&id, &stamp, &planted).await.unwrap();
    assert_eq!(decision(&store, &id).await.unwrap().overall.total, 99);
    // Once the run changes, it is decided again from its executions.
    store
        .finish_run(
            &id,
            gavel_core::RunStatus::Interrupted,
            &gavel_core::now_rfc3339(),
        )
        .await
        .unwrap();
    let again = decision(&store, &id).await.unwrap();
    assert_eq!(again.overall.total, 2);
    assert_eq!(again.gate.word(), "FAIL", "{:?}", again.gate);
    assert!(again.gate.unfinished.is_some(), "{:?}", again.gate);
    let stamp = store.decision_stamp(&id).await.unwrap();
    let kept: Option<Decision> = store.decision(&id, &stamp).await.unwrap();
    assert_eq!(kept, Some(again));
}
