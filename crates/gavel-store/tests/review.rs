//! The review queue on SQLite and PostgreSQL: a labeller's queue leaves out
//! what they labelled, puts judge/human disagreements first, then strata with
//! the fewest labels, then the judge nearest its threshold; pairs of targets
//! and of runs; pairwise labels in the true order, validated, with rechecks
//! in the other order due after every four.

use gavel_core::{CheckKind, Execution, RunRecord, RunStatus, Status, Transcript, Verdict};
use gavel_store::{Label, PairLabel, PairSide, Pairing, Review, Store, StoreError};
use serde_json::json;

mod support;

use support::{TestResult, on_postgres, on_sqlite};

const RUN: &str = "019a0000-7777-7000-8000-000000000001";
const OTHER: &str = "019a0000-7777-7000-8000-000000000002";

fn execution(case: usize, target: &str, status: Status, score: Option<f64>) -> Execution {
    let verdicts = score
        .map(|s| Verdict {
            check: "judge".into(),
            kind: CheckKind::Judge,
            round: None,
            status,
            score: Some(s),
            threshold: Some(0.5),
            reason: "because".into(),
            evidence: Default::default(),
            cost_usd: None,
        })
        .into_iter()
        .collect();
    Execution {
        case_id: format!("c{case}"),
        case_name: format!("Case {case}"),
        target: target.into(),
        repeat_index: 0,
        tags: vec![],
        status,
        score,
        transcript: Transcript::default(),
        verdicts,
        reason: None,
        started_at: gavel_core::now_rfc3339(),
        duration_ms: 1,
    }
}

async fn run(store: &Store, id: &str) -> TestResult {
    store
        .create_run(&RunRecord {
            id: id.into(),
            suite: "support".into(),
            status: RunStatus::Completed,
            started_at: gavel_core::now_rfc3339(),
            finished_at: None,
            config: json!({}),
            planned: None,
        })
        .await?;
    // Target x: pass, fail, pass, fail, pass, error, the judge this far from
    // its threshold 0.5: 0.4, 0.05, 0.02, 0.4, 0.2, none. Target y: all pass.
    let x = [
        (Status::Pass, Some(0.9)),
        (Status::Fail, Some(0.45)),
        (Status::Pass, Some(0.52)),
        (Status::Fail, Some(0.1)),
        (Status::Pass, Some(0.7)),
        (Status::Error, None),
    ];
    let mut all: Vec<Execution> = x
        .iter()
        .enumerate()
        .map(|(i, (s, score))| execution(i, "x", *s, *score))
        .collect();
    all.extend((0..6).map(|i| execution(i, "y", Status::Pass, None)));
    store.record_executions(id, &all).await?;
    Ok(())
}

fn review(who: &str, skip: usize, limit: usize) -> Review {
    Review {
        run_id: RUN.into(),
        labeller: who.into(),
        skip,
        limit,
    }
}

fn label(case: &str, who: &str, verdict: &str) -> Label {
    Label {
        run_id: RUN.into(),
        case_id: case.into(),
        target: "x".into(),
        repeat_index: 0,
        label: verdict.into(),
        score: None,
        who: who.into(),
        note: None,
        created_at: String::new(),
    }
}

fn pair(case: &str, who: &str, choice: &str, b_run: &str, b_target: &str) -> PairLabel {
    PairLabel {
        run_id: RUN.into(),
        case_id: case.into(),
        target: "x".into(),
        repeat_index: 0,
        pair: PairSide {
            run_id: b_run.into(),
            target: b_target.into(),
            repeat_index: 0,
        },
        label: choice.into(),
        who: who.into(),
        note: None,
        shown_swapped: true,
        recheck: None,
        created_at: String::new(),
    }
}

async fn keys(store: &Store, r: &Review) -> Result<Vec<String>, StoreError> {
    let page = store.review_queue(r).await?;
    Ok(page
        .items
        .iter()
        .map(|i| format!("{}/{}", i.execution.case_id, i.execution.target))
        .collect())
}

