//! Compiling a case's checks into a [`CheckPlan`] and running it on a transcript.

use std::fmt;

use gavel_core::{Case, CheckSpec, Status, Transcript, Turn, Verdict};
use serde_json::Value;

use crate::error::{CheckError, FieldError};
use crate::json::JsonCheck;
use crate::judge::JudgeCheck;
use crate::latency::LatencyCheck;
use crate::text::TextCheck;
use crate::tools::ToolsCheck;

/// A case's checks, compiled once and run on every execution of the case.
pub struct CheckPlan {
    checks: Vec<Planned>,
    /// How many rounds the case has (at least 1).
    rounds: usize,
}

impl fmt::Debug for CheckPlan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CheckPlan")
            .field("rounds", &self.rounds)
            .field(
                "checks",
                &self.checks.iter().map(|c| &c.name).collect::<Vec<_>>(),
            )
            .finish()
    }
}

/// Compiles a case's checks: regexes and JSON Schemas are compiled, expected values
/// and tools resolved from the case, implicit checks (`expected_tools`, judge
/// `criteria`) added.
///
/// Deterministic checks come first (rounds in order, then the case's), judges last.
pub fn compile(case: &Case) -> Result<CheckPlan, CheckError> {
    let rounds = case.rounds.len().max(1);
    let mut checks = Vec::new();
    let mut judges = Vec::new();
    let invalid = |field: String, e: FieldError| CheckError::Invalid {
        source_loc: case.source.clone(),
        case_id: case.id.clone(),
        field: if e.field.is_empty() {
            field
        } else {
            format!("{field}.{}", e.field)
        },
        message: e.message,
    };

    for (r, round) in case.rounds.iter().enumerate() {
        let expected = Expected {
            output: round
                .expected_output
                .as_ref()
                .or(case.expected_output.as_ref()),
            tools: &round.expected_tools,
            tools_from: "the round",
        };
        let scope = Scope::Round(r);
        for (i, spec) in round.checks.iter().enumerate() {
            let field = format!("rounds[{r}].checks[{i}]");
            checks.push(Planned::compile(spec, scope, &expected).map_err(|e| invalid(field, e))?);
        }
        if !round.expected_tools.is_empty() && !has_defaulted_tools_check(&round.checks) {
            checks.push(Planned::new(
                scope,
                Check::Tools(ToolsCheck::implicit(&round.expected_tools)),
            ));
        }
        if let Some(criteria) = round.criteria.as_deref().filter(|c| !c.trim().is_empty()) {
            let judge = JudgeCheck::new(criteria, round.threshold.or(case.threshold));
            judges.push(Planned::new(scope, Check::Judge(judge)));
        }
    }

    let expected = Expected {
        output: case
            .expected_output
            .as_ref()
            .or(case.rounds.last().and_then(|r| r.expected_output.as_ref())),
        tools: &case.expected_tools,
        tools_from: "the case",
    };
    for (i, spec) in case.checks.iter().enumerate() {
        let scope = match spec {
            CheckSpec::ToolsCalled { .. } | CheckSpec::Latency { .. } => Scope::Transcript,
            _ => Scope::LastTurn,
        };
        let field = format!("checks[{i}]");
        checks.push(Planned::compile(spec, scope, &expected).map_err(|e| invalid(field, e))?);
    }
    if !case.expected_tools.is_empty() && !has_defaulted_tools_check(&case.checks) {
        checks.push(Planned::new(
            Scope::Transcript,
            Check::Tools(ToolsCheck::implicit(&case.expected_tools)),
        ));
    }
    if let Some(criteria) = case.criteria.as_deref().filter(|c| !c.trim().is_empty()) {
        judges.push(Planned::new(
            Scope::LastTurn,
            Check::Judge(JudgeCheck::new(criteria, case.threshold)),
        ));
    }

    checks.extend(judges);
    Ok(CheckPlan { checks, rounds })
}

/// Whether an explicit `tools-called` without `tools` already uses `expected_tools`.
fn has_defaulted_tools_check(checks: &[CheckSpec]) -> bool {
    checks
        .iter()
        .any(|c| matches!(c, CheckSpec::ToolsCalled { tools: None, .. }))
}

