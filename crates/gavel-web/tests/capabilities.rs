//! What editors may store and run (docs/SECURITY.md): a case or suite stored
//! through the UI or the API never runs a program, opens a database, reads
//! the server's files or environment, or calls a model the operator did not
//! configure; saving one is refused by the field, keeping what was typed, and
//! a run of one stored before is refused. Viewers see no control they cannot
//! use.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use gavel_store::{Role, SuiteDoc};
use reqwest::StatusCode;
use serde_json::{Value, json};

mod support;

use support::{Browser, Ui, start};

/// `POST /api/suites/s/cases` as `who`.
async fn api_save(ui: &Ui, who: &Browser, case: Value) -> (StatusCode, Value) {
    let r = ui
        .client
        .post(format!("{}/api/suites/s/cases", ui.base))
        .header("cookie", &who.cookie)
        .header("x-csrf-token", &who.csrf)
        .json(&json!({ "case": case }))
        .send()
        .await
        .unwrap();
    (r.status(), r.json().await.unwrap())
}

/// The message of `field` in a refused save, which must say why and what to
/// do instead.
fn refusal<'a>(body: &'a Value, field: &str) -> &'a str {
    let message = body["fields"][field]
        .as_str()
        .unwrap_or_else(|| panic!("no message for `{field}`: {body}"));
    assert!(message.contains("gavel serve --with"), "{message}");
    message
}

