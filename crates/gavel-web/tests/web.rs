//! The web UI over a real store and a real socket: escaping, CSRF, auth, case
//! validation by field, labels, DNS rebinding and cross-origin refusals, the
//! OpenAPI document, and a suite's `otel:` setting exporting its runs.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use gavel_core::{Execution, RunRecord, RunStatus, Status, Transcript, Turn, Verdict};
use gavel_store::Store;
use gavel_web::{Config, RunDefaults};

#[path = "../../gavel/tests/otel/mod.rs"]
mod otel;
mod support;

use reqwest::StatusCode;
use serde_json::{Value, json};
use support::start;

const RUN: &str = "019a0000-4444-7000-8000-000000000004";
const HOSTILE: &str = "<script>alert('owned')</script><b>bold</b> & <img src=x onerror=alert(1)>";

async fn seed_run(store: &Store) {
    store
        .create_run(&RunRecord {
            id: RUN.into(),
            suite: "hostile".into(),
            status: RunStatus::Completed,
            started_at: gavel_core::now_rfc3339(),
            finished_at: Some(gavel_core::now_rfc3339()),
            config: json!({}),
            planned: None,
        })
        .await
        .unwrap();
    let execution = Execution {
        case_id: "xss".into(),
        case_name: "Agent answers with markup".into(),
        target: "agent".into(),
        repeat_index: 0,
        tags: vec![],
        status: Status::Fail,
        score: Some(0.25),
        transcript: Transcript {
            session_id: "s".into(),
            turns: vec![Turn {
                input: "Say hi".into(),
                output: HOSTILE.into(),
                latency_ms: 12,
                ..Turn::default()
            }],
        },
        verdicts: vec![
            Verdict::new(
                "judge",
                gavel_core::CheckKind::Rubric,
                Status::Fail,
                HOSTILE,
            )
            .with_score(0.25, Some(0.7)),
        ],
        reason: None,
        started_at: gavel_core::now_rfc3339(),
        duration_ms: 12,
    };
    store.record_execution(RUN, &execution).await.unwrap();
}

#[tokio::test]
async fn agent_output_is_escaped_text() {
    let ui = start(None).await;
    seed_run(&ui.store).await;
    let (status, page) = ui.get(&format!("/runs/{RUN}")).await;
    assert_eq!(status, StatusCode::OK);
    assert!(
        !page.contains("<script>alert"),
        "raw markup reached the page"
    );
    assert!(!page.contains("<b>bold</b>"));
    assert!(!page.contains("<img src=x"));
    assert!(page.contains("&lt;script&gt;alert("), "{page}");
    let r = ui
        .client
        .get(format!("{}/runs/{RUN}", ui.base))
        .send()
        .await
        .unwrap();
    let csp = r.headers()["content-security-policy"]
        .to_str()
        .unwrap()
        .to_owned();
    assert!(csp.contains("script-src 'self'"), "{csp}");
}

#[tokio::test]
async fn state_changes_need_the_csrf_token() {
    let ui = start(None).await;
    seed_run(&ui.store).await;
    let label = [
        ("case_id", "xss"),
        ("target", "agent"),
        ("repeat_index", "0"),
        ("label", "fail"),
        ("score", "0.1"),
        ("who", "ana"),
    ];
    let url = format!("{}/runs/{RUN}/review", ui.base);
    let r = ui.client.post(&url).form(&label).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::FORBIDDEN);
    let r = ui
        .client
        .post(&url)
        .header("x-csrf-token", "0".repeat(64))
        .form(&label)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::FORBIDDEN);
    assert!(ui.store.run_labels(RUN).await.unwrap().is_empty());

    let csrf = ui.csrf().await;
    let mut with_token = label.to_vec();
    with_token.push(("_csrf", &csrf));
    let r = ui.client.post(&url).form(&with_token).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::SEE_OTHER);
    let labels = ui.store.run_labels(RUN).await.unwrap();
    assert_eq!(
        (
            labels.len(),
            labels[0].label.as_str(),
            labels[0].who.as_str()
        ),
        (1, "fail", "local"),
        "open mode records the local admin, whatever the form says"
    );
    assert_eq!(labels[0].score, Some(0.1));

    // Starting a run through the API: the header carries the token.
    let start_run = |csrf: Option<&str>| {
        let mut request = ui
            .client
            .post(format!("{}/api/runs", ui.base))
            .json(&json!({"suite": "nope"}));
        if let Some(csrf) = csrf {
            request = request.header("x-csrf-token", csrf);
        }
        request.send()
    };
    assert_eq!(
        start_run(None).await.unwrap().status(),
        StatusCode::FORBIDDEN
    );
    assert_eq!(
        start_run(Some(&csrf)).await.unwrap().status(),
        StatusCode::NOT_FOUND,
        "an unknown suite is not run"
    );
    assert_eq!(
        ui.store.runs(10).await.unwrap().len(),
        1,
        "only the seeded run"
    );
}

