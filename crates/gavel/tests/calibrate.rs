//! `gavel calibrate`: the statistics on every shared calibration file against
//! scikit-learn/SciPy (through the `length` baseline), a reference judge through a
//! local OpenAI-compatible server, labels from the store, and a suite that
//! requires a calibrated judge before it gates.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::{Value, json};

mod otel;
mod support;

use support::Mock;

/// The public human-labelled calibration sets, committed under `testdata/calibration`
/// (a copy of the shared calibration data, with its README).
fn calibration_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .map(|a| a.join("testdata/calibration"))
        .find(|p| p.join("README.md").exists())
        .expect("testdata/calibration in the repository")
}

fn gavel(dir: &Path, args: &[&str]) -> Output {
    support::gavel_command(dir).args(args).output().unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn read_json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn close(a: &Value, b: &Value) -> bool {
    match (a.as_f64(), b.as_f64()) {
        (Some(a), Some(b)) => (a - b).abs() < 1e-9,
        _ => a.is_null() && b.is_null(),
    }
}

#[test]
fn every_shared_file_reports_numbers_matching_sklearn_and_scipy() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite://{}", dir.path().join("gavel.db").display());
    let mut files: Vec<PathBuf> = std::fs::read_dir(calibration_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    files.sort();
    let out_path = dir.path().join("cal.json");
    let mut args = vec!["calibrate", "--baseline", "length", "--db", &db, "-o"];
    args.push(out_path.to_str().unwrap());
    let names: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
    args.extend(names.iter().map(String::as_str));
    let out = gavel(dir.path(), &args);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}{}", text(&out.stderr));

    let expected: Value = serde_json::from_str(include_str!(
        "../../gavel-calibration/tests/fixtures/calibration_expected.json"
    ))
    .unwrap();
    let reports = read_json(&out_path);
    let reports = reports.as_array().unwrap();
    assert_eq!(reports.len(), files.len());
    assert_eq!(
        reports.len(),
        expected["datasets"].as_object().unwrap().len()
    );
    for r in reports {
        let name = r["dataset"].as_str().unwrap();
        let want = &expected["datasets"][name];
        assert_eq!(r["kind"], want["kind"], "{name}");
        assert_eq!(r["items"], want["items"], "{name}");
        for field in [
            "agreement",
            "kappa",
            "spearman",
            "pearson",
            "position_consistency",
        ] {
            assert!(
                close(&r[field], &want[field]),
                "{name} {field}: {} vs {}",
                r[field],
                want[field]
            );
        }
        assert_eq!(r["confusion"]["counts"], want["confusion"], "{name}");
        assert!(
            stdout.contains(&format!("{name} · judge baseline:length")),
            "{stdout}"
        );
        assert!(r["calibration_id"].as_str().is_some());
    }
    // The length baseline is far from fit to gate anywhere, and says so.
    assert_eq!(
        stdout.matches("NOT FIT TO GATE").count(),
        files.len(),
        "{stdout}"
    );
    assert!(stdout.contains("position consistency"));
    assert!(stdout.contains("quadratic-weighted"));
}