impl CheckPlan {
    /// Runs every check against the transcript of one execution of the case, giving
    /// one verdict per check, in plan order.
    pub fn run(&self, transcript: &Transcript) -> Vec<Verdict> {
        self.checks
            .iter()
            .map(|c| c.run(transcript, self.rounds))
            .collect()
    }

    /// The number of checks (and so of verdicts per execution).
    pub fn len(&self) -> usize {
        self.checks.len()
    }

    /// Whether the case has no checks at all.
    pub fn is_empty(&self) -> bool {
        self.checks.is_empty()
    }
}

/// What a check falls back on when it does not give its own expectations.
pub(crate) struct Expected<'a> {
    /// The expected output: for a round's checks the round's, else the case's; for
    /// the case's checks the case's, else the last round's.
    pub(crate) output: Option<&'a Value>,
    /// The expected tools (the round's or the case's).
    pub(crate) tools: &'a [String],
    /// Whose expected tools these are, for error messages.
    pub(crate) tools_from: &'static str,
}

/// Which turns a check reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Scope {
    /// The last turn of round `i` (its text), or all its turns (tools, latency).
    Round(usize),
    /// The last turn of the conversation, which must have reached the last round.
    LastTurn,
    /// Every turn; the conversation must be complete and unbroken.
    Transcript,
}

/// The turns a check reads, once they are known to be there and sound.
pub(crate) struct Subject<'a> {
    /// The answer to grade: the last targeted turn.
    pub(crate) answer: &'a Turn,
    /// Every targeted turn, in order (the answer last).
    pub(crate) turns: Vec<&'a Turn>,
}

/// A check's finding on a subject, before it becomes a verdict.
pub(crate) struct Finding {
    pub(crate) status: Status,
    pub(crate) reason: String,
    pub(crate) evidence: Value,
}

impl Finding {
    /// A pass.
    pub(crate) fn pass(reason: impl Into<String>, evidence: Value) -> Self {
        Finding {
            status: Status::Pass,
            reason: reason.into(),
            evidence,
        }
    }

    /// A fail.
    pub(crate) fn fail(reason: impl Into<String>, evidence: Value) -> Self {
        Finding {
            status: Status::Fail,
            reason: reason.into(),
            evidence,
        }
    }
}

/// One compiled check with its display name and scope.
struct Planned {
    name: String,
    scope: Scope,
    check: Check,
}

enum Check {
    Text(TextCheck),
    Json(JsonCheck),
    Tools(ToolsCheck),
    Latency(LatencyCheck),
    Judge(JudgeCheck),
}

impl Planned {
    fn new(scope: Scope, check: Check) -> Self {
        let name = match &check {
            Check::Text(c) => c.name(),
            Check::Json(c) => c.name(),
            Check::Tools(c) => c.name(),
            Check::Latency(c) => c.name(),
            Check::Judge(c) => c.name(),
        };
        Planned { name, scope, check }
    }

    fn compile(
        spec: &CheckSpec,
        scope: Scope,
        expected: &Expected<'_>,
    ) -> Result<Self, FieldError> {
        let check = match spec {
            CheckSpec::Equals { .. }
            | CheckSpec::Contains { .. }
            | CheckSpec::Icontains { .. }
            | CheckSpec::NotContains { .. }
            | CheckSpec::Regex { .. } => Check::Text(TextCheck::compile(spec, expected)?),
            CheckSpec::IsJson { .. }
            | CheckSpec::JsonSchema { .. }
            | CheckSpec::RequiredKeys { .. }
            | CheckSpec::NumericFields { .. } => Check::Json(JsonCheck::compile(spec, expected)?),
            CheckSpec::ToolsCalled {
                tools,
                mode,
                strict,
            } => Check::Tools(ToolsCheck::compile(
                tools.as_deref(),
                *mode,
                *strict,
                expected,
            )?),
            CheckSpec::Latency { max_ms } => Check::Latency(LatencyCheck::new(*max_ms)),
        };
        Ok(Planned::new(scope, check))
    }

