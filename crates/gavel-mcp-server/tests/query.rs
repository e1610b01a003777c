//! The query layer of `gavel mcp` on every backend: a SQLite temp file always,
//! PostgreSQL too when `GAVEL_TEST_DATABASE_URL` names a server (a fresh database
//! per test, dropped after it). Seeded runs, executions, verdicts and a human
//! label; p95, group_by, filters and paging checked against values computed here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::{BTreeMap, BTreeSet};

use gavel_core::{
    Execution, ExecutionKey, ExecutionRef, Label, RunRecord, RunStatus, Status, Transcript, Verdict,
};
use gavel_mcp_server::{Aggregation, Field, QueryArgs, QueryResult, ToolError, query_evaluations};
use gavel_store::{EvaluatorType, Store};
use serde_json::json;

/// (kind, check) of the seeded verdicts, cycled over executions.
const CHECKS: &[(&str, &str)] = &[
    ("judge", "judge"),
    ("contains", "contains hello"),
    ("similar", "similar"),
];

/// A deterministic spread of scores in 0..=1.
fn score(i: usize, j: usize) -> f64 {
    ((i * 37 + j * 11) % 101) as f64 / 100.0
}

fn execution(case: usize, target: &str, tags: &[&str], verdicts: Vec<Verdict>) -> Execution {
    let mut e: Execution = serde_json::from_value(json!({
        "case_id": format!("case-{case}"), "case_name": format!("case {case}"),
        "target": target, "repeat_index": 0, "tags": tags, "status": "pass",
        "started_at": format!("2026-11-2{}T00:00:00.000Z", case % 3),
        "duration_ms": 5,
        "transcript": Transcript { session_id: format!("s{case}"), turns: vec![] },
        "verdicts": []
    }))
    .unwrap();
    e.verdicts = verdicts;
    e
}

/// Two runs, two targets, three check kinds; returns the run ids.
async fn seed(store: &Store, per_run: usize) -> Vec<String> {
    let mut ids = Vec::new();
    for (r, suite) in ["alpha", "beta"].iter().enumerate() {
        let run = RunRecord {
            id: format!("019a0000-0000-7000-8000-00000000000{r}"),
            suite: (*suite).to_owned(),
            status: RunStatus::Completed,
            started_at: format!("2026-11-2{r}T00:00:00.000Z"),
            finished_at: None,
            config: json!({"min_pass_rate": 50.0}),
            planned: None,
        };
        store.create_run(&run).await.unwrap();
        let executions: Vec<Execution> = (0..per_run)
            .map(|i| {
                let verdicts = CHECKS
                    .iter()
                    .enumerate()
                    .map(|(j, (kind, check))| {
                        let s = score(i + r * 1000, j);
                        let status = if s >= 0.5 { Status::Pass } else { Status::Fail };
                        let mut v = Verdict::new(*check, kind.parse().unwrap(), status, "seeded")
                            .with_score(s, Some(0.5));
                        if *kind == "judge" {
                            // Run 1's judge recorded its base URL with the model.
                            let url = if r == 1 {
                                "@https://llm.example.test/v1"
                            } else {
                                ""
                            };
                            let model = format!("openai:m{}{url}", i % 2);
                            v = v.with_evidence(json!({ "model": model }));
                        }
                        v
                    })
                    .collect();
                let target = if i % 2 == 0 { "bot-a" } else { "bot-b" };
                let tags: &[&str] = if i % 3 == 0 {
                    &["smoke", "fast"]
                } else {
                    &["deep"]
                };
                execution(i, target, tags, verdicts)
            })
            .collect();
        store.record_executions(&run.id, &executions).await.unwrap();
        ids.push(run.id);
    }
    // One human label of run 0, case-0, bot-a.
    store
        .put_label(&Label {
            label_set: "alpha".into(),
            item_id: "x".into(),
            labeller: "ann".into(),
            execution: Some(ExecutionRef {
                run_id: ids[0].clone(),
                key: ExecutionKey::new("case-0", "bot-a", 0),
            }),
            pair: None,
            label: Some("fail".into()),
            score: Some(0.25),
            note: None,
            created_at: "2026-11-23T00:00:00.000Z".into(),
        })
        .await
        .unwrap();
    ids
}

/// numpy's default percentile, written out independently of gavel-stats.
fn p(mut xs: Vec<f64>, q: f64) -> f64 {
    xs.sort_by(f64::total_cmp);
    let h = (xs.len() - 1) as f64 * q;
    let lo = xs[h.floor() as usize];
    let hi = xs[h.ceil() as usize];
    lo + (h - h.floor()) * (hi - lo)
}

