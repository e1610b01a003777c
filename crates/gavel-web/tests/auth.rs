//! Users and roles over a real store and socket: every state-changing route of
//! the router (found by reading the router's source) refuses a viewer with 403
//! and nobody with 401, and lets the role it needs through; sign-in, cookies,
//! sessions, CSRF per session, API tokens, the read-only shared token, who is
//! recorded with each change, a 1 MB prompt past CSRF, and the case lifecycle.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeSet;

use gavel_core::{RunRecord, RunStatus};
use gavel_store::{Role, SuiteDoc};
use reqwest::StatusCode;
use serde_json::{Value, json};

mod support;

use support::{Ui, start};

const RUN: &str = "019a0000-5555-7000-8000-000000000005";
const PASSWORD: &str = "correct horse battery";

// A signed-in browser: its session cookie and CSRF token.
use support::Browser as Session;

/// The value of `name="_csrf"` on a page.
fn csrf_of(page: &str) -> String {
    let at = page.find("name=\"_csrf\" value=\"").expect("a CSRF field") + 20;
    page[at..at + 64].to_owned()
}

impl Ui {
    async fn sign_in(&self, name: &str) -> Session {
        self.signed_in(name, PASSWORD).await
    }

    /// `method path` as `who` (a session, or nobody), with the CSRF token in
    /// both the header and the form.
    async fn send(&self, method: &str, path: &str, who: Option<&Session>) -> reqwest::Response {
        let method = reqwest::Method::from_bytes(method.as_bytes()).unwrap();
        let mut request = self.client.request(method, format!("{}{path}", self.base));
        if let Some(s) = who {
            request = request
                .header("cookie", &s.cookie)
                .header("x-csrf-token", &s.csrf);
        }
        let csrf = who.map_or("", |s| s.csrf.as_str());
        if path.starts_with("/api/") {
            request = request.json(&json!({}));
        } else {
            request = request.form(&[("_csrf", csrf)]);
        }
        request.send().await.unwrap()
    }
}

/// A UI with an admin, an editor and a viewer, a stored suite `s` with case `a`
/// (two versions), and a finished run.
async fn team() -> Ui {
    let ui = start(None).await;
    for (name, role) in [
        ("ada", Role::Admin),
        ("ed", Role::Editor),
        ("vi", Role::Viewer),
    ] {
        gavel_web::add_user(&ui.store, name, role, PASSWORD, "test")
            .await
            .unwrap();
    }
    for input in ["hello", "hello there"] {
        let doc = SuiteDoc::from_value(json!({"cases": [{"id": "a", "input": input}]})).unwrap();
        ui.store.import_suite("s", &doc, "test").await.unwrap();
    }
    ui.store
        .create_run(&RunRecord {
            id: RUN.into(),
            suite: "s".into(),
            status: RunStatus::Completed,
            started_at: gavel_core::now_rfc3339(),
            finished_at: Some(gavel_core::now_rfc3339()),
            config: json!({}),
            planned: None,
        })
        .await
        .unwrap();
    ui
}

