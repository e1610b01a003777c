//! The web UI in headless Chromium, driven over WebDriver (chromedriver), as a
//! product manager who writes no YAML: builds a two-round case with a contains
//! check, an expected tool and judge criteria; starts runs with a chosen judge
//! (the local `mock-openai` server) and target, reading the judge's estimated
//! cost; watches results arrive; filters to failures; reads a failing transcript
//! and its reasoning; compares with the previous run; restores the case's first
//! version from its history. Every main page is then looked at at laptop and
//! phone size (labelled controls, visible focus, no sideways scrolling). An XSS
//! corpus stored as case names, inputs, agent outputs and judge reasoning must
//! execute nothing on any page. Screenshots go to the directory
//! `GAVEL_SCREENSHOTS` names, when it is set.
//!
//! Needs `/usr/bin/chromium`, `chromedriver` and the `mock-openai` binary built
//! beside this test (`cargo build -p mock-openai`); without them it says which is
//! missing and skips (under CI, or with GAVEL_TEST_REQUIRE_CHROMIUM set, it fails).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use fantoccini::actions::{InputSource, KeyAction, KeyActions};
use fantoccini::key::Key;
use fantoccini::{Client, ClientBuilder, Locator};
use gavel_core::{CheckKind, Execution, RunRecord, RunStatus, Status, Transcript, Turn, Verdict};
use gavel_store::{Role, Store};
use serde_json::{Value, json};

mod support;

use support::Ui;

const CHROMIUM: &str = "/usr/bin/chromium";

/// A child process killed on drop.
struct Kill(Child);

impl Drop for Kill {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn which(name: &str) -> Option<PathBuf> {
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|p| p.join(name))
            .find(|p| p.is_file())
    })
}

/// The `mock-openai` binary of this build (target/debug/mock-openai).
fn mock_openai_bin() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    exe.parent().unwrap().parent().unwrap().join("mock-openai")
}

