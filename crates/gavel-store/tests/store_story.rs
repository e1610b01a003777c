//! The store's story, told once and run on every backend: a SQLite temp file always,
//! PostgreSQL too when `GAVEL_TEST_DATABASE_URL` names a server (a fresh database is
//! created for each test and dropped after it).

use std::error::Error;
use std::future::Future;

use gavel_core::workspace::{ChangeKind, CommandResult, FileChange, FileSnapshot, WorkspaceState};
use gavel_core::{
    Case, Execution, RunRecord, RunStatus, Status, TargetFailure, ToolCall, Transcript, Turn,
    Usage, Verdict,
};
use gavel_store::{Engine, Store, StoreError};
use serde_json::{Value, json};
use sqlx::{AssertSqlSafe, Connection, Executor};

type TestResult = Result<(), Box<dyn Error + Send + Sync>>;

const RUN_ID: &str = "019a0000-1111-7000-8000-000000000001";
const OLDER_RUN_ID: &str = "019a0000-2222-7000-8000-000000000002";

const SUITE: &str = r#"
cases:
  - id: greet
    input: "Hello, who are you? ✓"
    tags: [smoke, chat]
    checks:
      - type: contains
        value: [hello, gavel]
      - type: numeric-fields
        values: { "/total": 0.1, "/ratio": 0.30000000000000004 }
    threshold: 0.7
    repeat: 2
  - id: tools
    rounds:
      - input: { "ask": "weather", "city": "Zürich" }
        expected_tools: [lookup]
      - input: And tomorrow?
        criteria: Mentions tomorrow.
    context: { "user": { "id": 7, "tier": "gold" } }
    revival: true
  - id: broken
    input: Will this fail?
    timeout_s: 2.5
"#;

// ---------------------------------------------------------------- fixtures

fn run_record(id: &str, started_at: &str) -> RunRecord {
    RunRecord {
        id: id.to_owned(),
        suite: "story".to_owned(),
        status: RunStatus::Running,
        started_at: started_at.to_owned(),
        finished_at: None,
        config: json!({
            "files": ["suite.yaml"],
            "concurrency": 4,
            "filters": { "tags": ["smoke"] },
            "ratio": 0.1,
        }),
        planned: Some(7),
    }
}

fn cases() -> Result<Vec<Case>, Box<dyn Error + Send + Sync>> {
    let suite = gavel_core::load::parse_suite_str(SUITE, "suite.yaml".as_ref())
        .map_err(|errors| format!("fixture suite does not load: {errors:?}"))?;
    assert!(
        suite.cases.iter().all(|c| !c.source.is_empty()),
        "the loader fills `source`"
    );
    Ok(suite.cases)
}

