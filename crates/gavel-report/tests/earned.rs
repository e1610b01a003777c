//! Every PASS is earned: what did not run fails the gate, passes with skipped
//! checks are shown apart, and scores print on their own scale.
#![allow(clippy::unwrap_used)]

mod xsd;

use gavel_core::CheckKind;
use gavel_core::{Case, Execution, RunRecord, RunStatus, Status, Transcript, Verdict};
use gavel_report::{
    EXIT_ERRORS, EXIT_GATE_FAILED, EXIT_PASSED, Format, Gate, Report, UnfinishedReason, render,
    terminal,
};
use serde_json::{Value, json};

fn run(status: RunStatus, planned: Option<u64>) -> RunRecord {
    RunRecord {
        id: "0190f3a2-1234-7000-8000-00000000beef".into(),
        suite: "support".into(),
        status,
        started_at: "2026-01-02T03:04:05.000Z".into(),
        finished_at: None,
        config: Value::Null,
        planned,
    }
}

fn case(id: &str) -> Case {
    serde_json::from_value(json!({"id": id, "input": "hi"})).unwrap()
}

/// The cases `c0`..`c{n-1}`, as a run saves them.
fn cases(n: usize) -> Vec<Case> {
    (0..n).map(|i| case(&format!("c{i}"))).collect()
}

fn exec(case: &str, verdicts: Vec<Verdict>) -> Execution {
    let mut e = Execution {
        case_id: case.into(),
        case_name: case.into(),
        target: "bot".into(),
        repeat_index: 0,
        tags: vec![],
        status: Status::Skipped,
        score: None,
        transcript: Transcript::default(),
        verdicts,
        reason: None,
        started_at: "2026-01-02T03:04:06.000Z".into(),
        duration_ms: 10,
    };
    e.settle();
    e
}

fn passing(case: &str) -> Execution {
    exec(
        case,
        vec![Verdict::new(
            "contains",
            gavel_core::CheckKind::Contains,
            Status::Pass,
            "found",
        )],
    )
}

fn failing(case: &str) -> Execution {
    exec(
        case,
        vec![Verdict::new(
            "contains",
            gavel_core::CheckKind::Contains,
            Status::Fail,
            "missing",
        )],
    )
}

fn json_of(r: &Report) -> Value {
    serde_json::from_str(&render(r, Format::Json).unwrap()).unwrap()
}

/// A `--max-cost` stop after 3 of 8 cases, all passing.
fn budget_stopped() -> Report {
    let ran = vec![passing("c0"), passing("c1"), passing("c2")];
    Report::new(run(RunStatus::BudgetStopped, Some(8)), cases(8), ran, 80.0)
}

#[test]
fn a_budget_stop_fails_the_gate_and_names_what_did_not_run() {
    let r = budget_stopped();
    let g = &r.gate;
    assert_eq!(g.pass_rate, Some(100.0));
    assert!(!g.passed);
    assert_eq!((g.exit_code(), g.word()), (EXIT_ERRORS, "INCOMPLETE"));
    let u = g.unfinished.as_ref().unwrap();
    assert_eq!(u.reason, UnfinishedReason::BudgetStopped);
    assert_eq!((u.planned, u.recorded, u.unrun), (Some(8), 3, Some(5)));
    assert_eq!(u.unrun_cases, ["c3", "c4", "c5", "c6", "c7"]);

    let text = terminal(&r, false);
    let last = text.lines().last().unwrap();
    assert!(
        last.starts_with("INCOMPLETE: pass rate 100% (min 80%)"),
        "{last}"
    );
    assert!(
        last.contains("5 of 8 planned executions did not run (budget stopped"),
        "{last}"
    );
    assert!(
        text.contains("Not run\n  5 of 8 planned executions did not run"),
        "{text}"
    );
    assert!(
        text.contains("cases with no execution: c3, c4, c5, c6, c7"),
        "{text}"
    );

    let md = render(&r, Format::Markdown).unwrap();
    assert!(md.starts_with("# gavel: INCOMPLETE — support"), "{md}");
    assert!(md.contains("| 3 | 3 | 0 | 0 | 0 | 0 | 5 | 100% |"), "{md}");
    assert!(md.contains("## Not run\n\n5 of 8 planned executions did not run"));
    assert!(md.contains("Cases with no execution: c3, c4, c5, c6, c7"));

    let doc = json_of(&r);
    assert_eq!(doc["gate"]["exit_code"], json!(3));
    assert_eq!(doc["gate"]["passed"], json!(false));
    assert_eq!(doc["gate"]["verdict"], json!("INCOMPLETE"));
    assert_eq!(doc["gate"]["unfinished"]["reason"], json!("budget-stopped"));
    assert_eq!(
        doc["gate"]["unfinished"]["unrun_cases"],
        json!(["c3", "c4", "c5", "c6", "c7"])
    );
    assert_eq!(
        (&doc["summary"]["planned"], &doc["summary"]["not_run"]),
        (&json!(8), &json!(5))
    );

    let xml = render(&r, Format::Junit).unwrap();
    let not_run = xml.split("name=\"support/not run\"").nth(1).unwrap();
    assert_eq!(not_run.matches("<testcase").count(), 5, "{xml}");
    assert_eq!(not_run.matches("type=\"not-run\"").count(), 5, "{xml}");
    assert!(not_run.contains("name=\"c3\""));
    assert!(xml.contains("errors=\"5\""), "{xml}");

    xsd::assert_valid_junit(&xml);

    let html = render(&r, Format::Html).unwrap();
    assert!(html.contains("<h2>Not run</h2>"));
    assert!(html.contains("5 of 8 planned executions did not run"));
    assert!(html.contains("<code>c7</code>"));
    assert!(html.contains("(exit code 3)"));
}

