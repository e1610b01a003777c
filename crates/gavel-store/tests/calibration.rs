//! Labels and calibration runs on every backend: a SQLite temp file always,
//! PostgreSQL too when `GAVEL_TEST_DATABASE_URL` names a server (a fresh database
//! per test, dropped after it).
#![allow(clippy::unwrap_used)]

use std::error::Error;

use gavel_core::{CalibrationRun, ExecutionKey, ExecutionRef, JudgeFingerprint, Label};
use gavel_store::{Store, StoreError};
use serde_json::json;

type TestResult = Result<(), Box<dyn Error + Send + Sync>>;

fn label(item: &str, labeller: &str, label: Option<&str>, score: Option<f64>) -> Label {
    Label {
        label_set: "support".into(),
        item_id: item.into(),
        labeller: labeller.into(),
        execution: None,
        pair: None,
        label: label.map(str::to_owned),
        score,
        note: None,
        created_at: gavel_core::now_rfc3339(),
    }
}

async fn story(url: String) -> TestResult {
    let store = Store::open(&url).await?;
    assert!(store.labels("support").await?.is_empty());

    // A NULL score first, then a real one in the same statement position.
    let mut a = label("run1/case/agent/0", "ann", Some("pass"), None);
    a.execution = Some(ExecutionRef {
        run_id: "run1".into(),
        key: ExecutionKey::new("case", "agent", 0),
    });
    store.put_label(&a).await?;
    store
        .put_label(&label("ext-2", "bob", None, Some(3.5)))
        .await?;
    let mut b = label("ext-2", "ann", Some("fail"), Some(1.0));
    b.note = Some("made up a number".into());
    store.put_label(&b).await?;
    store
        .put_label(&label("other", "ann", Some("pass"), None))
        .await?;
    let mut other_set = label("x", "ann", Some("A"), None);
    other_set.label_set = "pairs".into();
    store.put_label(&other_set).await?;

    let labels = store.labels("support").await?;
    assert_eq!(labels.len(), 4, "{labels:?}");
    assert_eq!(labels[0].item_id, "ext-2");
    assert_eq!(labels[0].labeller, "ann");
    assert_eq!(labels[0].note.as_deref(), Some("made up a number"));
    assert_eq!(labels[1].score, Some(3.5));
    assert_eq!(labels[3], a, "the execution key reads back");

    // Labelling again replaces, never duplicates.
    let mut again = a.clone();
    again.label = Some("fail".into());
    store.put_label(&again).await?;
    let labels = store.labels("support").await?;
    assert_eq!(labels.len(), 4);
    assert_eq!(labels[3].label.as_deref(), Some("fail"));

    // A label without a label or score is refused, naming it.
    let err = store
        .put_label(&label("empty", "ann", None, None))
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::Invalid { .. }), "{err}");
    assert!(err.to_string().contains("support/empty"), "{err}");

    // Calibration runs: NULL statistics, then real ones.
    let undecided = CalibrationRun {
        id: "0190e0a4-0000-7000-8000-000000000001".into(),
        created_at: "2026-11-23T01:00:00.000Z".into(),
        dataset: "faireval".into(),
        judge: "baseline:length".into(),
        items: 40,
        judged: 0,
        agreement: None,
        kappa: None,
        fit_to_gate: false,
        report: json!({"items": []}),
        fingerprint: None,
    };
    store.save_calibration(&undecided).await?;
    let fit = CalibrationRun {
        id: "0190e0a4-0000-7000-8000-000000000002".into(),
        created_at: "2026-11-23T02:00:00.000Z".into(),
        judged: 40,
        agreement: Some(0.825),
        kappa: Some(0.7012345678901234),
        fit_to_gate: true,
        report: json!({"agreement": 0.825, "confusion": {"labels": ["A", "B", "tie"]}}),
        fingerprint: Some(JudgeFingerprint {
            provider: "openai-compatible".into(),
            model: "judge".into(),
            base_url: Some("127.0.0.1:8080".into()),
            templates: [("pairwise".to_owned(), "0123456789abcdef".to_owned())].into(),
            temperature: 0.25,
            max_tokens: 1024,
            scale: Some("1-5".into()),
            threshold: Some(4.0),
        }),
        ..undecided.clone()
    };
    store.save_calibration(&fit).await?;
    assert_eq!(store.calibration(&fit.id).await?, fit);
    assert_eq!(store.calibration(&undecided.id).await?, undecided);
    let all = store.calibrations().await?;
    assert_eq!(all, vec![fit.clone(), undecided.clone()], "newest first");
    assert!(matches!(
        store.calibration("nope").await,
        Err(StoreError::NotFound(_))
    ));
    assert!(
        store.save_calibration(&fit).await.is_err(),
        "ids are unique"
    );
    store.close().await;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn labels_and_calibrations_on_sqlite() -> TestResult {
    let dir = tempfile::tempdir()?;
    story(format!(
        "sqlite://{}",
        dir.path().join("gavel.db").display()
    ))
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn labels_and_calibrations_on_postgres() -> TestResult {
    gavel_testkit::on_fresh_postgres("the labels and calibrations story", story)
        .await
        .unwrap_or(Ok(()))
}
