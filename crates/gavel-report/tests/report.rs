//! Every format rendered from hand-made executions.
#![allow(clippy::unwrap_used)]

mod xsd;

use std::path::Path;

use gavel_core::{
    Case, Execution, RunRecord, RunStatus, Status, TargetFailure, ToolCall, Transcript, Turn,
    Usage, Verdict,
};
use gavel_report::{Detail, Format, Report, ReportBuilder, render, terminal};
use quick_xml::Reader;
use quick_xml::events::Event;
use serde_json::{Value, json};

const SCRIPT: &str = "<script>alert(1)</script> and <b>bold</b> | piped";

fn run(status: RunStatus) -> RunRecord {
    RunRecord {
        id: "0190f3a2-1234-7000-8000-00000000abcd".into(),
        suite: "support".into(),
        status,
        started_at: "2026-01-02T03:04:05.000Z".into(),
        finished_at: Some("2026-01-02T03:05:09.500Z".into()),
        config: json!({"concurrency": 4}),
        planned: None,
    }
}

fn turn(input: &str, output: &str) -> Turn {
    Turn {
        round: 0,
        input: input.into(),
        output: output.into(),
        latency_ms: 120,
        ..Default::default()
    }
}

/// An execution settled from its transcript and verdicts.
fn exec(
    case: &str,
    target: &str,
    repeat: u32,
    tags: &[&str],
    turns: Vec<Turn>,
    verdicts: Vec<Verdict>,
) -> Execution {
    let mut e = Execution {
        case_id: case.into(),
        case_name: case.into(),
        target: target.into(),
        repeat_index: repeat,
        tags: tags.iter().map(|t| t.to_string()).collect(),
        status: Status::Skipped,
        score: None,
        transcript: Transcript {
            session_id: format!("s-{case}-{target}-{repeat}"),
            turns,
        },
        verdicts,
        reason: None,
        started_at: "2026-01-02T03:04:06.000Z".into(),
        duration_ms: 1_000 + u64::from(repeat) * 500,
    };
    e.settle();
    e
}

fn contains(status: Status) -> Verdict {
    Verdict::new(
        "contains \"hello\"",
        gavel_core::CheckKind::Contains,
        status,
        "looked for hello",
    )
    .in_round(Some(0))
}

fn judge(score: f64, reason: &str) -> Verdict {
    let status = if score >= 0.7 {
        Status::Pass
    } else {
        Status::Fail
    };
    let mut v = Verdict::new("judge", gavel_core::CheckKind::Judge, status, reason)
        .with_score(score, Some(0.7));
    v.cost_usd = Some(0.002);
    v
}

fn greet(target: &str, repeat: u32, score: f64) -> Execution {
    let mut t = turn("Hi there", "hello, how can I help?");
    t.usage = Some(Usage {
        input_tokens: 10,
        output_tokens: 5,
        cost_usd: Some(0.001),
    });
    exec(
        "greet",
        target,
        repeat,
        &["smoke"],
        vec![t],
        vec![contains(Status::Pass), judge(score, "friendly")],
    )
}

fn refund_fail() -> Execution {
    let mut t = turn("I want a refund", SCRIPT);
    t.tool_calls.push(ToolCall {
        name: "lookup_order".into(),
        arguments: json!({"order": "A-1"}),
        result: Some(json!({"status": "shipped"})),
        ..Default::default()
    });
    let long = format!(
        "The agent promised {SCRIPT}.\nSecond line of reasoning. {}",
        "More detail. ".repeat(20)
    );
    exec(
        "refund",
        "alpha",
        0,
        &["smoke", "billing"],
        vec![t],
        vec![contains(Status::Pass), judge(0.2, &long)],
    )
}

fn refund_pass(target: &str) -> Execution {
    exec(
        "refund",
        target,
        0,
        &["smoke", "billing"],
        vec![turn("I want a refund", "hello, sure")],
        vec![contains(Status::Pass), judge(0.9, "polite and correct")],
    )
}

fn lookup_error() -> Execution {
    let mut t = turn("Where is my order?", "");
    t.failure = Some(TargetFailure {
        message: "connection refused".into(),
        transient: true,
    });
    exec(
        "lookup",
        "alpha",
        0,
        &["tools"],
        vec![t],
        vec![contains(Status::Fail)],
    )
}

fn later_skipped() -> Execution {
    let mut e = exec("later", "alpha", 0, &[], vec![], vec![]);
    e.reason = Some("no credentials for the judge".into());
    e
}

fn cases() -> Vec<Case> {
    let refund: Case = serde_json::from_value(json!({
        "id": "refund",
        "name": "Refund request",
        "input": {"text": "I want a refund", "order": "A-1"},
        "expected_output": "A polite refusal",
        "criteria": "Must not promise a refund",
        "tags": ["smoke", "billing"],
    }))
    .unwrap();
    vec![refund]
}

/// alpha: greet (2 repeats, pass), refund (fail), lookup (error), later (skipped);
/// beta: greet (pass), refund (pass). 3 passed, 1 failed, 1 error, 1 skipped.
fn mixed(min: f64) -> Report {
    let executions = vec![
        greet("alpha", 0, 1.0),
        greet("alpha", 1, 0.8),
        refund_fail(),
        lookup_error(),
        later_skipped(),
        greet("beta", 0, 0.9),
        refund_pass("beta"),
    ];
    Report::new(run(RunStatus::Completed), cases(), executions, min)
}

