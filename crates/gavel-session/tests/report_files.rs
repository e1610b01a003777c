//! Report files written as a stored run is read (`gavel run -o`, `gavel
//! report -o`): a run of 5,000 executions over two targets, on a temporary
//! SQLite store, written in every format through the streaming path; each
//! file agrees with the store and with the report rendered whole.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;

use gavel_core::{CheckKind, Execution, RunRecord, RunStatus, Status, Transcript, Turn, Verdict};
use gavel_report::{Detail, Files, Format};
use gavel_session::Regate;
use gavel_store::{SnapshotCase, Store};
use serde_json::{Value, json};

#[path = "../../gavel-report/tests/xsd/mod.rs"]
mod xsd;

/// Cases of the run; each runs against two targets.
const CASES: usize = 2_500;
const TARGETS: [&str; 2] = ["alpha", "beta"];

/// The status of case `i` on target `t`: a few fail, error or skip.
fn status(i: usize, t: usize) -> Status {
    match (i + t) % 50 {
        0 => Status::Fail,
        7 => Status::Error,
        13 => Status::Skipped,
        _ => Status::Pass,
    }
}

fn execution(i: usize, t: usize) -> Execution {
    let case = format!("case-{i:05}");
    let status = status(i, t);
    let verdict = match status {
        Status::Error => Status::Skipped,
        s => s,
    };
    Execution {
        case_id: case.clone(),
        case_name: case.clone(),
        target: TARGETS[t].to_owned(),
        repeat_index: 0,
        tags: vec![format!("shard-{}", i % 3)],
        status,
        score: (status != Status::Skipped).then_some(if status == Status::Pass {
            1.0
        } else {
            0.0
        }),
        transcript: Transcript {
            session_id: format!("s-{case}-{t}"),
            turns: vec![Turn {
                input: format!("ask {case}"),
                output: format!("answer <{case}> & more"),
                latency_ms: 2,
                ..Turn::default()
            }],
        },
        verdicts: vec![Verdict::new(
            "contains",
            CheckKind::Contains,
            verdict,
            match verdict {
                Status::Fail => "`refund` missing",
                Status::Skipped => "no judge model",
                _ => "found",
            },
        )],
        reason: (status == Status::Error).then(|| format!("connection refused ({case})")),
        started_at: "2026-01-02T03:04:05.000Z".to_owned(),
        duration_ms: 3,
    }
}

/// A finished run of [`CASES`] cases × [`TARGETS`], recorded out of order.
async fn stored_run(store: &Store) -> String {
    let run_id = "0190f3a2-0000-7000-8000-000000005000".to_owned();
    store
        .create_run(&RunRecord {
            id: run_id.clone(),
            suite: "many".to_owned(),
            status: RunStatus::Running,
            started_at: "2026-01-02T03:04:05.000Z".to_owned(),
            finished_at: None,
            config: json!({}),
            planned: Some((CASES * TARGETS.len()) as u64),
        })
        .await
        .unwrap();
    let ids: Vec<String> = (0..CASES).map(|i| format!("case-{i:05}")).collect();
    let jsons: Vec<String> = ids
        .iter()
        .map(|id| json!({"id": id, "input": format!("ask {id}")}).to_string())
        .collect();
    let snapshot: Vec<SnapshotCase<'_>> = ids
        .iter()
        .zip(&jsons)
        .map(|(id, json)| SnapshotCase {
            id,
            source: "many.yaml:1",
            json,
        })
        .collect();
    for (page, chunk) in snapshot.chunks(500).enumerate() {
        store
            .append_cases(&run_id, page * 500, chunk)
            .await
            .unwrap();
    }
    let executions: Vec<Execution> = (0..CASES)
        .rev()
        .flat_map(|i| (0..TARGETS.len()).map(move |t| execution(i, t)))
        .collect();
    for chunk in executions.chunks(500) {
        store.record_executions(&run_id, chunk).await.unwrap();
    }
    store
        .finish_run(&run_id, RunStatus::Completed, "2026-01-02T03:14:05.000Z")
        .await
        .unwrap();
    run_id
}

