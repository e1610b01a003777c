//! Web accounts and the case lifecycle in the store: users and roles, sessions,
//! API tokens, who started a run; delete, archive, restore and who changed what,
//! on a SQLite file always and on a fresh PostgreSQL database when
//! `GAVEL_TEST_DATABASE_URL` names a server.

use std::time::Duration;

use gavel_store::{CaseChange, Role, SignInSubject, Store, StoreError, SuiteDoc};
use serde_json::json;

mod support;

use support::{TestResult, on_postgres, on_sqlite};

async fn accounts_story(url: String) -> TestResult {
    let store = Store::open(&url).await?;
    assert!(!store.has_users().await?);
    store
        .create_user("ana", Role::Admin, "$argon2id$hash-a", "cli")
        .await?;
    store
        .create_user("bo", Role::Viewer, "$argon2id$hash-b", "ana")
        .await?;
    assert!(store.has_users().await?);
    let again = store.create_user("bo", Role::Editor, "x", "ana").await;
    assert!(
        matches!(&again, Err(StoreError::Invalid { message, .. }) if message.contains("exists")),
        "{again:?}"
    );
    let bad = store.create_user("bo bo", Role::Editor, "x", "ana").await;
    assert!(matches!(bad, Err(StoreError::Invalid { .. })), "{bad:?}");
    let names: Vec<(String, Role)> = store
        .users()
        .await?
        .into_iter()
        .map(|u| (u.name, u.role))
        .collect();
    assert_eq!(
        names,
        [("ana".into(), Role::Admin), ("bo".into(), Role::Viewer)]
    );
    let (user, hash) = store.user_for_sign_in("ana").await?.ok_or("no ana")?;
    assert_eq!(
        (user.role, hash.as_str()),
        (Role::Admin, "$argon2id$hash-a")
    );

    // Sessions: found while unexpired, gone once ended or expired.
    store
        .create_session("s-live", "bo", Duration::from_secs(60))
        .await?;
    store.create_session("s-old", "bo", Duration::ZERO).await?;
    assert_eq!(
        store.session_user("s-live").await?.map(|u| u.name),
        Some("bo".into())
    );
    assert_eq!(store.session_user("s-old").await?, None);
    store.end_session("s-live").await?;
    assert_eq!(store.session_user("s-live").await?, None);

    // Tokens: found by hash, listed without it, revoked by their owner only,
    // dead once expired.
    let day = Duration::from_secs(86_400);
    let id = store
        .create_api_token("bo", "ci", "hash-t", "ana", day)
        .await?;
    store
        .create_api_token("bo", "old", "hash-x", "ana", Duration::ZERO)
        .await?;
    assert_eq!(store.token_user("hash-x").await?, None, "expired");
    assert_eq!(
        store.token_user("hash-t").await?.map(|u| u.name),
        Some("bo".into())
    );
    let tokens = store.api_tokens("bo").await?;
    assert_eq!(
        (tokens.len(), tokens[0].label.as_str(), tokens[0].id == id),
        (1, "ci", true)
    );
    assert!(tokens[0].expires_at > tokens[0].created_at, "{tokens:?}");
    assert!(matches!(
        store.revoke_api_token("ana", &id).await,
        Err(StoreError::NotFound(_))
    ));

    // Promote, then disable: a disabled account's sessions and tokens stop.
    store
        .create_session("s-bo", "bo", Duration::from_secs(60))
        .await?;
    store.update_user("bo", Role::Editor, false).await?;
    assert_eq!(store.user("bo").await?.map(|u| u.role), Some(Role::Editor));
    store.update_user("bo", Role::Editor, true).await?;
    assert_eq!(store.token_user("hash-t").await?, None);
    assert_eq!(store.session_user("s-bo").await?, None);
    assert_eq!(store.user_for_sign_in("bo").await?, None);
    store.revoke_api_token("bo", &id).await?;
    assert!(store.api_tokens("bo").await?.is_empty());

    // The last admin stays one; a new password ends the sessions and revokes
    // the tokens.
    let last = store.update_user("ana", Role::Editor, false).await;
    assert!(
        matches!(&last, Err(StoreError::Invalid { message, .. }) if message.contains("last admin")),
        "{last:?}"
    );
    store
        .create_session("s-ana", "ana", Duration::from_secs(60))
        .await?;
    store
        .create_api_token("ana", "ci", "hash-a", "ana", day)
        .await?;
    assert!(store.token_user("hash-a").await?.is_some());
    store.set_password("ana", "$argon2id$new").await?;
    assert_eq!(store.session_user("s-ana").await?, None);
    assert_eq!(store.token_user("hash-a").await?, None);
    assert!(store.api_tokens("ana").await?.is_empty());
    let (_, hash) = store.user_for_sign_in("ana").await?.ok_or("no ana")?;
    assert_eq!(hash, "$argon2id$new");
    Ok(())
}