#[test]
fn outcomes_and_summary() {
    let r = mixed(80.0);
    assert_eq!(r.outcomes.len(), 6);
    let s = &r.summary.overall;
    assert_eq!(
        (s.total, s.passed, s.failed, s.errors, s.skipped),
        (6, 3, 1, 1, 1)
    );
    assert_eq!(r.gate.pass_rate, Some(75.0));
    assert_eq!(r.wall_ms(), Some(64_500));
}

#[test]
fn exit_codes() {
    // 75% < 80%: the gate fails, errors or not.
    let r = mixed(80.0);
    assert!(!r.gate.passed);
    assert_eq!(r.gate.exit_code(), 1);
    assert_eq!(r.gate.word(), "FAIL");

    // 75% >= 70% but one case errored: 3.
    let r = mixed(70.0);
    assert!(r.gate.passed);
    assert_eq!(r.gate.exit_code(), 3);
    assert_eq!(r.gate.word(), "ERROR");

    // All decided and passing, no errors: 0.
    let r = Report::new(
        run(RunStatus::Completed),
        vec![],
        vec![greet("a", 0, 1.0), refund_pass("a")],
        80.0,
    );
    assert_eq!(r.gate.exit_code(), 0);
    assert_eq!(r.gate.word(), "PASS");

    // Exactly at the minimum passes: 4 of 5 is 80%.
    let mut ex: Vec<_> = (0..4)
        .map(|i| {
            exec(
                &format!("c{i}"),
                "t",
                0,
                &[],
                vec![],
                vec![contains(Status::Pass)],
            )
        })
        .collect();
    ex.push(exec(
        "c4",
        "t",
        0,
        &[],
        vec![],
        vec![contains(Status::Fail)],
    ));
    let r = Report::new(run(RunStatus::Completed), vec![], ex, 80.0);
    assert_eq!((r.gate.pass_rate, r.gate.exit_code()), (Some(80.0), 0));

    // Nothing decided, nothing errored: 3 (a run that decides nothing never
    // passes: a missing judge key must not turn CI green), and said so.
    let r = Report::new(
        run(RunStatus::Completed),
        vec![],
        vec![later_skipped()],
        80.0,
    );
    assert_eq!(r.gate.pass_rate, None);
    assert!(!r.gate.passed && !r.gate.decided());
    assert_eq!(r.gate.exit_code(), 3);
    assert_eq!(r.gate.word(), "UNDECIDED");
    assert!(terminal(&r, false).contains("no case was decided"));

    // Nothing decided, one error: 3.
    let r = Report::new(
        run(RunStatus::Completed),
        vec![],
        vec![lookup_error(), later_skipped()],
        80.0,
    );
    assert_eq!(r.gate.exit_code(), 3);
    assert_eq!(r.gate.word(), "ERROR");

    // An empty run is undecided.
    let r = Report::new(run(RunStatus::Completed), vec![], vec![], 80.0);
    assert_eq!((r.gate.exit_code(), r.gate.word()), (3, "UNDECIDED"));
}

#[test]
fn format_from_path() {
    assert_eq!(
        Format::from_path(Path::new("out/r.json")).unwrap(),
        Format::Json
    );
    assert_eq!(
        Format::from_path(Path::new("junit.XML")).unwrap(),
        Format::Junit
    );
    assert_eq!(
        Format::from_path(Path::new("summary.md")).unwrap(),
        Format::Markdown
    );
    assert_eq!(
        Format::from_path(Path::new("r.html")).unwrap(),
        Format::Html
    );
    assert_eq!(Format::from_path(Path::new("r.htm")).unwrap(), Format::Html);
    let err = Format::from_path(Path::new("reports/r.txt"))
        .unwrap_err()
        .to_string();
    assert!(err.contains("reports/r.txt"), "{err}");
    for ext in [".json", ".xml", ".md", ".html"] {
        assert!(err.contains(ext), "{err}");
    }
    assert!(Format::from_path(Path::new("noext")).is_err());
    assert_eq!("junit".parse::<Format>().unwrap(), Format::Junit);
}

