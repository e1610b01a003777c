//! Canary secrets in every channel: a provider key and an agent token, both from
//! the environment, are echoed back by the judge, a `chat` agent, an `http` agent
//! (its header) and a `command` agent (its env); a key the run never uses
//! (`OPENAI_API_KEY`) is printed by `script` checks, on stderr and in a verdict
//! after 160 characters of padding; an http agent's URL password goes out as
//! Basic auth and is echoed; a literal header value and the judge URL's
//! password sit in the suite (the judge is also an agent's model, which gavel
//! warns about); the provider refuses the key with a 401 quoting it, and an
//! http agent answers 500 quoting its token, after every padding that makes the
//! 200-character error excerpt cut the secret; and a database password rides
//! in the PostgreSQL URL. No piece of 8 bytes or more of any canary may reach
//! the SQLite file, a `pg_dump` of the PostgreSQL database, any report format
//! (terminal, JSON, JUnit, Markdown, HTML, live and rebuilt by `gavel report`),
//! stdout or stderr at trace level, the web UI's pages and API answers, the
//! OpenTelemetry export (`--otel` and `gavel export otel`) or `gavel mcp`'s
//! answers; nor may a failed `start` process's output.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod otel;
mod support;

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::{Mock, free_port, gavel_command};

/// The provider API key (`OPENAI_COMPATIBLE_API_KEY`).
const KEY: &str = "sk-cnry-7f3e9a51d2c8b4";
/// The agent token (`CANARY_AGENT_TOKEN`: an http header and a command's env).
const TOKEN: &str = "tok-q8z1x5v9m2n7b3";
/// The PostgreSQL password in the store URL (the test server trusts every login).
const DB_PASSWORD: &str = "pw-r4t8y2u6i0o9";
/// A key the run never uses (`OPENAI_API_KEY`), printed by script checks.
const UNUSED_KEY: &str = "sk-zz-c41d9b7e2a6f";
/// The password in the `basic` http target's URL, sent as Basic auth.
const BASIC_PASSWORD: &str = "pw-bs-6e20f4a9c7";
/// `Authorization: Basic` of `agentuser:BASIC_PASSWORD` (base64).
const BASIC_AUTH: &str = "YWdlbnR1c2VyOnB3LWJzLTZlMjBmNGE5Yzc=";
/// The password in the judge's URL (the judge is also the `selfjudge` agent's model).
const JUDGE_PASSWORD: &str = "pw-jg-93d1a7e5b2";
/// A header value written literally in the suite.
const LITERAL_HEADER: &str = "lit-hv-0b5e8c3f71";

/// Every canary, by name.
const CANARIES: &[(&str, &str)] = &[
    ("provider key", KEY),
    ("agent token", TOKEN),
    ("db password", DB_PASSWORD),
    ("unused key", UNUSED_KEY),
    ("basic password", BASIC_PASSWORD),
    ("basic auth", BASIC_AUTH),
    ("judge password", JUDGE_PASSWORD),
    ("literal header", LITERAL_HEADER),
];

/// The shortest piece of a canary that counts as a leak. (Every canary is
/// made of no words: a piece such as `provider` would be redacted, and found,
/// in ordinary text.)
const PIECE: usize = 8;

/// The command agent: prints its env's token in every answer.
const AGENT: &str =
    r#"while IFS= read -r line; do printf '{"output": "my token is %s"}\n' "$AGENT_TOKEN"; done"#;

/// A script check that prints the secrets on stderr and fails.
const STDERR_SCRIPT: &str = r#"cat >/dev/null
echo "the key is $OPENAI_API_KEY, the token $CANARY_AGENT_TOKEN" >&2
exit 1"#;

/// A script check whose verdict quotes the unused key after 160 characters.
const VERDICT_SCRIPT: &str = r#"cat >/dev/null
pad=$(printf '%0160d' 0)
printf '{"pass": false, "reason": "%s%s"}\n' "$pad" "$OPENAI_API_KEY""#;

/// Paddings before the key in the provider's 401 body (`k` × N, then the key):
/// 160, and every one that makes the 200-character excerpt cut the key.
fn key_paddings() -> impl Iterator<Item = usize> {
    std::iter::once(160).chain(200 - KEY.len() + 1..200)
}