#[tokio::test]
async fn an_editor_cannot_store_code_databases_or_foreign_models_through_the_api() {
    let ui = start(None).await;
    let ed = ui.signed_in_as("ed", Role::Editor).await;
    let marker = ui.dir.path().join("owned");
    let script = format!("id > {}", marker.display());

    let (status, body) = api_save(
        &ui,
        &ed,
        json!({"id": "a", "input": "hi", "checks": [
            {"type": "contains", "value": "ok"},
            {"type": "script", "shell": script},
        ]}),
    )
    .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert!(refusal(&body, "checks[1]").contains("`script` check runs a program"));

    let (status, body) = api_save(
        &ui,
        &ed,
        json!({"id": "a", "rounds": [{"input": "hi", "checks": [
            {"type": "grounding", "claim": {"pointer": "/n"}, "oracle": {"command": ["id"]}},
            {"type": "database", "database": "/etc/gavel.db", "query": "select 1"},
        ]}]}),
    )
    .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert!(refusal(&body, "rounds[0].checks[0].oracle").contains("runs a program"));
    assert!(refusal(&body, "rounds[0].checks[1]").contains("opens a database"));

    // A coding agent's workspace and the commands run in it are code too.
    let (status, body) = api_save(
        &ui,
        &ed,
        json!({"id": "a", "input": "fix it",
            "workspace": {"fixture": "/", "setup": [script]},
            "checks": [{"type": "command", "run": "id"}, {"type": "command", "name": "tests"}]}),
    )
    .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert!(refusal(&body, "workspace").contains("runs a coding agent or commands"));
    assert!(refusal(&body, "checks[0]").contains("runs a coding agent or commands"));

    // A custom base URL would get the server's provider key.
    let (status, body) = api_save(
        &ui,
        &ed,
        json!({"id": "a", "input": "hi", "checks": [{"type": "procedural", "stages": [
            {"name": "j", "criteria": "polite", "model": "openai-compatible:any@http://127.0.0.1:9/v1"},
        ]}]}),
    )
    .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert!(refusal(&body, "checks[0].stages[0].model").contains("server's provider credentials"));

    // A case cannot bring its own targets: a `command` target is not a case field.
    let (status, body) = api_save(
        &ui,
        &ed,
        json!({"id": "a", "input": "hi", "targets": {"x": {"type": "command", "command": ["id"]}}}),
    )
    .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    let message = body["fields"]["targets"].as_str().unwrap_or_default();
    assert!(
        message.contains("`command` target") && message.contains("--with"),
        "{body}"
    );

    // Nothing was stored, nothing ran; an allowed model is stored.
    assert!(ui.store.export_suite("s").await.is_err());
    assert!(!marker.exists());
    let (status, body) = api_save(
        &ui,
        &ed,
        json!({"id": "a", "input": "hi", "checks": [
            {"type": "judge", "criteria": "polite", "model": "openai:gpt-4o-mini"},
        ]}),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
}

#[tokio::test]
async fn the_builder_refuses_a_script_check_by_its_field_and_keeps_what_was_typed() {
    let ui = start(None).await;
    let ed = ui.signed_in_as("ed", Role::Editor).await;
    let save = |form: Vec<(&'static str, String)>| {
        let ui = &ui;
        let ed = &ed;
        async move {
            let mut form = form;
            form.push(("_csrf", ed.csrf.clone()));
            form.push(("action", "save".into()));
            let r = ui
                .client
                .post(format!("{}/suites/s/cases/new", ui.base))
                .header("cookie", &ed.cookie)
                .form(&form)
                .send()
                .await
                .unwrap();
            (r.status(), r.text().await.unwrap())
        }
    };
    // "Another check (YAML)" in the form.
    let (status, page) = save(vec![
        ("id", "typed-id".into()),
        ("rounds[0][input]", "a message typed with care".into()),
        ("checks[0][kind]", "other".into()),
        ("checks[0][value]", "type: script\ncommand: [id]".into()),
    ])
    .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{page}");
    assert!(page.contains("id=\"error-checks-0\""), "{page}");
    assert!(page.contains("runs a program on the server"), "{page}");
    assert!(page.contains("a message typed with care"), "{page}");
    assert!(page.contains("value=\"typed-id\""), "{page}");

    // The YAML view.
    let yaml = "id: y\ninput: kept as typed\nchecks:\n  - {type: database, database: x.db, query: select 1}\n";
    let (status, page) = save(vec![("view", "yaml".into()), ("yaml", yaml.into())]).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{page}");
    assert!(page.contains("opens a database from the server"), "{page}");
    assert!(page.contains("kept as typed"), "{page}");
    assert!(ui.store.export_suite("s").await.is_err(), "nothing stored");
}

#[tokio::test]
async fn a_stored_suite_that_runs_code_is_refused_at_start_even_if_stored_before() {
    let ui = start(None).await;
    let ed = ui.signed_in_as("ed", Role::Editor).await;
    let marker = ui.dir.path().join("owned");
    // Stored directly, as an older gavel let an editor store it.
    let doc = SuiteDoc::from_value(json!({"cases": [{"id": "a", "input": "hi", "checks": [
        {"type": "script", "shell": format!("id > {}", marker.display())},
    ]}]}))
    .unwrap();
    ui.store.import_suite("old", &doc, "mallory").await.unwrap();
    let doc = SuiteDoc::from_value(json!({
        "targets": {
            "x": {"type": "command", "command": ["sh", "-c", format!("id > {}", marker.display())]},
            "y": {"type": "http", "url": "http://127.0.0.1:9/",
                  "start": {"command": ["sh", "-c", format!("id > {}", marker.display())]}},
            "z": {"type": "mcp-agent", "model": "openai:gpt-4o-mini",
                  "servers": [{"transport": "stdio", "command": ["id"]}]},
        },
        "cases": [{"id": "a", "input": "hi", "targets": ["x"]}],
    }))
    .unwrap();
    ui.store
        .import_suite("head", &doc, "mallory")
        .await
        .unwrap();

    for (suite, field) in [
        ("old", "cases[0].checks[0]"),
        ("head", "targets.x"),
        ("head", "targets.y.start"),
        ("head", "targets.z.servers[0]"),
    ] {
        let r = ui
            .client
            .post(format!("{}/api/runs", ui.base))
            .header("cookie", &ed.cookie)
            .header("x-csrf-token", &ed.csrf)
            .json(&json!({ "suite": suite }))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), StatusCode::UNPROCESSABLE_ENTITY);
        let body: Value = r.json().await.unwrap();
        let error = body["error"].as_str().unwrap();
        assert!(error.contains(field), "{error}");
        assert!(error.contains("runs a program on the server"), "{error}");
        // The refused run keeps why.
        let run = body["run"].as_str().unwrap();
        let kept = ui.store.run_error(run).await.unwrap().unwrap_or_default();
        assert!(kept.contains(field), "{kept}");
    }
    assert!(!marker.exists(), "nothing ran");
}