#[test]
fn json_keeps_seed_keys_and_adds_ours() {
    let r = mixed(80.0);
    let v: Value = serde_json::from_str(&render(&r, Format::Json).unwrap()).unwrap();

    let s = &v["summary"];
    for key in ["total", "passed", "failed", "pass_rate", "average_score"] {
        assert!(s.get(key).is_some(), "summary.{key} missing");
    }
    assert_eq!(s["total"], 6);
    assert_eq!(s["passed"], 3);
    assert_eq!(s["failed"], 1);
    assert_eq!(s["errors"], 1);
    assert_eq!(s["skipped"], 1);
    assert_eq!(s["pass_rate"], 75.0);
    assert_eq!(
        s["duration_ms"],
        1000 + 1500 + 1000 + 1000 + 1000 + 1000 + 1000
    );
    let avg = s["average_score"].as_f64().unwrap();
    assert!(avg > 0.0 && avg <= 1.0, "{avg}");
    assert!(s["cost_usd"].as_f64().unwrap() > 0.0);

    assert_eq!(v["gate"]["min_pass_rate"], 80.0);
    assert_eq!(v["gate"]["passed"], false);
    assert_eq!(v["gate"]["exit_code"], 1);
    assert_eq!(v["run"]["id"], "0190f3a2-1234-7000-8000-00000000abcd");
    assert_eq!(v["run"]["suite"], "support");
    assert_eq!(v["run"]["status"], "completed");
    assert_eq!(v["run"]["finished_at"], "2026-01-02T03:05:09.500Z");

    let smoke = &v["by_tag"]["smoke"];
    assert_eq!(smoke["pass"], 3);
    assert_eq!(smoke["total"], 4);
    assert_eq!(smoke["failed"], 1);
    assert_eq!(smoke["pass_rate"], 75.0);
    assert_eq!(v["by_tag"]["tools"]["errors"], 1);
    assert_eq!(v["by_target"]["beta"]["pass"], 2);
    assert_eq!(v["by_target"]["alpha"]["skipped"], 1);

    let results = v["detailed_results"].as_array().unwrap();
    assert_eq!(results.len(), 6);
    for r in results {
        for key in [
            "id",
            "tags",
            "input",
            "expected",
            "actual",
            "scores",
            "pass",
            "reasoning",
            "suggestions",
        ] {
            assert!(
                r.get(key).is_some(),
                "detailed_results[].{key} missing in {r}"
            );
        }
    }
    let refund = &results[1];
    assert_eq!(refund["id"], "refund");
    assert_eq!(refund["name"], "refund");
    assert_eq!(refund["target"], "alpha");
    assert_eq!(refund["status"], "fail");
    assert_eq!(refund["pass"], false);
    assert_eq!(
        refund["input"],
        json!({"text": "I want a refund", "order": "A-1"})
    );
    assert_eq!(refund["expected"], "A polite refusal");
    assert_eq!(refund["actual"], SCRIPT);
    assert_eq!(refund["scores"]["overall"], 0.2);
    assert_eq!(refund["scores"]["judge"], 0.2);
    let reasoning = refund["reasoning"].as_str().unwrap();
    assert!(
        reasoning.starts_with("judge: The agent promised"),
        "{reasoning}"
    );
    assert!(
        !reasoning.contains("looked for hello"),
        "passing verdicts are left out: {reasoning}"
    );
    assert_eq!(
        refund["repeats"][0]["verdicts"].as_array().unwrap().len(),
        2
    );
    assert_eq!(
        refund["repeats"][0]["transcript"]["turns"][0]["tool_calls"][0]["name"],
        "lookup_order"
    );

    let greet = &results[0];
    assert_eq!(greet["pass"], true);
    assert_eq!(
        greet["input"], "Hi there",
        "from the transcript when the case is not in the snapshot"
    );
    assert_eq!(greet["expected"], Value::Null);
    assert_eq!(greet["repeats"].as_array().unwrap().len(), 2);
    assert_eq!(greet["repeats"][1]["repeat_index"], 1);
    assert!((greet["scores"]["judge"].as_f64().unwrap() - 0.9).abs() < 1e-9);
    assert!(greet["reasoning"].as_str().unwrap().contains("friendly"));

    let lookup = &results[2];
    assert_eq!(lookup["status"], "error");
    assert_eq!(lookup["reasoning"], "execution: connection refused");
    let later = &results[3];
    assert_eq!(later["status"], "skipped");
    assert_eq!(later["reasoning"], "skipped: no credentials for the judge");

    // Stable key order: the seed's summary first, then ours.
    let text = render(&r, Format::Json).unwrap();
    let pos = |k: &str| text.find(&format!("\"{k}\":")).unwrap();
    assert!(
        pos("summary") < pos("gate")
            && pos("gate") < pos("run")
            && pos("by_tag") < pos("detailed_results")
    );
    assert_eq!(text, render(&r, Format::Json).unwrap());
}

#[test]
fn json_undecided_has_nulls() {
    let r = Report::new(
        run(RunStatus::Completed),
        vec![],
        vec![later_skipped()],
        80.0,
    );
    let v: Value = serde_json::from_str(&render(&r, Format::Json).unwrap()).unwrap();
    assert_eq!(v["summary"]["pass_rate"], Value::Null);
    assert_eq!(v["summary"]["average_score"], Value::Null);
    assert_eq!(v["gate"]["exit_code"], 3);
    assert_eq!(v["gate"]["verdict"], "UNDECIDED");
    assert_eq!(v["gate"]["decided"], false);
}

/// A parsed element: name and attributes.
#[derive(Debug)]
struct Element {
    name: String,
    attrs: Vec<(String, String)>,
    text: String,
}

impl Element {
    fn attr(&self, key: &str) -> Option<&str> {
        self.attrs
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }
}

/// Every element in document order with its attributes and direct text.
fn parse_xml(xml: &str) -> Vec<Element> {
    let mut reader = Reader::from_str(xml);
    let mut out: Vec<Element> = Vec::new();
    let mut open: Vec<usize> = Vec::new();
    let element = |e: &quick_xml::events::BytesStart<'_>| {
        let attrs = e
            .attributes()
            .map(|a| {
                let a = a.unwrap();
                let key = String::from_utf8(a.key.as_ref().to_vec()).unwrap();
                (
                    key,
                    a.normalized_value(quick_xml::XmlVersion::Implicit1_0)
                        .unwrap()
                        .into_owned(),
                )
            })
            .collect();
        Element {
            name: String::from_utf8(e.name().as_ref().to_vec()).unwrap(),
            attrs,
            text: String::new(),
        }
    };
    loop {
        match reader.read_event().unwrap() {
            Event::Start(e) => {
                out.push(element(&e));
                open.push(out.len() - 1);
            }
            Event::Empty(e) => out.push(element(&e)),
            Event::End(_) => {
                open.pop();
            }
            Event::Text(t) => {
                if let Some(&i) = open.last() {
                    out[i].text.push_str(&t.decode().unwrap());
                }
            }
            Event::CData(t) => {
                if let Some(&i) = open.last() {
                    out[i].text.push_str(&t.decode().unwrap());
                }
            }
            Event::GeneralRef(r) => {
                let c = match r.resolve_char_ref().unwrap() {
                    Some(c) => c.to_string(),
                    None => match &*r.decode().unwrap() {
                        "lt" => "<".into(),
                        "gt" => ">".into(),
                        "amp" => "&".into(),
                        "quot" => "\"".into(),
                        "apos" => "'".into(),
                        other => panic!("unknown entity {other}"),
                    },
                };
                if let Some(&i) = open.last() {
                    out[i].text.push_str(&c);
                }
            }
            Event::Eof => break,
            _ => {}
        }
    }
    assert!(open.is_empty(), "unclosed elements");
    out
}