async fn story(url: String) -> TestResult {
    let store = Store::open(&url).await?;
    run(&store, RUN).await?;
    run(&store, OTHER).await?;

    // Nothing labelled: nearest the threshold first, then recording order.
    let page = store.review_queue(&review("ana", 0, 3)).await?;
    assert_eq!(page.remaining, 12);
    assert_eq!(
        keys(&store, &review("ana", 0, 3)).await?,
        ["c2/x", "c1/x", "c4/x"]
    );
    let first = &page.items[0];
    assert!((first.why.margin.unwrap_or(1.0) - 0.02).abs() < 1e-9);
    assert_eq!(first.execution.verdicts.len(), 1, "read in full");
    assert_eq!(keys(&store, &review("ana", 1, 1)).await?, ["c1/x"], "skip");

    // Bo says c0/x failed where the judge passed it: it comes first for Ana, and
    // the stratum x × pass, now labelled, after every stratum without a label.
    store.add_label(&label("c0", "bo", "fail")).await?;
    let page = store.review_queue(&review("ana", 0, 20)).await?;
    let order: Vec<String> = page
        .items
        .iter()
        .map(|i| format!("{}/{}", i.execution.case_id, i.execution.target))
        .collect();
    assert_eq!(order[..2], ["c0/x", "c1/x"], "{order:?}");
    assert_eq!(page.items[0].why.disagree, 1);
    assert_eq!(page.items[0].why.others, 1);
    assert_eq!(order[order.len() - 2..], ["c2/x", "c4/x"], "{order:?}");
    assert_eq!(page.items[11].why.stratum_labels, 1);
    // Bo's own queue leaves it out.
    assert_eq!(store.review_queue(&review("bo", 0, 1)).await?.remaining, 11);
    store.add_label(&label("c1", "ana", "fail")).await?;
    assert_eq!(
        store.review_queue(&review("ana", 0, 1)).await?.remaining,
        11
    );

    // Pairs of targets: x (A) against y (B), per case.
    let targets = store
        .pair_queue(&review("ana", 0, 10), &Pairing::Targets)
        .await?;
    assert_eq!(targets.remaining, 6);
    assert!(
        targets
            .items
            .iter()
            .all(|p| p.a.target == "x" && p.b.target == "y")
    );
    // Bo prefers x on c3, where the judge failed x and passed y: first for Ana.
    store
        .add_pair_label(&pair("c3", "bo", "A", RUN, "y"))
        .await?;
    let targets = store
        .pair_queue(&review("ana", 0, 10), &Pairing::Targets)
        .await?;
    assert_eq!(targets.items[0].a.case_id, "c3");
    assert_eq!(targets.items[0].why.disagree, 1);
    // Pairs of runs: the same case and target in the other run.
    let runs = Pairing::Run(OTHER.into());
    let across = store.pair_queue(&review("ana", 0, 20), &runs).await?;
    assert_eq!(across.remaining, 12);
    assert!(across.items.iter().all(|p| p.a.target == p.b.target));

    // Pairwise labels are checked, kept apart from single ones, and read back
    // as the calibration's labels with their second execution.
    let bad = store
        .add_pair_label(&pair("c0", "ana", "C", RUN, "y"))
        .await;
    assert!(matches!(bad, Err(StoreError::Invalid { .. })), "{bad:?}");
    let gone = store
        .add_pair_label(&pair("c9", "ana", "A", RUN, "y"))
        .await;
    assert!(matches!(gone, Err(StoreError::NotFound(_))), "{gone:?}");
    for case in ["c0", "c1", "c2"] {
        store
            .add_pair_label(&pair(case, "ana", "B", RUN, "y"))
            .await?;
        assert_eq!(store.due_recheck(RUN, RUN, "ana").await?, None);
    }
    store
        .add_pair_label(&pair("c4", "ana", "tie", RUN, "y"))
        .await?;
    let due = store
        .due_recheck(RUN, RUN, "ana")
        .await?
        .ok_or("a recheck is due")?;
    assert_eq!(due.case_id, "c0");
    assert!(due.shown_swapped);
    let again = PairLabel {
        recheck: Some("A".into()),
        ..due
    };
    store.recheck_pair_label(&again).await?;
    assert_eq!(
        store.due_recheck(RUN, RUN, "ana").await?,
        None,
        "one per four"
    );
    let nobody = PairLabel {
        who: "cy".into(),
        ..again.clone()
    };
    assert!(matches!(
        store.recheck_pair_label(&nobody).await,
        Err(StoreError::NotFound(_))
    ));
    let pairs = store.run_pair_labels(RUN).await?;
    assert_eq!(pairs.len(), 5);
    let c0 = pairs.iter().find(|p| p.case_id == "c0").ok_or("c0")?;
    assert_eq!((c0.label.as_str(), c0.recheck.as_deref()), ("B", Some("A")));
    assert_eq!(store.run_labels(RUN).await?.len(), 2, "single labels only");
    let set = store.labels("support").await?;
    assert_eq!(set.len(), 7);
    let read = set
        .iter()
        .find(|l| l.item_id == c0.item_id())
        .ok_or("the pair in the set")?;
    let b = read.pair.as_ref().ok_or("its second execution")?;
    assert_eq!((b.run_id.as_str(), b.key.target.as_str()), (RUN, "y"));
    assert_eq!(
        store
            .pair_queue(&review("ana", 0, 1), &Pairing::Targets)
            .await?
            .remaining,
        2
    );
    Ok(())
}

#[tokio::test]
async fn review_queue_on_sqlite() -> TestResult {
    on_sqlite(story).await
}

#[tokio::test]
async fn review_queue_on_postgres() -> TestResult {
    on_postgres(story).await
}
