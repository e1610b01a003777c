//! `gavel compare` between a run of the quickstart against the healthy example
//! agent and one against the agent with `PROPERTY_AGENT_BUG=wrong-count`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::Path;
use std::process::Output;

use serde_json::Value;
use support::{agent_bin, workspace};

fn gavel(dir: &Path, args: &[&str], bug: Option<&str>) -> Output {
    let mut cmd = support::gavel_command(dir);
    cmd.args(args).env_remove("PROPERTY_AGENT_BUG");
    if let Some(bug) = bug {
        cmd.env("PROPERTY_AGENT_BUG", bug);
    }
    cmd.output().unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn run_id(out: &Output) -> String {
    let err = text(&out.stderr);
    let line = err.lines().find(|l| l.starts_with("run ")).unwrap();
    line.split_whitespace().nth(1).unwrap().to_owned()
}

#[test]
fn compare_finds_the_regressions_an_injected_bug_causes() {
    let dir = tempfile::tempdir().unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let targets = format!(
        "targets:\n  property-agent:\n    type: http\n    url: http://127.0.0.1:{port}/chat\n    response: {{output: /reply, tool_calls: /tool_calls}}\n    restart:\n      url: http://127.0.0.1:{port}/restart\n      ready_url: http://127.0.0.1:{port}/health\n    start:\n      command: [{bin:?}, --addr, \"127.0.0.1:{port}\"]\n      ready_url: http://127.0.0.1:{port}/health\n      timeout_s: 60\n",
        bin = agent_bin().display().to_string(),
    );
    let targets_path = dir.path().join("targets.yaml");
    std::fs::write(&targets_path, targets).unwrap();
    let suite = workspace().join("examples/quickstart/suite.yaml");
    let db = format!("sqlite://{}", dir.path().join("gavel.db").display());
    let report = dir.path().join("r.json");
    let run = |bug| {
        gavel(
            dir.path(),
            &[
                "run",
                targets_path.to_str().unwrap(),
                suite.to_str().unwrap(),
                "--db",
                &db,
                "--quiet",
                "--repeat",
                "2",
                "-o",
                report.to_str().unwrap(),
            ],
            bug,
        )
    };
    let healthy = run(None);
    assert_eq!(healthy.status.code(), Some(0), "{}", text(&healthy.stdout));
    let buggy = run(Some("wrong-count"));
    assert_eq!(buggy.status.code(), Some(1), "{}", text(&buggy.stdout));

    // Gating on the `smoke` tag alone: list-listings is a smoke case, so the buggy
    // run still fails; gating on a tag only passing cases carry passes.
    let regate = |tag: &str| {
        gavel(
            dir.path(),
            &["report", "--db", &db, "--gate-tag", tag],
            None,
        )
        .status
        .code()
    };
    assert_eq!(regate("smoke"), Some(1));
    assert_eq!(regate("bookings"), Some(0));

    // Repeat statistics in the JSON report: both repeats of the broken case failed.
    let r: Value = serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    let listings = r["detailed_results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["id"] == "list-listings")
        .unwrap();
    let stats = &listings["repeat_stats"];
    assert_eq!(
        (stats["n"].as_u64(), stats["passed"].as_u64()),
        (Some(2), Some(0)),
        "{stats:#}"
    );
    assert_eq!(stats["pass_at_k"]["2"], 0.0);
    assert!(stats["mean"].as_f64().unwrap() < 1.0);
    assert!(stats["stddev"].is_number());
    let (a, b) = (run_id(&healthy), run_id(&buggy));

    let json_path = dir.path().join("compare.json");
    let out = gavel(
        dir.path(),
        &[
            "compare",
            &a,
            &b,
            "--db",
            &db,
            "-o",
            json_path.to_str().unwrap(),
        ],
        None,
    );
    let stdout = text(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(1),
        "regressions fail the gate: {stdout}"
    );
    assert!(
        text(&out.stderr).contains("gate failed: 3 regressions"),
        "{}",
        text(&out.stderr)
    );
    let c: Value = serde_json::from_str(&std::fs::read_to_string(&json_path).unwrap()).unwrap();
    assert_eq!(c["regressions"], 3, "{c:#}");
    assert_eq!(c["fixes"], 0);
    let regressed: Vec<&str> = c["cases"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|x| x["change"] == "regression")
        .map(|x| x["case_id"].as_str().unwrap())
        .collect();
    assert_eq!(
        regressed,
        [
            "list-listings",
            "occupancy-follow-up",
            "context-survives-revival"
        ]
    );
    for case in c["cases"].as_array().unwrap() {
        if case["change"] == "regression" {
            assert!(case["score_delta"].as_f64().unwrap() < 0.0, "{case:#}");
            assert_eq!(case["a"]["repeats"], 2);
        }
    }
    assert!(c["totals_b"]["score"].as_f64().unwrap() < c["totals_a"]["score"].as_f64().unwrap());
    assert!(c["totals_a"]["duration_ms"].as_f64().is_some());
    assert_eq!(c["flip_test"]["n"], 3);
    assert!(stdout.contains("REGRESSION     list-listings"), "{stdout}");
    assert!(stdout.contains("significance:"), "{stdout}");

    // Allowing three regressions passes; the same run against itself changes nothing.
    let out = gavel(
        dir.path(),
        &["compare", &a, &b, "--db", &db, "--max-regressions", "3"],
        None,
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let out = gavel(dir.path(), &["compare", &a, &a, "--db", &db], None);
    assert_eq!(out.status.code(), Some(0));
    assert!(
        text(&out.stdout).contains("0 regressions, 0 fixes"),
        "{}",
        text(&out.stdout)
    );
    assert!(
        text(&out.stdout).contains("no score changed"),
        "{}",
        text(&out.stdout)
    );

    // The trend over both runs: the overall pass rate fell, per tag too.
    let trend_path = dir.path().join("trend.json");
    let out = gavel(
        dir.path(),
        &[
            "report",
            "--trend",
            "--db",
            &db,
            "-o",
            trend_path.to_str().unwrap(),
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("quickstart overall *: 100/"),
        "{}",
        text(&out.stdout)
    );
    let t: Value = serde_json::from_str(&std::fs::read_to_string(&trend_path).unwrap()).unwrap();
    let overall: Vec<f64> = t["points"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["dimension"] == "overall")
        .map(|p| p["pass_rate"].as_f64().unwrap())
        .collect();
    assert_eq!(overall.len(), 2);
    assert_eq!(overall[0], 100.0);
    assert!(overall[1] < 100.0);
    assert!(
        t["points"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["dimension"] == "tag" && p["key"] == "smoke")
    );

    // `previous` and `latest` name the runs by recency; a bad id is a clear error.
    let out = gavel(
        dir.path(),
        &["compare", "previous", "latest", "--db", &db],
        None,
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let out = gavel(dir.path(), &["compare", "nosuchrun", "--db", &db], None);
    assert_ne!(out.status.code(), Some(0));
    assert!(
        text(&out.stderr).contains("nosuchrun"),
        "{}",
        text(&out.stderr)
    );
}

/// Two suites share a store: `previous` is the run of the latest run's own
/// suite before it, not whichever run came before.
#[test]
fn previous_is_the_run_of_the_same_suite() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite://{}", dir.path().join("gavel.db").display());
    let write = |name: &str, answer: &str| {
        let path = dir.path().join(format!("{name}.yaml"));
        std::fs::write(
            &path,
            format!(
                "name: {name}\ntargets:\n  echo:\n    type: command\n    command: [sh, -c, 'while IFS= read -r line; do printf \"{{\\\"output\\\": \\\"{answer}\\\"}}\\n\"; done']\ncases:\n  - id: a\n    input: hi\n    checks: [{{type: contains, value: ok}}]\n"
            ),
        )
        .unwrap();
        path
    };
    let run = |path: &Path| {
        let out = gavel(
            dir.path(),
            &["run", path.to_str().unwrap(), "--db", &db, "--quiet"],
            None,
        );
        run_id(&out)
    };
    let first_x = run(&write("x", "ok"));
    run(&write("y", "ok"));
    let second_x = run(&write("x", "nope"));
    let out = gavel(
        dir.path(),
        &[
            "compare", "previous", "latest", "--db", &db, "-o", "cmp.json",
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let cmp: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("cmp.json")).unwrap())
            .unwrap();
    assert_eq!(cmp["run_a"], first_x.as_str(), "{cmp:#}");
    assert_eq!(cmp["run_b"], second_x.as_str());
    assert_eq!(cmp["regressions"], 1);
    // A suite's first run has nothing before it.
    run(&write("z", "ok"));
    let out = gavel(
        dir.path(),
        &["compare", "previous", "latest", "--db", &db],
        None,
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("suite `z` has no run before"),
        "{}",
        text(&out.stderr)
    );
}