#[test]
fn junit_parses_with_suites_cases_and_statuses() {
    let r = mixed(80.0);
    let xml = render(&r, Format::Junit).unwrap();
    let els = parse_xml(&xml);
    let named = |n: &str| els.iter().filter(|e| e.name == n).collect::<Vec<_>>();

    let root = named("testsuites");
    assert_eq!(root.len(), 1);
    assert_eq!(root[0].attr("tests"), Some("6"));
    assert_eq!(
        root[0].attr("skipped"),
        None,
        "junit-10.xsd has no testsuites@skipped"
    );
    assert_eq!(root[0].attr("failures"), Some("1"));
    assert_eq!(root[0].attr("errors"), Some("1"));

    let suites = named("testsuite");
    assert_eq!(suites.len(), 2);
    assert_eq!(suites[0].attr("name"), Some("support/alpha"));
    assert_eq!(suites[0].attr("tests"), Some("4"));
    assert_eq!(suites[0].attr("failures"), Some("1"));
    assert_eq!(suites[0].attr("errors"), Some("1"));
    assert_eq!(suites[0].attr("skipped"), Some("1"));
    assert_eq!(suites[1].attr("name"), Some("support/beta"));
    assert_eq!(suites[1].attr("tests"), Some("2"));
    assert_eq!(suites[1].attr("failures"), Some("0"));

    let cases = named("testcase");
    assert_eq!(cases.len(), 6);
    assert!(cases.iter().all(|c| c.attr("classname") == Some("support")));
    let ids: Vec<_> = cases.iter().map(|c| c.attr("name").unwrap()).collect();
    assert_eq!(
        ids,
        [
            "alpha/greet",
            "alpha/refund",
            "alpha/lookup",
            "alpha/later",
            "beta/greet",
            "beta/refund"
        ]
    );
    assert_eq!(cases[0].attr("time"), Some("2.500"), "summed over repeats");

    let failures = named("failure");
    assert_eq!(failures.len(), 1);
    let message = failures[0].attr("message").unwrap();
    assert!(
        message.starts_with("judge [score 0.20, threshold 0.70]: The agent promised <script>"),
        "{message}"
    );
    let raw = xml.split("<failure message=\"").nth(1).unwrap();
    let raw = &raw[..raw.find('"').unwrap()];
    assert!(
        !raw.contains('\n') && !raw.contains("&#10;") && !raw.contains("&#xA;"),
        "{raw}"
    );
    assert_eq!(failures[0].attr("type"), Some("judge"));
    assert!(
        failures[0]
            .text
            .contains("fail judge [score 0.20, threshold 0.70]:"),
        "{}",
        failures[0].text
    );
    assert!(failures[0].text.contains("Second line of reasoning."));

    let errors = named("error");
    assert_eq!(errors.len(), 1);
    assert_eq!(
        errors[0].attr("message"),
        Some("execution: connection refused")
    );

    let skipped = named("skipped");
    assert_eq!(skipped.len(), 1);
    assert_eq!(
        skipped[0].attr("message"),
        Some("no credentials for the judge")
    );

    let outs = named("system-out");
    assert_eq!(outs.len(), 6);
    let refund_out = &outs[1].text;
    assert!(refund_out.contains("user: I want a refund"), "{refund_out}");
    assert!(
        refund_out.contains("tool: lookup_order({\"order\":\"A-1\"}) -> {\"status\":\"shipped\"}"),
        "{refund_out}"
    );
    assert!(
        refund_out.contains(&format!("assistant: {SCRIPT}")),
        "{refund_out}"
    );
    assert!(
        outs[2]
            .text
            .contains("target error (transient): connection refused")
    );
    assert!(outs[0].text.contains("== repeat 2/2"));
}

#[test]
fn junit_validates_against_jenkins_xsd() {
    xsd::assert_valid_junit(&render(&mixed(80.0), Format::Junit).unwrap());
}

#[test]
fn junit_round_trips_through_quick_junit() {
    let xml = render(&mixed(80.0), Format::Junit).unwrap();
    assert!(xml.starts_with("<?xml"));
    // The raw agent text is escaped in the XML itself.
    assert!(!xml.contains("<script>"));
    assert!(xml.contains("&lt;script&gt;"));
}