/// Paddings before `authorization=Bearer TOKEN` in the http agent's 500 body:
/// every one that makes the 200-byte excerpt hold the token whole or cut it.
fn token_paddings() -> impl Iterator<Item = usize> {
    let before = "authorization=Bearer ".len();
    200 - before - TOKEN.len()..200 - before
}

/// The suite; `dir` holds the command agent's and the checks' scripts.
fn suite_yaml(url: &str, dir: &Path) -> String {
    let script = |name: &str, text: &str| {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        path.display().to_string()
    };
    let agent = script("agent.sh", AGENT);
    let stderr = script("stderr.sh", STDERR_SCRIPT);
    let verdict = script("verdict.sh", VERDICT_SCRIPT);
    let host = url.strip_prefix("http://").unwrap();
    let judge = format!("openai-compatible:judge-echo-key@http://judge:{JUDGE_PASSWORD}@{host}/v1");
    let mut cut = String::new();
    for n in key_paddings() {
        cut.push_str(&format!(
            "  cut-key-{n}: {{type: chat, model: \"openai-compatible:reject-key-pad-{n}@{url}/v1\"}}\n"
        ));
    }
    for n in token_paddings() {
        cut.push_str(&format!(
            "  cut-token-{n}: {{type: http, url: \"{url}/echo-headers/500/{n}\", headers: {{Authorization: \"Bearer ${{CANARY_AGENT_TOKEN}}\"}}}}\n"
        ));
    }
    format!(
        r#"
name: canary
judge:
  model: {judge}
targets:
  chat:
    type: chat
    model: openai-compatible:agent-echo-key@{url}/v1
    system: You manage properties.
  selfjudge:
    type: chat
    model: {judge}
  refused:
    type: chat
    model: openai-compatible:reject-key@{url}/v1
  http:
    type: http
    url: {url}/v1/chat/completions
    headers: {{Authorization: "Bearer ${{CANARY_AGENT_TOKEN}}", X-Literal: "{LITERAL_HEADER}"}}
    body: {{model: http-echo-key, messages: [{{role: user, content: "{{{{ message }}}}"}}]}}
    response: {{output: /choices/0/message/content}}
  basic:
    type: http
    url: http://agentuser:{BASIC_PASSWORD}@{host}/echo-headers/200/0
    body: {{message: "{{{{ message }}}}"}}
  command:
    type: command
    command: [sh, "{agent}"]
    env: {{AGENT_TOKEN: "${{CANARY_AGENT_TOKEN}}"}}
{cut}cases:
  - id: echo
    input: Count my listings.
    checks:
      - {{type: judge, criteria: Answers the question.}}
      - {{type: equals, value: There are 3 listings.}}
      - {{type: script, command: [sh, "{stderr}"]}}
      - {{type: script, command: [sh, "{verdict}"]}}
"#
    )
}

/// Every canary of which `bytes` hold a piece of [`PIECE`] bytes or more, by name.
fn leaks(bytes: &[u8]) -> Vec<&'static str> {
    CANARIES
        .iter()
        .filter(|(_, canary)| {
            canary
                .as_bytes()
                .windows(PIECE)
                .any(|piece| bytes.windows(PIECE).any(|w| w == piece))
        })
        .map(|(name, _)| *name)
        .collect()
}

fn assert_clean(channel: &str, bytes: &[u8]) {
    let found = leaks(bytes);
    assert!(
        found.is_empty(),
        "{channel} holds (part of) the {found:?}: {}",
        first_leak(bytes)
    );
}

/// Where the first leaked piece stands in `bytes`, with some context.
fn first_leak(bytes: &[u8]) -> String {
    let at = CANARIES
        .iter()
        .flat_map(|(_, canary)| canary.as_bytes().windows(PIECE))
        .filter_map(|piece| bytes.windows(PIECE).position(|w| w == piece))
        .min()
        .unwrap_or(0);
    let from = at.saturating_sub(200);
    String::from_utf8_lossy(&bytes[from..(at + 100).min(bytes.len())]).into_owned()
}

/// gavel with the canaries in its environment and trace logging on.
fn gavel(dir: &Path) -> Command {
    let mut cmd = gavel_command(dir);
    cmd.env("OPENAI_COMPATIBLE_API_KEY", KEY)
        .env("OPENAI_API_KEY", UNUSED_KEY)
        .env("CANARY_AGENT_TOKEN", TOKEN)
        .env("GAVEL_LOG", "trace")
        .env("RUST_LOG", "trace")
        .env("NO_COLOR", "1");
    cmd
}