/// Every route of the router as (method, path), read from the crate's source:
/// each `.route("PATH", …)` with the method functions in its call, prefixed as
/// `lib.rs` nests its module.
fn router_routes() -> BTreeSet<(String, String)> {
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let lib = std::fs::read_to_string(src.join("lib.rs")).unwrap();
    let mut routes = BTreeSet::new();
    for entry in std::fs::read_dir(&src).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "rs") {
            continue;
        }
        let module = path.file_stem().unwrap().to_str().unwrap().to_owned();
        // `.nest("/api", api::routes())` in lib.rs prefixes that module's routes.
        let prefix = lib
            .split(".nest(\"")
            .skip(1)
            .filter_map(|rest| rest.split_once('"'))
            .find(|(_, after)| {
                after
                    .trim_start_matches([',', ' ', '\n'])
                    .starts_with(&format!("{module}::routes()"))
            })
            .map_or("", |(prefix, _)| prefix);
        let text = std::fs::read_to_string(&path).unwrap();
        for call in text.split(".route(").skip(1) {
            let Some(path) = call
                .trim_start()
                .strip_prefix('"')
                .and_then(|r| r.split('"').next())
            else {
                continue;
            };
            let mut depth = 1;
            let end = call
                .char_indices()
                .find(|&(_, c)| {
                    depth += match c {
                        '(' => 1,
                        ')' => -1,
                        _ => 0,
                    };
                    depth == 0
                })
                .map_or(call.len(), |(i, _)| i);
            let args = &call[..end];
            for method in ["get", "post", "put", "patch", "delete"] {
                let called = args.match_indices(&format!("{method}(")).any(|(i, _)| {
                    i == 0 || !args[..i].ends_with(|c: char| c.is_alphanumeric() || c == '_')
                });
                if called {
                    routes.insert((method.to_uppercase(), format!("{prefix}{path}")));
                }
            }
        }
    }
    routes
}

fn concrete(path: &str) -> String {
    path.replace("{id}", RUN)
        .replace("{suite}", "s")
        .replace("{key}", "a")
        .replace("{name}", "vi")
        .replace("{file}", "gavel.css")
}

#[tokio::test]
async fn a_viewer_can_change_nothing_and_nobody_must_sign_in() {
    let ui = team().await;
    let routes = router_routes();
    for known in [
        ("POST", "/runs"),
        ("POST", "/api/runs"),
        ("PUT", "/api/suites/{suite}/cases/{key}"),
        ("DELETE", "/api/suites/{suite}/cases/{key}"),
        ("POST", "/suites/{suite}/cases/{key}/restore"),
        ("POST", "/runs/{id}/review"),
        ("POST", "/runs/{id}/review/calibrate"),
        ("POST", "/api/users"),
        ("GET", "/runs/{id}"),
    ] {
        let known = (known.0.to_owned(), known.1.to_owned());
        assert!(routes.contains(&known), "{known:?} not found in {routes:?}");
    }
    let changing: Vec<&(String, String)> = routes.iter().filter(|(m, _)| m != "GET").collect();
    assert!(changing.len() >= 25, "{changing:?}");
    // Signing in and out are the only changes open to anyone.
    let public = [("POST", "/login"), ("POST", "/logout")];

    let viewer = ui.sign_in("vi").await;
    let editor = ui.sign_in("ed").await;
    let admin = ui.sign_in("ada").await;
    let (_, token) = {
        let r = ui.send("POST", "/api/tokens", Some(&admin)).await;
        assert_eq!(r.status(), StatusCode::CREATED);
        ((), r.json::<Value>().await.unwrap())
    };
    // An admin's token for the viewer: the viewer's scripts, as the viewer.
    let r = ui
        .client
        .post(format!("{}/users/vi/tokens", ui.base))
        .header("cookie", &admin.cookie)
        .form(&[("_csrf", admin.csrf.as_str()), ("label", "ci")])
        .send()
        .await
        .unwrap();
    let page = r.text().await.unwrap();
    let at = page.find("gvl_").expect("the token shown once");
    let viewer_token = page[at..at + 68].to_owned();
    assert!(token["token"].as_str().unwrap().starts_with("gvl_"));

    for (method, pattern) in &changing {
        let path = concrete(pattern);
        if public.contains(&(method.as_str(), pattern.as_str())) {
            continue;
        }
        let r = ui.send(method, &path, None).await;
        assert_eq!(
            r.status(),
            StatusCode::UNAUTHORIZED,
            "nobody: {method} {path}"
        );
        let r = ui.send(method, &path, Some(&viewer)).await;
        assert_eq!(r.status(), StatusCode::FORBIDDEN, "viewer: {method} {path}");
        let text = r.text().await.unwrap();
        assert!(text.contains("viewer"), "{method} {path}: {text}");
        let method_ = reqwest::Method::from_bytes(method.as_bytes()).unwrap();
        let r = ui
            .client
            .request(method_, format!("{}{path}", ui.base))
            .bearer_auth(&viewer_token)
            .json(&json!({}))
            .send()
            .await
            .unwrap();
        assert_eq!(
            r.status(),
            StatusCode::FORBIDDEN,
            "viewer's token: {method} {path}"
        );
    }
    assert!(
        ui.store.case_history("s", "a").await.unwrap().len() == 2,
        "nothing changed"
    );
    assert!(ui.store.run_labels(RUN).await.unwrap().is_empty());
    assert_eq!(ui.store.runs(10).await.unwrap().len(), 1);
    assert_eq!(ui.store.users().await.unwrap().len(), 3);

    // The role a route needs gets past the guard (to the handler's own answer).
    for (method, pattern) in &changing {
        if public.contains(&(method.as_str(), pattern.as_str())) {
            continue;
        }
        let who = if pattern.contains("users") {
            &admin
        } else {
            &editor
        };
        let path = concrete(pattern);
        let status = ui.send(method, &path, Some(who)).await.status();
        assert!(
            status != StatusCode::FORBIDDEN && status != StatusCode::UNAUTHORIZED,
            "{method} {path}: {status}"
        );
    }
    // Reading: every page and API call, but users are the admin's.
    for (_, pattern) in routes.iter().filter(|(m, _)| m == "GET") {
        let path = concrete(pattern);
        let status = ui.send("GET", &path, Some(&viewer)).await.status();
        if pattern.contains("users") {
            assert_eq!(status, StatusCode::FORBIDDEN, "{path}");
        } else {
            let refused = [StatusCode::FORBIDDEN, StatusCode::UNAUTHORIZED];
            assert!(!refused.contains(&status), "{path}: {status}");
        }
    }
}