/// An execution with everything the schema holds: several turns, tool calls with
/// JSON arguments and results (and none), usage with and without cost, a JSON null
/// response, verdicts with evidence, no score, no round.
fn execution(case: &str, target: &str, repeat: u32) -> Execution {
    let turns = vec![
        Turn {
            round: 0,
            input: format!("Hello from {case} ✓"),
            output: "Hi! I am \"gavel\"'s test agent.\nSecond line.".to_owned(),
            response: Some(
                json!({ "answer": "Hi!", "scores": [0.1, 0.2, 1e-9], "nested": { "ok": true } }),
            ),
            tool_calls: vec![
                ToolCall {
                    agent: Some("triage".to_owned()),
                    name: "lookup".to_owned(),
                    arguments: json!({ "city": "Zürich", "days": 2, "units": ["c", "mm"] }),
                    result: Some(json!({ "temp": 21.5, "rain": null })),
                    ..Default::default()
                },
                ToolCall {
                    name: "noop".to_owned(),
                    arguments: Value::Null,
                    result: None,
                    ..Default::default()
                },
            ],
            model_calls: Vec::new(),
            latency_ms: 1234,
            usage: Some(Usage {
                input_tokens: 120,
                output_tokens: 45,
                cost_usd: Some(0.1 + 0.2),
            }),
            failure: None,
            followup: false,
            branch: None,
            stream: None,
            harness_usage: None,
            attempts: None,
            agent: Some("billing".to_owned()),
            // What a coding agent left behind: kept in `conversation_json`.
            workspace: Some(Box::new(WorkspaceState {
                changes: vec![FileChange {
                    path: "src/ü.py".to_owned(),
                    kind: ChangeKind::Modified,
                    added: 1,
                    removed: 1,
                }],
                diff: "-return a - b\n+return a + b\n".to_owned(),
                diff_bytes: 29,
                files: vec![FileSnapshot {
                    path: "src/ü.py".to_owned(),
                    text: Some("return a + b\n".to_owned()),
                    partial: false,
                }],
                commands: vec![CommandResult {
                    name: "tests".to_owned(),
                    command: "python3 -m unittest".to_owned(),
                    exit_code: Some(1),
                    output: "FAILED (failures=1)".to_owned(),
                    problem: None,
                    timed_out: false,
                    duration_ms: 80,
                }],
                agent_exit: Some(0),
                kept: None,
            })),
        },
        Turn {
            round: 1,
            input: "And tomorrow?".to_owned(),
            output: String::new(),
            response: Some(Value::Null),
            tool_calls: vec![ToolCall {
                name: "lookup".to_owned(),
                arguments: json!([1, "two"]),
                result: Some(json!("sunny")),
                ..Default::default()
            }],
            model_calls: Vec::new(),
            latency_ms: 0,
            usage: Some(Usage {
                input_tokens: 0,
                output_tokens: 0,
                cost_usd: None,
            }),
            failure: None,
            // A streamed follow-up in a branch: kept in `conversation_json`.
            followup: true,
            branch: Some("b".to_owned()),
            stream: Some(gavel_core::StreamStats {
                events: 3,
                deltas: 2,
                done: true,
                first_token_ms: Some(12),
                ..gavel_core::StreamStats::default()
            }),
            // The follow-up detector's call on this answer.
            harness_usage: Some(Usage {
                input_tokens: 300,
                output_tokens: 20,
                cost_usd: Some(0.0004),
            }),
            // Sent three times: a 429, then a reset, then the answer.
            attempts: Some(gavel_core::Attempts {
                attempts: 3,
                retries: 2,
                rate_limited: 1,
                malformed: 0,
            }),
            agent: None,
            workspace: None,
        },
    ];
    let verdicts = vec![
        Verdict::new(
            "contains hello",
            gavel_core::CheckKind::Contains,
            Status::Pass,
            "found `hello`",
        )
        .in_round(Some(0))
        .with_evidence(json!({ "matched": ["hello"], "at": 3 })),
        Verdict::new(
            "judge",
            gavel_core::CheckKind::Rubric,
            Status::Fail,
            "The answer misses the date.",
        )
        .with_score(1.0 / 3.0, Some(0.7))
        .with_evidence(json!("raw judge text")),
        Verdict {
            cost_usd: Some(0.000_123_4),
            ..Verdict::new(
                "latency",
                gavel_core::CheckKind::Latency,
                Status::Skipped,
                "no budget",
            )
        },
    ];
    let mut e = Execution {
        case_id: case.to_owned(),
        case_name: format!("{case} (name)"),
        target: target.to_owned(),
        repeat_index: repeat,
        tags: vec!["smoke".to_owned(), format!("target:{target}")],
        status: Status::Pass,
        score: None,
        transcript: Transcript {
            session_id: format!("session-{case}-{target}-{repeat}"),
            turns,
        },
        verdicts,
        reason: None,
        started_at: format!("2026-01-02T03:04:{:02}.000Z", repeat),
        duration_ms: 98_765,
    };
    e.settle();
    e
}

/// An execution with more turns, tool calls and verdicts than one INSERT takes.
fn big_execution(case: &str, target: &str) -> Execution {
    let mut e = execution(case, target, 0);
    let template = e.transcript.turns[0].clone();
    e.transcript.turns = (0..150)
        .map(|i| Turn {
            round: i,
            input: format!("message {i}"),
            ..template.clone()
        })
        .collect();
    let verdict = e.verdicts[1].clone();
    e.verdicts = (0..250)
        .map(|i| Verdict {
            check: format!("check {i}"),
            score: Some(f64::from(i) / 250.0),
            ..verdict.clone()
        })
        .collect();
    e.settle();
    e
}