#[test]
fn crashed_interrupted_failed_and_short_runs_never_pass() {
    // Killed at 1 of 3: the status still says running; no plan recorded.
    let crashed = Report::new(
        run(RunStatus::Running, None),
        cases(3),
        vec![passing("c0")],
        80.0,
    );
    let u = crashed.gate.unfinished.as_ref().unwrap();
    assert_eq!((u.reason, u.unrun), (UnfinishedReason::Crashed, None));
    assert_eq!(u.unrun_cases, ["c1", "c2"]);
    assert_eq!(crashed.gate.exit_code(), EXIT_ERRORS);
    assert_eq!(json_of(&crashed)["gate"]["exit_code"], json!(3));
    assert_eq!(json_of(&crashed)["summary"]["not_run"], Value::Null);
    let last = terminal(&crashed, false).lines().last().unwrap().to_owned();
    assert!(last.contains("still running"), "{last}");
    assert!(last.contains("2 of its cases did not run"), "{last}");

    // Interrupted after recording everything planned: still not a pass.
    let interrupted = Report::new(
        run(RunStatus::Interrupted, Some(1)),
        cases(1),
        vec![passing("c0")],
        80.0,
    );
    assert_eq!(interrupted.gate.exit_code(), EXIT_ERRORS);
    assert!(
        interrupted
            .gate
            .unfinished
            .as_ref()
            .unwrap()
            .sentence()
            .contains("all 1 planned executions were recorded")
    );

    let failed = Report::new(run(RunStatus::Failed, None), vec![], vec![], 80.0);
    assert_eq!(failed.gate.word(), "INCOMPLETE");
    assert_eq!(failed.gate.exit_code(), EXIT_ERRORS);

    // Completed but short of its plan (a distributed run that lost work).
    let short = Report::new(
        run(RunStatus::Completed, Some(4)),
        cases(2),
        vec![passing("c0"), passing("c1")],
        80.0,
    );
    let u = short.gate.unfinished.as_ref().unwrap();
    assert_eq!(
        (u.reason, u.unrun, u.unrun_cases.len()),
        (UnfinishedReason::Incomplete, Some(2), 0)
    );
    assert_eq!(short.gate.exit_code(), EXIT_ERRORS);
    let xml = render(&short, Format::Junit).unwrap();
    let not_run = xml.split("name=\"support/not run\"").nth(1).unwrap();
    assert!(
        not_run.contains("<testcase name=\"run\""),
        "one case for the run: {xml}"
    );

    // Completed with its whole plan recorded: passes as before.
    let done = Report::new(
        run(RunStatus::Completed, Some(2)),
        cases(2),
        vec![passing("c0"), passing("c1")],
        80.0,
    );
    assert!(done.gate.unfinished.is_none() && done.gate.passed);
    assert_eq!(done.gate.exit_code(), EXIT_PASSED);
    assert_eq!(json_of(&done)["summary"]["not_run"], json!(0));

    // A pass rate under the minimum still says FAIL (1), unfinished or not.
    let low = Report::new(
        run(RunStatus::BudgetStopped, Some(5)),
        cases(5),
        vec![passing("c0"), failing("c1")],
        80.0,
    );
    assert_eq!(
        (low.gate.exit_code(), low.gate.word()),
        (EXIT_GATE_FAILED, "FAIL")
    );
}