#[tokio::test]
async fn cases_are_validated_by_field_versioned_and_searchable_by_tag() {
    let ui = start(None).await;
    let csrf = ui.csrf().await;
    let post = |case: Value, author: &str| {
        ui.client
            .post(format!("{}/api/suites/web/cases", ui.base))
            .header("x-csrf-token", &csrf)
            .json(&json!({"case": case, "author": author}))
            .send()
    };
    let r = post(
        json!({"id": "greet", "input": "Hi", "tags": ["smoke", "chat"], "threshold": 0.7}),
        "ana",
    )
    .await
    .unwrap();
    assert_eq!(r.status(), StatusCode::CREATED);
    let r = post(json!({"id": "bye", "input": "Bye", "tags": ["chat"]}), "")
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::CREATED);
    let r = post(json!({"id": "bye", "input": "Again"}), "")
        .await
        .unwrap();
    assert_eq!(
        r.status(),
        StatusCode::UNPROCESSABLE_ENTITY,
        "a duplicate id"
    );
    let body: Value = r.json().await.unwrap();
    assert!(
        body["fields"]["id"]
            .as_str()
            .unwrap()
            .contains("already has"),
        "{body}"
    );

    // The builder shows errors by field, keeps what was typed, stores nothing.
    let form_url = format!("{}/suites/web/cases/greet", ui.base);
    let submit = |url: String, fields: Vec<(&'static str, String)>| {
        let mut fields = fields;
        fields.push(("_csrf", csrf.clone()));
        ui.client.post(url).form(&fields).send()
    };
    let r = submit(
        form_url.clone(),
        vec![
            ("id", "greet".into()),
            ("rounds[0][input]", "".into()),
            ("threshold", "x".into()),
        ],
    )
    .await
    .unwrap();
    assert_eq!(r.status(), StatusCode::UNPROCESSABLE_ENTITY);
    let page = r.text().await.unwrap();
    assert!(page.contains("id=\"error-rounds-0-input\""), "{page}");
    assert!(page.contains("id=\"error-threshold\""));
    let new_url = format!("{}/suites/web/cases/new", ui.base);
    let long = "x".repeat(1_000_000);
    for (fields, error, kept) in [
        (
            vec![
                ("id", "bye".to_owned()),
                ("rounds[0][input]", "Hi".to_owned()),
            ],
            "error-id",
            "already has a case",
        ),
        (
            vec![("id", "big".to_owned()), ("rounds[0][input]", long.clone())],
            "error-rounds-0-input",
            "at most 256 KiB",
        ),
        (
            vec![
                ("id", "schema".to_owned()),
                ("rounds[0][input]", "Kept text".to_owned()),
                ("checks[0][kind]", "json-schema".to_owned()),
                ("checks[0][value]", "{\"type\": 12}".to_owned()),
            ],
            "error-checks-0",
            "Kept text",
        ),
        (
            vec![
                ("id", "regex".to_owned()),
                ("rounds[0][input]", "Kept too".to_owned()),
                ("checks[0][kind]", "regex".to_owned()),
                ("checks[0][value]", "(12 Ocean".to_owned()),
            ],
            "error-checks-0",
            "(12 Ocean",
        ),
    ] {
        let r = submit(new_url.clone(), fields).await.unwrap();
        assert_eq!(r.status(), StatusCode::UNPROCESSABLE_ENTITY, "{error}");
        let page = r.text().await.unwrap();
        assert!(
            page.contains(&format!("id=\"{error}\"")),
            "{error}: {}",
            &page[..page.len().min(3000)]
        );
        assert!(page.contains(kept), "{kept}");
    }
    assert!(
        ui.store.latest_cases("web").await.unwrap().len() == 2,
        "nothing more stored"
    );
    let r = submit(
        form_url.clone(),
        vec![
            ("id", "greet".into()),
            ("rounds[0][input]", "Hello there".into()),
            ("tags", "smoke".into()),
            ("author", "bo".into()),
        ],
    )
    .await
    .unwrap();
    assert_eq!(r.status(), StatusCode::SEE_OTHER);

    let history = ui.store.case_history("web", "greet").await.unwrap();
    let who: Vec<_> = history
        .iter()
        .map(|v| (v.version, v.changed_by.as_str()))
        .collect();
    assert_eq!(who, [(1, "local"), (2, "local")], "open mode's user");
    assert_eq!(history[1].case.as_ref().unwrap()["input"], "Hello there");

    let (_, page) = ui.get("/suites/web?tag=smoke").await;
    assert!(
        page.contains(">greet<") && !page.contains(">bye<"),
        "{page}"
    );
    let (_, page) = ui.get("/suites/web?tag=chat").await;
    assert!(page.contains(">bye<") && !page.contains(">greet<"));

    // Starting a run of it runs it in the server, through the session.
    let r = ui
        .client
        .post(format!("{}/runs", ui.base))
        .form(&[
            ("_csrf", csrf.as_str()),
            ("suite", "web"),
            ("tags", "smoke"),
        ])
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::SEE_OTHER);
    let location = r.headers()["location"].to_str().unwrap().to_owned();
    let id = location.trim_start_matches("/runs/");
    let run = finished(&ui.store, id).await;
    assert_eq!(run.status, RunStatus::Completed);
    let executions = ui.store.executions(id).await.unwrap();
    let cases: Vec<&str> = executions.iter().map(|e| e.case_id.as_str()).collect();
    assert_eq!(cases, ["greet"], "only the smoke-tagged case ran");
}