#[tokio::test]
async fn the_start_form_refuses_a_judge_the_server_was_not_given_keeping_the_form() {
    let ui = start(None).await;
    let ed = ui.signed_in_as("ed", Role::Editor).await;
    let doc =
        SuiteDoc::from_value(json!({"cases": [{"id": "a", "input": "hi", "criteria": "polite"}]}))
            .unwrap();
    ui.store.import_suite("s", &doc, "test").await.unwrap();
    let r = ui
        .client
        .post(format!("{}/runs", ui.base))
        .header("cookie", &ed.cookie)
        .form(&[
            ("_csrf", ed.csrf.as_str()),
            ("suite", "s"),
            ("judge", "openai-compatible:any@http://127.0.0.1:9/v1"),
            ("tags", "typed-tag"),
            ("repeat", "3"),
        ])
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::UNPROCESSABLE_ENTITY);
    let page = r.text().await.unwrap();
    assert!(page.contains("id=\"error-judge\""), "{page}");
    assert!(
        page.contains("server&#x27;s provider credentials"),
        "{page}"
    );
    assert!(page.contains("value=\"typed-tag\""), "{page}");
    assert!(page.contains("value=\"3\""), "{page}");
    assert!(
        ui.store.runs(10).await.unwrap().is_empty(),
        "no run started"
    );
    // The estimate says so before the form is sent.
    let (_, part) = ui
        .get_as(
            &ed.cookie,
            "/runs/preview?suite=s&judge=openai-compatible:any@http://127.0.0.1:9/v1",
        )
        .await;
    assert!(
        part.contains("pick a model this server is configured with"),
        "{part}"
    );
}

#[tokio::test]
async fn viewers_see_no_control_they_cannot_use_and_editors_do() {
    let ui = start(None).await;
    let doc = SuiteDoc::from_value(json!({"cases": [{"id": "a", "input": "hi"}]})).unwrap();
    ui.store.import_suite("s", &doc, "test").await.unwrap();
    let vi = ui.signed_in_as("vi", Role::Viewer).await;
    let ed = ui.signed_in_as("ed", Role::Editor).await;
    let controls = [
        ("/runs", "id=\"start-run\""),
        ("/suites", "id=\"new-suite\""),
        ("/suites/s", "id=\"run-suite\""),
        ("/suites/s", "id=\"new-case\""),
        ("/suites/s/cases/a", "id=\"save-case\""),
    ];
    for (path, control) in controls {
        let (status, page) = ui.get_as(&vi.cookie, path).await;
        assert_eq!(status, StatusCode::OK, "{path}");
        assert!(!page.contains(control), "a viewer sees {control} on {path}");
        let (_, page) = ui.get_as(&ed.cookie, path).await;
        assert!(
            page.contains(control),
            "an editor misses {control} on {path}"
        );
    }
    // The viewer reads the case and is told why there is no form.
    let (_, page) = ui.get_as(&vi.cookie, "/suites/s/cases/a").await;
    assert!(page.contains("id=\"case-yaml\""), "{page}");
    assert!(page.contains("needs the editor role"), "{page}");
    let (_, page) = ui.get_as(&vi.cookie, "/runs").await;
    assert!(
        page.contains("starting a run needs the editor role"),
        "{page}"
    );
}