#[test]
fn gating_on_a_subset_keeps_what_did_not_run() {
    let r = budget_stopped();
    let gate = Gate::new(&r.summary.overall, 50.0, r.gate.unfinished.clone());
    assert_eq!(gate.exit_code(), EXIT_ERRORS);
    assert_eq!(
        Gate::new(&r.summary.overall, 50.0, None).exit_code(),
        EXIT_PASSED
    );
}

#[test]
fn passes_with_skipped_checks_are_counted_and_listed_apart() {
    let skipped_judge = Verdict::new(
        "judge \"polite\"",
        gavel_core::CheckKind::Judge,
        Status::Skipped,
        "no judge model configured",
    );
    let with_skip = exec(
        "c1",
        vec![
            Verdict::new(
                "contains",
                gavel_core::CheckKind::Contains,
                Status::Pass,
                "found",
            ),
            skipped_judge,
        ],
    );
    assert_eq!(with_skip.status, Status::Pass);
    let r = Report::new(
        run(RunStatus::Completed, Some(2)),
        cases(2),
        vec![passing("c0"), with_skip],
        80.0,
    );
    assert_eq!(r.summary.overall.passed_with_skips, 1);
    assert_eq!(r.gate.exit_code(), EXIT_PASSED, "a pass is still a pass");

    let text = terminal(&r, false);
    assert!(text.contains("Passed w/ skips"), "{text}");
    assert!(
        text.contains(
            "Passed with skipped checks\n  PASS c1 [bot]: judge \"polite\": no judge model configured"
        ),
        "{text}"
    );
    let last = text.lines().last().unwrap();
    assert!(
        last.contains("1 passed, 1 passed with skipped checks, 0 failed"),
        "{last}"
    );

    let md = render(&r, Format::Markdown).unwrap();
    assert!(md.contains("| 2 | 1 | 1 | 0 | 0 | 0 | 0 | 100% |"), "{md}");
    assert!(md.contains("## Passed with skipped checks\n\n- c1 · bot: judge \"polite\": no judge model configured"), "{md}");

    let doc = json_of(&r);
    assert_eq!(doc["summary"]["passed"], json!(2));
    assert_eq!(doc["summary"]["passed_with_skipped_checks"], json!(1));

    let xml = render(&r, Format::Junit).unwrap();
    assert!(
        xml.contains(
            "<system-out>skipped checks: judge &quot;polite&quot;: no judge model configured\n"
        ) || xml
            .contains("<system-out>skipped checks: judge \"polite\": no judge model configured\n"),
        "{xml}"
    );
    xsd::assert_valid_junit(&xml);

    let html = render(&r, Format::Html).unwrap();
    assert!(html.contains("<span class=\"badge skipped\">checks skipped</span>"));
    assert!(
        html.contains(
            "Passed with skipped checks: judge &quot;polite&quot;: no judge model configured"
        ),
        "{html}"
    );
}

/// A pointwise judge verdict as gavel-checks records it: normalised score and
/// threshold, the scale in the evidence.
fn judged(scale: &str, status: Status, score: f64, threshold: f64) -> Verdict {
    Verdict::new("judge", gavel_core::CheckKind::Judge, status, "terse")
        .with_score(score, Some(threshold))
        .with_evidence(json!({"scale": scale}))
}