#[tokio::test]
async fn sign_in_sets_a_safe_cookie_and_sign_out_ends_it() {
    let ui = start(None).await;
    // No account yet: open mode, the local admin.
    let (status, me) = ui.get("/api/me").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        serde_json::from_str::<Value>(&me).unwrap(),
        json!({"name": "local", "role": "admin"})
    );
    gavel_web::add_user(&ui.store, "ed", Role::Editor, PASSWORD, "test")
        .await
        .unwrap();
    let short = gavel_web::add_user(&ui.store, "bo", Role::Editor, "short", "test").await;
    assert!(short.unwrap_err().to_string().contains("at least 8"));
    let r = ui.get("/runs").await;
    assert_eq!(r.0, StatusCode::SEE_OTHER, "open mode ended");

    let (_, page) = ui.get("/login?next=/suites").await;
    let csrf = csrf_of(&page);
    let post = |password: &'static str, next: &'static str, https: bool| {
        let mut r = ui.client.post(format!("{}/login", ui.base)).form(&[
            ("_csrf", csrf.as_str()),
            ("name", "ed"),
            ("password", password),
            ("next", next),
        ]);
        if https {
            r = r.header("x-forwarded-proto", "https");
        }
        r.send()
    };
    let r = post("wrong password", "/", false).await.unwrap();
    assert_eq!(r.status(), StatusCode::UNAUTHORIZED);
    assert!(r.headers().get("set-cookie").is_none());
    let page = r.text().await.unwrap();
    assert!(page.contains("wrong name or password") && page.contains("value=\"ed\""));

    let r = post(PASSWORD, "//evil.example/x", true).await.unwrap();
    assert_eq!(r.status(), StatusCode::SEE_OTHER);
    assert_eq!(r.headers()["location"], "/", "no open redirect");
    let secure = r.headers()["set-cookie"].to_str().unwrap().to_owned();
    assert!(secure.contains("; Secure"), "{secure}");
    let r = post(PASSWORD, "/suites", false).await.unwrap();
    assert_eq!(r.headers()["location"], "/suites");
    let set = r.headers()["set-cookie"].to_str().unwrap().to_owned();
    for part in ["gavel_session=", "HttpOnly", "SameSite=Lax", "Path=/"] {
        assert!(set.contains(part), "{set}");
    }
    assert!(!set.contains("Secure"), "plain HTTP: {set}");
    let cookie = set.split(';').next().unwrap().to_owned();
    let session = cookie.trim_start_matches("gavel_session=");

    // Only hashes are stored.
    let (user, hash) = ui.store.user_for_sign_in("ed").await.unwrap().unwrap();
    assert_eq!(user.role, Role::Editor);
    assert!(hash.starts_with("$argon2id$") && !hash.contains(PASSWORD));
    assert!(
        ui.store.session_user(session).await.unwrap().is_none(),
        "the cookie is not the key"
    );

    let me = |cookie: String| {
        ui.client
            .get(format!("{}/api/me", ui.base))
            .header("cookie", cookie)
            .send()
    };
    let r = me(cookie.clone()).await.unwrap();
    assert_eq!(r.json::<Value>().await.unwrap()["name"], "ed");

    // The session's CSRF token is its own: the sign-in page's does not do.
    let label = |csrf: &str| {
        ui.client
            .post(format!("{}/logout", ui.base))
            .header("cookie", &cookie)
            .form(&[("_csrf", csrf)])
            .send()
    };
    assert_eq!(label(&csrf).await.unwrap().status(), StatusCode::FORBIDDEN);
    let (_, account) = {
        let r = ui
            .client
            .get(format!("{}/account", ui.base))
            .header("cookie", &cookie)
            .send()
            .await
            .unwrap();
        ((), r.text().await.unwrap())
    };
    assert!(account.contains("ed") && account.contains("Sign out"));
    let own = csrf_of(&account);
    assert_ne!(own, csrf);
    let r = label(&own).await.unwrap();
    assert_eq!(r.status(), StatusCode::SEE_OTHER);
    assert!(
        r.headers()["set-cookie"]
            .to_str()
            .unwrap()
            .contains("Max-Age=0")
    );
    assert_eq!(
        me(cookie.clone()).await.unwrap().status(),
        StatusCode::UNAUTHORIZED
    );
}