fn groups(result: QueryResult) -> BTreeMap<Vec<Option<String>>, (Option<f64>, usize)> {
    let QueryResult::Aggregated(a) = result else {
        panic!("an aggregation was asked for")
    };
    a.groups
        .into_iter()
        .map(|g| (g.key.into_values().collect(), (g.value, g.count)))
        .collect()
}

fn close(a: Option<f64>, b: f64) {
    let a = a.expect("a value");
    assert!((a - b).abs() < 1e-9, "{a} != {b}");
}

async fn story(url: String) {
    let store = Store::open(&url).await.unwrap();
    let per_run = 40;
    let runs = seed(&store, per_run).await;

    // p95 per check, over both runs.
    let result = query_evaluations(
        &store,
        QueryArgs {
            aggregation: Some(Aggregation::P95),
            group_by: vec![Field::Check],
            ..QueryArgs::default()
        },
    )
    .await
    .unwrap();
    let got = groups(result);
    for (j, (_, check)) in CHECKS.iter().enumerate() {
        let scores: Vec<f64> = (0..2)
            .flat_map(|r| (0..per_run).map(move |i| score(i + r * 1000, j)))
            .collect();
        let (value, count) = got[&vec![Some((*check).to_owned())]];
        close(value, p(scores, 0.95));
        assert_eq!(count, 2 * per_run);
    }
    // The human label is its own group (its label set).
    let (value, count) = got[&vec![Some("alpha".to_owned())]];
    assert_eq!((value, count), (Some(0.25), 1));

    // Filters: llm verdicts of run 0 on bot-b, model m1, averaged.
    let result = query_evaluations(
        &store,
        QueryArgs {
            run: Some(runs[0].clone()),
            target: Some("bot-b".into()),
            evaluator_type: Some(EvaluatorType::Llm),
            model: Some("openai:m1".into()),
            aggregation: Some(Aggregation::Avg),
            ..QueryArgs::default()
        },
    )
    .await
    .unwrap();
    let expected: Vec<f64> = (0..per_run)
        .filter(|i| i % 2 == 1)
        .map(|i| score(i, 0))
        .collect();
    let (value, count) = groups(result)[&Vec::<Option<String>>::new()];
    assert_eq!(count, expected.len());
    close(value, expected.iter().sum::<f64>() / expected.len() as f64);

    // A model id without its URL matches it at any URL; with it, only there.
    for (model, runs) in [
        ("openai:m1", 2),
        ("openai:m1@https://llm.example.test/v1", 1),
        ("openai:m", 0),
    ] {
        let result = query_evaluations(
            &store,
            QueryArgs {
                model: Some(model.into()),
                aggregation: Some(Aggregation::Count),
                ..QueryArgs::default()
            },
        )
        .await
        .unwrap();
        let count = groups(result)
            .get(&Vec::<Option<String>>::new())
            .map_or(0, |(_, count)| *count);
        assert_eq!(count, runs * per_run / 2, "{model}");
    }

    // group_by [tag, evaluator_type] with pass_rate; tags fan out.
    let result = query_evaluations(
        &store,
        QueryArgs {
            suite: Some("beta".into()),
            tag: Some("smoke".into()),
            aggregation: Some(Aggregation::PassRate),
            group_by: vec![Field::Tag, Field::EvaluatorType],
            ..QueryArgs::default()
        },
    )
    .await
    .unwrap();
    let got = groups(result);
    let smoke: Vec<usize> = (0..per_run).filter(|i| i % 3 == 0).collect();
    for tag in ["fast", "smoke"] {
        for (j, kind) in ["llm", "rule", "classifier"].iter().enumerate() {
            let passed = smoke.iter().filter(|i| score(*i + 1000, j) >= 0.5).count();
            // Keys come in field-name order: evaluator_type, tag.
            let (value, count) = got[&vec![Some((*kind).to_owned()), Some(tag.to_owned())]];
            assert_eq!(count, smoke.len());
            close(value, passed as f64 / smoke.len() as f64);
        }
    }
    assert_eq!(got.len(), 6, "{got:?}");

    // Status and time range; the label's status is fail.
    let result = query_evaluations(
        &store,
        QueryArgs {
            status: Some(Status::Fail),
            evaluator_type: Some(EvaluatorType::Human),
            since: Some("2026-11-23T00:00:00Z".into()),
            aggregation: Some(Aggregation::Count),
            ..QueryArgs::default()
        },
    )
    .await
    .unwrap();
    assert_eq!(
        groups(result)[&Vec::<Option<String>>::new()],
        (Some(1.0), 1)
    );

    // Listing in pages: every evaluation once.
    let mut seen = BTreeSet::new();
    let mut cursor = None;
    loop {
        let result = query_evaluations(
            &store,
            QueryArgs {
                kind: Some("contains".into()),
                limit: Some(7),
                cursor: cursor.take(),
                ..QueryArgs::default()
            },
        )
        .await
        .unwrap();
        let QueryResult::Listing(page) = result else {
            panic!("a listing")
        };
        assert!(page.evaluations.len() <= 7);
        for e in page.evaluations {
            assert_eq!(e.evaluator_type, EvaluatorType::Rule);
            assert!(seen.insert((e.run, e.case, e.target)), "listed twice");
        }
        match page.next_cursor {
            Some(next) => cursor = Some(next),
            None => break,
        }
    }
    assert_eq!(seen.len(), 2 * per_run);

    // An exactly full last page has no cursor to an empty one.
    let contains = |cursor: Option<String>| QueryArgs {
        kind: Some("contains".into()),
        limit: Some(u32::try_from(per_run).unwrap()),
        cursor,
        ..QueryArgs::default()
    };
    let QueryResult::Listing(first) = query_evaluations(&store, contains(None)).await.unwrap()
    else {
        panic!("a listing")
    };
    assert_eq!(first.evaluations.len(), per_run);
    let QueryResult::Listing(last) = query_evaluations(&store, contains(first.next_cursor))
        .await
        .unwrap()
    else {
        panic!("a listing")
    };
    assert_eq!(last.evaluations.len(), per_run);
    assert_eq!(last.next_cursor, None);

    // Bad input names its field.
    let err = query_evaluations(
        &store,
        QueryArgs {
            run: Some("ffffffff-nope".into()),
            ..QueryArgs::default()
        },
    )
    .await
    .unwrap_err();
    assert!(
        matches!(&err, ToolError::Invalid { field: Some(f), .. } if f == "run"),
        "{err}"
    );
    let err = query_evaluations(
        &store,
        QueryArgs {
            group_by: vec![Field::Check],
            ..QueryArgs::default()
        },
    )
    .await
    .unwrap_err();
    assert!(err.to_string().contains("`group_by`"), "{err}");
    // Too short a prefix of a run id says so, not "not found".
    let err = query_evaluations(
        &store,
        QueryArgs {
            run: Some(runs[0][..3].to_owned()),
            ..QueryArgs::default()
        },
    )
    .await
    .unwrap_err();
    assert!(
        err.to_string()
            .contains("give at least 6 characters of the run id"),
        "{err}"
    );
    store.close().await;
}