#[test]
fn scores_print_on_their_own_scale_beside_the_normalised_value() {
    let r = Report::new(
        run(RunStatus::Completed, Some(3)),
        cases(3),
        vec![
            exec("c0", vec![judged("1-5", Status::Fail, 0.5, 0.75)]),
            exec("c1", vec![judged("0-10", Status::Fail, 0.6, 0.7)]),
            exec("c2", vec![judged("binary", Status::Fail, 0.0, 1.0)]),
        ],
        80.0,
    );
    let text = terminal(&r, false);
    assert!(
        text.contains("- judge [score 3/5 (0.50), threshold 4/5 (0.75)]: terse"),
        "{text}"
    );
    assert!(
        text.contains("- judge [score 6/10 (0.60), threshold 7/10 (0.70)]: terse"),
        "{text}"
    );
    assert!(text.contains("- judge [score fail]: terse"), "{text}");

    let md = render(&r, Format::Markdown).unwrap();
    assert!(
        md.contains("| 1 | judge | fail | 3/5 (0.50) | 4/5 (0.75) | terse |"),
        "{md}"
    );
    assert!(
        md.contains("| 1 | judge | fail | fail | pass | terse |"),
        "{md}"
    );

    // minijinja escapes `/` as `&#x2f;`; browsers show `3/5`.
    let html = render(&r, Format::Html).unwrap();
    assert!(
        html.contains("<td>3&#x2f;5 (0.50)</td><td>4&#x2f;5 (0.75)</td>"),
        "{html}"
    );
    assert!(html.contains("<td>6&#x2f;10 (0.60)</td><td>7&#x2f;10 (0.70)</td>"));
    assert!(html.contains("<td>fail</td><td>pass</td>"));

    let xml = render(&r, Format::Junit).unwrap();
    assert!(
        xml.contains("message=\"judge [score 3/5 (0.50), threshold 4/5 (0.75)]: terse\""),
        "{xml}"
    );
}

/// A passing rubric verdict with six dimensions and a suggestion.
fn rubric_scored(case: &str, suggestion: &str) -> Execution {
    let dim = |s: f64| json!({"score": s, "reasoning": "ok", "weight": 1.0});
    exec(
        case,
        vec![
            Verdict::new("rubric", CheckKind::Rubric, Status::Pass, "solid answer")
                .with_score(0.75, Some(0.625))
                .with_evidence(json!({
                    "dimensions": {
                        "accuracy": dim(4.0),
                        "completeness": dim(3.5),
                        "format_compliance": dim(5.0),
                        "scope_adherence": dim(4.0),
                        "context_usage": dim(4.0),
                    },
                    "improvement_suggestions": suggestion,
                })),
        ],
    )
}

#[test]
fn rubric_dimensions_and_suggestions_reach_terminal_markdown_and_html() {
    let r = Report::new(
        run(RunStatus::Completed, Some(2)),
        cases(2),
        vec![
            rubric_scored("c0", "Name the <b>price</b> too."),
            passing("c1"),
        ],
        80.0,
    );
    let dims = "accuracy 4/5 · completeness 3.5/5 · format_compliance 5/5 · scope_adherence 4/5 · context_usage 4/5 · mcp_usage n/a";

    let text = terminal(&r, false);
    assert!(text.contains("Rubric (dimensions 1-5)"), "{text}");
    assert!(text.contains(&format!("c0 [bot]: {dims}")), "{text}");
    assert!(
        text.contains("suggestions: Name the <b>price</b> too."),
        "{text}"
    );
    assert!(!text.contains("c1 [bot]: accuracy"), "{text}");

    let md = render(&r, Format::Markdown).unwrap();
    assert!(md.contains("## Rubric"), "{md}");
    assert!(
        md.contains(&format!(
            "| c0 | bot | {} | Name the &lt;b&gt;price&lt;/b&gt; too. |",
            dims.replace('_', "\\_")
        )),
        "{md}"
    );

    let html = render(&r, Format::Html).unwrap();
    let escaped = dims.replace('/', "&#x2f;");
    assert!(
        html.contains(&format!("<dt>Rubric (1-5)</dt><dd>{escaped}</dd>")),
        "{html}"
    );
    assert!(
        html.contains("Name the &lt;b&gt;price&lt;&#x2f;b&gt; too."),
        "{html}"
    );
    assert!(!html.contains("<b>price"), "{html}");

    let json = json_of(&r);
    assert_eq!(
        json["detailed_results"][0]["suggestions"],
        "Name the <b>price</b> too."
    );
    assert_eq!(json["detailed_results"][0]["scores"]["completeness"], 0.625);
}