/// The run once it is no longer running (the UI runs it in the background).
async fn finished(store: &Store, id: &str) -> RunRecord {
    for _ in 0..600 {
        let run = store.run(id).await.unwrap();
        if run.status != RunStatus::Running {
            return run;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("run {id} did not finish");
}

#[tokio::test]
async fn a_case_that_cannot_compile_is_refused_at_save_and_at_start() {
    let ui = start(None).await;
    let csrf = ui.csrf().await;
    let r = ui
        .client
        .post(format!("{}/api/suites/web/cases", ui.base))
        .header("x-csrf-token", &csrf)
        .json(&json!({"case": {
            "id": "bad-regex",
            "rounds": [{"input": "Where is it?", "checks": [{"type": "regex", "pattern": "(12 Ocean"}]}],
        }}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::UNPROCESSABLE_ENTITY);
    let body: Value = r.json().await.unwrap();
    let message = body["fields"]["rounds[0].checks[0].pattern"]
        .as_str()
        .unwrap_or_default();
    assert!(message.contains("(12 Ocean"), "{body}");
    assert!(
        ui.store.suites().await.unwrap().is_empty(),
        "nothing stored"
    );

    // A suite stored around the check (an import of an older gavel) is refused
    // at start: 422 with the compile error, kept as a failed run.
    let doc = gavel_store::SuiteDoc::from_value(json!({"cases": [
        {"id": "bad-regex", "input": "hi", "checks": [{"type": "regex", "pattern": "(12 Ocean"}]}
    ]}))
    .unwrap();
    ui.store.import_suite("broken", &doc, "test").await.unwrap();
    let r = ui
        .client
        .post(format!("{}/api/runs", ui.base))
        .header("x-csrf-token", &csrf)
        .json(&json!({"suite": "broken"}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::UNPROCESSABLE_ENTITY);
    let body: Value = r.json().await.unwrap();
    assert!(
        body["error"].as_str().unwrap().contains("pattern"),
        "{body}"
    );
    let id = body["run"].as_str().unwrap();
    let (status, run) = ui.get(&format!("/api/runs/{id}")).await;
    assert_eq!(status, StatusCode::OK);
    let run: Value = serde_json::from_str(&run).unwrap();
    assert_eq!(run["run"]["status"], "failed");
    assert!(run["error"].as_str().unwrap().contains("pattern"), "{run}");
    let (_, page) = ui.get(&format!("/runs/{id}")).await;
    assert!(page.contains("(12 Ocean"), "the run page shows why: {page}");
}

#[tokio::test]
async fn two_runs_of_a_fixed_port_target_both_complete() {
    let ui = start(None).await;
    let csrf = ui.csrf().await;
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    // A started agent on one fixed port, which says it is ready only once it has
    // the port: a second copy started while the first runs exits unready.
    let agent = ui.dir.path().join("agent.py");
    std::fs::write(
        &agent,
        r#"import http.server, json, sys, time
class Agent(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        time.sleep(0.3)
        body = json.dumps({"output": "ok"}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *args):
        pass
server = http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), Agent)
print("ready", flush=True)
server.serve_forever()
"#,
    )
    .unwrap();
    // A started process comes from the operator's files (`--with`), never
    // from a stored suite (docs/SECURITY.md).
    let targets = json!({"targets": {"agent": {
        "type": "http",
        "url": format!("http://127.0.0.1:{port}/"),
        "body": {"message": "{{ message }}"},
        "response": {"output": "/output"},
        "start": {
            "command": ["python3", agent.to_str().unwrap(), port.to_string()],
            "ready_line": "ready",
        },
    }}});
    std::fs::write(ui.dir.path().join("targets.yaml"), targets.to_string()).unwrap();
    let doc = gavel_store::SuiteDoc::from_value(json!({
        "cases": [{"id": "a", "input": "hi", "checks": [{"type": "contains", "value": "ok"}]}],
    }))
    .unwrap();
    ui.store.import_suite("fixed", &doc, "test").await.unwrap();
    let start = || async {
        let r = ui
            .client
            .post(format!("{}/api/runs", ui.base))
            .header("x-csrf-token", &csrf)
            .json(&json!({"suite": "fixed"}))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), StatusCode::ACCEPTED);
        let body: Value = r.json().await.unwrap();
        body["id"].as_str().unwrap().to_owned()
    };
    let (first, second) = tokio::join!(start(), start());
    for id in [first, second] {
        let run = finished(&ui.store, &id).await;
        let error = ui.store.run_error(&id).await.unwrap();
        assert_eq!(run.status, RunStatus::Completed, "run {id}: {error:?}");
        let executions = ui.store.executions(&id).await.unwrap();
        assert_eq!(executions.len(), 1);
        assert_eq!(executions[0].status, Status::Pass, "{:?}", executions[0]);
    }
}

#[tokio::test]
async fn a_token_guards_every_page_and_wider_binds_need_one() {
    let open = Config {
        bind: "0.0.0.0:0".parse().unwrap(),
        token: None,
        secure_cookies: false,
        allowed_hosts: vec![],
        runs: RunDefaults::default(),
        accounts: Default::default(),
    };
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&format!("sqlite://{}", dir.path().join("g.db").display()))
        .await
        .unwrap();
    let mut told = None;
    let refused = gavel_web::serve(store, open, |at| told = Some(at), std::future::pending())
        .await
        .unwrap_err();
    assert!(refused.to_string().contains("auth token"), "{refused}");
    assert_eq!(told, None, "no address is announced before the refusal");

    let ui = start(Some("s3cret")).await;
    let (status, _) = ui.get("/runs").await;
    assert_eq!(
        status,
        StatusCode::SEE_OTHER,
        "pages go to the sign-in form"
    );
    assert_eq!(ui.get("/api/runs").await.0, StatusCode::UNAUTHORIZED);
    assert_eq!(ui.get("/assets/htmx.min.js").await.0, StatusCode::OK);
    let r = ui
        .client
        .get(format!("{}/api/runs", ui.base))
        .bearer_auth("s3cret")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    let r = ui
        .client
        .get(format!("{}/login?token=s3cret", ui.base))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::SEE_OTHER);
    let cookie = r.headers()["set-cookie"].to_str().unwrap();
    assert!(cookie.starts_with("gavel_token=s3cret;") && cookie.contains("HttpOnly"));
    let r = ui
        .client
        .get(format!("{}/runs", ui.base))
        .header("cookie", "gavel_token=s3cret")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::OK);
}