/// Runs gavel to the end; returns its exit code and stdout + stderr.
fn output(cmd: &mut Command) -> (Option<i32>, Vec<u8>) {
    let out = cmd.output().unwrap();
    let mut bytes = out.stdout;
    bytes.extend_from_slice(&out.stderr);
    (out.status.code(), bytes)
}

/// The run: a live OTel export, every report format, trace logs. Returns the run
/// id, after checking the output, the reports and the export.
async fn run_everything(dir: &Path, suite: &Path, db: &str, what: &str) -> String {
    let live = otel::receiver().await;
    let reports: Vec<PathBuf> = ["json", "xml", "md", "html"]
        .iter()
        .map(|ext| dir.join(format!("{what}-report.{ext}")))
        .collect();
    let mut cmd = gavel(dir);
    cmd.args([
        "run",
        suite.to_str().unwrap(),
        "--db",
        db,
        "--color",
        "never",
    ])
    .args(["--otel", "--otel-endpoint", &live.uri()]);
    for r in &reports {
        cmd.arg("-o").arg(r);
    }
    let (code, out) = tokio::task::spawn_blocking(move || output(&mut cmd))
        .await
        .unwrap();
    // The equals check fails every case: the gate fails, nothing errors.
    assert_eq!(code, Some(1), "{}", String::from_utf8_lossy(&out));
    assert_clean(&format!("{what}: gavel run's terminal and trace log"), &out);
    let text = String::from_utf8_lossy(&out);
    assert!(text.contains("TRACE"), "trace logging is on");
    assert!(
        text.contains("is also the agent's model"),
        "the self-judge warning is printed"
    );
    assert_clean(
        &format!("{what}: the live OTel export"),
        &otel::received(&live).await.bytes,
    );
    for r in &reports {
        let bytes = std::fs::read(r).unwrap();
        assert_clean(&r.display().to_string(), &bytes);
    }
    // The agents and the judge did echo the secrets: the reports show them redacted.
    let json: Value = serde_json::from_slice(&std::fs::read(&reports[0]).unwrap()).unwrap();
    let text = json.to_string();
    let redacted = text.matches("[redacted]").count();
    assert!(redacted >= 4, "only {redacted} redactions in {json}");
    // The provider's refusals and the agent's errors were recorded, cut.
    for seen in [
        "HTTP 401",
        "answered HTTP 500",
        "kkkkk[redacted]",
        "authorization=Bearer [redacted]",
    ] {
        assert!(text.contains(seen), "no {seen:?} in {json}");
    }
    let run_id = json["run"]["id"].as_str().unwrap().to_owned();

    // Rebuilt from the store, and exported after the fact.
    let rebuilt: Vec<PathBuf> = ["json", "xml", "md", "html"]
        .iter()
        .map(|ext| dir.join(format!("{what}-rebuilt.{ext}")))
        .collect();
    let mut cmd = gavel(dir);
    cmd.args(["report", &run_id, "--db", db, "--color", "never"]);
    for r in &rebuilt {
        cmd.arg("-o").arg(r);
    }
    let (code, out) = tokio::task::spawn_blocking(move || output(&mut cmd))
        .await
        .unwrap();
    assert_eq!(code, Some(1), "{}", String::from_utf8_lossy(&out));
    assert_clean(&format!("{what}: gavel report"), &out);
    for r in &rebuilt {
        assert_clean(&r.display().to_string(), &std::fs::read(r).unwrap());
    }
    let after = otel::receiver().await;
    let mut cmd = gavel(dir);
    cmd.args(["export", "otel", &run_id, "--db", db])
        .args(["--otel-endpoint", &after.uri()]);
    let (code, out) = tokio::task::spawn_blocking(move || output(&mut cmd))
        .await
        .unwrap();
    assert_eq!(code, Some(0), "{}", String::from_utf8_lossy(&out));
    assert_clean(&format!("{what}: gavel export otel"), &out);
    let exported = otel::received(&after).await.bytes;
    assert!(!exported.is_empty());
    assert_clean(
        &format!("{what}: the OTel export after the fact"),
        &exported,
    );
    run_id
}