/// Why this machine cannot run the test, if it cannot.
fn missing() -> Option<String> {
    if !Path::new(CHROMIUM).exists() {
        return Some(format!("{CHROMIUM} is missing (apt-get install chromium)"));
    }
    if which("chromedriver").is_none() {
        return Some("chromedriver is not on PATH (apt-get install chromium-driver)".into());
    }
    let mock = mock_openai_bin();
    if !mock.exists() {
        return Some(format!(
            "{} is not built (cargo build -p mock-openai)",
            mock.display()
        ));
    }
    None
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Polls until `port` accepts connections (a process starting up).
async fn listening(port: u16) {
    for _ in 0..200 {
        if tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .is_ok()
        {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("nothing listens on port {port}");
}

fn mock_openai() -> (Kill, String) {
    use std::io::BufRead;
    let mut child = Command::new(mock_openai_bin())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let url = line.trim().rsplit(' ').next().unwrap().to_owned();
    (Kill(child), url)
}

/// One browser at a time: tests in parallel raced for chromedriver's port (a
/// free port found by two tests at once) and drove each other's sessions.
static ONE_BROWSER: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// A test's turn with the browser, and its chromedriver (killed when dropped).
struct Browser {
    _driver: Kill,
    _turn: tokio::sync::MutexGuard<'static, ()>,
}

async fn chromium() -> (Browser, Client) {
    let turn = ONE_BROWSER.lock().await;
    let port = free_port();
    let driver = Command::new(which("chromedriver").unwrap())
        .arg(format!("--port={port}"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let driver = Kill(driver);
    listening(port).await;
    let mut caps = serde_json::Map::new();
    caps.insert(
        "goog:chromeOptions".into(),
        json!({
            "binary": CHROMIUM,
            "args": ["--headless", "--no-sandbox", "--disable-gpu",
                     "--disable-background-networking", "--disable-dev-shm-usage",
                     "--window-size=1366,768"],
        }),
    );
    let connector = hyper_util::client::legacy::connect::HttpConnector::new();
    let client = ClientBuilder::new(connector)
        .capabilities(caps)
        .connect(&format!("http://127.0.0.1:{port}"))
        .await
        .unwrap();
    let browser = Browser {
        _driver: driver,
        _turn: turn,
    };
    (browser, client)
}

/// The agent of the runs: a moment per answer (so results land while the run
/// goes on), answering `ok` after calling `search`.
const SLOW_AGENT: &str = "targets:\n  agent:\n    type: command\n    command: [sh, -c, 'while IFS= read -r line; do sleep 0.4; printf \"{\\\"output\\\": \\\"ok, booked\\\", \\\"tool_calls\\\": [{\\\"name\\\": \\\"search\\\", \\\"arguments\\\": {}}]}\\n\"; done']\n";

/// Saves a screenshot of the page as `NAME.png` in the directory
/// `GAVEL_SCREENSHOTS` names (relative to the workspace), when it is set:
/// `GAVEL_SCREENSHOTS=docs/screenshots` retakes the README's.
async fn shot(client: &Client, name: &str) {
    let Some(dir) = std::env::var_os("GAVEL_SCREENSHOTS") else {
        return;
    };
    let png = client.screenshot().await.unwrap();
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join(format!("{name}.png")), png).unwrap();
}

async fn css(client: &Client, selector: &str) -> fantoccini::elements::Element {
    client
        .wait()
        .for_element(Locator::Css(selector))
        .await
        .unwrap()
}

async fn type_into(client: &Client, selector: &str, text: &str) {
    let field = css(client, selector).await;
    field.clear().await.unwrap();
    field.send_keys(text).await.unwrap();
}

/// Clicks an element once it is scrolled to the middle of the window (clear of
/// the sticky save bar).
async fn click(client: &Client, selector: &str) {
    let element = css(client, selector).await;
    let arg = serde_json::to_value(&element).unwrap();
    client
        .execute("arguments[0].scrollIntoView({block: 'center'})", vec![arg])
        .await
        .unwrap();
    element.click().await.unwrap();
}

/// Waits until the script returns true (up to two minutes: a loaded machine).
async fn until(client: &Client, script: &str) {
    for _ in 0..2_400 {
        if client.execute(script, vec![]).await.unwrap() == Value::Bool(true) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("never true: {script}");
}

async fn finished(store: &Store, id: &str) -> RunRecord {
    for _ in 0..1200 {
        let run = store.run(id).await.unwrap();
        if run.status != RunStatus::Running {
            return run;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("run {id} did not finish");
}

/// The start form's judge cost line once it mentions `text`.
async fn estimate(client: &Client, text: &str) -> String {
    let script = format!(
        "const e = document.getElementById('estimate'); return !!e && e.textContent.includes({})",
        json!(text)
    );
    until(client, &script).await;
    css(client, "#estimate").await.text().await.unwrap()
}

/// Signs `name` in through the sign-in page, from `/suites`.
async fn sign_in(client: &Client, ui: &Ui, name: &str, password: &str) {
    client.goto(&format!("{}/suites", ui.base)).await.unwrap();
    until(client, "return location.pathname === '/login'").await;
    type_into(client, "#f-name", name).await;
    type_into(client, "#f-password", password).await;
    click(client, "#sign-in").await;
    until(client, "return location.pathname === '/suites'").await;
    let script = format!(
        "const me = document.querySelector('#me'); return !!me && me.textContent.trim() === '{name}'"
    );
    until(client, &script).await;
}

/// Starts a run of suite `pm` on its target `agent` from the runs page, judged
/// by `judge`, after reading what a priced judge would cost; returns its id.
async fn start_run(client: &Client, ui: &Ui, judge: &str) -> String {
    client.goto(&format!("{}/runs", ui.base)).await.unwrap();
    css(client, "#f-suite")
        .await
        .select_by_value("pm")
        .await
        .unwrap();
    // The suite's targets are choices; none ticked would run them all.
    click(client, "#run-plan input[name='targets[]'][value='agent']").await;
    type_into(client, "#f-repeat", "3").await;
    type_into(client, "#f-jobs", "1").await;
    // A judge with a list price: 3 executions × 1 judged check each, at
    // $0.15 / $0.60 per million tokens, ~1500 in and ~300 out per call.
    type_into(client, "#f-judge", "openai:gpt-4o-mini").await;
    let text = estimate(client, "3 judge calls in 3 executions").await;
    assert!(text.contains("about $0.0012"), "{text}");
    assert!(text.contains("estimate"), "{text}");
    type_into(client, "#f-judge", judge).await;
    let text = estimate(client, "price is not known").await;
    assert!(text.contains("3 judge calls"), "{text}");
    let ticked = css(client, "#run-plan input[value='agent']")
        .await
        .prop("checked")
        .await
        .unwrap();
    assert_eq!(
        ticked.as_deref(),
        Some("true"),
        "the tick survives the estimate"
    );
    click(client, "#start-run-button").await;
    until(client, "return location.pathname.startsWith('/runs/')").await;
    let url = client.current_url().await.unwrap();
    url.path().trim_start_matches("/runs/").to_owned()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_product_manager_builds_runs_and_compares_without_yaml() {
    if let Some(why) = missing() {
        return gavel_testkit::skip(gavel_testkit::Need::Chromium, why);
    }
    let (_mock, mock_url) = mock_openai();
    let judge = format!("openai-compatible:mock@{mock_url}/v1");
    // The operator configured the mock (`gavel serve --judge`): editors may pick it.
    let ui = support::start_judged(None, SLOW_AGENT, Some(judge.parse().unwrap())).await;
    let (_driver, client) = chromium().await;

    // 1. Sign in as an editor (accounts exist, so nothing is open without it).
    gavel_web::add_user(&ui.store, "pat", Role::Editor, "pat-password-1", "test")
        .await
        .unwrap();
    sign_in(&client, &ui, "pat", "pat-password-1").await;

    // 2. A two-round case: a contains check, an expected tool, judge criteria.
    client.goto(&format!("{}/suites", ui.base)).await.unwrap();
    type_into(&client, "#new-suite-name", "pm").await;
    click(&client, "#new-suite button").await;
    type_into(&client, "#f-id", "booking").await;
    type_into(&client, "#f-name", "Books the beach house").await;
    type_into(&client, "#f-rounds-0-input", "Find me a beach house").await;
    css(&client, "#f-rounds-0-add")
        .await
        .select_by_value("contains")
        .await
        .unwrap();
    click(&client, "button[value='add-check:0']").await;
    type_into(&client, "#f-rounds-0-checks-0-value", "Ocean").await;
    // Tried live on a sample answer while it is written.
    type_into(&client, "#f-sample", "12 Ocean Drive is free").await;
    until(&client, "const t = document.querySelector('#check-rounds-0-checks-0 .tried'); return !!t && t.textContent.includes('passes')").await;
    click(&client, "#add-round").await;
    type_into(&client, "#f-rounds-1-input", "Book it for Friday").await;
    type_into(&client, "#f-rounds-1-expected_tools", "search").await;
    type_into(&client, "#f-criteria", "Confirms the booking politely").await;
    shot(&client, "case-builder").await;
    click(&client, "#save-case").await;
    until(&client, "return location.pathname === '/suites/pm'").await;
    let history = ui.store.case_history("pm", "booking").await.unwrap();
    let case = history.last().unwrap().case.clone().unwrap();
    assert_eq!(
        case["rounds"][0]["checks"][0],
        json!({"type": "contains", "value": "Ocean"})
    );
    assert_eq!(case["rounds"][1]["expected_tools"], json!(["search"]));
    assert_eq!(case["criteria"], "Confirms the booking politely");
    assert_eq!(history.last().unwrap().changed_by, "pat");

    // A bad regex gets its message by the field, and the form is kept.
    client
        .goto(&format!("{}/suites/pm/cases/booking", ui.base))
        .await
        .unwrap();
    css(&client, "#f-add")
        .await
        .select_by_value("regex")
        .await
        .unwrap();
    click(&client, "button[value='add-check']").await;
    type_into(&client, "#f-checks-0-value", "(12 Ocean").await;
    click(&client, "#save-case").await;
    let error = css(&client, "#error-checks-0").await.text().await.unwrap();
    assert!(error.contains("pattern"), "{error}");
    let kept = css(&client, "#f-rounds-1-input")
        .await
        .prop("value")
        .await
        .unwrap();
    assert_eq!(kept.as_deref(), Some("Book it for Friday"));
    shot(&client, "case-builder-error").await;
    assert_eq!(
        ui.store.case_history("pm", "booking").await.unwrap().len(),
        1,
        "nothing stored"
    );

    // 3-4. A run with the chosen judge; results arrive before it finishes.
    let first = start_run(&client, &ui, &judge).await;
    until(&client, "return document.querySelectorAll('#live-rows tr').length > 0 && !!document.getElementById('live')").await;
    let live = client
        .execute(
            "return document.querySelectorAll('#live-rows tr').length",
            vec![],
        )
        .await
        .unwrap();
    let run = ui.store.run(&first).await.unwrap();
    assert!(live.as_u64().unwrap() >= 1);
    shot(&client, "run-live").await;
    assert_eq!(
        run.status,
        RunStatus::Running,
        "results showed while the run went on"
    );
    let run = finished(&ui.store, &first).await;
    assert_eq!(run.status, RunStatus::Completed);
    until(
        &client,
        "return !!document.getElementById('run-gate') && !document.getElementById('live')",
    )
    .await;
    let judge_shown = css(&client, "#run-judge").await.text().await.unwrap();
    assert!(
        judge_shown.contains("openai-compatible:mock"),
        "{judge_shown}"
    );
    assert_eq!(
        css(&client, "#run-gate").await.text().await.unwrap(),
        "failed"
    );

    // 5-6. Failures only; a failing transcript with the verdict's reasoning.
    css(&client, "#f-show")
        .await
        .select_by_value("fail")
        .await
        .unwrap();
    click(&client, "#apply-filter").await;
    until(&client, "return location.search.includes('show=fail')").await;
    let statuses = client
        .execute(
            "return [...document.querySelectorAll('details.execution')].map(d => d.className)",
            vec![],
        )
        .await
        .unwrap();
    let statuses = statuses.as_array().unwrap();
    assert!(!statuses.is_empty());
    assert!(
        statuses
            .iter()
            .all(|s| s.as_str().unwrap().ends_with(" fail")),
        "{statuses:?}"
    );
    let failing = css(&client, "details.execution.fail").await;
    let arg = serde_json::to_value(&failing).unwrap();
    client
        .execute("arguments[0].scrollIntoView({block: 'start'})", vec![arg])
        .await
        .unwrap();
    let open = failing.attr("open").await.unwrap();
    assert!(open.is_some(), "a failing case is open");
    let transcript = failing
        .find(Locator::Css(".output"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(transcript.contains("ok, booked"));
    let reasons = failing
        .find(Locator::Css("td.reason"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(reasons.contains("Ocean"), "{reasons}");
    shot(&client, "run-failures").await;

    // 7. Fix the case, run again, compare the latest run with the one before.
    client
        .goto(&format!("{}/suites/pm/cases/booking", ui.base))
        .await
        .unwrap();
    type_into(&client, "#f-rounds-0-checks-0-value", "booked").await;
    click(&client, "#save-case").await;
    until(&client, "return location.pathname === '/suites/pm'").await;
    let second = start_run(&client, &ui, &judge).await;
    finished(&ui.store, &second).await;
    client.goto(&format!("{}/runs", ui.base)).await.unwrap();
    shot(&client, "runs").await;
    client.goto(&format!("{}/compare", ui.base)).await.unwrap();
    let a = css(&client, "#f-a")
        .await
        .prop("value")
        .await
        .unwrap()
        .unwrap();
    let b = css(&client, "#f-b")
        .await
        .prop("value")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (a.as_str(), b.as_str()),
        (first.as_str(), second.as_str()),
        "latest against the one before"
    );
    let change = css(&client, "#compare-rows tbody tr")
        .await
        .attr("class")
        .await
        .unwrap();
    assert_eq!(change.as_deref(), Some("fix"));
    // Runs of one suite are told apart by time, what passed and their id.
    let picked = client
        .execute(
            "const s = document.getElementById('f-b'); return s.options[s.selectedIndex].text",
            vec![],
        )
        .await
        .unwrap();
    let picked = picked.as_str().unwrap();
    assert!(picked.starts_with("pm · "), "{picked}");
    assert!(
        picked.contains(" passed (") && picked.contains("%)"),
        "{picked}"
    );
    assert!(picked.ends_with(&second[second.len() - 8..]), "{picked}");
    shot(&client, "compare").await;
    click(&client, "#compare-rows a").await;
    until(
        &client,
        "return document.querySelectorAll('.side-by-side section').length === 2",
    )
    .await;
    shot(&client, "compare-case").await;
    client.goto(&format!("{}/trends", ui.base)).await.unwrap();
    until(
        &client,
        "return document.getElementById('charts').dataset.ready === 'true'",
    )
    .await;
    let link = css(&client, "ol.points a")
        .await
        .attr("href")
        .await
        .unwrap()
        .unwrap();
    assert!(link.starts_with("/runs/"), "{link}");
    shot(&client, "trends").await;

    // 7. Restore the case's first version: from the case to its history, the
    // diff of what the fix changed, and the restore there.
    client
        .goto(&format!("{}/suites/pm/cases/booking", ui.base))
        .await
        .unwrap();
    click(&client, "#case-history").await;
    until(&client, "return location.pathname.endsWith('/history')").await;
    let rows = client
        .execute(
            "return [...document.querySelectorAll('#versions tbody tr')].map(r => r.innerText)",
            vec![],
        )
        .await
        .unwrap();
    let rows: Vec<&str> = rows
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r.as_str().unwrap())
        .collect();
    assert_eq!(rows.len(), 2, "{rows:?}");
    assert!(
        rows[0].contains("v2 (current)") && rows[0].contains("pat"),
        "{rows:?}"
    );
    shot(&client, "case-history").await;
    click(&client, "#diff-v2").await;
    until(&client, "return location.pathname.endsWith('/diff')").await;
    let lines = |class: &str| {
        format!(
            "return [...document.querySelectorAll('#diff .{class}')].map(l => l.textContent).join('\\n')"
        )
    };
    let removed = client.execute(&lines("del"), vec![]).await.unwrap();
    let added = client.execute(&lines("add"), vec![]).await.unwrap();
    assert!(removed.as_str().unwrap().contains("Ocean"), "{removed}");
    assert!(added.as_str().unwrap().contains("booked"), "{added}");
    shot(&client, "case-diff").await;
    click(&client, "#restore-v1").await;
    let notice = css(&client, "#restored").await.text().await.unwrap();
    assert!(
        notice.contains("Restored v1") && notice.contains("v3"),
        "{notice}"
    );
    click(&client, "#open-restored").await;
    until(
        &client,
        "return location.pathname === '/suites/pm/cases/booking'",
    )
    .await;
    let restored = css(&client, "#f-rounds-0-checks-0-value")
        .await
        .prop("value")
        .await
        .unwrap();
    assert_eq!(restored.as_deref(), Some("Ocean"), "v1's check is back");
    let history = ui.store.case_history("pm", "booking").await.unwrap();
    let (v1, v3) = (&history[0], history.last().unwrap());
    assert_eq!((v3.version, &v3.changed_by), (3, &"pat".to_owned()));
    assert_eq!(v3.change, gavel_store::CaseChange::Restored { from: 1 });
    assert_eq!(v3.case, v1.case);

    // Every main page at a laptop's and a phone's size: each form control is
    // labelled, focus shows, and a phone reads it without sideways scrolling.
    let pages = [
        ("runs", "/runs".to_owned()),
        ("run", format!("/runs/{first}")),
        ("suites", "/suites".to_owned()),
        ("suite", "/suites/pm".to_owned()),
        ("case-builder", "/suites/pm/cases/booking".to_owned()),
        (
            "case-history",
            "/suites/pm/cases/booking/history".to_owned(),
        ),
        (
            "case-diff",
            "/suites/pm/cases/booking/diff?from=2&to=3".to_owned(),
        ),
        ("compare", "/compare".to_owned()),
        ("trends", "/trends".to_owned()),
        ("account", "/account".to_owned()),
    ];
    for (name, path) in &pages {
        tour(&client, &ui, name, path).await;
    }

    // Signed out: the sign-in page. An admin manages users.
    gavel_web::add_user(&ui.store, "ada", Role::Admin, "ada-password-1", "test")
        .await
        .unwrap();
    click(&client, "#sign-out").await;
    until(&client, "return location.pathname === '/login'").await;
    tour(&client, &ui, "sign-in", "/login").await;
    type_into(&client, "#f-name", "ada").await;
    type_into(&client, "#f-password", "ada-password-1").await;
    click(&client, "#sign-in").await;
    until(&client, "return !!document.querySelector('#me')").await;
    tour(&client, &ui, "users", "/users").await;
    client.close().await.unwrap();
}

/// Looks at one page at 1366×768 and at 390×844: every visible form control has
/// a label, the first Tab shows where focus is, and at phone width nothing
/// scrolls sideways. Screenshots it at both sizes (`NAME`, `NAME-phone`).
async fn tour(client: &Client, ui: &Ui, name: &str, path: &str) {
    for (width, height, suffix) in [(1366, 768, ""), (390, 844, "-phone")] {
        client.set_window_size(width, height).await.unwrap();
        client.goto(&format!("{}{path}", ui.base)).await.unwrap();
        until(client, "return document.readyState === 'complete'").await;
        if path == "/trends" {
            until(
                client,
                "return document.getElementById('charts').dataset.ready === 'true'",
            )
            .await;
        }
        // The builder's screenshot shows the case's rounds and checks.
        if name == "case-builder" {
            let element = css(client, "#round-1").await;
            let arg = serde_json::to_value(&element).unwrap();
            client
                .execute("arguments[0].scrollIntoView({block: 'start'})", vec![arg])
                .await
                .unwrap();
        }
        let unlabelled = client
            .execute(
                "return [...document.querySelectorAll('input, select, textarea')]
                   .filter(e => e.type !== 'hidden' && e.getClientRects().length > 0)
                   .filter(e => e.labels.length === 0 && !e.getAttribute('aria-label') && !e.getAttribute('aria-labelledby'))
                   .map(e => e.outerHTML)",
                vec![],
            )
            .await
            .unwrap();
        assert_eq!(unlabelled, json!([]), "unlabelled controls on {path}");
        shot(client, &format!("{name}{suffix}")).await;
        let tab = KeyActions::new("keyboard".into())
            .then(KeyAction::Down {
                value: Key::Tab.into(),
            })
            .then(KeyAction::Up {
                value: Key::Tab.into(),
            });
        client.perform_actions(tab).await.unwrap();
        let outline = client
            .execute(
                "const e = document.activeElement; return e !== document.body && getComputedStyle(e).outlineStyle !== 'none'",
                vec![],
            )
            .await
            .unwrap();
        assert_eq!(outline, Value::Bool(true), "focus shows on {path}");
        if suffix == "-phone" {
            // What reaches past the right edge (none: the page fits).
            let wide = client
                .execute(
                    "const w = document.documentElement.clientWidth;
                     if (document.documentElement.scrollWidth <= w) return [];
                     const wide = [...document.querySelectorAll('body *')]
                       .filter(e => e.getBoundingClientRect().right > w + 1)
                       .filter(e => !e.parentElement.closest('.table-wrap, pre.diff, .chart'))
                       .map(e => e.tagName + '#' + e.id + '.' + e.className);
                     return wide.length ? wide : ['the page: ' + document.documentElement.scrollWidth + 'px']",
                    vec![],
                )
                .await
                .unwrap();
            assert_eq!(wide, json!([]), "{path} scrolls sideways on a phone");
        }
    }
    client.set_window_size(1366, 768).await.unwrap();
}

/// Payloads that would set `window.__xss`, pop an alert or leave an element
/// marked `data-xss` if any reached a page as markup.
fn corpus() -> Vec<String> {
    let js = "window.__xss=1;alert(1)";
    let mut payloads = vec![
        format!("<script data-xss>{js}</script>"),
        format!("<img data-xss src=x onerror=\"{js}\">"),
        format!("<svg data-xss onload=\"{js}\"></svg>"),
        format!("\"><img data-xss src=x onerror={js}>"),
        format!("'><svg data-xss/onload={js}>"),
        format!("</textarea><img data-xss src=x onerror={js}>"),
        format!("</title><script data-xss>{js}</script>"),
        format!("</pre><b data-xss onmouseover={js}>x</b>"),
        format!("<iframe data-xss src=\"javascript:{js}\"></iframe>"),
        format!("<a data-xss href=\"javascript:{js}\">x</a>"),
        format!("<body data-xss onload={js}>"),
        format!("<details data-xss open ontoggle={js}>"),
        format!("<input data-xss autofocus onfocus={js}>"),
        format!("<video data-xss><source onerror={js}></video>"),
        format!("<math><mtext></table><img data-xss src=x onerror={js}>"),
        format!("<object data-xss data=\"javascript:{js}\"></object>"),
        format!("<embed data-xss src=\"javascript:{js}\">"),
        format!("<form data-xss action=\"javascript:{js}\"><button>x</button></form>"),
        format!("<meta data-xss http-equiv=refresh content=\"0;url=javascript:{js}\">"),
        format!("<div data-xss style=\"background:url(javascript:{js})\">"),
        format!("{{{{ {js} }}}}"),
        format!("{{% raw %}}<img data-xss src=x onerror={js}>"),
        format!("<div data-xss hx-get=\"/api/runs\" hx-trigger=\"load\" hx-on:htmx:load=\"{js}\">"),
        format!("<div data-xss hx-on::load=\"{js}\"></div>"),
        format!("javascript:{js}"),
        format!("\\u003cimg data-xss src=x onerror={js}\\u003e"),
        format!("&lt;img data-xss src=x onerror={js}&gt;"),
        format!("<scr<script>ipt data-xss>{js}</scr</script>ipt>"),
        format!("<IMG DATA-XSS SRC=x OnErRoR={js}>"),
        format!("<svg><script data-xss>{js}</script></svg>"),
        format!("<style>@import 'javascript:{js}';</style><i data-xss>"),
        format!("<base data-xss href=\"javascript:{js}//\">"),
        format!("<template data-xss><img src=x onerror={js}></template>"),
        format!("<noscript><p title=\"</noscript><img data-xss src=x onerror={js}>\">"),
    ];
    payloads.push(format!("\u{202e}<img data-xss src=x onerror={js}>"));
    payloads
}

#[tokio::test(flavor = "multi_thread")]
async fn an_xss_corpus_executes_nothing_on_any_page() {
    if let Some(why) = missing() {
        return gavel_testkit::skip(gavel_testkit::Need::Chromium, why);
    }
    let payloads = corpus();
    assert!(payloads.len() >= 30);
    let ui = support::start_with(None, SLOW_AGENT).await;
    let cases: Vec<Value> = payloads
        .iter()
        .enumerate()
        .map(|(i, p)| {
            json!({"id": format!("xss-{i}"), "name": p, "description": p, "tags": ["xss"],
                   "input": p, "criteria": p, "checks": [{"type": "contains", "value": p}]})
        })
        .collect();
    let doc = gavel_store::SuiteDoc::from_value(json!({ "cases": cases })).unwrap();
    ui.store
        .import_suite("hostile", &doc, "<b data-xss>mallory</b>")
        .await
        .unwrap();
    let mut runs = Vec::new();
    for n in 0..2 {
        let id = format!("019a0000-4444-7000-8000-00000000010{n}");
        ui.store
            .create_run(&RunRecord {
                id: id.clone(),
                suite: "hostile".into(),
                status: RunStatus::Completed,
                started_at: format!("2026-11-2{n}T10:00:00Z"),
                finished_at: Some(format!("2026-11-2{n}T10:01:00Z")),
                config: json!({"judge": payloads[0], "tags": [payloads[1]]}),
                planned: None,
            })
            .await
            .unwrap();
        for (i, p) in payloads.iter().enumerate() {
            let execution = Execution {
                case_id: format!("xss-{i}"),
                case_name: p.clone(),
                target: p.clone(),
                repeat_index: 0,
                tags: vec![p.clone()],
                status: if (i + n) % 2 == 0 {
                    Status::Pass
                } else {
                    Status::Fail
                },
                score: Some(0.5),
                transcript: Transcript {
                    session_id: p.clone(),
                    turns: vec![Turn {
                        input: p.clone(),
                        output: p.clone(),
                        latency_ms: 3,
                        ..Turn::default()
                    }],
                },
                verdicts: vec![
                    Verdict::new(p, CheckKind::Judge, Status::Fail, p).with_score(0.5, Some(0.7)),
                ],
                reason: Some(p.clone()),
                started_at: gavel_core::now_rfc3339(),
                duration_ms: 3,
            };
            ui.store.record_execution(&id, &execution).await.unwrap();
        }
        runs.push(id);
    }
    let (_driver, client) = chromium().await;
    let (a, b) = (&runs[0], &runs[1]);
    let first_target = urlencode(&payloads[0]);
    let pages = [
        "/runs".to_owned(),
        format!("/runs/{a}"),
        format!("/runs/{b}?show=fail"),
        "/suites".to_owned(),
        "/suites/hostile".to_owned(),
        "/suites/hostile/cases/xss-1".to_owned(),
        "/suites/hostile/cases/xss-20".to_owned(),
        format!("/compare?a={a}&b={b}"),
        format!("/compare/case?a={a}&b={b}&case=xss-0&target={first_target}"),
        "/trends".to_owned(),
    ];
    for page in &pages {
        client.goto(&format!("{}{page}", ui.base)).await.unwrap();
        // Let scripts (htmx, trends, onload handlers) run.
        until(&client, "return document.readyState === 'complete'").await;
        if page == "/trends" {
            until(
                &client,
                "return document.getElementById('charts').dataset.ready === 'true'",
            )
            .await;
        }
        assert!(
            client.get_alert_text().await.is_err(),
            "an alert opened on {page}"
        );
        let verdict = client
            .execute(
                "return {flag: window.__xss === undefined, marked: document.querySelectorAll('[data-xss]').length, text: document.body.innerText}",
                vec![],
            )
            .await
            .unwrap();
        assert_eq!(verdict["flag"], true, "a payload ran on {page}");
        assert_eq!(verdict["marked"], 0, "a payload became markup on {page}");
        if page != "/trends" {
            let text = verdict["text"].as_str().unwrap();
            assert!(text.contains("data-xss"), "payloads show as text on {page}");
        }
    }
    client.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_viewer_sees_no_control_and_a_refused_script_keeps_what_was_typed() {
    if let Some(why) = missing() {
        return gavel_testkit::skip(gavel_testkit::Need::Chromium, why);
    }
    let ui = support::start_with(None, SLOW_AGENT).await;
    let doc =
        gavel_store::SuiteDoc::from_value(json!({"cases": [{"id": "a", "input": "hi"}]})).unwrap();
    ui.store.import_suite("s", &doc, "test").await.unwrap();
    for (name, role) in [("vi", Role::Viewer), ("ed", Role::Editor)] {
        gavel_web::add_user(&ui.store, name, role, "a-long-password", "test")
            .await
            .unwrap();
    }
    let (_driver, client) = chromium().await;
    let absent = |selector: &str| format!("return document.querySelector(\"{selector}\") === null");

    // A viewer reads everything and is shown no control it cannot use.
    sign_in(&client, &ui, "vi", "a-long-password").await;
    for (page, gone) in [
        ("/runs", "#start-run"),
        ("/suites", "#new-suite"),
        ("/suites/s", "#new-case"),
        ("/suites/s", "#run-suite"),
        ("/suites/s/cases/a", "#save-case"),
    ] {
        client.goto(&format!("{}{page}", ui.base)).await.unwrap();
        until(&client, "return document.readyState === 'complete'").await;
        let verdict = client.execute(&absent(gone), vec![]).await.unwrap();
        assert_eq!(
            verdict,
            Value::Bool(true),
            "{gone} shown to a viewer on {page}"
        );
    }
    let text = css(&client, "#read-only").await.text().await.unwrap();
    assert!(text.contains("needs the editor role"), "{text}");
    assert!(
        css(&client, "#case-yaml")
            .await
            .text()
            .await
            .unwrap()
            .contains("hi")
    );
    shot(&client, "viewer-case").await;
    click(&client, "#sign-out").await;

    // An editor's script check is refused by its field; what was typed stays.
    sign_in(&client, &ui, "ed", "a-long-password").await;
    client
        .goto(&format!("{}/suites/s/cases/new", ui.base))
        .await
        .unwrap();
    type_into(&client, "#f-id", "typed").await;
    type_into(&client, "#f-rounds-0-input", "a message typed with care").await;
    css(&client, "#f-add")
        .await
        .select_by_value("other")
        .await
        .unwrap();
    click(&client, "button[value='add-check']").await;
    type_into(&client, "#f-checks-0-value", "type: script\nshell: id").await;
    click(&client, "#save-case").await;
    let error = css(&client, "#error-checks-0").await.text().await.unwrap();
    assert!(error.contains("runs a program on the server"), "{error}");
    assert!(error.contains("gavel serve --with"), "{error}");
    let kept = css(&client, "#f-rounds-0-input")
        .await
        .prop("value")
        .await
        .unwrap();
    assert_eq!(kept.as_deref(), Some("a message typed with care"));
    client
        .execute(
            "document.getElementById('error-checks-0').scrollIntoView({block: 'center'})",
            vec![],
        )
        .await
        .unwrap();
    shot(&client, "refused-script").await;
    assert!(
        ui.store
            .case_history("s", "typed")
            .await
            .unwrap()
            .is_empty()
    );
    client.close().await.unwrap();
}

fn urlencode(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                char::from(b).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// A stored run of `n` executions (every fifth failed, every seventh an error),
/// with `status`.
async fn stored_run(store: &Store, n: usize, status: RunStatus) -> String {
    let id = uuid::Uuid::now_v7().to_string();
    let run = RunRecord {
        id: id.clone(),
        suite: "big".into(),
        status,
        started_at: gavel_core::now_rfc3339(),
        finished_at: (status != RunStatus::Running).then(gavel_core::now_rfc3339),
        config: json!({}),
        planned: Some(n as u64),
    };
    store.create_run(&run).await.unwrap();
    let executions: Vec<Execution> = (0..n)
        .map(|i| Execution {
            case_id: format!("case-{i:05}"),
            case_name: format!("Question {i}"),
            target: "agent".into(),
            repeat_index: 0,
            tags: vec![],
            status: match (i % 5, i % 7) {
                (0, _) => Status::Fail,
                (_, 0) => Status::Error,
                _ => Status::Pass,
            },
            score: None,
            transcript: Transcript {
                session_id: format!("s{i}"),
                turns: vec![Turn {
                    input: format!("question {i}"),
                    output: "an answer".into(),
                    ..Turn::default()
                }],
            },
            verdicts: vec![Verdict::new(
                "contains",
                CheckKind::Contains,
                Status::Pass,
                "ok",
            )],
            reason: None,
            started_at: gavel_core::now_rfc3339(),
            duration_ms: 3,
        })
        .collect();
    for chunk in executions.chunks(500) {
        store.record_executions(&id, chunk).await.unwrap();
    }
    id
}

/// A run of 5,000 executions: its page lists one page of them, filters and
/// searches on the server and pages on; an unknown id is "not found"; a run
/// another process drives is watched without reloading the page.
#[tokio::test(flavor = "multi_thread")]
async fn a_large_run_page_is_paged_filtered_and_searched_on_the_server() {
    if let Some(why) = missing() {
        return gavel_testkit::skip(gavel_testkit::Need::Chromium, why);
    }
    let ui = support::start_with(None, SLOW_AGENT).await;
    let big = stored_run(&ui.store, 5000, RunStatus::Completed).await;
    let html = ui
        .client
        .get(format!("{}/runs/{big}", ui.base))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(html.len() < 300_000, "{} bytes", html.len());
    let (_driver, client) = chromium().await;
    client
        .goto(&format!("{}/runs/{big}", ui.base))
        .await
        .unwrap();
    let listed = "return document.querySelectorAll('details.execution').length";
    assert_eq!(client.execute(listed, vec![]).await.unwrap(), json!(50));
    let count = css(&client, "#shown-count").await.text().await.unwrap();
    assert!(count.contains("50 shown of 5000 matching"), "{count}");

    // Failures whose case id has "12" in it: filtered by the store.
    css(&client, "#f-show")
        .await
        .select_by_value("fail")
        .await
        .unwrap();
    type_into(&client, "#f-q", "12").await;
    click(&client, "#apply-filter").await;
    until(&client, "return location.search.includes('q=12')").await;
    let expected = (0..5000)
        .filter(|i| i % 5 == 0 && format!("case-{i:05}").contains("12"))
        .count();
    let count = css(&client, "#shown-count").await.text().await.unwrap();
    assert!(
        count.contains(&format!("of {expected} matching")),
        "{count}"
    );
    let statuses: Value = client
        .execute(
            "return [...document.querySelectorAll('details.execution > summary > .status')].map(s => s.textContent)",
            vec![],
        )
        .await
        .unwrap();
    assert!(
        statuses.as_array().unwrap().iter().all(|s| s == "fail"),
        "{statuses}"
    );
    shot(&client, "run-page-filtered").await;

    // The next page holds the next 50 failures, none of the first page's.
    client
        .goto(&format!("{}/runs/{big}?show=fail", ui.base))
        .await
        .unwrap();
    let first_ids = "return [...document.querySelectorAll('details.execution > summary > small')].map(s => s.textContent.split(' ')[0])";
    let first = client.execute(first_ids, vec![]).await.unwrap();
    click(&client, "#next-page").await;
    until(&client, "return location.search.includes('after=')").await;
    let second = client.execute(first_ids, vec![]).await.unwrap();
    assert_eq!(second.as_array().unwrap().len(), 50);
    assert!(
        second
            .as_array()
            .unwrap()
            .iter()
            .all(|id| !first.as_array().unwrap().contains(id)),
        "{first} {second}"
    );
    assert!(
        css(&client, "#first-page")
            .await
            .is_displayed()
            .await
            .unwrap()
    );

    // An unknown run is not found, not "starting" forever.
    let missing = ui
        .client
        .get(format!(
            "{}/runs/0190ffff-0000-7000-8000-000000000000",
            ui.base
        ))
        .send()
        .await
        .unwrap();
    assert_eq!(missing.status(), 404);

    // A run another process drives: its progress is polled, the page stays.
    let elsewhere = stored_run(&ui.store, 3, RunStatus::Running).await;
    client
        .goto(&format!("{}/runs/{elsewhere}", ui.base))
        .await
        .unwrap();
    css(&client, "#progress").await;
    client
        .execute("window.stayed = true", vec![])
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(2500)).await;
    assert_eq!(
        client
            .execute("return window.stayed === true", vec![])
            .await
            .unwrap(),
        json!(true),
        "the page reloaded itself"
    );
    let progress = css(&client, "#progress").await.text().await.unwrap();
    assert!(progress.contains("3 recorded"), "{progress}");
    shot(&client, "run-page-elsewhere").await;
    client.close().await.unwrap();
}

/// Presses `key` (a character or a [`Key`]) on the page, as a person would.
async fn press(client: &Client, key: char) {
    let keys = KeyActions::new("keyboard".into())
        .then(KeyAction::Down { value: key })
        .then(KeyAction::Up { value: key });
    client.perform_actions(keys).await.unwrap();
}

/// How many items the queue shows as left, once the page has one.
async fn remaining(client: &Client) -> Option<u64> {
    let text = client
        .execute(
            "const r = document.getElementById('queue-remaining'); return r ? r.textContent : null",
            vec![],
        )
        .await
        .unwrap();
    text.as_str().and_then(|t| t.trim().parse().ok())
}

/// Labels the item on the page with `key` and waits for the next page.
async fn label_with(client: &Client, key: char) {
    client
        .execute("document.body.dataset.labelled = 'no'", vec![])
        .await
        .unwrap();
    press(client, key).await;
    // The page is replaced by the next item (or the end of the queue).
    until(client, "return document.body.dataset.labelled !== 'no'").await;
}

/// A run of suite `support` with ten cases on target `x`, and another run of
/// the same cases to compare it with: answers `good`, `fine` or `bad`.
async fn seed_review(store: &Store) -> (String, String) {
    let cases: Vec<Value> = (0..10)
        .map(|i| json!({"id": format!("c{i}"), "input": format!("Question {i}")}))
        .collect();
    let doc = gavel_store::SuiteDoc::from_value(json!({ "cases": cases })).unwrap();
    store.import_suite("support", &doc, "test").await.unwrap();
    let mut ids = Vec::new();
    for (n, run) in [
        "019a0000-9999-7000-8000-000000000001",
        "019a0000-9999-7000-8000-000000000002",
    ]
    .into_iter()
    .enumerate()
    {
        store
            .create_run(&RunRecord {
                id: run.into(),
                suite: "support".into(),
                status: RunStatus::Completed,
                started_at: gavel_core::now_rfc3339(),
                finished_at: Some(gavel_core::now_rfc3339()),
                config: json!({}),
                planned: None,
            })
            .await
            .unwrap();
        for i in 0..10 {
            let word = match i {
                0..6 => "good",
                6..8 => "fine",
                _ => "bad",
            };
            let score = [0.9, 0.55, 0.2][i % 3];
            let execution = Execution {
                case_id: format!("c{i}"),
                case_name: format!("Question {i}"),
                target: "x".into(),
                repeat_index: 0,
                tags: vec![],
                status: if score > 0.5 {
                    Status::Pass
                } else {
                    Status::Fail
                },
                score: Some(score),
                transcript: Transcript {
                    session_id: format!("s{n}{i}"),
                    turns: vec![Turn {
                        input: format!("Question {i}"),
                        output: format!("A {word} answer {i}, take {n}"),
                        latency_ms: 5,
                        ..Turn::default()
                    }],
                },
                verdicts: vec![
                    Verdict::new("judge", CheckKind::Judge, Status::Pass, "reasoned")
                        .with_score(score, Some(0.5)),
                ],
                reason: None,
                started_at: gavel_core::now_rfc3339(),
                duration_ms: 5,
            };
            store.record_execution(run, &execution).await.unwrap();
        }
        ids.push(run.to_owned());
    }
    (ids.remove(0), ids.remove(0))
}

/// The answer text on the queue page (single mode).
async fn shown_output(client: &Client) -> String {
    css(client, "#queue-item .output")
        .await
        .text()
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn two_editors_label_a_review_queue_by_keyboard_and_calibrate_from_it() {
    if let Some(why) = missing() {
        return gavel_testkit::skip(gavel_testkit::Need::Chromium, why);
    }
    let (_mock, mock_url) = mock_openai();
    let judge = format!("openai-compatible:mock@{mock_url}/v1");
    let ui = support::start_judged(None, SLOW_AGENT, Some(judge.parse().unwrap())).await;
    let (run, other) = seed_review(&ui.store).await;
    for name in ["ed", "al"] {
        gavel_web::add_user(&ui.store, name, Role::Editor, "a long password 1", "test")
            .await
            .unwrap();
    }
    let (_driver, client) = chromium().await;
    sign_in(&client, &ui, "ed", "a long password 1").await;

    // The run page has no label form: it links to the queue.
    client
        .goto(&format!("{}/runs/{run}", ui.base))
        .await
        .unwrap();
    assert!(
        client
            .find(Locator::Css("form[action$='/labels']"))
            .await
            .is_err()
    );
    click(&client, "#review-link").await;
    until(&client, "return location.pathname.endsWith('/review')").await;

    // Ed labels all ten by keyboard: `good` passes, the rest fail; a note first
    // on one of them (n, type, Enter leaves the field; Enter labels nothing).
    assert_eq!(remaining(&client).await, Some(10));
    for n in 0..10 {
        let output = shown_output(&client).await;
        if n == 0 {
            shot(&client, "review-queue").await;
            press(&client, 'n').await;
            until(&client, "return document.activeElement.id === 'f-note'").await;
            css(&client, "#f-note")
                .await
                .send_keys("unsure about tone")
                .await
                .unwrap();
            press(&client, Key::Enter.into()).await;
            until(&client, "return document.activeElement.id !== 'f-note'").await;
            assert_eq!(remaining(&client).await, Some(10), "Enter labelled nothing");
        }
        label_with(&client, if output.contains("good") { 'p' } else { 'f' }).await;
    }
    css(&client, "#queue-done").await;
    let labels = ui.store.run_labels(&run).await.unwrap();
    assert_eq!(labels.len(), 10);
    assert_eq!(labels.iter().filter(|l| l.label == "pass").count(), 6);
    assert!(
        labels
            .iter()
            .any(|l| l.note.as_deref() == Some("unsure about tone"))
    );

    // Pairwise against the other run: a/b/t; the order is the labeller's own and
    // the stored label is in the true order. After four, a pair comes back in the
    // other order.
    client
        .goto(&format!(
            "{}/runs/{run}/review?mode=pairwise&against={other}",
            ui.base
        ))
        .await
        .unwrap();
    let mut rechecks = 0;
    for n in 0..10 {
        css(&client, "#side-left").await;
        let left = css(&client, "#side-left .output")
            .await
            .text()
            .await
            .unwrap();
        if client.find(Locator::Css("#queue-recheck")).await.is_ok() {
            rechecks += 1;
        }
        if n == 4 {
            shot(&client, "review-queue-pairwise").await;
        }
        // Ed always prefers take 0 (this run's answer), wherever it is shown.
        label_with(&client, if left.contains("take 0") { 'a' } else { 'b' }).await;
    }
    assert!(rechecks >= 1, "a pair came back in the other order");
    let pairs = ui.store.run_pair_labels(&run).await.unwrap();
    assert_eq!(pairs.len(), 10 - rechecks);
    assert!(
        pairs.iter().all(|p| p.label == "A"),
        "true order: {pairs:?}"
    );
    assert!(pairs.iter().any(|p| p.shown_swapped) && pairs.iter().any(|p| !p.shown_swapped));
    assert!(
        pairs
            .iter()
            .filter(|p| p.recheck.is_some())
            .all(|p| p.recheck.as_deref() == Some("A"))
    );
    let consistency = css(&client, ".consistency").await.text().await.unwrap();
    assert!(
        consistency.contains(&format!("{rechecks} of {rechecks}")),
        "{consistency}"
    );
    click(&client, "#sign-out").await;

    // Al labels the same ten: `fine` passes too. κ = (0.8 − 0.56) / 0.44 = 0.545.
    sign_in(&client, &ui, "al", "a long password 1").await;
    client
        .goto(&format!("{}/runs/{run}/review", ui.base))
        .await
        .unwrap();
    for _ in 0..10 {
        let output = shown_output(&client).await;
        let pass = output.contains("good") || output.contains("fine");
        label_with(&client, if pass { 'p' } else { 'f' }).await;
    }
    let single = css(&client, "#agreement-single")
        .await
        .text()
        .await
        .unwrap();
    assert!(single.contains("2 labellers (al, ed)"), "{single}");
    assert!(
        single.contains("10 items labelled by two or more"),
        "{single}"
    );
    assert!(single.contains("Cohen's κ 0.545"), "{single}");
    assert!(single.contains("all agree on 80.0%"), "{single}");
    // α = 1 − (n − 1)·D_o / Σ n_c·n_k = 1 − 19·4 / (14·6·2) = 0.548.
    assert!(single.contains("Krippendorff's α 0.548"), "{single}");

    // Calibrate the server's judge on the set: 10 single items and the 8 pairs
    // judged in both orders, 26 calls at most.
    let planned = css(&client, "#planned-calls").await.text().await.unwrap();
    assert_eq!(planned, "26");
    shot(&client, "review-queue-agreement").await;
    click(&client, "#calibrate").await;
    css(&client, "#calibration-2").await;
    let result = css(&client, "#calibration-1").await.text().await.unwrap();
    assert!(result.contains("95% CI"), "{result}");
    assert!(result.contains("Recall of pass"), "{result}");
    shot(&client, "review-queue-calibrated").await;
    let stored = ui.store.calibrations().await.unwrap();
    assert_eq!(stored.len(), 2);
    let mut sets: Vec<&str> = stored.iter().map(|c| c.dataset.as_str()).collect();
    sets.sort_unstable();
    assert_eq!(sets, ["support", "support:pairwise"]);
    for c in &stored {
        let fingerprint = c.fingerprint.as_ref().expect("a suite can gate on it");
        assert!(
            format!("{fingerprint:?}").contains("mock"),
            "{fingerprint:?}"
        );
        // Ed and Al split on the two `fine` answers: those items are left out.
        let items = if c.dataset == "support" {
            8
        } else {
            10 - rechecks as u64
        };
        assert_eq!(c.items, items, "{}", c.dataset);
    }
    client.close().await.unwrap();
}
