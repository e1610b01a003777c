//! Helpers for the crate's tests: one-case suites, plans run without a judge
//! model, turns and transcripts.
#![allow(clippy::unwrap_used)]

use std::path::Path;

use gavel_core::{Case, Transcript, Turn, Verdict};

use crate::{CheckError, JudgeRuntime, NoJudgeModels};

/// Parses one case (its YAML body, without the list dash) from a `t.yaml` suite.
pub(crate) fn case(body: &str) -> Case {
    let mut yaml = String::from("cases:\n  - id: c\n");
    for line in body.lines() {
        yaml.push_str("    ");
        yaml.push_str(line);
        yaml.push('\n');
    }
    let suite = gavel_core::load::parse_suite_str(&yaml, Path::new("t.yaml"))
        .unwrap_or_else(|e| panic!("bad test suite: {e:?}\n{yaml}"));
    suite.cases.into_iter().next().unwrap()
}

/// Compiles a case with the default judge settings.
pub(crate) fn compile(case: &Case) -> Result<crate::CheckPlan, CheckError> {
    crate::compile(case, &gavel_core::JudgeSettings::default())
}

/// Runs a plan, judges included, with no judge model.
pub(crate) fn run_all(plan: &crate::CheckPlan, transcript: &Transcript) -> Vec<Verdict> {
    futures::executor::block_on(plan.run(transcript, &JudgeRuntime::new(&NoJudgeModels)))
}

/// Asserts that a verdict's evidence, built typed by its check, is what reading
/// its JSON back gives, as stores and reports read it: equal, and written the same.
pub(crate) fn reads_back(v: &Verdict) {
    let json = serde_json::to_string(&v.evidence).unwrap();
    let read = gavel_core::Evidence::read(v.kind, serde_json::from_str(&json).unwrap());
    assert_eq!(read, v.evidence, "{json}");
    assert_eq!(serde_json::to_string(&read).unwrap(), json);
}

/// The compile error of a case, displayed.
pub(crate) fn compile_err(body: &str) -> String {
    match compile(&case(body)) {
        Ok(plan) => panic!("expected a compile error, got {plan:?}"),
        Err(e) => e.to_string(),
    }
}

/// A sound turn answering `round` with `output`.
pub(crate) fn turn(round: usize, output: &str) -> Turn {
    Turn {
        round,
        input: "q".into(),
        output: output.into(),
        latency_ms: 10,
        ..Turn::default()
    }
}

/// A transcript of these turns.
pub(crate) fn transcript(turns: Vec<Turn>) -> Transcript {
    Transcript {
        session_id: "s".into(),
        turns,
    }
}

/// The verdict of a case's only check, awaited (checks that need a runtime).
pub(crate) async fn run_one_async(case: &Case, turns: Vec<Turn>) -> Verdict {
    let plan = compile(case).unwrap();
    assert_eq!(plan.len(), 1, "{plan:?}");
    plan.run(&transcript(turns), &JudgeRuntime::new(&NoJudgeModels))
        .await
        .remove(0)
}

/// The verdict of a case's only check.
pub(crate) fn run_one(case: &Case, turns: Vec<Turn>) -> Verdict {
    let plan = compile(case).unwrap();
    assert_eq!(plan.len(), 1, "{plan:?}");
    run_all(&plan, &transcript(turns)).remove(0)
}