/// A run whose http target's `start` process prints the secrets and exits
/// before it is ready: the run fails, and says why without them.
fn start_failure(dir: &Path) {
    let port = free_port();
    let script = dir.join("start.sh");
    std::fs::write(
        &script,
        "echo token $AGENT_TOKEN\necho key $OPENAI_API_KEY >&2\nexit 3\n",
    )
    .unwrap();
    let suite = dir.join("start.yaml");
    std::fs::write(
        &suite,
        format!(
            r#"
name: start-canary
targets:
  web:
    type: http
    url: http://127.0.0.1:{port}/chat
    start:
      command: [sh, "{}"]
      env: {{AGENT_TOKEN: "${{CANARY_AGENT_TOKEN}}"}}
      ready_url: http://127.0.0.1:{port}/health
cases:
  - {{id: a, input: hi}}
"#,
            script.display()
        ),
    )
    .unwrap();
    let db = format!("sqlite://{}", dir.join("start.db").display());
    let (code, out) = output(gavel(dir).args([
        "run",
        suite.to_str().unwrap(),
        "--db",
        &db,
        "--color",
        "never",
    ]));
    let text = String::from_utf8_lossy(&out);
    assert_ne!(code, Some(0), "{text}");
    assert!(
        text.contains("exited") && text.contains("token [redacted]"),
        "the start process's output is shown, redacted: {text}"
    );
    assert_clean("a failed start process's output", &out);
}

/// One HTTP GET to `gavel serve`; the whole answer (head and body).
fn http_get(port: u16, path: &str) -> Vec<u8> {
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut out = Vec::new();
    s.read_to_end(&mut out).unwrap();
    out
}