#[tokio::test]
async fn rebinding_and_cross_origin_requests_are_refused() {
    let ui = start(None).await;
    seed_run(&ui.store).await;
    let csrf = ui.csrf().await;
    let port = ui.base.rsplit(':').next().unwrap().to_owned();
    let case = json!({"case": {"id": "planted", "input": "Hi"}});
    let create_case = |host: &str, origin: Option<&str>| {
        let mut request = ui
            .client
            .post(format!("{}/api/suites/web/cases", ui.base))
            .header("host", host)
            .header("x-csrf-token", &csrf)
            .json(&case);
        if let Some(origin) = origin {
            request = request.header("origin", origin);
        }
        request.send()
    };
    let start_run = |host: &str, origin: &str| {
        ui.client
            .post(format!("{}/runs", ui.base))
            .header("host", host)
            .header("origin", origin)
            .form(&[("_csrf", csrf.as_str()), ("suite", "web")])
            .send()
    };

    // A page of attacker.example resolved to 127.0.0.1 (DNS rebinding).
    let evil = format!("attacker.example:{port}");
    let evil_origin = format!("http://{evil}");
    for path in ["/runs", &format!("/runs/{RUN}"), "/api/runs", "/suites"] {
        let r = ui
            .client
            .get(format!("{}{path}", ui.base))
            .header("host", &evil)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), StatusCode::MISDIRECTED_REQUEST, "{path}");
        let text = r.text().await.unwrap();
        assert!(
            text.contains("--allow-host") && !text.contains(&csrf),
            "{text}"
        );
    }
    let r = create_case(&evil, Some(&evil_origin)).await.unwrap();
    assert_eq!(r.status(), StatusCode::MISDIRECTED_REQUEST);
    let r = start_run(&evil, &evil_origin).await.unwrap();
    assert_eq!(r.status(), StatusCode::MISDIRECTED_REQUEST);
    // Another loopback port is another origin, too.
    let other_port = format!("localhost:{}", port.parse::<u16>().unwrap() ^ 1);
    assert_eq!(
        ui.client
            .get(format!("{}/runs", ui.base))
            .header("host", &other_port)
            .send()
            .await
            .unwrap()
            .status(),
        StatusCode::MISDIRECTED_REQUEST
    );

    // The right host, but posted from another site's page: refused even without
    // a token configured, by Origin or (absent it) by Referer.
    let own = format!("127.0.0.1:{port}");
    let r = create_case(&own, Some("https://attacker.example"))
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::FORBIDDEN);
    assert!(r.text().await.unwrap().contains("cross-origin"));
    let r = create_case(&own, Some("null")).await.unwrap();
    assert_eq!(r.status(), StatusCode::FORBIDDEN);
    let r = ui
        .client
        .post(format!("{}/runs", ui.base))
        .header("referer", format!("{evil_origin}/page"))
        .form(&[("_csrf", csrf.as_str()), ("suite", "web")])
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::FORBIDDEN);
    let r = start_run(&own, &evil_origin).await.unwrap();
    assert_eq!(r.status(), StatusCode::FORBIDDEN);
    assert_eq!(
        ui.store.runs(10).await.unwrap().len(),
        1,
        "only the seeded run"
    );
    assert!(
        ui.store.export_suite("web").await.is_err(),
        "no case was created"
    );

    // Same origin works, under every loopback name and an allowed host.
    let r = create_case(&own, Some(&format!("http://{own}")))
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::CREATED);
    let local = format!("localhost:{port}");
    let r = start_run(&local, &format!("http://{local}")).await.unwrap();
    assert_eq!(r.status(), StatusCode::SEE_OTHER);
    assert_eq!(ui.store.runs(10).await.unwrap().len(), 2, "one run started");
    for host in [format!("[::1]:{port}"), "gavel.internal".to_owned()] {
        let r = ui
            .client
            .get(format!("{}/runs", ui.base))
            .header("host", &host)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), StatusCode::OK, "{host}");
    }
}