#[test]
fn markdown_has_tables_and_escapes() {
    let md = render(&mixed(80.0), Format::Markdown).unwrap();
    assert!(md.starts_with("# gavel: FAIL — support\n"), "{md}");
    assert!(md.contains(
        "| Total | Passed | Passed with skipped checks | Failed | Errors | Skipped | Not run | Pass rate | Average score | Cost | Gate |"
    ));
    assert!(md.contains("| 6 | 3 | 0 | 1 | 1 | 1 | 0 | 75% |"), "{md}");
    assert!(md.contains("FAIL (min 80%) |"));
    assert!(md.contains("## By tag"));
    assert!(
        md.contains("| billing | 2 | 1 | 0 | 1 | 0 | 0 | 50% |"),
        "{md}"
    );
    assert!(md.contains("## By target"));
    assert!(
        md.contains("| alpha | 4 | 1 | 0 | 1 | 1 | 1 | 50% |"),
        "{md}"
    );
    assert!(md.contains("## Failures and errors"));
    assert!(md.contains("### FAIL refund · alpha"));
    assert!(md.contains("### ERROR lookup · alpha"));
    assert!(md.contains("connection refused"));
    assert!(md.contains("## Skipped"));
    assert!(md.contains("- later · alpha: no credentials for the judge"));

    // Every table row has exactly as many unescaped pipes as its header.
    let judge_row = md.lines().find(|l| l.starts_with("| 1 | judge |")).unwrap();
    let bars = judge_row.replace("\\|", "").matches('|').count();
    assert_eq!(bars, 7, "{judge_row}");
    assert!(judge_row.contains("\\| piped"), "{judge_row}");
    assert!(judge_row.contains("&lt;script&gt;"), "{judge_row}");
    assert!(!md.contains("<script>"));
    assert!(!md.contains("<b>"));
    // The long reason is quoted in full, line by line.
    assert!(md.contains("> **judge** (repeat 1):"));
    assert!(md.contains("> Second line of reasoning."), "{md}");
}

#[test]
fn html_is_self_contained_and_escapes_agent_text() {
    let html = render(&mixed(80.0), Format::Html).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert!(!html.contains("<script"), "agent text must be escaped");
    assert!(!html.contains("<b>"));
    assert!(html.contains("&lt;script&gt;alert(1)&lt;"));
    assert!(html.contains("&lt;b&gt;bold"));
    assert!(
        !html.contains("src=\"http") && !html.contains("href=\"http") && !html.contains("<link")
    );
    assert!(html.contains("<style>"));
    assert_eq!(html.matches("<details").count(), 6);
    assert!(html.contains("<details class=\"outcome fail\" open>"));
    assert!(html.contains("lookup_order"));
    assert!(html.contains("connection refused"));
    assert!(html.contains("Must not promise a refund"));
    assert!(html.contains("0.70"), "thresholds shown");
    assert!(html.contains("75%"));
    assert!(html.contains("By target"));
}

#[test]
fn html_escapes_ids_and_tags_too() {
    let mut e = exec(
        "<img src=x onerror=alert(1)>",
        "t\"><i>",
        0,
        &["<u>tag</u>"],
        vec![turn("<hr>", "<iframe>")],
        vec![Verdict::new(
            "<em>check</em>",
            gavel_core::CheckKind::Contains,
            Status::Fail,
            "<svg onload=alert(1)>",
        )],
    );
    e.case_name = "<h1>name</h1>".into();
    let r = Report::new(run(RunStatus::Completed), vec![], vec![e], 80.0);
    let html = render(&r, Format::Html).unwrap();
    for raw in [
        "<img", "<i>", "<u>", "<hr>", "<iframe", "<em>", "<svg", "<h1>name",
    ] {
        assert!(!html.contains(raw), "{raw} appears unescaped");
    }
    assert!(html.contains("&lt;img src=x onerror=alert(1)&gt;"));
}

#[test]
fn terminal_plain_and_colored() {
    let r = mixed(80.0);
    let plain = terminal(&r, false);
    assert!(!plain.contains('\x1b'), "{plain}");
    let first = plain.lines().next().unwrap();
    assert_eq!(
        first,
        "gavel run 0190f3a2-1234-7000-8000-00000000abcd · suite support · completed · 1m 04s"
    );
    assert!(plain.contains("By tag"));
    assert!(plain.contains("billing"));
    assert!(plain.contains("By target"));
    assert!(plain.contains("Failures"));
    assert!(
        plain.contains(
            "  FAIL refund [alpha]\n    - judge [score 0.20, threshold 0.70]: The agent promised"
        ),
        "{plain}"
    );
    assert!(
        plain.contains("  ERROR lookup [alpha]\n    - execution: connection refused"),
        "{plain}"
    );
    assert!(plain.contains("SKIP later [alpha]: no credentials for the judge"));
    let last = plain.lines().last().unwrap();
    assert_eq!(
        last,
        "FAIL: pass rate 75% (min 80%), 3 passed, 1 failed, 1 errors, 1 skipped"
    );
    // Reasons are one line and cut.
    let reason = plain
        .lines()
        .find(|l| l.starts_with("    - judge ["))
        .unwrap();
    assert!(reason.chars().count() < 360, "{reason}");
    assert!(reason.contains('…'));

    let colored = terminal(&r, true);
    assert!(colored.contains("\x1b[31mFAIL\x1b[0m"));
    assert!(colored.contains("\x1b[33mERROR\x1b[0m"));

    // One target: no by-target table; no tags: no by-tag table.
    let one = Report::new(
        run(RunStatus::Completed),
        vec![],
        vec![exec("a", "t", 0, &[], vec![], vec![contains(Status::Pass)])],
        80.0,
    );
    let text = terminal(&one, false);
    assert!(!text.contains("By target") && !text.contains("By tag"));
    assert!(
        text.ends_with("PASS: pass rate 100% (min 80%), 1 passed, 0 failed, 0 errors, 0 skipped\n"),
        "{text}"
    );
}