    fn kind(&self) -> &'static str {
        match &self.check {
            Check::Text(c) => c.kind(),
            Check::Json(c) => c.kind(),
            Check::Tools(_) => "tools-called",
            Check::Latency(_) => "latency",
            Check::Judge(_) => crate::judge::KIND,
        }
    }

    fn run(&self, transcript: &Transcript, rounds: usize) -> Verdict {
        let last_round = rounds - 1;
        let subject = match resolve(self.scope, transcript, rounds) {
            Ok(subject) => subject,
            Err(why) => {
                let round = match self.scope {
                    Scope::Round(r) => Some(r),
                    Scope::LastTurn => Some(last_round),
                    Scope::Transcript => None,
                };
                return Verdict::new(
                    &self.name,
                    self.kind(),
                    Status::Skipped,
                    format!("no answer to check: {why}"),
                )
                .in_round(round);
            }
        };
        let round = match self.scope {
            Scope::Round(r) => Some(r),
            Scope::LastTurn => Some(subject.answer.round),
            Scope::Transcript => None,
        };
        let finding = match &self.check {
            Check::Text(c) => c.evaluate(subject.answer),
            Check::Json(c) => c.evaluate(subject.answer),
            Check::Tools(c) => c.evaluate(&subject.turns),
            Check::Latency(c) => c.evaluate(&subject.turns),
            Check::Judge(c) => return c.verdict(&self.name, round),
        };
        let verdict = Verdict::new(&self.name, self.kind(), finding.status, finding.reason)
            .in_round(round)
            .with_evidence(finding.evidence);
        match finding.status {
            Status::Pass => verdict.with_score(1.0, None),
            Status::Fail => verdict.with_score(0.0, None),
            Status::Error | Status::Skipped => verdict,
        }
    }
}

/// Finds the turns a scope reads, or says why there is no answer to check.
fn resolve(scope: Scope, transcript: &Transcript, rounds: usize) -> Result<Subject<'_>, String> {
    let last_round = rounds - 1;
    let of_round =
        |r: usize| -> Vec<&Turn> { transcript.turns.iter().filter(|t| t.round == r).collect() };
    let (answer, turns) = match scope {
        Scope::Round(r) => {
            let turns = of_round(r);
            let answer = *turns
                .last()
                .ok_or_else(|| not_reached(r, rounds, transcript))?;
            (answer, turns)
        }
        Scope::LastTurn => {
            let answer = transcript
                .last()
                .filter(|t| t.round >= last_round)
                .ok_or_else(|| not_reached(first_unreached(transcript), rounds, transcript))?;
            (answer, of_round(answer.round))
        }
        Scope::Transcript => {
            if let Some(failure) = transcript.turns.iter().find_map(|t| t.failure.as_ref()) {
                return Err(failure.message.clone());
            }
            let answer = transcript
                .last()
                .filter(|_| first_unreached(transcript) > last_round)
                .ok_or_else(|| not_reached(first_unreached(transcript), rounds, transcript))?;
            (answer, transcript.turns.iter().collect())
        }
    };
    match &answer.failure {
        Some(failure) => Err(failure.message.clone()),
        None => Ok(Subject { answer, turns }),
    }
}

/// The first round index with no turn at or after it: one past the highest round seen.
fn first_unreached(transcript: &Transcript) -> usize {
    transcript
        .turns
        .iter()
        .map(|t| t.round + 1)
        .max()
        .unwrap_or(0)
}

/// "round 2 of 3 was not reached", with the failure that stopped the conversation.
fn not_reached(round: usize, rounds: usize, transcript: &Transcript) -> String {
    let mut why = format!("round {} of {rounds} was not reached", round + 1);
    if let Some(failure) = transcript.turns.iter().find_map(|t| t.failure.as_ref()) {
        why.push_str(&format!(" ({})", failure.message));
    }
    why
}

/// Characters of an argument shown in a check's display name.
const NAME_ARG_CHARS: usize = 40;

/// Shortens text to `max` characters, marking the cut with `…`.
pub(crate) fn truncate(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_owned(),
    }
}

/// Shortens a display-name argument (~40 characters).
pub(crate) fn short(text: &str) -> String {
    truncate(text, NAME_ARG_CHARS)
}