#[test]
fn a_reference_judge_gives_a_full_report_and_gates_a_suite() {
    let mock = Mock::start();
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite://{}", dir.path().join("gavel.db").display());
    let judge = format!("openai-compatible:judge@{}/v1", mock.url);
    let cal = calibration_dir();
    let out_path = dir.path().join("cal.json");
    let files = ["faireval.jsonl", "qags.jsonl", "summeval.jsonl"].map(|f| cal.join(f));
    let mut args = vec![
        "calibrate",
        "--judge",
        &judge,
        "--db",
        &db,
        "--limit",
        "12",
        "-o",
        out_path.to_str().unwrap(),
    ];
    let names: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
    args.extend(names.iter().map(String::as_str));
    let out = gavel(dir.path(), &args);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}{}", text(&out.stderr));
    let reports = read_json(&out_path);
    for r in reports.as_array().unwrap() {
        assert_eq!(r["items"], 12, "{r:#}");
        assert_eq!(r["judged"], 12, "every item judged: {r:#}");
        assert_eq!(r["judge"], judge.as_str());
        assert!(r["agreement"].as_f64().is_some());
        let counts: u64 = r["confusion"]["counts"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|row| row.as_array().unwrap())
            .map(|c| c.as_u64().unwrap())
            .sum();
        assert_eq!(counts, 12);
    }
    // The mock answers with the first enum value in both orders ("A" each time):
    // every pair is position-inconsistent, which agrees with no label, not
    // even the people's ties.
    let faireval = &reports[0];
    assert_eq!(faireval["position_consistency"], 0.0);
    assert!(
        faireval["results"]
            .as_array()
            .unwrap()
            .iter()
            .all(|x| x["judge"] == "inconsistent")
    );
    assert_eq!(faireval["agreement"], 0.0);
    assert!(
        faireval["recall"]
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r["recall"] == 0.0)
    );
    assert!(stdout.contains("recall of `A`"), "{stdout}");
    // It passes every answer: on QAGS it agrees only where people said pass.
    let qags = &reports[1];
    let passes = qags["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|x| x["human"] == "pass")
        .count() as f64;
    assert!(
        close(&qags["agreement"], &Value::from(passes / 12.0)),
        "{qags:#}"
    );
    assert_eq!(qags["fit_to_gate"], false);
    assert!(stdout.contains("NOT FIT TO GATE"), "{stdout}");
    let unfit = qags["calibration_id"].as_str().unwrap().to_owned();

    // A suite that requires a calibrated judge gates only with a fit calibration
    // (`a_scripted_judge_that_is_right_qualifies_its_suite` shows the pass).
    let suite = |calibration: &str| {
        format!(
            "name: gated\njudge:\n  model: {judge}\n  calibration: {calibration}\ntargets:\n  agent:\n    type: chat\n    model: openai-compatible:agent@{url}/v1\ncases:\n  - id: hi\n    input: Hello\n    checks: [{{type: contains, value: You said}}]\n",
            url = mock.url
        )
    };
    let path = dir.path().join("suite.yaml");
    let gate_of = |report: &std::path::Path| -> Value {
        let json: Value = serde_json::from_str(&std::fs::read_to_string(report).unwrap()).unwrap();
        json["gate"].clone()
    };
    std::fs::write(&path, suite(&unfit)).unwrap();
    let unfit_report = dir.path().join("unfit.json");
    let out = gavel(
        dir.path(),
        &[
            "run",
            path.to_str().unwrap(),
            "--db",
            &db,
            "--quiet",
            "-o",
            unfit_report.to_str().unwrap(),
        ],
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("not fit to gate"),
        "{}",
        text(&out.stderr)
    );
    // The JSON gate block says so: the case passed, the gate did not.
    let gate = gate_of(&unfit_report);
    assert_eq!(gate["pass_rate"], 100.0, "{gate:#}");
    assert_eq!(
        (&gate["passed"], &gate["exit_code"], &gate["verdict"]),
        (&json!(false), &json!(1), &json!("FAIL"))
    );
    assert_eq!(gate["calibration"]["passed"], false);
    assert!(
        gate["calibration"]["reason"]
            .as_str()
            .unwrap()
            .contains("not fit to gate"),
        "{gate:#}"
    );
    std::fs::write(&path, suite("no-such-calibration")).unwrap();
    let out = gavel(
        dir.path(),
        &["run", path.to_str().unwrap(), "--db", &db, "--quiet"],
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("no such calibration run"),
        "{}",
        text(&out.stderr)
    );

    // People's labels of the stored transcripts, written through the store API
    // (as the web UI does), calibrate the judge on the team's own data.
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let store = gavel::store::Store::open(&db).await.unwrap();
        let run = store.latest_run().await.unwrap().unwrap();
        for (who, label) in [("ann", "pass"), ("bob", "pass"), ("cy", "fail")] {
            store
                .put_label(&gavel::Label {
                    label_set: "team".into(),
                    item_id: format!("{}/hi/agent/0", run.id),
                    labeller: who.into(),
                    execution: Some(gavel::ExecutionRef {
                        run_id: run.id.clone(),
                        key: gavel::ExecutionKey::new("hi", "agent", 0),
                    }),
                    pair: None,
                    label: Some(label.into()),
                    score: None,
                    note: None,
                    created_at: gavel::now_rfc3339(),
                })
                .await
                .unwrap();
        }
        store.close().await;
    });
    let out_path = dir.path().join("team.json");
    let out = gavel(
        dir.path(),
        &[
            "calibrate",
            "--labels",
            "team",
            "--judge",
            &judge,
            "--db",
            &db,
            "-o",
            out_path.to_str().unwrap(),
        ],
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    let team = &read_json(&out_path)[0];
    assert_eq!(team["dataset"], "team");
    assert_eq!(team["items"], 1);
    assert_eq!(team["results"][0]["human"], "pass", "the majority of three");
    assert_eq!(team["agreement"], 1.0);
    assert_eq!(team["fit_to_gate"], false, "one item is no evidence");

    // Bad input names the file and line.
    let bad = dir.path().join("bad.jsonl");
    std::fs::write(&bad, "{\"id\": \"x\"}\n").unwrap();
    let out = gavel(
        dir.path(),
        &[
            "calibrate",
            "--baseline",
            "length",
            "--db",
            &db,
            bad.to_str().unwrap(),
        ],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("bad.jsonl:1:"),
        "{}",
        text(&out.stderr)
    );
}

/// How a scripted judge answers, knowing the human labels.
#[derive(Clone, Copy)]
enum Script {
    /// The human label, every time.
    Oracle,
    /// `pass` where people said pass; `[ERROR]` (an abstention) where they said
    /// fail, i.e. on every item a "pass" judge would get wrong.
    PassOrAbstain,
    /// `fail`, every time.
    ConstantFail,
    /// The human label, but `[ERROR]` on every other item people failed.
    HalfTheFails,
}

/// A judge on the OpenAI wire format (wiremock) that finds the judged response in
/// the prompt's `agent_output` fence and answers per its script.
struct ScriptedJudge {
    script: Script,
    /// Response text (as fenced) → human label.
    labels: std::collections::HashMap<String, String>,
    /// Items people failed asked about so far.
    fails: std::sync::atomic::AtomicUsize,
}

impl ScriptedJudge {
    fn new(script: Script, file: &Path) -> Self {
        let labels = std::fs::read_to_string(file)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            .map(|r| {
                let response = r["response"].as_str().unwrap().replace("<<<", "‹‹‹");
                (response, r["human_label"].as_str().unwrap().to_owned())
            })
            .collect();
        ScriptedJudge {
            script,
            labels,
            fails: std::sync::atomic::AtomicUsize::new(0),
        }
    }

