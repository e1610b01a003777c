//! The model-answer and embedding caches on every backend: a SQLite temp file always, PostgreSQL
//! too when `GAVEL_TEST_DATABASE_URL` names a server (a fresh database is created for
//! the test and dropped after it, as in `store_story.rs`).

use std::error::Error;

use gavel_core::{Execution, RunRecord, RunStatus, Status, Transcript};
use gavel_store::Store;

type TestResult = Result<(), Box<dyn Error + Send + Sync>>;

/// Keys as the cache layer makes them: 64 hex digits.
const KEY_A: &str = "3f1c0a9e5b7d2468ace013579bdf2468ace013579bdf2468ace013579bdf2468";
const KEY_B: &str = "0000000000000000000000000000000000000000000000000000000000000001";

async fn cache_story(url: String) -> TestResult {
    let store = Store::open(&url).await?;
    assert_eq!(store.cache_get(KEY_A).await?, None, "empty at first");

    // Text is kept byte for byte: quotes, newlines, non-ASCII, float digits.
    let answer = r#"{"text":"Zürich ✓\n\"quoted\"","usage":{"input_tokens":12,"output_tokens":3},"cost_usd":0.30000000000000004,"latency_ms":812,"cached":false}"#;
    store.cache_put(KEY_A, "openai:gpt-5-mini", answer).await?;
    assert_eq!(store.cache_get(KEY_A).await?.as_deref(), Some(answer));
    assert_eq!(
        store.cache_get(KEY_B).await?,
        None,
        "other keys stay absent"
    );

    // Putting the same key again replaces the entry (upsert), never duplicates it.
    let newer = r#"{"text":"second","cached":false}"#;
    store
        .cache_put(KEY_A, "anthropic:claude-haiku-4-5", newer)
        .await?;
    assert_eq!(store.cache_get(KEY_A).await?.as_deref(), Some(newer));
    store.cache_put(KEY_B, "openai:gpt-5-mini", answer).await?;
    assert_eq!(store.cache_get(KEY_B).await?.as_deref(), Some(answer));
    store.close().await;

    // Entries outlive the connection: a reopened store still serves them.
    let store = Store::open(&url).await?;
    assert_eq!(store.cache_get(KEY_A).await?.as_deref(), Some(newer));
    assert_eq!(store.cache_get(KEY_B).await?.as_deref(), Some(answer));

    // Concurrent puts of one key (two workers answering the same request) both land.
    let (a, b) = tokio::join!(
        store.cache_put(KEY_A, "m", r#"{"text":"a"}"#),
        store.cache_put(KEY_A, "m", r#"{"text":"b"}"#),
    );
    a?;
    b?;
    let last = store.cache_get(KEY_A).await?;
    assert!(
        matches!(
            last.as_deref(),
            Some(r#"{"text":"a"}"#) | Some(r#"{"text":"b"}"#)
        ),
        "{last:?}"
    );

    // Concurrent lookups (batched into shared reads) each get their own answer:
    // 300 keys, every other one stored, more than one batch holds.
    for i in (0..300).step_by(2) {
        store
            .cache_put(&format!("k{i:063}"), "m", &format!("answer {i}"))
            .await?;
    }
    let mut lookups = tokio::task::JoinSet::new();
    for i in 0..300 {
        let store = store.clone();
        lookups.spawn(async move { (i, store.cache_get(&format!("k{i:063}")).await) });
    }
    let mut seen = 0;
    while let Some(joined) = lookups.join_next().await {
        let (i, found) = joined?;
        let expected = (i % 2 == 0).then(|| format!("answer {i}"));
        assert_eq!(found?, expected, "key {i}");
        seen += 1;
    }
    assert_eq!(seen, 300);
    store.close().await;
    Ok(())
}

/// Staged entries are served at once but reach the database only with the run's
/// next recorded results or its end.
async fn staged_story(url: String) -> TestResult {
    let store = Store::open(&url).await?;
    let run = RunRecord {
        id: uuid::Uuid::now_v7().to_string(),
        suite: "staged".to_owned(),
        status: RunStatus::Running,
        started_at: gavel_core::now_rfc3339(),
        finished_at: None,
        config: serde_json::json!({}),
        planned: None,
    };
    store.create_run(&run).await?;
    let key = |i: u32| format!("s{i:063}");
    store.cache_stage(&key(1), "m", "one");
    assert_eq!(store.cache_get(&key(1)).await?.as_deref(), Some("one"));
    let other = Store::open(&url).await?;
    assert_eq!(other.cache_get(&key(1)).await?, None, "not written yet");

    let execution = Execution {
        case_id: "c".to_owned(),
        case_name: "c".to_owned(),
        target: "t".to_owned(),
        repeat_index: 0,
        tags: Vec::new(),
        status: Status::Pass,
        score: None,
        transcript: Transcript::default(),
        verdicts: Vec::new(),
        reason: None,
        started_at: gavel_core::now_rfc3339(),
        duration_ms: 1,
    };
    store.record_execution(&run.id, &execution).await?;
    assert_eq!(other.cache_get(&key(1)).await?.as_deref(), Some("one"));

    store.cache_stage(&key(2), "m", "two");
    store.cache_stage(&key(1), "m", "one, again");
    store
        .finish_run(&run.id, RunStatus::Completed, &gavel_core::now_rfc3339())
        .await?;
    assert_eq!(other.cache_get(&key(2)).await?.as_deref(), Some("two"));
    assert_eq!(
        other.cache_get(&key(1)).await?.as_deref(),
        Some("one, again")
    );
    other.close().await;
    store.close().await;
    Ok(())
}

/// Embedding vectors under (text hash, model): batch reads and writes, bit-exact.
async fn embedding_story(url: String) -> TestResult {
    let store = Store::open(&url).await?;
    let hashes = vec![KEY_A.to_owned(), KEY_B.to_owned()];
    assert!(
        store
            .embeddings_get("all-MiniLM-L6-v2", &hashes)
            .await?
            .is_empty()
    );

    let a = vec![0.125f32, -0.333_333_34, 1e-8, 0.0];
    let b = vec![1.0f32, 2.0, 3.0, 4.0];
    store
        .embeddings_put("all-MiniLM-L6-v2", &[(KEY_A.to_owned(), a.clone())])
        .await?;
    store
        .embeddings_put(
            "openai:text-embedding-3-small",
            &[(KEY_A.to_owned(), b.clone())],
        )
        .await?;
    let found = store.embeddings_get("all-MiniLM-L6-v2", &hashes).await?;
    assert_eq!(found.len(), 1, "one model's vectors only");
    assert_eq!(found[KEY_A], a, "f32 values read back bit for bit");

    // A batch of many hashes (over one query's chunk) with a replaced entry.
    let many: Vec<(String, Vec<f32>)> = (0..1200)
        .map(|i| (format!("{i:064x}"), vec![i as f32, 0.5]))
        .chain([(KEY_A.to_owned(), b.clone())])
        .collect();
    store.embeddings_put("all-MiniLM-L6-v2", &many).await?;
    let wanted: Vec<String> = many
        .iter()
        .map(|(h, _)| h.clone())
        .chain([KEY_B.to_owned()])
        .collect();
    let found = store.embeddings_get("all-MiniLM-L6-v2", &wanted).await?;
    assert_eq!(found.len(), 1201);
    assert_eq!(found[&format!("{:064x}", 1199)], vec![1199.0, 0.5]);
    assert_eq!(found[KEY_A], b, "the later put replaced the vector");
    store.close().await;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cache_on_sqlite() -> TestResult {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("gavel.db");
    cache_story(format!("sqlite://{}", path.display())).await?;
    staged_story(format!("sqlite://{}", path.display())).await?;
    embedding_story(format!("sqlite://{}", path.display())).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cache_on_postgres() -> TestResult {
    gavel_testkit::on_fresh_postgres("the cache stories", |url: String| async move {
        cache_story(url.clone()).await?;
        staged_story(url.clone()).await?;
        embedding_story(url).await
    })
    .await
    .unwrap_or(Ok(()))
}