/// An execution whose target broke: a failure turn, no verdicts, no score.
fn failed_execution(case: &str, target: &str) -> Execution {
    let mut e = execution(case, target, 0);
    e.transcript.turns.truncate(1);
    e.transcript.turns[0].failure = Some(TargetFailure {
        message: "connection refused (os error 111)".to_owned(),
        transient: true,
    });
    e.verdicts.clear();
    e.settle();
    assert_eq!(e.status, Status::Error);
    e
}

// ---------------------------------------------------------------- the story

async fn story(url: String, engine: Engine) -> TestResult {
    let store = Store::open(&url).await?;
    assert_eq!(store.engine(), engine);
    assert!(store.latest_run().await?.is_none());
    assert!(store.runs(10).await?.is_empty());

    // Runs: two, started one day apart.
    // `planned` round-trips: a count (7, from `run_record`) and unknown (runs
    // stored before it was recorded).
    let older = RunRecord {
        planned: None,
        ..run_record(OLDER_RUN_ID, "2026-01-01T00:00:00.000Z")
    };
    let run = run_record(RUN_ID, "2026-01-02T00:00:00.000Z");
    store.create_run(&run).await?;
    store.create_run(&older).await?;
    assert!(
        store.create_run(&run).await.is_err(),
        "a run id is created once"
    );

    // The case snapshot, saved twice (the second replaces the first).
    let cases = cases()?;
    store.save_cases(&run.id, &cases[..1]).await?;
    store.save_cases(&run.id, &cases).await?;
    assert_eq!(store.cases(&run.id).await?, cases);
    assert!(store.cases(&older.id).await?.is_empty());

    // Executions land in any order; one case ("orphan") is not in the snapshot.
    let mut written = [
        execution("tools", "beta", 0),
        big_execution("orphan", "alpha"),
        execution("greet", "beta", 0),
        execution("greet", "alpha", 1),
        failed_execution("broken", "alpha"),
        execution("greet", "alpha", 0),
        execution("tools", "alpha", 0),
    ];
    // Some one by one, the rest in one batch.
    let (one_by_one, batched) = written.split_at(3);
    for e in one_by_one {
        store.record_execution(&run.id, e).await?;
    }
    store.record_executions(&run.id, batched).await?;

    // Recording a key again replaces it: fewer turns, other verdicts, new status.
    let mut replaced = execution("greet", "alpha", 1);
    replaced.transcript.turns.truncate(1);
    replaced.transcript.turns[0].tool_calls.pop();
    replaced.transcript.session_id = "session-retried".to_owned();
    replaced.verdicts = vec![Verdict::new(
        "contains hello",
        gavel_core::CheckKind::Contains,
        Status::Fail,
        "missing `hello`",
    )];
    replaced.duration_ms = 5;
    replaced.settle();
    assert_eq!(replaced.status, Status::Fail);
    store.record_execution(&run.id, &replaced).await?;
    // A key twice in one batch: the last one given is kept.
    store
        .record_executions(&run.id, &[written[3].clone(), replaced.clone()])
        .await?;
    written[3] = replaced;

    store
        .finish_run(&run.id, RunStatus::Completed, "2026-01-02T00:05:00.000Z")
        .await?;

    // Read back: every field equal, ordered by case position, target, repeat.
    let expected: Vec<Execution> = [
        ("greet", "alpha", 0),
        ("greet", "alpha", 1),
        ("greet", "beta", 0),
        ("tools", "alpha", 0),
        ("tools", "beta", 0),
        ("broken", "alpha", 0),
        ("orphan", "alpha", 0),
    ]
    .iter()
    .map(|&(case, target, repeat)| {
        written
            .iter()
            .find(|e| e.case_id == case && e.target == target && e.repeat_index == repeat)
            .cloned()
            .ok_or("fixture key missing")
    })
    .collect::<Result<_, _>>()?;
    let stored = store.executions(&run.id).await?;
    assert_eq!(stored.len(), expected.len(), "no duplicates");
    for (got, want) in stored.iter().zip(&expected) {
        assert_eq!(
            got, want,
            "execution {}/{}/{}",
            want.case_id, want.target, want.repeat_index
        );
    }
    assert_eq!(stored, expected);
    assert!(store.executions(&older.id).await?.is_empty());

    // Keys for --resume: one per execution, in first-recording order.
    let keys = store.recorded_keys(&run.id).await?;
    let first_recorded: Vec<(gavel_core::ExecutionKey, gavel_core::Status)> =
        written.iter().map(|e| (e.key(), e.status)).collect();
    assert_eq!(keys, first_recorded);

    // Run lookups: exact, latest, listing, prefixes.
    let finished = RunRecord {
        status: RunStatus::Completed,
        finished_at: Some("2026-01-02T00:05:00.000Z".to_owned()),
        ..run.clone()
    };
    assert_eq!(store.run(RUN_ID).await?, finished);
    assert_eq!(store.latest_run().await?, Some(finished.clone()));
    assert_eq!(store.runs(10).await?, vec![finished.clone(), older.clone()]);
    assert_eq!(store.runs(1).await?, vec![finished.clone()]);
    assert!(store.runs(0).await?.is_empty());
    assert_eq!(store.run("019a0000-1").await?, finished);
    assert_eq!(store.run("019a0000-2222").await?, older);
    match store.run("019a0000").await {
        Err(StoreError::Ambiguous { prefix, candidates }) => {
            assert_eq!((prefix.as_str(), candidates), ("019a0000", 2));
        }
        other => panic!("expected Ambiguous, got {other:?}"),
    }
    assert!(
        matches!(store.run("019a0").await, Err(StoreError::NotFound(_))),
        "5 characters are too few"
    );
    assert!(matches!(
        store.run("019a0000-3333").await,
        Err(StoreError::NotFound(_))
    ));
    assert!(
        matches!(
            store.run("019A0000-1111").await,
            Err(StoreError::NotFound(_))
        ),
        "ids are case-sensitive"
    );
    assert!(
        matches!(store.run("%%%%%%%%").await, Err(StoreError::NotFound(_))),
        "no LIKE wildcards"
    );

    // Writes against a missing run say so.
    let missing = "019a0000-9999-7000-8000-000000000009";
    assert!(matches!(
        store.finish_run(missing, RunStatus::Failed, "x").await,
        Err(StoreError::NotFound(_))
    ));
    assert!(matches!(
        store.record_execution(missing, &expected[0]).await,
        Err(StoreError::NotFound(_))
    ));
    assert!(matches!(
        store.save_cases(missing, &cases).await,
        Err(StoreError::NotFound(_))
    ));

    // A password in the URL never shows in Debug output (PostgreSQL with trust auth
    // accepts any password; elsewhere this check is skipped).
    if let Some(with_password) = with_password(&url, "hunter2")
        && let Ok(other) = Store::open(&with_password).await
    {
        let shown = format!("{other:?}");
        assert!(
            !shown.contains("hunter2") && shown.contains(":***@"),
            "{shown}"
        );
        other.close().await;
    }

    // Opening again re-runs the migrations harmlessly and sees everything.
    store.close().await;
    let store = Store::open(&url).await?;
    assert_eq!(store.executions(&run.id).await?, expected);
    assert_eq!(store.cases(&run.id).await?, cases);

    // A damaged row is reported as corrupt, never a panic.
    sqlx::any::install_default_drivers();
    let mut raw = sqlx::AnyConnection::connect(&url).await?;
    raw.execute("UPDATE executions SET status = 'exploded' WHERE case_id = 'broken'")
        .await?;
    raw.execute(AssertSqlSafe(format!(
        "UPDATE runs SET config_json = '{{' WHERE id = '{OLDER_RUN_ID}'"
    )))
    .await?;
    if engine == Engine::Sqlite {
        let mode: String = sqlx::query_scalar("PRAGMA journal_mode")
            .fetch_one(&mut raw)
            .await?;
        assert_eq!(mode, "wal");
    }
    raw.close().await?;
    match store.executions(&run.id).await {
        Err(StoreError::Corrupt { what, message }) => {
            assert!(what.ends_with(" status"), "{what}");
            assert!(message.contains("exploded"), "{message}");
        }
        other => panic!("expected Corrupt, got {other:?}"),
    }
    assert!(matches!(
        store.run(OLDER_RUN_ID).await,
        Err(StoreError::Corrupt { .. })
    ));
    assert_eq!(store.run(RUN_ID).await?, finished, "other rows still read");
    store.close().await;
    Ok(())
}