#[tokio::test]
async fn the_openapi_document_describes_the_api() {
    let ui = start(None).await;
    let (status, text) = ui.get("/api/openapi.json").await;
    assert_eq!(status, StatusCode::OK);
    let doc: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(doc["openapi"], "3.1.0");
    for path in [
        "/api/runs",
        "/api/runs/{id}",
        "/api/runs/{id}/progress",
        "/api/runs/{id}/labels",
        "/api/runs/{id}/review",
        "/api/runs/{id}/pair-labels",
        "/api/runs/{id}/agreement",
        "/api/runs/{id}/calibrate",
        "/api/compare",
        "/api/trends",
        "/api/suites",
        "/api/suites/{suite}/cases",
        "/api/suites/{suite}/cases/{key}",
    ] {
        assert!(doc["paths"][path].is_object(), "{path} is not described");
    }
    for page in [
        "/runs",
        "/suites",
        "/compare",
        "/trends",
        "/assets/uPlot.min.js",
    ] {
        assert_eq!(ui.get(page).await.0, StatusCode::OK, "{page}");
    }
}

#[tokio::test]
async fn two_runs_compare_execution_by_execution() {
    let ui = start(None).await;
    seed_run(&ui.store).await;
    let later = "019a0000-4444-7000-8000-000000000005";
    ui.store
        .create_run(&RunRecord {
            id: later.into(),
            suite: "hostile".into(),
            status: RunStatus::Completed,
            started_at: gavel_core::now_rfc3339(),
            finished_at: None,
            config: json!({}),
            planned: None,
        })
        .await
        .unwrap();
    for (case, status) in [("xss", Status::Pass), ("new", Status::Fail)] {
        let execution = Execution {
            case_id: case.into(),
            case_name: case.into(),
            target: "agent".into(),
            repeat_index: 0,
            tags: vec![],
            status,
            score: None,
            transcript: Transcript::default(),
            verdicts: vec![],
            reason: None,
            started_at: gavel_core::now_rfc3339(),
            duration_ms: 1,
        };
        ui.store.record_execution(later, &execution).await.unwrap();
    }
    let (status, text) = ui.get(&format!("/api/compare?a={RUN}&b={later}")).await;
    assert_eq!(status, StatusCode::OK, "{text}");
    let rows: Value = serde_json::from_str(&text).unwrap();
    let changes: Vec<(&str, &str)> = rows
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["case_id"].as_str().unwrap(),
                r["change"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(changes, [("xss", "fix"), ("new", "added")]);
    let (status, page) = ui.get(&format!("/compare?a={RUN}&b={later}")).await;
    assert_eq!(status, StatusCode::OK);
    assert!(page.contains("<tr class=\"fix\">") && page.contains("<tr class=\"only-in-b\">"));
    // Each run in the pickers: suite, time, what passed, the tail of its id.
    assert!(
        page.contains("1 of 2 passed (50%) · 00000005</option>"),
        "{page}"
    );
}

#[tokio::test]
async fn the_start_form_offers_the_suites_targets_and_estimates_the_judge_cost() {
    let ui = start(None).await;
    let doc = gavel_store::SuiteDoc::from_value(json!({"cases": [
        {"id": "judged", "input": "hi", "criteria": "Answers politely"},
        {"id": "plain", "input": "hi", "checks": [{"type": "contains", "value": "ok"}]},
    ]}))
    .unwrap();
    ui.store.import_suite("est", &doc, "test").await.unwrap();
    let (status, page) = ui.get("/runs").await;
    assert_eq!(status, StatusCode::OK);
    assert!(
        page.contains("name=\"targets[]\" value=\"echo\">"),
        "{page}"
    );

    // 2 cases × 2 repeats; the judged one calls the judge twice, at gpt-4o-mini's
    // list price ($0.15 / $0.60 per million) with ~1500 tokens in and ~300 out.
    let (status, part) = ui
        .get("/runs/preview?suite=est&judge=openai:gpt-4o-mini&repeat=2&targets[]=echo&targets[]=gone")
        .await;
    assert_eq!(status, StatusCode::OK, "{part}");
    assert!(part.contains("value=\"echo\" checked"), "{part}");
    assert!(
        !part.contains("gone"),
        "a target the suite lacks is dropped: {part}"
    );
    assert!(part.contains("2 judge calls in 4 executions"), "{part}");
    assert!(part.contains("about $0.0008"), "{part}");

    let (_, part) = ui.get("/runs/preview?suite=est&judge=nonsense").await;
    assert!(part.contains("not estimated: judge `nonsense`"), "{part}");
    let (_, part) = ui
        .get("/runs/preview?suite=est&judge=anthropic:claude-unpriced-9")
        .await;
    assert!(part.contains("price is not known"), "{part}");
}

#[tokio::test]
async fn a_running_run_streams_its_results_as_server_sent_events() {
    let ui = start(None).await;
    let csrf = ui.csrf().await;
    // Three cases, each answered after 300 ms: the run is still going while
    // the first results arrive.
    let agent = "while IFS= read -r line; do sleep 0.3; printf '{\"output\": \"ok\"}\\n'; done";
    let targets = json!({"targets": {"slow": {"type": "command", "command": ["sh", "-c", agent]}}});
    std::fs::write(ui.dir.path().join("targets.yaml"), targets.to_string()).unwrap();
    let doc = gavel_store::SuiteDoc::from_value(json!({
        "cases": [
            {"id": "a", "input": "1", "checks": [{"type": "contains", "value": "ok"}]},
            {"id": "b", "input": "2", "checks": [{"type": "contains", "value": "no"}]},
            {"id": "c", "input": "3"},
        ],
    }))
    .unwrap();
    ui.store.import_suite("live", &doc, "test").await.unwrap();
    let r = ui
        .client
        .post(format!("{}/api/runs", ui.base))
        .header("x-csrf-token", &csrf)
        .json(&json!({"suite": "live"}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::ACCEPTED);
    let id = r.json::<Value>().await.unwrap()["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let (_, page) = ui.get(&format!("/runs/{id}")).await;
    assert!(
        page.contains("id=\"live\"") && page.contains("/assets/live.js"),
        "{page}"
    );

    let mut events = ui
        .client
        .get(format!("{}/runs/{id}/events", ui.base))
        .send()
        .await
        .unwrap();
    assert_eq!(
        events.headers()["content-type"].to_str().unwrap(),
        "text/event-stream"
    );
    let mut text = String::new();
    let mut results_before_end = 0;
    while let Some(chunk) = events.chunk().await.unwrap() {
        text.push_str(&String::from_utf8_lossy(&chunk));
        if !text.contains("\"type\":\"finished\"") {
            results_before_end = text.matches("\"type\":\"result\"").count();
        } else {
            break;
        }
    }
    let results: Vec<Value> = text
        .lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .map(|d| serde_json::from_str(d).unwrap())
        .filter(|e: &Value| e["type"] == "result")
        .collect();
    assert_eq!(results.len(), 3, "{text}");
    assert!(
        results_before_end >= 1,
        "results arrived before the end: {text}"
    );
    let statuses: Vec<&str> = results
        .iter()
        .map(|e| e["status"].as_str().unwrap())
        .collect();
    assert!(
        statuses.contains(&"fail") && statuses.contains(&"pass"),
        "{statuses:?}"
    );
    assert!(text.contains("\"status\":\"completed\""), "{text}");
    // Afterwards, the run's events say it finished.
    let (_, done) = ui.get(&format!("/runs/{id}/events")).await;
    assert!(done.contains("\"type\":\"finished\""), "{done}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_suite_with_an_otel_setting_exports_its_web_runs() {
    let receiver = otel::receiver().await;
    let ui = start(None).await;
    let csrf = ui.csrf().await;
    // An export endpoint comes from the operator's files (docs/SECURITY.md).
    let with = format!(
        "{}otel:\n  endpoint: {}\n",
        support::ECHO_TARGETS,
        receiver.uri()
    );
    std::fs::write(ui.dir.path().join("targets.yaml"), with).unwrap();
    let doc = gavel_store::SuiteDoc::from_value(json!({
        "cases": [{"id": "hello", "input": "hi", "checks": [{"type": "contains", "value": "ok"}]}],
    }))
    .unwrap();
    ui.store
        .import_suite("exported", &doc, "test")
        .await
        .unwrap();
    let r = ui
        .client
        .post(format!("{}/api/runs", ui.base))
        .header("x-csrf-token", &csrf)
        .json(&json!({"suite": "exported"}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::ACCEPTED);
    let body: Value = r.json().await.unwrap();
    let id = body["id"].as_str().unwrap();
    let run = finished(&ui.store, id).await;
    assert_eq!(run.status, RunStatus::Completed);
    // The export ends once the run is stored: wait for its run span.
    let mut got = otel::received(&receiver).await;
    for _ in 0..600 {
        if got.spans.iter().any(|s| s.name == "run exported") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
        got = otel::received(&receiver).await;
    }
    let run_span = got
        .spans
        .iter()
        .find(|s| s.name == "run exported")
        .expect("the run span was exported");
    assert_eq!(
        otel::string(&run_span.attributes, "gavel.run.id").as_deref(),
        Some(id)
    );
    let root = got.spans.iter().find(|s| s.name == "case hello").unwrap();
    assert_eq!(
        otel::string(&root.attributes, "gavel.status").as_deref(),
        Some("pass")
    );
    let evaluation = got
        .logs
        .iter()
        .find(|l| l.event_name == "gen_ai.evaluation.result")
        .unwrap();
    assert!(got.spans.iter().any(|s| s.span_id == evaluation.span_id));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_web_run_whose_export_fails_keeps_the_warning() {
    // A port nothing listens on: bound, then let go.
    let closed = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://{}", listener.local_addr().unwrap())
    };
    let ui = start(None).await;
    let csrf = ui.csrf().await;
    // An export endpoint comes from the operator's files (docs/SECURITY.md).
    let with = format!("{}otel:\n  endpoint: {closed}\n", support::ECHO_TARGETS);
    std::fs::write(ui.dir.path().join("targets.yaml"), with).unwrap();
    let doc = gavel_store::SuiteDoc::from_value(json!({
        "cases": [{"id": "hello", "input": "hi", "checks": [{"type": "contains", "value": "ok"}]}],
    }))
    .unwrap();
    ui.store.import_suite("unsent", &doc, "test").await.unwrap();
    let r = ui
        .client
        .post(format!("{}/api/runs", ui.base))
        .header("x-csrf-token", &csrf)
        .json(&json!({"suite": "unsent"}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::ACCEPTED);
    let body: Value = r.json().await.unwrap();
    let id = body["id"].as_str().unwrap();
    finished(&ui.store, id).await;
    // The export ends once the run is stored: wait for its warning.
    let mut warnings = Vec::new();
    for _ in 0..600 {
        warnings = ui.store.run_warnings(id).await.unwrap();
        if !warnings.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let expected = format!("OpenTelemetry export of traces to {closed}/v1/traces failed");
    assert!(
        warnings.iter().any(|w| w.contains(&expected)),
        "{warnings:?}"
    );
    let (_, page) = ui.get(&format!("/api/runs/{id}")).await;
    assert!(page.contains(&expected), "{page}");
    let (_, page) = ui.get(&format!("/runs/{id}")).await;
    assert!(page.contains("id=\"run-warnings\""), "{page}");
}