#[tokio::test]
async fn api_tokens_and_the_shared_token() {
    let ui = start(Some("shared-bootstrap-token")).await;
    gavel_web::add_user(&ui.store, "ed", Role::Editor, PASSWORD, "test")
        .await
        .unwrap();
    let editor = ui.sign_in("ed").await;
    let r = ui
        .client
        .post(format!("{}/api/tokens", ui.base))
        .header("cookie", &editor.cookie)
        .header("x-csrf-token", &editor.csrf)
        .json(&json!({"label": "ci"}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::CREATED);
    let made: Value = r.json().await.unwrap();
    let token = made["token"].as_str().unwrap().to_owned();

    // A script writes with its token alone (no cookie, no CSRF), as its user.
    let create = |bearer: &str| {
        ui.client
            .post(format!("{}/api/suites/ci/cases", ui.base))
            .bearer_auth(bearer)
            .json(&json!({"case": {"id": "t", "input": "hi"}}))
            .send()
    };
    assert_eq!(create(&token).await.unwrap().status(), StatusCode::CREATED);
    let history = ui.store.case_history("ci", "t").await.unwrap();
    assert_eq!(history[0].changed_by, "ed");
    let listed = ui.store.api_tokens("ed").await.unwrap();
    assert_eq!(listed.len(), 1);

    // The shared token reads, and changes nothing.
    let r = ui
        .client
        .get(format!("{}/api/runs", ui.base))
        .bearer_auth("shared-bootstrap-token")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    assert_eq!(
        create("shared-bootstrap-token").await.unwrap().status(),
        StatusCode::FORBIDDEN
    );
    assert_eq!(
        create("gvl_not-a-token").await.unwrap().status(),
        StatusCode::UNAUTHORIZED
    );

    let r = ui
        .client
        .delete(format!(
            "{}/api/tokens/{}",
            ui.base,
            made["id"].as_str().unwrap()
        ))
        .bearer_auth(&token)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::NO_CONTENT);
    assert_eq!(
        create(&token).await.unwrap().status(),
        StatusCode::UNAUTHORIZED,
        "revoked"
    );
}