    fn answer(&self, prompt: &str) -> Value {
        let body = prompt
            .split_once("<<<agent_output ")
            .and_then(|(_, rest)| rest.split_once(">>>\n"))
            .and_then(|(_, rest)| rest.split_once("\n<<<end agent_output"))
            .map(|(body, _)| body)
            .expect("the judged response is fenced");
        let human = self.labels.get(body).expect("a response of the set");
        let nth_fail = || {
            self.fails
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        };
        let (status, score) = match (self.script, human.as_str()) {
            (Script::Oracle | Script::PassOrAbstain | Script::HalfTheFails, "pass") => {
                ("ok", json!(1))
            }
            (Script::PassOrAbstain, _) => ("[ERROR]", Value::Null),
            (Script::HalfTheFails, _) if nth_fail().is_multiple_of(2) => ("[ERROR]", Value::Null),
            _ => ("ok", json!(0)),
        };
        json!({"status": status, "reasoning": "scripted", "score": score})
    }
}

impl wiremock::Respond for ScriptedJudge {
    fn respond(&self, request: &wiremock::Request) -> wiremock::ResponseTemplate {
        let body: Value = serde_json::from_slice(&request.body).unwrap();
        let prompt: String = body["messages"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|m| m["content"].as_str())
            .collect::<Vec<_>>()
            .join("\n");
        let content = self.answer(&prompt).to_string();
        wiremock::ResponseTemplate::new(200).set_body_json(json!({
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "created": 1,
            "model": "judge",
            "choices": [{
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": "stop"
            }],
            "usage": {"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20}
        }))
    }
}

/// A scripted judge server, its tokio runtime alive as long as it is.
struct JudgeServer {
    server: wiremock::MockServer,
    rt: tokio::runtime::Runtime,
}

impl JudgeServer {
    fn start(script: Script, file: &Path) -> Self {
        let rt = tokio::runtime::Runtime::new().unwrap();
        let server = rt.block_on(wiremock::MockServer::start());
        let judge = JudgeServer { server, rt };
        judge.mount(script, file);
        judge
    }

    fn mount(&self, script: Script, file: &Path) {
        let judge = ScriptedJudge::new(script, file);
        self.rt.block_on(
            wiremock::Mock::given(wiremock::matchers::method("POST"))
                .and(wiremock::matchers::path("/v1/chat/completions"))
                .respond_with(judge)
                .mount(&self.server),
        );
    }

    /// Another judge behind the same URL; the request count starts again.
    fn rescript(&self, script: Script, file: &Path) {
        self.rt.block_on(self.server.reset());
        self.mount(script, file);
    }

    fn model(&self) -> String {
        format!("openai-compatible:judge@{}/v1", self.server.uri())
    }

    fn requests(&self) -> usize {
        self.rt
            .block_on(self.server.received_requests())
            .map_or(0, |r| r.len())
    }
}

/// A suite gated on calibration `requirement` (YAML), judged by `judge` with
/// `extra` judge settings, its one case answered by the mock agent.
fn gated_suite(judge: &str, extra: &str, requirement: &str, agent: &Mock) -> String {
    format!(
        "name: gated\njudge:\n  model: {judge}\n{extra}  calibration: {requirement}\ntargets:\n  agent:\n    type: chat\n    model: openai-compatible:agent@{url}/v1\ncases:\n  - id: hi\n    input: Hello\n    checks: [{{type: contains, value: You said}}]\n",
        url = agent.url
    )
}

/// `gavel run` of the suite at `path`: exit code, stderr and the JSON gate.
fn run_gated(dir: &Path, db: &str, path: &Path) -> (Option<i32>, String, Value) {
    let report = dir.join("gated.json");
    let out = gavel(
        dir,
        &[
            "run",
            path.to_str().unwrap(),
            "--db",
            db,
            "--quiet",
            "-o",
            report.to_str().unwrap(),
        ],
    );
    let json: Value = serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    (out.status.code(), text(&out.stderr), json["gate"].clone())
}

/// `gavel calibrate` with `args`; its stdout and the one report written.
fn calibrate(dir: &Path, db: &str, args: &[&str]) -> (String, Value) {
    let out_path = dir.join("cal.json");
    let mut all = vec!["calibrate", "--db", db, "-o", out_path.to_str().unwrap()];
    all.extend(args);
    let out = gavel(dir, &all);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}{}", text(&out.stderr));
    (stdout, read_json(&out_path)[0].clone())
}