/// Eight tasks record at once through clones of one store: all land, and the key
/// every task also writes ends up once, whole.
async fn concurrent_writers(url: String) -> TestResult {
    let store = Store::open(&url).await?;
    store
        .create_run(&run_record(RUN_ID, "2026-01-02T00:00:00.000Z"))
        .await?;
    let tasks: Vec<_> = (0..8)
        .map(|task| {
            let store = store.clone();
            tokio::spawn(async move {
                for i in 0..5 {
                    store
                        .record_execution(
                            RUN_ID,
                            &execution(&format!("case-{task}-{i}"), "alpha", 0),
                        )
                        .await?;
                    store
                        .record_execution(RUN_ID, &execution("shared", "alpha", 0))
                        .await?;
                }
                Ok::<_, StoreError>(())
            })
        })
        .collect();
    for task in tasks {
        task.await??;
    }
    let stored = store.executions(RUN_ID).await?;
    assert_eq!(stored.len(), 8 * 5 + 1);
    let shared: Vec<_> = stored.iter().filter(|e| e.case_id == "shared").collect();
    assert_eq!(shared, vec![&execution("shared", "alpha", 0)]);
    assert_eq!(store.recorded_keys(RUN_ID).await?.len(), 41);
    store.close().await;
    Ok(())
}