/// `"a", "b"` (each quoted, the whole shortened).
pub(crate) fn quoted_list(items: &[String]) -> String {
    let joined = items
        .iter()
        .map(|s| format!("{s:?}"))
        .collect::<Vec<_>>()
        .join(", ");
    short(&joined)
}

/// `[a, b]` (the whole shortened).
pub(crate) fn bracket_list(items: &[String]) -> String {
    format!("[{}]", short(&items.join(", ")))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
pub(crate) mod tests {
    use std::path::Path;

    use gavel_core::{Case, Status, TargetFailure, Transcript, Turn, Verdict};

    use crate::CheckError;

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

    /// The compile error of a case, displayed.
    pub(crate) fn compile_err(body: &str) -> String {
        match crate::compile(&case(body)) {
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

    /// The verdict of a case's only check.
    pub(crate) fn run_one(case: &Case, turns: Vec<Turn>) -> Verdict {
        let plan = crate::compile(case).unwrap();
        assert_eq!(plan.len(), 1, "{plan:?}");
        plan.run(&transcript(turns)).remove(0)
    }

    fn failed(round: usize, message: &str) -> Turn {
        Turn {
            round,
            failure: Some(TargetFailure {
                message: message.into(),
                transient: true,
            }),
            ..Turn::default()
        }
    }

    #[test]
    fn errors_display_file_line_case_and_field() {
        let e = crate::compile(&case(
            "input: q\nchecks:\n  - type: regex\n    pattern: '('\n",
        ))
        .unwrap_err();
        let CheckError::Invalid {
            source_loc,
            case_id,
            field,
            message,
        } = &e;
        assert_eq!(
            (source_loc.as_str(), case_id.as_str(), field.as_str()),
            ("t.yaml:2", "c", "checks[0].pattern")
        );
        assert!(message.starts_with("regex parse error"), "{message}");
        assert!(
            e.to_string()
                .starts_with("t.yaml:2: case `c`: checks[0].pattern: regex parse error"),
            "{e}"
        );
    }

    #[test]
    fn plans_are_shareable_across_threads() {
        fn shareable<T: Send + Sync>() {}
        shareable::<crate::CheckPlan>();
    }

    #[test]
    fn a_case_without_checks_has_an_empty_plan() {
        let plan = crate::compile(&case("input: q\n")).unwrap();
        assert!(plan.is_empty());
        assert!(plan.run(&transcript(vec![turn(0, "x")])).is_empty());
    }

    #[test]
    fn round_checks_read_the_last_turn_of_their_round() {
        let c = case(
            "rounds:\n  - input: find me a house\n    checks: [{type: contains, value: Beach House}]\n  - input: book it\n    checks: [{type: contains, value: booked}]\nchecks: [{type: contains, value: booked}]\n",
        );
        let plan = crate::compile(&c).unwrap();
        // Round 0 got a clarifying question, then the real answer.
        let turns = vec![
            turn(0, "Which town?"),
            turn(0, "Beach House is free"),
            turn(1, "booked"),
        ];
        let verdicts = plan.run(&transcript(turns));
        assert_eq!(verdicts.len(), 3);
        assert_eq!(
            (verdicts[0].status, verdicts[0].round),
            (Status::Pass, Some(0)),
            "{}",
            verdicts[0].reason
        );
        assert_eq!(
            (verdicts[1].status, verdicts[1].round),
            (Status::Pass, Some(1))
        );
        assert_eq!(
            (verdicts[2].status, verdicts[2].round),
            (Status::Pass, Some(1))
        );

        // The clarifying question alone does not answer round 0.
        let turns = vec![
            turn(0, "Beach House or Villa?"),
            turn(0, "Villa is free"),
            turn(1, "booked"),
        ];
        let verdicts = plan.run(&transcript(turns));
        assert_eq!(verdicts[0].status, Status::Fail);
    }

    #[test]
    fn case_checks_read_the_last_turn() {
        let c = case("rounds: [{input: a}, {input: b}]\nchecks: [{type: contains, value: two}]\n");
        let v = run_one(&c, vec![turn(0, "two"), turn(1, "one")]);
        assert_eq!((v.status, v.round), (Status::Fail, Some(1)));
        let v = run_one(&c, vec![turn(0, "one"), turn(1, "two")]);
        assert_eq!(v.status, Status::Pass);
    }

    #[test]
    fn unreached_rounds_are_skipped_not_failed() {
        let c =
            case("rounds:\n  - input: a\n  - input: b\n    checks: [{type: contains, value: x}]\n");
        let v = run_one(&c, vec![turn(0, "x")]);
        assert_eq!(
            (v.status, v.round, v.score),
            (Status::Skipped, Some(1), None)
        );
        assert_eq!(v.reason, "no answer to check: round 2 of 2 was not reached");

        let v = run_one(&c, vec![failed(0, "connection refused")]);
        assert_eq!(v.status, Status::Skipped);
        assert_eq!(
            v.reason,
            "no answer to check: round 2 of 2 was not reached (connection refused)"
        );

        let c = case("rounds: [{input: a}, {input: b}]\nchecks: [{type: contains, value: x}]\n");
        let v = run_one(&c, vec![turn(0, "x")]);
        assert_eq!((v.status, v.round), (Status::Skipped, Some(1)));
        assert_eq!(v.reason, "no answer to check: round 2 of 2 was not reached");
        let v = run_one(&c, vec![]);
        assert_eq!(v.reason, "no answer to check: round 1 of 2 was not reached");
    }

    #[test]
    fn failed_turns_are_skipped_with_the_failure() {
        let c = case("input: q\nchecks: [{type: contains, value: x}]\n");
        let v = run_one(&c, vec![failed(0, "HTTP 503 from the target")]);
        assert_eq!((v.status, v.round), (Status::Skipped, Some(0)));
        assert_eq!(v.reason, "no answer to check: HTTP 503 from the target");

        let c =
            case("rounds:\n  - input: a\n    checks: [{type: contains, value: x}]\n  - input: b\n");
        let v = run_one(&c, vec![turn(0, "y"), failed(1, "timeout")]);
        assert_eq!(v.status, Status::Fail, "round 0 was answered and is graded");
    }

    #[test]
    fn transcript_checks_need_a_complete_unbroken_conversation() {
        let c = case(
            "rounds: [{input: a}, {input: b}]\nexpected_tools: [search]\nchecks: [{type: latency, max_ms: 100}]\n",
        );
        let plan = crate::compile(&c).unwrap();
        let verdicts = plan.run(&transcript(vec![turn(0, "x")]));
        assert_eq!(verdicts.len(), 2);
        for v in &verdicts {
            assert_eq!((v.status, v.round), (Status::Skipped, None));
            assert_eq!(v.reason, "no answer to check: round 2 of 2 was not reached");
        }
        let verdicts = plan.run(&transcript(vec![turn(0, "x"), failed(1, "reset by peer")]));
        for v in &verdicts {
            assert_eq!(v.status, Status::Skipped);
            assert_eq!(v.reason, "no answer to check: reset by peer");
        }
    }

    #[test]
    fn judges_of_unreached_rounds_say_so() {
        let c = case("rounds:\n  - input: a\n  - input: b\n    criteria: Books the house\n");
        let v = run_one(&c, vec![turn(0, "x")]);
        assert_eq!((v.status, v.kind.as_str()), (Status::Skipped, "judge"));
        assert_eq!(v.reason, "no answer to check: round 2 of 2 was not reached");
    }

    #[test]
    fn suite_default_checks_apply_to_every_case() {
        let yaml = "defaults:\n  checks: [{type: not-contains, value: '[ERROR]'}]\ncases:\n  - id: a\n    input: q\n";
        let suite = gavel_core::load::parse_suite_str(yaml, Path::new("t.yaml")).unwrap();
        let plan = crate::compile(&suite.cases[0]).unwrap();
        let v = &plan.run(&transcript(vec![turn(0, "[error] upstream")]))[0];
        assert_eq!(
            (v.status, v.check.as_str()),
            (Status::Fail, "not-contains \"[ERROR]\"")
        );
    }

    #[test]
    fn truncation_respects_characters() {
        assert_eq!(super::truncate("héllo wörld", 5), "héllo…");
        assert_eq!(super::truncate("short", 40), "short");
    }
}