#[tokio::test]
async fn changes_record_the_signed_in_user_and_a_megabyte_prompt_passes_csrf() {
    let ui = start(None).await;
    gavel_web::add_user(&ui.store, "ed", Role::Editor, PASSWORD, "test")
        .await
        .unwrap();
    let ed = ui.sign_in("ed").await;
    let form = |path: &str, fields: Vec<(&str, String)>| {
        let mut fields = fields;
        fields.push(("_csrf", ed.csrf.clone()));
        ui.client
            .post(format!("{}{path}", ui.base))
            .header("cookie", &ed.cookie)
            .form(&fields)
            .send()
    };
    // 1 MB of prompt, the CSRF field last: the handler gets it all, and the
    // builder refuses it by the field (over its 256 KiB limit), the form kept.
    let prompt = "Where is the Beach House? ".repeat(40_330);
    assert!(prompt.len() > 1_000_000);
    let r = form(
        "/suites/web/cases/new",
        vec![
            ("id", "big".into()),
            ("rounds[0][input]", prompt.clone()),
            ("action", "save".into()),
        ],
    )
    .await
    .unwrap();
    assert_eq!(r.status(), StatusCode::UNPROCESSABLE_ENTITY);
    let page = r.text().await.unwrap_or_default();
    assert!(page.contains("at most 256 KiB"), "the message by the field");
    assert!(page.contains("value=\"big\""), "the form is kept");
    let stored = ui.store.case_history("web", "big").await;
    assert!(stored.unwrap_or_default().is_empty(), "nothing is stored");

    // A case saved by form is recorded under the session's user, whatever the
    // form says.
    let r = form(
        "/suites/web/cases/new",
        vec![
            ("id", "big".into()),
            ("rounds[0][input]", "Where is the Beach House?".into()),
            ("author", "mallory".into()),
            ("action", "save".into()),
        ],
    )
    .await
    .unwrap();
    assert_eq!(
        r.status(),
        StatusCode::SEE_OTHER,
        "{}",
        r.text().await.unwrap_or_default()
    );
    let history = ui.store.case_history("web", "big").await.unwrap();
    assert_eq!(
        history[0].changed_by, "ed",
        "the session's user, not a form field"
    );

    let r = form("/runs", vec![("suite", "web".into())]).await.unwrap();
    assert_eq!(r.status(), StatusCode::SEE_OTHER);
    let id = r.headers()["location"]
        .to_str()
        .unwrap()
        .trim_start_matches("/runs/")
        .to_owned();
    assert_eq!(
        ui.store.run_started_by(&id).await.unwrap().as_deref(),
        Some("ed")
    );
    let r = form(
        &format!("/runs/{id}/review"),
        vec![
            ("case_id", "big".into()),
            ("target", "echo".into()),
            ("repeat_index", "0".into()),
            ("label", "pass".into()),
            ("who", "mallory".into()),
        ],
    )
    .await
    .unwrap();
    assert_eq!(r.status(), StatusCode::SEE_OTHER);
    let labels = ui.store.run_labels(&id).await.unwrap();
    assert_eq!(labels[0].who, "ed");
    let (_, page) = {
        let r = ui
            .client
            .get(format!("{}/runs/{id}", ui.base))
            .header("cookie", &ed.cookie)
            .send()
            .await
            .unwrap();
        ((), r.text().await.unwrap())
    };
    assert!(
        page.contains("id=\"started-by\">ed<"),
        "the run page says who started it"
    );
}