async fn sign_in_failures_story(url: String) -> TestResult {
    let store = Store::open(&url).await?;
    let ana = SignInSubject::Account("ana".into());
    let here = SignInSubject::Address("10.0.0.1".into());
    let hour = Duration::from_secs(3600);
    // Blocked from the third failure on, for as many minutes as failures.
    let block = |n: u32| match n {
        0..=2 => Duration::ZERO,
        n => Duration::from_secs(60 * u64::from(n)),
    };
    for n in 1..=3 {
        let recorded = store.record_sign_in_failure(&ana, hour, block).await?;
        assert_eq!(recorded.failures, n);
    }
    store.record_sign_in_failure(&here, hour, block).await?;
    let found = store.sign_in_failures(&[ana.clone(), here.clone()]).await?;
    let counts: Vec<(SignInSubject, u32)> = found
        .iter()
        .map(|f| (f.subject.clone(), f.failures))
        .collect();
    assert_eq!(counts, [(ana.clone(), 3), (here.clone(), 1)]);
    assert!(found[0].blocked_until_ms >= found[0].last_ms + 180_000);
    let blocked = store.blocked_sign_ins().await?;
    assert_eq!(
        blocked.iter().map(|b| &b.subject).collect::<Vec<_>>(),
        [&ana],
        "only what is refused now"
    );
    // Forgotten after the window: the count starts again.
    let again = store
        .record_sign_in_failure(&here, Duration::ZERO, block)
        .await?;
    assert_eq!(again.failures, 1);
    assert!(store.clear_sign_in_failures(&ana).await?);
    assert!(!store.clear_sign_in_failures(&ana).await?);
    assert!(store.blocked_sign_ins().await?.is_empty());
    Ok(())
}

async fn lifecycle_story(url: String) -> TestResult {
    let store = Store::open(&url).await?;
    let doc = SuiteDoc::from_value(json!({"cases": [
        {"id": "a", "input": "one"},
        {"id": "b", "input": "two"},
    ]}))
    .ok_or("not a suite")?;
    store.import_suite("s", &doc, "ana").await?;
    store
        .save_case(
            "s",
            Some("a"),
            json!({"id": "a", "input": "one, edited"}),
            "bo",
        )
        .await?;

    // Archive: out of the live cases and the export, kept in the history.
    assert_eq!(store.archive_case("s", "b", true, "cy").await?, 2);
    let live: Vec<String> = store
        .latest_cases("s")
        .await?
        .into_iter()
        .map(|v| v.key)
        .collect();
    assert_eq!(live, ["a"]);
    assert_eq!(store.export_suite("s").await?.cases.len(), 1);
    assert_eq!(store.archived_cases("s").await?[0].key, "b");
    let again = store.archive_case("s", "b", true, "cy").await;
    assert!(
        matches!(again, Err(StoreError::Invalid { .. })),
        "{again:?}"
    );
    // A new case may not take an archived case's key; an import of the export
    // (which lacks it) leaves it archived.
    let taken = store
        .save_case("s", None, json!({"id": "b", "input": "other"}), "bo")
        .await;
    assert!(
        matches!(&taken, Err(StoreError::Invalid { message, .. }) if message.contains("archived")),
        "{taken:?}"
    );
    let exported = store.export_suite("s").await?;
    let summary = store.import_suite("s", &exported, "ana").await?;
    assert_eq!((summary.removed, summary.unchanged), (0, 1));
    assert_eq!(store.archived_cases("s").await?.len(), 1);
    assert_eq!(store.archive_case("s", "b", false, "cy").await?, 3);

    // Delete, then restore version 1 of `a`: its first text, live again.
    assert_eq!(store.delete_case("s", "a", "dee").await?, 3);
    assert_eq!(store.deleted_cases("s").await?[0].key, "a");
    assert!(store.delete_case("s", "a", "dee").await.is_err());
    assert!(
        store.restore_case("s", "a", 3, "ed").await.is_err(),
        "a deletion"
    );
    assert!(matches!(
        store.restore_case("s", "a", 9, "ed").await,
        Err(StoreError::NotFound(_))
    ));
    assert_eq!(store.restore_case("s", "a", 1, "ed").await?, 4);
    let history = store.case_history("s", "a").await?;
    let story: Vec<(u32, &str, CaseChange)> = history
        .iter()
        .map(|v| (v.version, v.changed_by.as_str(), v.change))
        .collect();
    assert_eq!(
        story,
        [
            (1, "ana", CaseChange::Saved),
            (2, "bo", CaseChange::Saved),
            (3, "dee", CaseChange::Deleted),
            (4, "ed", CaseChange::Restored { from: 1 }),
        ]
    );
    assert_eq!(history[3].case, Some(json!({"id": "a", "input": "one"})));
    let b: Vec<CaseChange> = store
        .case_history("s", "b")
        .await?
        .iter()
        .map(|v| v.change)
        .collect();
    assert_eq!(
        b,
        [
            CaseChange::Saved,
            CaseChange::Archived,
            CaseChange::Unarchived
        ]
    );
    let suites = store.suites().await?;
    assert_eq!((suites[0].cases, suites[0].updated_by.as_str()), (2, "ed"));
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn accounts_on_sqlite() -> TestResult {
    on_sqlite(accounts_story).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn accounts_on_postgres() -> TestResult {
    on_postgres(accounts_story).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sign_in_failures_on_sqlite() -> TestResult {
    on_sqlite(sign_in_failures_story).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sign_in_failures_on_postgres() -> TestResult {
    on_postgres(sign_in_failures_story).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lifecycle_on_sqlite() -> TestResult {
    on_sqlite(lifecycle_story).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lifecycle_on_postgres() -> TestResult {
    on_postgres(lifecycle_story).await
}