// ---------------------------------------------------------------- backends

/// Runs `test` on a fresh SQLite file in a nested, not yet existing directory.
async fn on_sqlite<F, Fut>(test: F) -> TestResult
where
    F: FnOnce(String) -> Fut,
    Fut: Future<Output = TestResult>,
{
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("not yet/there/gavel.db");
    test(format!("sqlite://{}", path.display())).await?;
    assert!(path.exists());
    Ok(())
}

/// Runs `test` on a fresh PostgreSQL database when `GAVEL_TEST_DATABASE_URL` is set
/// (required under CI), dropping the database afterwards even when the test panics.
async fn on_postgres<F, Fut>(name: &str, test: F) -> TestResult
where
    F: FnOnce(String) -> Fut,
    Fut: Future<Output = TestResult> + Send + 'static,
{
    gavel_testkit::on_fresh_postgres(&format!("`{name}`"), test)
        .await
        .unwrap_or(Ok(()))
}

/// The URL with a password added to its user, when it has a user and no password.
fn with_password(url: &str, password: &str) -> Option<String> {
    let (scheme, rest) = url.split_once("://")?;
    let (user, host) = rest.split_once('@')?;
    (!user.contains(':')).then(|| format!("{scheme}://{user}:{password}@{host}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn story_on_sqlite() -> TestResult {
    on_sqlite(|url| story(url, Engine::Sqlite)).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn story_on_postgres() -> TestResult {
    on_postgres("story", |url| story(url, Engine::Postgres)).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_writers_on_sqlite() -> TestResult {
    on_sqlite(concurrent_writers).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_writers_on_postgres() -> TestResult {
    on_postgres("concurrent_writers", concurrent_writers).await
}

#[tokio::test]
async fn memory_store_keeps_its_data_across_calls() -> TestResult {
    let store = Store::open("sqlite::memory:").await?;
    store
        .create_run(&run_record(RUN_ID, "2026-01-02T00:00:00.000Z"))
        .await?;
    store
        .record_execution(RUN_ID, &execution("greet", "alpha", 0))
        .await?;
    assert_eq!(
        store.executions(RUN_ID).await?,
        vec![execution("greet", "alpha", 0)]
    );
    Ok(())
}

#[tokio::test]
async fn open_errors_mask_the_password() {
    let err = Store::open("postgres://gavel:hunter2@127.0.0.1:1/gavel")
        .await
        .err();
    let shown = format!(
        "{err:?} / {}",
        err.as_ref().map(ToString::to_string).unwrap_or_default()
    );
    assert!(matches!(err, Some(StoreError::Open { .. })), "{shown}");
    assert!(!shown.contains("hunter2"), "{shown}");
    assert!(shown.contains("gavel:***@127.0.0.1:1"), "{shown}");
}

#[tokio::test]
async fn unknown_schemes_are_refused() {
    assert!(matches!(
        Store::open("mysql://localhost/gavel").await,
        Err(StoreError::Open { .. })
    ));
}