#[tokio::test]
async fn cases_are_diffed_archived_deleted_and_restored_by_name() {
    let ui = team().await;
    let ed = ui.sign_in("ed").await;
    let api = |method: reqwest::Method, path: &str, body: Value| {
        ui.client
            .request(method, format!("{}/api/suites/s/cases/a{path}", ui.base))
            .header("cookie", &ed.cookie)
            .header("x-csrf-token", &ed.csrf)
            .json(&body)
            .send()
    };
    let r = api(reqwest::Method::GET, "/diff?from=1&to=2", json!({}))
        .await
        .unwrap();
    let diff: Value = r.json().await.unwrap();
    let lines: Vec<String> = diff["lines"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| {
            format!(
                "{}{}",
                l["sign"].as_str().unwrap(),
                l["text"].as_str().unwrap()
            )
        })
        .collect();
    assert!(lines.contains(&"-input: hello".to_owned()), "{lines:?}");
    assert!(
        lines.contains(&"+input: hello there".to_owned()),
        "{lines:?}"
    );

    let r = api(reqwest::Method::POST, "/archive", json!({"archived": true}))
        .await
        .unwrap();
    assert_eq!(r.json::<Value>().await.unwrap()["version"], 3);
    let (_, listed) = {
        let r = ui
            .client
            .get(format!("{}/api/suites/s/cases", ui.base))
            .header("cookie", &ed.cookie)
            .send()
            .await
            .unwrap();
        ((), r.json::<Value>().await.unwrap())
    };
    assert_eq!(listed, json!([]), "archived cases are out of the suite");
    let r = api(
        reqwest::Method::POST,
        "/archive",
        json!({"archived": false}),
    )
    .await
    .unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    let r = api(reqwest::Method::DELETE, "", json!({})).await.unwrap();
    assert_eq!(r.json::<Value>().await.unwrap()["version"], 5);
    let r = api(reqwest::Method::POST, "/restore", json!({"version": 1}))
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::CREATED);
    let history = ui.store.case_history("s", "a").await.unwrap();
    assert_eq!(history.len(), 6);
    assert_eq!(history[5].case.as_ref().unwrap()["input"], "hello");
    let who: Vec<&str> = history[2..].iter().map(|v| v.changed_by.as_str()).collect();
    assert_eq!(who, ["ed"; 4]);

    // A version that no longer compiles is not restored.
    let bad = SuiteDoc::from_value(json!({"cases": [
        {"id": "a", "input": "x", "checks": [{"type": "regex", "pattern": "(12 Ocean"}]}
    ]}))
    .unwrap();
    ui.store.import_suite("s", &bad, "old-gavel").await.unwrap();
    ui.store
        .import_suite(
            "s",
            &SuiteDoc::from_value(json!({"cases": [{"id": "a", "input": "fixed"}]})).unwrap(),
            "test",
        )
        .await
        .unwrap();
    let r = api(reqwest::Method::POST, "/restore", json!({"version": 7}))
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::BAD_REQUEST);
    assert!(r.text().await.unwrap().contains("no longer compiles"));

    // The history page says who changed what; a viewer sees no buttons.
    let ui = &ui;
    let page = |s: Session| async move {
        ui.client
            .get(format!("{}/suites/s/cases/a/history", ui.base))
            .header("cookie", &s.cookie)
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap()
    };
    let seen = page(ed).await;
    for text in [
        "restored v1",
        "archived",
        "unarchived",
        "deleted",
        "Restore v2",
        "delete-case",
    ] {
        assert!(seen.contains(text), "{text}: {seen}");
    }
    let viewer = ui.sign_in("vi").await;
    let seen = page(viewer).await;
    assert!(
        seen.contains("restored v1")
            && !seen.contains("Restore v2")
            && !seen.contains("delete-case")
    );
}
