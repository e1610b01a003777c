//! `gavel calibrate`: the statistics on every shared calibration file against
//! scikit-learn/SciPy (through the `length` baseline), a reference judge through a
//! local OpenAI-compatible server, labels from the store, and a suite that
//! requires a calibrated judge before it gates.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::{Value, json};

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
    // every pair is position-inconsistent, so a tie.
    let faireval = &reports[0];
    assert_eq!(faireval["position_consistency"], 0.0);
    assert!(
        faireval["results"]
            .as_array()
            .unwrap()
            .iter()
            .all(|x| x["judge"] == "tie")
    );
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

    // A labelled set where people passed everything: the mock judge agrees fully.
    let all_pass = dir.path().join("all_pass.jsonl");
    let line = r#"{"id":"p-N","task":"pointwise","criterion":"Answers the question.","input":"What is 2+2?","response":"4","human_label":"pass","human_score":1,"scale":{"type":"binary","labels":["pass","fail"]}}"#;
    let lines: Vec<String> = (0..5)
        .map(|i| line.replace("p-N", &format!("p-{i}")))
        .collect();
    std::fs::write(&all_pass, lines.join("\n")).unwrap();
    let out = gavel(
        dir.path(),
        &[
            "calibrate",
            "--judge",
            &judge,
            "--db",
            &db,
            all_pass.to_str().unwrap(),
        ],
    );
    let stdout = text(&out.stdout);
    assert!(stdout.contains("fit to gate (agreement ≥ 80%)"), "{stdout}");
    let fit = stdout
        .lines()
        .find_map(|l| l.trim().strip_prefix("calibration run "))
        .unwrap()
        .to_owned();

    // A suite that requires a calibrated judge gates only with a fit calibration.
    let suite = |calibration: &str| {
        format!(
            "name: gated\njudge:\n  model: {judge}\n  calibration: {calibration}\ntargets:\n  agent:\n    type: chat\n    model: openai-compatible:agent@{url}/v1\ncases:\n  - id: hi\n    input: Hello\n    checks: [{{type: contains, value: You said}}]\n",
            url = mock.url
        )
    };
    let path = dir.path().join("suite.yaml");
    std::fs::write(&path, suite(&fit)).unwrap();
    let gate_of = |report: &std::path::Path| -> Value {
        let json: Value = serde_json::from_str(&std::fs::read_to_string(report).unwrap()).unwrap();
        json["gate"].clone()
    };
    let fit_report = dir.path().join("fit.json");
    let out = gavel(
        dir.path(),
        &[
            "run",
            path.to_str().unwrap(),
            "--db",
            &db,
            "--quiet",
            "-o",
            fit_report.to_str().unwrap(),
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let gate = gate_of(&fit_report);
    assert_eq!(gate["calibration"]["id"], fit.as_str(), "{gate:#}");
    assert_eq!(gate["calibration"]["passed"], true);
    assert_eq!(gate["passed"], true);
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
                    execution: Some(gavel::ExecutionKey {
                        run_id: run.id.clone(),
                        case_id: "hi".into(),
                        target: "agent".into(),
                        repeat_index: 0,
                    }),
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