#[test]
fn an_abstaining_judge_is_not_fit_to_gate_and_its_suite_fails() {
    let agent = Mock::start();
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite://{}", dir.path().join("gavel.db").display());
    let qags = calibration_dir().join("qags.jsonl");
    let judge = JudgeServer::start(Script::PassOrAbstain, &qags);
    let model = judge.model();
    let (stdout, report) = calibrate(
        dir.path(),
        &db,
        &["--judge", &model, qags.to_str().unwrap()],
    );
    // Where it spoke it was always right; it abstained on every fail.
    assert_eq!(report["agreement"], 1.0, "{report:#}");
    assert_eq!(report["items"], 200);
    let coverage = report["coverage"].as_f64().unwrap();
    assert!(coverage < 0.6, "{coverage}");
    assert_eq!(report["fit_to_gate"], false);
    assert!(
        stdout.contains("NOT FIT TO GATE: coverage 49.5%"),
        "{stdout}"
    );
    assert!(
        stdout.contains("abstentions count against the judge"),
        "{stdout}"
    );
    let id = report["calibration_id"].as_str().unwrap();

    let path = dir.path().join("suite.yaml");
    std::fs::write(&path, gated_suite(&model, "", id, &agent)).unwrap();
    let (code, stderr, gate) = run_gated(dir.path(), &db, &path);
    assert_eq!(code, Some(1), "{stderr}");
    assert_eq!(gate["pass_rate"], 100.0, "the case passed: {gate:#}");
    assert_eq!(gate["passed"], false);
    assert!(
        stderr.contains("not fit to gate: coverage 49.5%"),
        "{stderr}"
    );
    // Naming a metric does not waive coverage.
    let by_agreement = format!("{{id: {id}, metric: agreement, min: 0.8}}");
    std::fs::write(&path, gated_suite(&model, "", &by_agreement, &agent)).unwrap();
    let (code, stderr, _) = run_gated(dir.path(), &db, &path);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains("coverage 49.5%"), "{stderr}");

    // One item is no evidence, however it went (here: judged right).
    let one = dir.path().join("one.jsonl");
    let first_pass = std::fs::read_to_string(&qags)
        .unwrap()
        .lines()
        .find(|l| l.contains(r#""human_label": "pass""#))
        .unwrap()
        .to_owned();
    std::fs::write(&one, first_pass).unwrap();
    let (stdout, report) = calibrate(dir.path(), &db, &["--judge", &model, one.to_str().unwrap()]);
    assert_eq!(
        (&report["items"], &report["agreement"]),
        (&json!(1), &json!(1.0))
    );
    assert_eq!(report["fit_to_gate"], false);
    assert!(
        stdout.contains("only 1 labelled items; at least 30 are needed"),
        "{stdout}"
    );
}

/// One gate, whatever the door: a suite gated on a calibration that does not
/// qualify its judge fails (exit 1, the calibration named) through `gavel run`,
/// `gavel report`, JUnit, `--distributed` with two workers, the web run page and
/// its API, MCP `get_run` and the OpenTelemetry export.
#[test]
fn a_not_fit_calibration_fails_the_gate_through_every_door() {
    let agent = Mock::start();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let db = format!("sqlite://{}", d.join("gavel.db").display());
    let qags = calibration_dir().join("qags.jsonl");
    let judge = JudgeServer::start(Script::PassOrAbstain, &qags);
    let model = judge.model();
    let (_, report) = calibrate(d, &db, &["--judge", &model, qags.to_str().unwrap()]);
    assert_eq!(report["fit_to_gate"], false);
    let id = report["calibration_id"].as_str().unwrap();
    let path = d.join("suite.yaml");
    std::fs::write(&path, gated_suite(&model, "", id, &agent)).unwrap();
    let named = |text: &str| text.contains(id) && text.contains("coverage 49.5%");

    // gavel run, and the JSON report's gate.
    let (code, stderr, gate) = run_gated(d, &db, &path);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(named(&gate["failures"].to_string()), "{gate:#}");

    // gavel report of that run, and its JUnit.
    let xml = d.join("gate.xml");
    let out = gavel(
        d,
        &["report", "latest", "--db", &db, "-o", xml.to_str().unwrap()],
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert!(named(&text(&out.stderr)), "{}", text(&out.stderr));
    let junit = std::fs::read_to_string(&xml).unwrap();
    assert!(junit.contains("gate: calibration"), "{junit}");
    assert!(named(&junit), "{junit}");
    let root = junit.lines().find(|l| l.contains("<testsuites")).unwrap();
    assert!(root.contains("failures=\"1\""), "{root}");

    // --distributed, waiting, with two workers.
    let mut run = support::gavel_command(d)
        .args([
            "run",
            path.to_str().unwrap(),
            "--db",
            &db,
            "--distributed",
            "--quiet",
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let workers: Vec<_> = (0..2)
        .map(|_| {
            support::gavel_command(d)
                .args(["worker", "--db", &db])
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();
    let out = run_to_end(&mut run);
    for mut w in workers {
        let _ = w.kill();
        let _ = w.wait();
    }
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert!(named(&text(&out.stderr)), "{}", text(&out.stderr));

    // MCP get_run.
    let answer = mcp_get_run(d, &db);
    assert_eq!(answer["gate"]["verdict"], "FAIL", "{answer:#}");
    assert_eq!(answer["gate"]["exit_code"], 1);
    assert!(named(&answer["gate"]["failures"].to_string()), "{answer:#}");

    // The web run page and the API.
    let run_id = latest_run(d, &db);
    let (page, api) = web_run(d, &db, &run_id);
    assert!(page.contains("gate-failed"), "{page}");
    assert!(
        page.contains("run-gate-failures") && page.contains(id),
        "{page}"
    );
    assert_eq!(api["gate"]["verdict"], "failed", "{api:#}");
    assert!(named(&api["gate"]["failures"].to_string()), "{api:#}");

    // The OpenTelemetry export's run span.
    let rt = tokio::runtime::Runtime::new().unwrap();
    let receiver = rt.block_on(otel::receiver());
    let out = gavel(
        d,
        &[
            "export",
            "otel",
            &run_id,
            "--db",
            &db,
            "--otel-endpoint",
            &receiver.uri(),
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let received = rt.block_on(otel::received(&receiver));
    let gated = received
        .spans
        .iter()
        .find_map(|s| otel::string(&s.attributes, "gavel.gate.result"));
    assert_eq!(gated.as_deref(), Some("FAIL"));
}

/// Waits for `child` and collects its output.
fn run_to_end(child: &mut std::process::Child) -> Output {
    let mut stdout = String::new();
    let mut stderr = String::new();
    use std::io::Read as _;
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut stdout)
        .unwrap();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    let status = child.wait().unwrap();
    Output {
        status,
        stdout: stdout.into_bytes(),
        stderr: stderr.into_bytes(),
    }
}

/// The latest run's id, from its JSON report.
fn latest_run(dir: &Path, db: &str) -> String {
    let json = dir.join("latest.json");
    gavel(
        dir,
        &["report", "latest", "--db", db, "-o", json.to_str().unwrap()],
    );
    read_json(&json)["run"]["id"].as_str().unwrap().to_owned()
}

/// `get_run` of the latest run over `gavel mcp`'s stdio: the tool's JSON answer.
fn mcp_get_run(dir: &Path, db: &str) -> Value {
    let answer = support::mcp_stdio(
        dir,
        db,
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": {"name": "get_run", "arguments": {"run": "latest"}}}),
    );
    let content = &answer["result"]["structuredContent"];
    if content.is_object() {
        return content.clone();
    }
    let text = answer["result"]["content"][0]["text"].as_str().unwrap();
    serde_json::from_str(text).unwrap()
}

/// `gavel serve`'s run page (HTML) and `/api/runs/ID` (JSON) of `run_id`.
fn web_run(dir: &Path, db: &str, run_id: &str) -> (String, Value) {
    let port = support::free_port();
    let mut server = support::gavel_command(dir)
        .args(["serve", "--bind", &format!("127.0.0.1:{port}"), "--db", db])
        .env_remove("GAVEL_WEB_TOKEN")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let get = |path: &str| -> Option<String> {
        use std::io::{Read as _, Write as _};
        let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).ok()?;
        write!(
            s,
            "GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n"
        )
        .ok()?;
        let mut out = String::new();
        s.read_to_string(&mut out).ok()?;
        Some(out.split_once("\r\n\r\n")?.1.to_owned())
    };
    let mut page = None;
    for _ in 0..600 {
        page = get(&format!("/runs/{run_id}"));
        if page.is_some() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let api = get(&format!("/api/runs/{run_id}")).unwrap_or_default();
    let _ = server.kill();
    let _ = server.wait();
    let page = page.expect("gavel serve answered");
    (page, serde_json::from_str(&api).unwrap_or(Value::Null))
}

#[test]
fn a_constant_judge_on_skewed_labels_fails_the_kappa_gate() {
    let agent = Mock::start();
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite://{}", dir.path().join("gavel.db").display());
    // Every fail of TruthfulQA and its first 20 passes: 152 fail, 20 pass.
    let source = std::fs::read_to_string(calibration_dir().join("truthfulqa_judge.jsonl")).unwrap();
    let mut passes = 0;
    let skewed: Vec<&str> = source
        .lines()
        .filter(|l| {
            let pass = l.contains(r#""human_label": "pass""#);
            passes += usize::from(pass);
            !pass || passes <= 20
        })
        .collect();
    let file = dir.path().join("skewed.jsonl");
    std::fs::write(&file, skewed.join("\n")).unwrap();
    let judge = JudgeServer::start(Script::ConstantFail, &file);
    let model = judge.model();
    let (stdout, report) = calibrate(
        dir.path(),
        &db,
        &["--judge", &model, file.to_str().unwrap()],
    );
    assert_eq!(report["items"], 172, "{report:#}");
    let agreement = report["agreement"].as_f64().unwrap();
    assert!((agreement - 152.0 / 172.0).abs() < 1e-9, "{agreement}");
    assert_eq!(report["kappa"], 0.0);
    assert_eq!(report["fit_to_gate"], false);
    assert!(stdout.contains("kappa 0.000 is under 0.4"), "{stdout}");
    let id = report["calibration_id"].as_str().unwrap();

    let path = dir.path().join("suite.yaml");
    // Agreement alone is fooled by the skew...
    let by_agreement = format!("{{id: {id}, metric: agreement, min: 0.8}}");
    std::fs::write(&path, gated_suite(&model, "", &by_agreement, &agent)).unwrap();
    let (code, stderr, gate) = run_gated(dir.path(), &db, &path);
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(gate["calibration"]["passed"], true, "{gate:#}");
    // ...kappa is not, nor is the plain id (whose verdict needs kappa too).
    for requirement in [
        format!("{{id: {id}, metric: kappa, min: 0.6}}"),
        id.to_owned(),
    ] {
        std::fs::write(&path, gated_suite(&model, "", &requirement, &agent)).unwrap();
        let (code, stderr, gate) = run_gated(dir.path(), &db, &path);
        assert_eq!(code, Some(1), "{stderr}");
        assert_eq!(gate["calibration"]["passed"], false, "{gate:#}");
        assert!(stderr.contains("kappa 0.000 is under"), "{stderr}");
    }
}

#[test]
fn a_calibration_holds_for_its_judge_only_and_is_made_afresh() {
    let agent = Mock::start();
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite://{}", dir.path().join("gavel.db").display());
    let qags = calibration_dir().join("qags.jsonl");
    let judge = JudgeServer::start(Script::Oracle, &qags);
    let model = judge.model();
    // Calibrate through the suite itself: its judge settings are the fingerprint's.
    let path = dir.path().join("suite.yaml");
    std::fs::write(&path, gated_suite(&model, "", "pending", &agent)).unwrap();
    let args = [
        "--suite",
        path.to_str().unwrap(),
        "--limit",
        "40",
        qags.to_str().unwrap(),
    ];
    let (stdout, report) = calibrate(dir.path(), &db, &args);
    assert_eq!(report["items"], 40);
    assert_eq!(report["fit_to_gate"], true, "{stdout}");
    assert!(
        stdout.contains("--limit: 40 of 200 items, sampled across strata"),
        "{stdout}"
    );
    let human = |r: &Value, label: &str| {
        r["results"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|x| x["human"] == label)
            .count()
    };
    // QAGS lists its XSum items first; the sample spans both labels in proportion.
    assert_eq!((human(&report, "pass"), human(&report, "fail")), (20, 20));
    assert_eq!(judge.requests(), 40);
    let id = report["calibration_id"].as_str().unwrap().to_owned();

    std::fs::write(&path, gated_suite(&model, "", &id, &agent)).unwrap();
    let (code, stderr, gate) = run_gated(dir.path(), &db, &path);
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(gate["calibration"]["passed"], true, "{gate:#}");
    // 40 of 40 is not certainty: kappa's lower bound is the kappa at
    // agreement's Wilson lower bound (91.2%), (0.912 - 0.5) / 0.5 = 0.82.
    let lower = format!("{{id: {id}, metric: kappa, min: 0.9, use_lower_bound: true}}");
    std::fs::write(&path, gated_suite(&model, "", &lower, &agent)).unwrap();
    let (code, stderr, _) = run_gated(dir.path(), &db, &path);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains("kappa 95% lower bound 0.82"), "{stderr}");
    let lower = format!("{{id: {id}, metric: kappa, min: 0.8, use_lower_bound: true}}");
    std::fs::write(&path, gated_suite(&model, "", &lower, &agent)).unwrap();
    let (code, stderr, _) = run_gated(dir.path(), &db, &path);
    assert_eq!(code, Some(0), "{stderr}");

    // Another temperature, or another template, is another judge.
    std::fs::write(
        &path,
        gated_suite(&model, "  temperature: 1.5\n", &id, &agent),
    )
    .unwrap();
    let (code, stderr, gate) = run_gated(dir.path(), &db, &path);
    assert_eq!(code, Some(1), "{stderr}");
    let reason = gate["calibration"]["reason"].as_str().unwrap();
    assert!(
        reason.contains("not calibrated: temperature 1.5 ≠ 0 at calibration"),
        "{reason}"
    );
    let builtin = support::workspace().join("crates/gavel-checks/templates/judge.j2");
    let mine = dir.path().join("judge.j2");
    let source = std::fs::read_to_string(builtin).unwrap();
    std::fs::write(
        &mine,
        source.replacen("impartial expert", "strict expert", 1),
    )
    .unwrap();
    let templated = "  templates:\n    judge: judge.j2\n";
    std::fs::write(&path, gated_suite(&model, templated, &id, &agent)).unwrap();
    let (code, stderr, _) = run_gated(dir.path(), &db, &path);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.contains("not calibrated: `judge` template "),
        "{stderr}"
    );

    // The judge behind the same id changes (a new deployment): calibrating again
    // calls it afresh and reports its new numbers (the cache is written, not read).
    std::fs::write(&path, gated_suite(&model, "", "pending", &agent)).unwrap();
    judge.rescript(Script::ConstantFail, &qags);
    let (_, again) = calibrate(dir.path(), &db, &args);
    assert_eq!(judge.requests(), 40, "every item asked again");
    assert_eq!(again["agreement"], 0.5, "{again:#}");
    assert_ne!(again["calibration_id"], report["calibration_id"]);
    // `--use-cache` opts in to the cache: no request at all.
    let mut cached = args.to_vec();
    cached.push("--use-cache");
    calibrate(dir.path(), &db, &cached);
    assert_eq!(judge.requests(), 40, "served from the cache");
}

/// The first `n` lines of the QAGS set, in a file of their own.
fn qags_head(dir: &Path, n: usize) -> PathBuf {
    let source = std::fs::read_to_string(calibration_dir().join("qags.jsonl")).unwrap();
    let path = dir.join(format!("qags{n}.jsonl"));
    let lines: Vec<&str> = source.lines().take(n).collect();
    std::fs::write(&path, lines.join("\n")).unwrap();
    path
}

#[test]
fn the_suite_sets_the_bar_whatever_calibrate_was_told() {
    let agent = Mock::start();
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite://{}", dir.path().join("gavel.db").display());
    let qags = calibration_dir().join("qags.jsonl");
    let judge = JudgeServer::start(Script::HalfTheFails, &qags);
    let model = judge.model();
    // 12 items, 6 failed by people, 3 of which the judge abstains on: `-j 1`
    // keeps the order of the requests, so which ones is fixed.
    let limited = [
        "--judge",
        &model,
        "-j",
        "1",
        "--limit",
        "12",
        "--min-coverage",
        "0",
        "--min-items",
        "1",
        qags.to_str().unwrap(),
    ];
    // `--min-coverage 0 --min-items 1` make the report call it fit...
    let (stdout, report) = calibrate(dir.path(), &db, &limited);
    assert_eq!(report["fit_to_gate"], true, "{stdout}");
    assert!((report["coverage"].as_f64().unwrap()) < 0.95, "{report:#}");
    let id = report["calibration_id"].as_str().unwrap();
    // ...but a suite with the default bar is not qualified by it.
    let path = dir.path().join("suite.yaml");
    std::fs::write(&path, gated_suite(&model, "", id, &agent)).unwrap();
    let (code, stderr, gate) = run_gated(dir.path(), &db, &path);
    assert_eq!(code, Some(1), "{stderr}");
    assert_eq!(gate["calibration"]["passed"], false, "{gate:#}");
    assert!(
        stderr.contains("only 12 labelled items; at least 30 are needed"),
        "{stderr}"
    );
    assert!(
        stderr.contains("coverage 75.0% (9 of 12 items judged) is under 95.0%"),
        "{stderr}"
    );
    // The suite may set its own (lower) bar on purpose.
    let own = format!("{{id: {id}, min_items: 12, min_coverage: 0}}");
    std::fs::write(&path, gated_suite(&model, "", &own, &agent)).unwrap();
    let (code, stderr, _) = run_gated(dir.path(), &db, &path);
    assert_eq!(code, Some(0), "{stderr}");
}

#[test]
fn the_base_url_from_the_environment_binds_host_and_port() {
    let agent = Mock::start();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let db = format!("sqlite://{}", d.join("gavel.db").display());
    let qags = calibration_dir().join("qags.jsonl");
    let judge = JudgeServer::start(Script::Oracle, &qags);
    let base = format!("{}/v1", judge.server.uri());
    let with_base = |base: &str, args: &[&str]| {
        support::gavel_command(d)
            .env("OPENAI_BASE_URL", base)
            .env("OPENAI_API_KEY", "test")
            .args(args)
            .output()
            .unwrap()
    };
    let out_path = d.join("cal.json");
    let out = with_base(
        &base,
        &[
            "calibrate",
            "--db",
            &db,
            "-o",
            out_path.to_str().unwrap(),
            "--judge",
            "openai:judge",
            "--limit",
            "40",
            qags.to_str().unwrap(),
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let report = &read_json(&out_path)[0];
    assert_eq!(report["fit_to_gate"], true, "{report:#}");
    let id = report["calibration_id"].as_str().unwrap();
    let path = d.join("suite.yaml");
    std::fs::write(&path, gated_suite("openai:judge", "", id, &agent)).unwrap();
    let run = |base: &str| {
        let out = with_base(
            base,
            &["run", path.to_str().unwrap(), "--db", &db, "--quiet"],
        );
        (out.status.code(), text(&out.stderr))
    };
    assert_eq!(run(&base).0, Some(0), "the calibrated endpoint");
    let port = judge.server.address().port();
    let other_host = format!("http://localhost:{port}/v1");
    let (code, stderr) = run(&other_host);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "base URL localhost:{port} ≠ 127.0.0.1:{port} at calibration"
        )),
        "{stderr}"
    );
    let other_port = format!("http://127.0.0.1:{}/v1", port + 1);
    let (code, stderr) = run(&other_port);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.contains(&format!("127.0.0.1:{} ≠ 127.0.0.1:{port}", port + 1)),
        "{stderr}"
    );
}

#[test]
fn max_cost_cache_only_and_duplicate_ids_behave_as_documented() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let db = format!("sqlite://{}", d.join("gavel.db").display());
    let qags = calibration_dir().join("qags.jsonl");
    let judge = JudgeServer::start(Script::Oracle, &qags);
    let base = format!("{}/v1", judge.server.uri());
    let head = qags_head(d, 20);
    let out_path = d.join("cal.json");
    let calibrate = |extra: &[&str]| {
        let mut args = vec![
            "calibrate",
            "--db",
            &db,
            "-o",
            out_path.to_str().unwrap(),
            "--judge",
            "openai:gpt-4o-mini",
            "-j",
            "1",
        ];
        args.extend(extra);
        args.push(head.to_str().unwrap());
        let out = support::gavel_command(d)
            .env("OPENAI_BASE_URL", &base)
            .env("OPENAI_API_KEY", "test")
            .args(&args)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        (text(&out.stdout), read_json(&out_path)[0].clone())
    };
    // Each call costs 10 + 10 tokens of gpt-4o-mini: $0.0000075. A budget of
    // $0.00002 is spent after the third item: no fourth is started.
    let (stdout, report) = calibrate(&["--max-cost", "0.00002"]);
    assert_eq!(judge.requests(), 3, "{stdout}");
    assert_eq!(report["judged"], 3, "{report:#}");
    assert_eq!(report["errors"], 17);
    assert!(
        stdout.contains("--max-cost: the $0.00002 budget was spent; 17 items were not judged"),
        "{stdout}"
    );
    // `--cache-only` without `--use-cache` makes no call: the three cached
    // answers are served, the rest are abstentions.
    let (stdout, report) = calibrate(&["--cache-only"]);
    assert_eq!(judge.requests(), 3, "no call: {stdout}");
    assert_eq!(report["judged"], 3, "{report:#}");
    assert!(
        stdout.contains("--cache-only: answers only from the model cache"),
        "{stdout}"
    );
    // A duplicate id is refused, naming both lines.
    let first = std::fs::read_to_string(&head)
        .unwrap()
        .lines()
        .next()
        .unwrap()
        .to_owned();
    std::fs::write(&head, format!("{first}\n{first}\n")).unwrap();
    let out = gavel(
        d,
        &[
            "calibrate",
            "--baseline",
            "length",
            "--db",
            &db,
            head.to_str().unwrap(),
        ],
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stdout));
    assert!(
        text(&out.stderr).contains(":2:1: duplicate id"),
        "{}",
        text(&out.stderr)
    );
    assert!(
        text(&out.stderr).contains("(first on line 1)"),
        "{}",
        text(&out.stderr)
    );
}

/// The exact two-sided sign test, by counting: 2 · P(X ≤ min) for X ~ Bin(n, ½).
fn exact_mcnemar(up: u64, down: u64) -> f64 {
    let n = up + down;
    let choose = |k: u64| (0..k).fold(1.0, |c, i| c * (n - i) as f64 / (i + 1) as f64);
    let tail: f64 = (0..=up.min(down)).map(choose).sum();
    (2.0 * tail / 2f64.powi(n as i32)).min(1.0)
}

#[test]
fn two_judges_on_one_set_are_compared_with_a_paired_test() {
    let mock = Mock::start();
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite://{}", dir.path().join("gavel.db").display());
    let qags = calibration_dir().join("qags.jsonl");
    let calibrate = |judge: &str, file: &Path, out: &str| -> Value {
        let path = dir.path().join(out);
        let mut args = vec!["calibrate", "--db", &db, "--limit", "40", "-o"];
        args.push(path.to_str().unwrap());
        if judge == "length" {
            args.extend(["--baseline", "length"]);
        } else {
            args.extend(["--judge", judge]);
        }
        args.push(file.to_str().unwrap());
        let out = gavel(dir.path(), &args);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        read_json(&path)[0].clone()
    };
    // The mock's judge passes every answer, its `harsh` judge fails every one:
    // each is right exactly where people said so.
    let lenient = calibrate(
        &format!("openai-compatible:judge@{}/v1", mock.url),
        &qags,
        "a.json",
    );
    let harsh = calibrate(
        &format!("openai-compatible:harsh-judge@{}/v1", mock.url),
        &qags,
        "b.json",
    );
    let count = |r: &Value, label: &str| {
        r["results"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|x| x["human"] == label && x["judge"] == label)
            .count() as u64
    };
    let (passes, fails) = (count(&lenient, "pass"), count(&harsh, "fail"));
    assert_eq!(passes + fails, 40, "{lenient:#}");
    assert!(passes > 0 && fails > 0);
    let id = |r: &Value| r["calibration_id"].as_str().unwrap().to_owned();
    let (a, b) = (id(&lenient), id(&harsh));

    let json = dir.path().join("compare.json");
    let out = gavel(
        dir.path(),
        &[
            "calibrate",
            "compare",
            &a,
            &b,
            "--db",
            &db,
            "-o",
            json.to_str().unwrap(),
        ],
    );
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}{}", text(&out.stderr));
    let c = read_json(&json);
    let p = &c["paired"];
    assert_eq!(c["dataset"], "qags");
    assert_eq!((&c["a"]["id"], &c["b"]["id"]), (&json!(a), &json!(b)));
    assert_eq!(p["items"], 40);
    assert_eq!(
        (p["a_right_b_wrong"].as_u64(), p["a_wrong_b_right"].as_u64()),
        (Some(passes), Some(fails))
    );
    let want = exact_mcnemar(passes, fails);
    assert!(close(&p["mcnemar_p"], &json!(want)), "{p:#} vs {want}");
    let difference = (fails as f64 - passes as f64) / 40.0;
    assert!(close(&p["difference"], &json!(difference)), "{p:#}");
    let (low, high) = (
        p["difference_ci"]["low"].as_f64().unwrap(),
        p["difference_ci"]["high"].as_f64().unwrap(),
    );
    assert!(low < difference && difference < high, "{p:#}");
    assert_eq!(c["a"]["agreement"], lenient["agreement"]);
    assert_eq!(c["b"]["kappa"], harsh["kappa"]);
    assert!(c["only_a"].as_array().unwrap().is_empty());
    for line in [
        "qags (binary): two judges compared",
        &format!("A  calibration run {a} · judge openai-compatible:judge@"),
        &format!("discordant items   A right, B wrong: {passes} · A wrong, B right: {fails}"),
        &format!("McNemar exact test p = {want:.4}"),
        "recall of `fail`",
    ] {
        assert!(stdout.contains(line), "{line}\n{stdout}");
    }

    // A run on another set is refused, naming both; so is an unknown id.
    let other = calibrate(
        "length",
        &calibration_dir().join("halueval_general.jsonl"),
        "c.json",
    );
    let out = gavel(
        dir.path(),
        &["calibrate", "compare", &a, &id(&other), "--db", &db],
    );
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(&format!("`{a}` is on qags (binary)")),
        "{stderr}"
    );
    assert!(
        stderr.contains("is on halueval_general (binary)"),
        "{stderr}"
    );
    let out = gavel(
        dir.path(),
        &["calibrate", "compare", &a, "nope", "--db", &db],
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("RUN_B: no calibration run `nope`"),
        "{}",
        text(&out.stderr)
    );
}