#[tokio::test]
async fn queries_on_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    story(format!("sqlite://{}", dir.path().join("q.db").display())).await;
}

#[tokio::test]
async fn queries_on_postgres() {
    gavel_testkit::on_fresh_postgres("the query story", story).await;
}

/// `query_evaluations` latency over 100,000 stored verdicts, on a SQLite file
/// and, when `GAVEL_TEST_DATABASE_URL` names a server, a fresh PostgreSQL
/// database: `cargo test -p gavel-mcp-server --release --test query -- --ignored --nocapture`.
#[tokio::test(flavor = "multi_thread")]
#[ignore = "a measurement: prints the latency of p95 grouped by check over 100,000 verdicts"]
async fn latency_over_100k_verdicts() {
    let dir = tempfile::tempdir().unwrap();
    measure(format!("sqlite://{}", dir.path().join("big.db").display())).await;
    if std::env::var_os("GAVEL_TEST_DATABASE_URL").is_some() {
        gavel_testkit::on_fresh_postgres("the measurement", measure).await;
    }
}

/// Seeds 100,000 verdicts into the store at `url` and prints query latencies.
async fn measure(url: String) {
    let store = Store::open(&url).await.unwrap();
    let backend = url.split(':').next().unwrap_or_default().to_owned();
    // 2 runs × 16,667 executions × 3 verdicts ≈ 100,000 verdicts.
    seed(&store, 16_667).await;
    for (name, args) in [
        (
            "p95 group_by [check], all",
            QueryArgs {
                aggregation: Some(Aggregation::P95),
                group_by: vec![Field::Check],
                ..QueryArgs::default()
            },
        ),
        (
            "avg, evaluator_type llm, one run",
            QueryArgs {
                run: Some("019a0000-0000-7000-8000-000000000001".into()),
                evaluator_type: Some(EvaluatorType::Llm),
                aggregation: Some(Aggregation::Avg),
                ..QueryArgs::default()
            },
        ),
        ("listing, first page of 100", QueryArgs::default()),
    ] {
        let mut times = Vec::new();
        for _ in 0..5 {
            let start = std::time::Instant::now();
            query_evaluations(&store, args.clone()).await.unwrap();
            times.push(start.elapsed().as_secs_f64() * 1000.0);
        }
        times.sort_by(f64::total_cmp);
        println!(
            "{backend}: query_evaluations {name}: median {:.1} ms over 5 (min {:.1})",
            times[2], times[0]
        );
    }
    store.close().await;
}