/// The process, killed however the test ends.
struct Killed(std::process::Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `gavel serve` over the store: every page and API answer about the run.
fn served(dir: &Path, db: &str, run_id: &str) {
    let port = free_port();
    let mut cmd = gavel(dir);
    cmd.args(["serve", "--bind", &format!("127.0.0.1:{port}"), "--db", db])
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let _server = Killed(cmd.spawn().unwrap());
    let start = Instant::now();
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "gavel serve did not start"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let mut seen = 0;
    for path in [
        "/".to_owned(),
        "/runs".to_owned(),
        format!("/runs/{run_id}"),
        format!("/runs/{run_id}/progress"),
        "/trends".to_owned(),
        "/suites".to_owned(),
        "/suites/canary".to_owned(),
        "/api/runs".to_owned(),
        format!("/api/runs/{run_id}"),
        format!("/api/runs/{run_id}/progress"),
        format!("/api/runs/{run_id}/labels"),
        "/api/trends".to_owned(),
        "/api/suites".to_owned(),
    ] {
        let answer = http_get(port, &path);
        assert_clean(&format!("GET {path}"), &answer);
        if String::from_utf8_lossy(&answer).contains("[redacted]") {
            seen += 1;
        }
    }
    assert!(seen >= 2, "the run's pages show the redacted transcripts");
}

/// `gavel mcp` on stdio: every tool's answer about the run.
fn mcp_answers(dir: &Path, db: &str, run_id: &str) {
    let mut cmd = gavel(dir);
    cmd.args(["mcp", "--db", db])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut server = Killed(cmd.spawn().unwrap());
    let mut stdin = server.0.stdin.take().unwrap();
    let mut stdout = BufReader::new(server.0.stdout.take().unwrap());
    // Trace logging fills a pipe's buffer long before the answers are read:
    // drain stderr beside them, or the server blocks writing its log.
    let mut stderr = server.0.stderr.take().unwrap();
    let log = std::thread::spawn(move || {
        let mut err = Vec::new();
        let _ = stderr.read_to_end(&mut err);
        err
    });
    let mut send = |message: Value| {
        writeln!(stdin, "{message}").unwrap();
        stdin.flush().unwrap();
    };
    let calls = [
        ("list_runs", json!({})),
        ("get_run", json!({"run": run_id})),
        (
            "get_execution",
            json!({"run": run_id, "case": "echo", "target": "chat"}),
        ),
        (
            "get_execution",
            json!({"run": run_id, "case": "echo", "target": "http"}),
        ),
        (
            "get_execution",
            json!({"run": run_id, "case": "echo", "target": "command"}),
        ),
        (
            "query_evaluations",
            json!({"run": run_id, "aggregation": "count", "group_by": ["target"]}),
        ),
        ("compare_runs", json!({"run_a": run_id, "run_b": run_id})),
    ];
    send(
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "canary", "version": "0"}}}),
    );
    send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    for (i, (tool, args)) in calls.iter().enumerate() {
        send(
            json!({"jsonrpc": "2.0", "id": i + 1, "method": "tools/call",
            "params": {"name": tool, "arguments": args}}),
        );
    }
    let mut answers = Vec::new();
    let mut redacted = 0;
    while answers.len() < calls.len() + 1 {
        let mut line = String::new();
        assert!(
            stdout.read_line(&mut line).unwrap() > 0,
            "gavel mcp stopped"
        );
        assert_clean("a gavel mcp answer", line.as_bytes());
        let answer: Value = serde_json::from_str(&line).unwrap();
        if answer.get("id").is_some() {
            assert!(answer.get("error").is_none(), "{answer}");
            assert_ne!(answer["result"]["isError"], true, "{answer}");
            redacted += line.matches("[redacted]").count();
            answers.push(answer);
        }
    }
    assert!(redacted >= 3, "the executions were read");
    drop(stdin);
    let _ = server.0.kill();
    let err = log.join().unwrap();
    assert_clean("gavel mcp's stderr", &err);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_canary_reaches_any_channel_on_sqlite() {
    let mock = Mock::start();
    let dir = tempfile::tempdir().unwrap();
    let suite = dir.path().join("suite.yaml");
    std::fs::write(&suite, suite_yaml(&mock.url, dir.path())).unwrap();
    let file = dir.path().join("g.db");
    let db = format!("sqlite://{}", file.display());
    let run_id = run_everything(dir.path(), &suite, &db, "sqlite").await;
    let (d, u, r) = (dir.path().to_owned(), db.clone(), run_id.clone());
    tokio::task::spawn_blocking(move || {
        served(&d, &u, &r);
        mcp_answers(&d, &u, &r);
        start_failure(&d);
    })
    .await
    .unwrap();
    // The files and whatever journals they left.
    for entry in std::fs::read_dir(dir.path()).unwrap() {
        let path = entry.unwrap().path();
        // Not the suite and scripts, which hold the canaries by design.
        if path.is_file() && path.extension().is_none_or(|e| e != "sh" && e != "yaml") {
            assert_clean(&path.display().to_string(), &std::fs::read(&path).unwrap());
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_canary_reaches_any_channel_on_postgres() {
    support::on_fresh_postgres("the PostgreSQL canary test", |url| async move {
        let mock = Mock::start();
        let dir = tempfile::tempdir().unwrap();
        let suite = dir.path().join("suite.yaml");
        std::fs::write(&suite, suite_yaml(&mock.url, dir.path())).unwrap();
        // postgres://user@host/db → postgres://user:PASSWORD@host/db
        let (scheme, rest) = url.split_once("://").unwrap();
        let (user, host) = rest.split_once('@').unwrap();
        let user = user.split(':').next().unwrap();
        let db = format!("{scheme}://{user}:{DB_PASSWORD}@{host}");
        let run_id = run_everything(dir.path(), &suite, &db, "postgres").await;
        let (d, u, r) = (dir.path().to_owned(), db.clone(), run_id.clone());
        tokio::task::spawn_blocking(move || {
            served(&d, &u, &r);
            mcp_answers(&d, &u, &r);
        })
        .await
        .unwrap();
        let dump = Command::new(pg_dump())
            .args(["--no-owner", "--dbname", &url])
            .output()
            .unwrap();
        assert!(
            dump.status.success(),
            "{}",
            String::from_utf8_lossy(&dump.stderr)
        );
        let text = String::from_utf8_lossy(&dump.stdout);
        assert!(
            text.contains(&run_id) && text.contains("[redacted]"),
            "the dump holds the run"
        );
        assert_clean("pg_dump", &dump.stdout);
    })
    .await;
}

/// pg_dump from PATH, else where Debian's PostgreSQL 15 puts it.
fn pg_dump() -> &'static str {
    const DEBIAN: &str = "/usr/lib/postgresql/15/bin/pg_dump";
    if Command::new("pg_dump").arg("--version").output().is_ok() || !Path::new(DEBIAN).exists() {
        "pg_dump"
    } else {
        DEBIAN
    }
}