/// A judge verdict skipped for want of a judge model.
fn unjudged(case: &str) -> Execution {
    exec(
        case,
        vec![
            Verdict::new("contains", CheckKind::Contains, Status::Pass, "found"),
            Verdict::new("judge", CheckKind::Judge, Status::Skipped, "no judge model")
                .with_evidence(json!({"judge_unavailable": true, "model": null})),
        ],
    )
}

#[test]
fn required_judges_fail_the_gate_and_name_each_unjudged_check() {
    let report = || {
        Report::new(
            run(RunStatus::Completed, Some(3)),
            cases(3),
            vec![unjudged("c0"), passing("c1"), unjudged("c2")],
            80.0,
        )
    };
    let loose = report();
    assert_eq!(loose.gate.exit_code(), EXIT_PASSED);
    assert_eq!(loose.gate.judges, None);

    let mut r = report();
    r.require_judges();
    let g = &r.gate;
    assert!(!g.passed);
    assert_eq!((g.exit_code(), g.word()), (EXIT_GATE_FAILED, "FAIL"));
    let judges = g.judges.as_ref().unwrap();
    assert_eq!(judges.unjudged, 2);
    assert_eq!(
        judges.checks,
        [
            "c0 [bot] judge: no judge model",
            "c2 [bot] judge: no judge model"
        ]
    );
    let text = terminal(&r, false);
    let last = text.lines().last().unwrap();
    assert!(
        last.ends_with("judges are required but 2 judged checks had no judge: c0 [bot] judge: no judge model; c2 [bot] judge: no judge model"),
        "{last}"
    );
    assert_eq!(json_of(&r)["gate"]["judges"]["unjudged"], 2);

    let mut judged = Report::new(
        run(RunStatus::Completed, Some(1)),
        cases(1),
        vec![passing("c0")],
        80.0,
    );
    judged.require_judges();
    assert_eq!(judged.gate.exit_code(), EXIT_PASSED);
    assert!(judged.gate.judges.as_ref().unwrap().passed);
}

#[test]
fn transport_retries_are_totalled_for_targets_and_judges() {
    use gavel_core::{Attempts, Turn};
    let tries = |attempts, rate_limited| Attempts {
        attempts,
        retries: attempts - 1,
        rate_limited,
        malformed: 0,
    };
    let calls = |attempts, transport| {
        json!({"input_tokens": 9, "output_tokens": 3, "latency_ms": 4, "cached": false,
               "attempts": attempts, "transport": transport})
    };
    let mut e = exec(
        "c0",
        vec![
            Verdict::new("judge", CheckKind::Judge, Status::Pass, "ok")
                .with_evidence(calls(1, tries(3, 2))),
            Verdict::new("rubric", CheckKind::Rubric, Status::Pass, "ok")
                .with_evidence(calls(2, tries(2, 0))),
        ],
    );
    let mut turn: Turn =
        serde_json::from_value(json!({"round": 0, "input": "hi", "output": "yo", "latency_ms": 5}))
            .unwrap();
    turn.attempts = Some(tries(2, 1));
    e.transcript.turns.push(turn);
    let r = Report::new(run(RunStatus::Completed, Some(1)), cases(1), vec![e], 80.0);
    assert_eq!(r.transport.target, tries(2, 1));
    let judges = Attempts {
        retries: 3,
        ..tries(5, 2)
    };
    assert_eq!(r.transport.judges, judges);
    let line =
        "Retries: targets 1 in 2 tries (1 rate-limited) · judges 3 in 5 tries (2 rate-limited)";
    assert!(terminal(&r, false).contains(line));
    assert!(render(&r, Format::Markdown).unwrap().contains(line));
    assert_eq!(json_of(&r)["summary"]["transport"]["judges"]["retries"], 3);
    assert!(
        render(&r, Format::Html)
            .unwrap()
            .contains("Retries (targets · judges)")
    );

    let calm = budget_stopped();
    assert!(!terminal(&calm, false).contains("Retries:"));
    assert_eq!(
        json_of(&calm)["summary"]["transport"]["judges"]["attempts"],
        0
    );
}