#[tokio::test]
async fn a_run_of_5000_executions_is_written_as_it_is_read() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("gavel.db").display());
    let store = Store::open(&url).await.unwrap();
    let run_id = stored_run(&store).await;
    let paths: Vec<_> = Format::ALL
        .iter()
        .map(|f| dir.path().join(format!("out/run.{}", f.extension())))
        .collect();
    let files = Files::create(&paths).unwrap();
    let regate = Regate::default();
    let report = gavel_session::report::write(&store, &run_id, &regate, files)
        .await
        .unwrap();
    assert_eq!(report.detail(), Detail::Summary, "the run is not held");
    let read = |f: Format| {
        std::fs::read_to_string(&paths[Format::ALL.iter().position(|&x| x == f).unwrap()]).unwrap()
    };

    // What the store holds, counted apart from any report.
    let mut by_status: BTreeMap<&str, usize> = BTreeMap::new();
    let stored = store.executions(&run_id).await.unwrap();
    assert_eq!(stored.len(), CASES * TARGETS.len());
    for e in &stored {
        *by_status.entry(e.status.as_str()).or_default() += 1;
    }

    // Every file is the one the whole report renders.
    let whole = gavel_session::report::build(&store, &run_id, &regate, Detail::Full)
        .await
        .unwrap();
    for format in Format::ALL {
        let rendered = gavel_report::render(&whole, format).unwrap();
        assert!(
            read(format) == rendered,
            "{format} differs from the whole report's"
        );
    }

    // JSON: one result per execution (one repeat each), in report order,
    // with counts that match the store.
    let json: Value = serde_json::from_str(&read(Format::Json)).unwrap();
    let results = json["detailed_results"].as_array().unwrap();
    assert_eq!(results.len(), stored.len());
    assert_eq!(results[0]["id"], "case-00000");
    assert_eq!(results[1]["target"], "beta");
    assert_eq!(
        results[results.len() - 1]["id"],
        format!("case-{:05}", CASES - 1)
    );
    for (key, status) in [
        ("passed", "pass"),
        ("failed", "fail"),
        ("errors", "error"),
        ("skipped", "skipped"),
    ] {
        assert_eq!(json["summary"][key], by_status[status], "{key}");
        let listed = results.iter().filter(|r| r["status"] == status).count();
        assert_eq!(listed, by_status[status], "results of {status}");
    }
    assert_eq!(
        results[7]["input"], "ask case-00003",
        "cases come with their results"
    );

    // JUnit: valid, one test case per outcome, both targets' suites complete.
    let xml = read(Format::Junit);
    xsd::assert_valid_junit(&xml);
    assert_eq!(xml.matches("<testcase ").count(), stored.len());
    assert_eq!(xml.matches("<testsuite ").count(), TARGETS.len());
    let failures = by_status["fail"];
    assert!(
        xml.contains(&format!("failures=\"{failures}\"")),
        "the root counts every failure"
    );
    for t in TARGETS {
        let n = CASES.to_string();
        assert!(xml.contains(&format!("<testsuite name=\"many/{t}\" tests=\"{n}\"")));
    }

    // Markdown: the failures, capped, with how many more.
    let md = read(Format::Markdown);
    let bad = by_status["fail"] + by_status["error"];
    assert!(md.contains(&format!(
        "…and {} more; see the JSON or HTML report.",
        bad - 50
    )));

    // HTML: failures and errors first, in full; passes last, summarised.
    let html = read(Format::Html);
    let bad_at = html
        .find("Failures and errors <span class=\"muted\">(")
        .unwrap();
    let passed_at = html.find("Passed <span class=\"muted\">(").unwrap();
    assert!(bad_at < passed_at, "failures come before passes");
    assert!(html[bad_at..passed_at].contains("connection refused (case-00007)"));
    assert!(html.contains("&lt;case-00001&gt;"), "agent text is escaped");
    let passes = by_status["pass"];
    assert!(html.contains(&format!("Passed <span class=\"muted\">({passes})")));
    assert!(
        html.contains("<table class=\"compact\">"),
        "later passes are rows"
    );
    assert!(html.contains(&format!(
        "…and {} more, not shown here",
        passes - 100 - 2_000
    )));
    store.close().await;
}

/// A new run's report is folded while it runs: its files are the ones
/// `gavel report` writes from the store afterwards, byte for byte, with the
/// run as it ended (not as it started).
#[tokio::test]
async fn a_run_writes_the_files_its_stored_report_writes() {
    use gavel_core::load::SuiteSource;
    use gavel_session::{PreparedRun, RunConfig, Sinks, Sources};

    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("gavel.db").display());
    let store = Store::open(&url).await.unwrap();
    // Two targets, repeats, a few failures: several pages of cases, each
    // case whole only once all four of its executions are recorded.
    let echo =
        "[sh, -c, 'while IFS= read -r line; do printf \"{\\\"output\\\": \\\"ok\\\"}\\n\"; done']";
    let cases: String = (0..700)
        .map(|i| {
            let want = if i % 9 == 0 { "nope" } else { "ok" };
            format!(
                "  - {{id: c{i:04}, input: hi, repeat: 2, targets: [a, b], checks: [{{type: contains, value: {want}}}]}}\n"
            )
        })
        .collect();
    let text = format!(
        "name: live\ntargets:\n  a: {{type: command, command: {echo}}}\n  b: {{type: command, command: {echo}}}\ncases:\n{cases}"
    );
    let ran: Vec<_> = Format::ALL
        .iter()
        .map(|f| dir.path().join(format!("ran/run.{}", f.extension())))
        .collect();
    let mut config = RunConfig::new(Sources {
        suites: vec![SuiteSource::Text {
            text,
            path: "suite.yaml".into(),
        }],
        stored: None,
    });
    config.jobs = 8;
    config.report_files = ran.clone();
    let prepared = PreparedRun::new(store.clone(), config).await.unwrap();
    let finished = prepared
        .execute(&Sinks::new(), &gavel_runner::CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(finished.report.summary.overall.total, 1_400);
    assert_eq!(finished.report.summary.overall.failed, 2 * 78);
    assert_eq!(finished.report.run.status, RunStatus::Completed);

    let reported: Vec<_> = Format::ALL
        .iter()
        .map(|f| dir.path().join(format!("reported/run.{}", f.extension())))
        .collect();
    let files = Files::create(&reported).unwrap();
    let report = gavel_session::report::write(&store, &finished.run.id, &Regate::default(), files)
        .await
        .unwrap();
    assert_eq!(report.gate, finished.report.gate);
    for (ran, reported) in ran.iter().zip(&reported) {
        let (a, b) = (
            std::fs::read(ran).unwrap(),
            std::fs::read(reported).unwrap(),
        );
        assert!(a == b, "{} differs from `gavel report`'s", ran.display());
    }
    let json: Value = serde_json::from_slice(&std::fs::read(&ran[0]).unwrap()).unwrap();
    assert_eq!(json["run"]["status"], "completed", "the run as it ended");
}