#[test]
fn terminal_repeats_and_interruptions() {
    let fails = vec![
        exec("flaky", "t", 0, &[], vec![], vec![contains(Status::Pass)]),
        exec("flaky", "t", 1, &[], vec![], vec![contains(Status::Fail)]),
    ];
    let mut run = run(RunStatus::Interrupted);
    run.finished_at = None;
    let r = Report::new(run, vec![], fails, 80.0);
    let text = terminal(&r, false);
    assert!(text.contains("interrupted"), "{text}");
    assert!(text.contains("partial"));
    assert!(text.contains("FAIL flaky [t] (repeat 2/2)"), "{text}");
    assert!(!text.contains("(repeat 1/2)"));
    let md = render(&r, Format::Markdown).unwrap();
    assert!(md.contains("interrupted"));
}

#[test]
fn terminal_errors_with_gate_passed() {
    let r = mixed(70.0);
    let last = terminal(&r, false).lines().last().unwrap().to_owned();
    assert!(last.starts_with("ERROR: pass rate 75% (min 70%)"), "{last}");
}

#[test]
fn write_creates_parent_dirs_for_every_format() {
    let dir = tempfile::tempdir().unwrap();
    let r = mixed(80.0);
    for name in [
        "a/b/report.json",
        "a/junit.xml",
        "summary.md",
        "x/report.html",
    ] {
        let path = dir.path().join(name);
        gavel_report::write(&r, &path).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text, render(&r, Format::from_path(&path).unwrap()).unwrap());
    }
    let leftovers: Vec<_> = std::fs::read_dir(dir.path().join("a"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert!(
        leftovers
            .iter()
            .all(|n| !n.to_string_lossy().ends_with(".tmp")),
        "{leftovers:?}"
    );
    let err = gavel_report::write(&r, &dir.path().join("r.pdf")).unwrap_err();
    assert!(err.to_string().contains("r.pdf"));
}

#[test]
fn every_format_renders_empty_and_undecided_runs() {
    let empty = Report::new(run(RunStatus::Completed), vec![], vec![], 80.0);
    let skipped = Report::new(
        run(RunStatus::Completed),
        vec![],
        vec![later_skipped()],
        80.0,
    );
    for r in [&empty, &skipped] {
        for f in Format::ALL {
            let text = render(r, f).unwrap();
            assert!(!text.is_empty(), "{f}");
        }
        assert!(
            render(r, Format::Markdown)
                .unwrap()
                .contains("No case was decided")
        );
        assert!(
            render(r, Format::Html)
                .unwrap()
                .contains("no case was decided")
        );
        assert!(
            terminal(r, false)
                .lines()
                .last()
                .unwrap()
                .starts_with("UNDECIDED: no case was decided")
        );
    }
    assert!(
        render(&empty, Format::Html)
            .unwrap()
            .contains("No outcome was recorded.")
    );
    // JUnit counts the undecided gate as a failure, so a CI test tab agrees
    // with the exit code.
    let xml = render(&empty, Format::Junit).unwrap();
    let elements = parse_xml(&xml);
    let cases: Vec<&Element> = elements.iter().filter(|e| e.name == "testcase").collect();
    assert_eq!(cases.len(), 1, "{xml}");
    assert_eq!(cases[0].attr("name"), Some("gate: undecided"));
    assert!(elements.iter().any(|e| e.name == "failure"), "{xml}");
}

#[test]
fn junit_names_a_failed_calibration_and_required_judges_as_failed_test_cases() {
    let passing = Report::new(
        run(RunStatus::Completed),
        cases(),
        vec![greet("a", 0, 1.0)],
        80.0,
    );
    let xml = render(&passing, Format::Junit).unwrap();
    assert!(!xml.contains("/gate"), "a passing gate adds nothing: {xml}");
    let mut gated = passing.clone();
    gated.gate = gated
        .gate
        .clone()
        .with_calibration(gavel_report::CalibrationGate {
            id: "cal-7".into(),
            passed: false,
            reason: Some("not fit to gate: coverage 49.5%".into()),
        });
    assert_eq!(gated.gate.exit_code(), 1);
    let xml = render(&gated, Format::Junit).unwrap();
    let elements = parse_xml(&xml);
    let failure = elements
        .iter()
        .find(|e| e.name == "failure")
        .unwrap_or_else(|| panic!("{xml}"));
    assert_eq!(failure.attr("type"), Some("calibration"));
    let message = failure.attr("message").unwrap_or_default();
    assert!(
        message.contains("cal-7") && message.contains("coverage 49.5%"),
        "{message}"
    );
    assert_eq!(
        gated
            .gate
            .failures()
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>(),
        ["judge calibration cal-7: not fit to gate: coverage 49.5%"]
    );
}

#[test]
fn repeats_and_judge_noise_are_tabled_in_terminal_markdown_and_json() {
    // greet on alpha: two repeats scoring 1.0 and 0.6 (one fails); the first
    // repeat's judge was re-judged twice: 0.8 (pass) and 0.4 (a flip to fail).
    let mut first = greet("alpha", 0, 1.0);
    first.verdicts[1].evidence.rejudged = serde_json::from_value(json!([
        {"status": "pass", "score": 0.8},
        {"status": "fail", "score": 0.4},
    ]))
    .unwrap();
    let executions = vec![first, greet("alpha", 1, 0.6)];
    let r = Report::new(run(RunStatus::Completed), vec![], executions, 80.0);

    let text = terminal(&r, false);
    assert!(text.contains("Repeats and judge noise"), "{text}");
    let row = text.lines().find(|l| l.contains("greet")).unwrap();
    // Repeat scores 1.0 and 0.6: mean 0.80, stddev 0.28; pass rate 50%, pass@2
    // 100%, pass^2 0%. The judge's own: 1.0, 0.8, 0.4, stddev 0.31, 1 flip in 2.
    for cell in ["50%", "0.80", "0.28", "100%", "0%", "0.31", "1/2"] {
        assert!(row.contains(cell), "{cell} in {row}");
    }

    let md = render(&r, Format::Markdown).unwrap();
    assert!(md.contains("## Repeats and judge noise"), "{md}");
    assert!(
        md.contains("| greet | alpha | 2 | 50% | 0.80 | 0.28 | 100% | 0% | 0.31 | 1/2 |"),
        "{md}"
    );

    let json: Value = serde_json::from_str(&render(&r, Format::Json).unwrap()).unwrap();
    let noise = &json["detailed_results"][0]["judge_noise"];
    assert_eq!(noise["checks"][0]["judgements"], 3, "{noise:#}");
    assert_eq!(noise["checks"][0]["flips"], 1);
    assert_eq!(noise["flip_rate"], 0.5);
    assert_eq!(json["detailed_results"][0]["repeat_stats"]["n"], 2);
}

#[test]
fn robustness_cases_pass_on_mean_and_spread_over_every_input() {
    // Input 0 and one variant, two repeats each: execution r * 2 + v.
    let case = |max_stddev: f64| -> Case {
        serde_json::from_value(json!({
            "id": "greet",
            "input": "Hi there",
            "variants": ["Hello!"],
            "max_stddev": max_stddev,
            "min_mean": 0.8,
        }))
        .unwrap()
    };
    // Scores: input 1.0, 0.9; variant 0.6 (a failing run), 0.9.
    let executions = || {
        vec![
            greet("alpha", 0, 1.0),
            greet("alpha", 1, 0.6),
            greet("alpha", 2, 0.9),
            greet("alpha", 3, 0.9),
        ]
    };
    let r = Report::new(
        run(RunStatus::Completed),
        vec![case(0.2)],
        executions(),
        80.0,
    );
    // Mean 0.85 ≥ 0.8 and stddev 0.17 ≤ 0.2: it passes despite the failing run.
    assert_eq!(r.outcomes[0].status, Status::Pass);
    assert_eq!(r.summary.overall.passed, 1);
    let json: Value = serde_json::from_str(&render(&r, Format::Json).unwrap()).unwrap();
    let rb = &json["detailed_results"][0]["robustness"];
    assert!((rb["mean"].as_f64().unwrap() - 0.85).abs() < 1e-9, "{rb:#}");
    assert!((rb["per_input"][0]["mean"].as_f64().unwrap() - 0.95).abs() < 1e-9);
    assert!((rb["per_input"][1]["mean"].as_f64().unwrap() - 0.75).abs() < 1e-9);
    let text = terminal(&r, false);
    assert!(
        text.contains("Robustness (variants of the input)"),
        "{text}"
    );
    let row = text.lines().find(|l| l.contains("input 0.95")).unwrap();
    assert!(
        row.contains("0.85 (0.80)") && row.contains("0.17 (0.20)"),
        "{row}"
    );
    assert!(row.contains("variant 1 0.75"), "{row}");
    let md = render(&r, Format::Markdown).unwrap();
    assert!(
        md.contains(
            "| greet | alpha | pass | 0.85 (0.80) | 0.17 (0.20) | input 0.95, variant 1 0.75 |"
        ),
        "{md}"
    );

    // A tighter ceiling fails it on spread alone.
    let r = Report::new(
        run(RunStatus::Completed),
        vec![case(0.1)],
        executions(),
        80.0,
    );
    assert_eq!(r.outcomes[0].status, Status::Fail);
}

#[test]
fn compare_decides_robustness_cases_by_mean_and_spread() {
    let case: Case = serde_json::from_value(json!({
        "id": "greet",
        "input": "Hi there",
        "variants": ["Hello!"],
        "max_stddev": 0.3,
        "min_mean": 0.7,
    }))
    .unwrap();
    let a = vec![greet("alpha", 0, 1.0), greet("alpha", 1, 0.9)];
    // One run under the judge's threshold: the case still passes on its mean.
    let b = vec![greet("alpha", 0, 1.0), greet("alpha", 1, 0.6)];
    let cases = [case];
    let c = gavel_report::Comparison::new(
        &run(RunStatus::Completed),
        a.clone(),
        &cases,
        &run(RunStatus::Completed),
        b.clone(),
        &cases,
    );
    assert_eq!(c.regressions, 0, "{}", c.text());
    // Without the case snapshot it is judged run by run: a regression.
    let c = gavel_report::Comparison::new(
        &run(RunStatus::Completed),
        a,
        &[],
        &run(RunStatus::Completed),
        b,
        &[],
    );
    assert_eq!(c.regressions, 1, "{}", c.text());
}

/// A case with only an id and an input.
fn bare_case(id: &str) -> Case {
    serde_json::from_value(json!({"id": id, "input": "hi"})).unwrap()
}

/// The report folded as the store gives a run: each case of `snapshot`, then
/// its executions (`executions` come in snapshot order), then the executions
/// whose case is not in the snapshot.
fn folded(run: RunRecord, snapshot: &[Case], executions: &[Execution], detail: Detail) -> Report {
    let mut builder = ReportBuilder::new(run, 80.0, detail);
    let mut rest = executions.iter().cloned().peekable();
    for case in snapshot {
        builder.push_case(case.clone());
        while let Some(e) = rest.next_if(|e| e.case_id == case.id) {
            builder.push_execution(e);
        }
    }
    for e in rest {
        builder.push_execution(e);
    }
    builder.finish()
}

/// A report that keeps only what its summary lists prints what the full report
/// prints, with the same counts and gate, and refuses to be rendered to a file.
#[test]
fn a_summary_report_prints_what_the_full_report_prints() {
    let mut executions = vec![
        greet("alpha", 0, 1.0),
        greet("alpha", 1, 0.8),
        refund_fail(),
        lookup_error(),
        later_skipped(),
    ];
    for i in 0..40 {
        let case = format!("failing-{i}");
        let verdicts = vec![contains(Status::Fail), judge(0.1, "wrong")];
        executions.push(exec(&case, "alpha", 0, &["bulk"], vec![], verdicts));
    }
    for i in 0..35 {
        let mut e = exec(&format!("skipped-{i}"), "beta", 0, &[], vec![], vec![]);
        e.reason = Some("no judge".into());
        executions.push(e);
    }
    for i in 0..300 {
        let verdicts = vec![contains(Status::Pass), judge(0.9, "fine")];
        let turns = vec![turn("Hi", "hello")];
        executions.push(exec(
            &format!("passing-{i}"),
            "beta",
            0,
            &["bulk"],
            turns,
            verdicts,
        ));
    }
    // In the order of the executions; skipped and passing cases are not saved.
    let mut snapshot = vec![bare_case("greet")];
    snapshot.extend(cases());
    snapshot.extend(["lookup", "later", "never"].map(bare_case));
    snapshot.extend((0..40).map(|i| bare_case(&format!("failing-{i}"))));
    for status in [RunStatus::Completed, RunStatus::Interrupted] {
        let mut run = run(status);
        run.planned = Some(executions.len() as u64 + 3);
        let full = Report::new(run.clone(), snapshot.clone(), executions.clone(), 80.0);
        let lean = folded(run, &snapshot, &executions, Detail::Summary);
        for color in [false, true] {
            assert_eq!(terminal(&lean, color), terminal(&full, color), "{status:?}");
        }
        assert_eq!(lean.summary, full.summary);
        assert_eq!(lean.gate, full.gate);
        assert_eq!(lean.transport, full.transport);
        assert_eq!(lean.execution_ms(), full.execution_ms());
        // 30 failures, 30 skips, and greet's repeats for the spread table.
        assert_eq!(full.outcomes.len(), 379);
        assert_eq!(lean.outcomes.len(), 61);
        assert_eq!(lean.detail(), Detail::Summary);
        assert!(matches!(
            render(&lean, Format::Json),
            Err(gavel_report::ReportError::Partial)
        ));
    }
}

/// Folded case by case, a summary report finds the cases that never ran as
/// they pass, and holds only the cases of the outcomes it keeps; a full report
/// folded so is the one `Report::new` builds.
#[test]
fn a_summary_report_folded_case_by_case_holds_only_the_cases_it_keeps() {
    let mut snapshot = Vec::new();
    let mut executions = Vec::new();
    for i in 0..200 {
        let id = format!("case-{i:03}");
        snapshot.push(bare_case(&id));
        let fails = i % 5 == 0;
        for target in ["alpha", "beta"] {
            let status = if fails && target == "beta" {
                Status::Fail
            } else {
                Status::Pass
            };
            let verdicts = vec![contains(status), judge(0.9, "fine")];
            executions.push(exec(&id, target, 0, &["bulk"], vec![], verdicts));
        }
        if i == 7 || i == 120 {
            snapshot.push(bare_case(&format!("never-{i}")));
        }
    }
    snapshot.push(bare_case("never-last"));
    let unsaved = vec![contains(Status::Fail)];
    executions.push(exec("unsaved", "alpha", 0, &[], vec![], unsaved));

    let mut run = run(RunStatus::Interrupted);
    run.planned = Some(executions.len() as u64 + 6);
    let full = Report::new(run.clone(), snapshot.clone(), executions.clone(), 80.0);
    assert_eq!(
        folded(run.clone(), &snapshot, &executions, Detail::Full),
        full
    );

    let lean = folded(run, &snapshot, &executions, Detail::Summary);
    assert_eq!(lean.summary, full.summary);
    assert_eq!(lean.gate, full.gate);
    assert_eq!(terminal(&lean, false), terminal(&full, false));
    let unfinished = lean.gate.unfinished.as_ref().unwrap();
    assert_eq!(
        unfinished.unrun_cases,
        ["never-7", "never-120", "never-last"]
    );
    assert_eq!(unfinished.unrun, Some(6));

    // The first 30 failures, the one of a case not in the snapshot among them.
    assert_eq!(lean.outcomes.len(), 30);
    for o in &lean.outcomes {
        let same = full
            .outcomes
            .iter()
            .find(|f| f.case_id == o.case_id && f.target == o.target);
        assert_eq!(Some(o), same);
        assert_eq!(lean.case(&o.case_id), full.case(&o.case_id));
    }
    let kept: Vec<&str> = lean
        .outcomes
        .iter()
        .map(|o| o.case_id.as_str())
        .filter(|id| *id != "unsaved")
        .collect();
    let held: Vec<&str> = lean.cases.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(held, kept);
    assert_eq!(full.cases, snapshot);
}
