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
            .field("checks", &self.checks.iter().map(|c| &c.name).collect::<Vec<_>>())
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
        field: if e.field.is_empty() { field } else { format!("{field}.{}", e.field) },
        message: e.message,
    };

    for (r, round) in case.rounds.iter().enumerate() {
        let expected = Expected {
            output: round.expected_output.as_ref().or(case.expected_output.as_ref()),
            tools: &round.expected_tools,
            tools_from: "the round",
        };
        let scope = Scope::Round(r);
        for (i, spec) in round.checks.iter().enumerate() {
            let field = format!("rounds[{r}].checks[{i}]");
            checks.push(Planned::compile(spec, scope, &expected).map_err(|e| invalid(field, e))?);
        }
        if !round.expected_tools.is_empty() && !has_defaulted_tools_check(&round.checks) {
            checks.push(Planned::new(scope, Check::Tools(ToolsCheck::implicit(&round.expected_tools))));
        }
        if let Some(criteria) = round.criteria.as_deref().filter(|c| !c.trim().is_empty()) {
            let judge = JudgeCheck::new(criteria, round.threshold.or(case.threshold));
            judges.push(Planned::new(scope, Check::Judge(judge)));
        }
    }

    let expected = Expected {
        output: case.expected_output.as_ref().or(case.rounds.last().and_then(|r| r.expected_output.as_ref())),
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
        checks.push(Planned::new(Scope::Transcript, Check::Tools(ToolsCheck::implicit(&case.expected_tools))));
    }
    if let Some(criteria) = case.criteria.as_deref().filter(|c| !c.trim().is_empty()) {
        judges.push(Planned::new(Scope::LastTurn, Check::Judge(JudgeCheck::new(criteria, case.threshold))));
    }

    checks.extend(judges);
    Ok(CheckPlan { checks, rounds })
}

/// Whether an explicit `tools-called` without `tools` already uses `expected_tools`.
fn has_defaulted_tools_check(checks: &[CheckSpec]) -> bool {
    checks.iter().any(|c| matches!(c, CheckSpec::ToolsCalled { tools: None, .. }))
}

impl CheckPlan {
    /// Runs every check against the transcript of one execution of the case, giving
    /// one verdict per check, in plan order.
    pub fn run(&self, transcript: &Transcript) -> Vec<Verdict> {
        self.checks.iter().map(|c| c.run(transcript, self.rounds)).collect()
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
    /// The expected output (the round's, else the case's).
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
        Finding { status: Status::Pass, reason: reason.into(), evidence }
    }

    /// A fail.
    pub(crate) fn fail(reason: impl Into<String>, evidence: Value) -> Self {
        Finding { status: Status::Fail, reason: reason.into(), evidence }
    }

    /// Pass when `ok`, else fail.
    pub(crate) fn verdict(ok: bool, reason: impl Into<String>, evidence: Value) -> Self {
        if ok { Self::pass(reason, evidence) } else { Self::fail(reason, evidence) }
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

    fn compile(spec: &CheckSpec, scope: Scope, expected: &Expected<'_>) -> Result<Self, FieldError> {
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
            CheckSpec::ToolsCalled { tools, mode, strict } => {
                Check::Tools(ToolsCheck::compile(tools.as_deref(), *mode, *strict, expected)?)
            }
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
                return Verdict::new(&self.name, self.kind(), Status::Skipped, format!("no answer to check: {why}"))
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
    let of_round = |r: usize| -> Vec<&Turn> { transcript.turns.iter().filter(|t| t.round == r).collect() };
    let (answer, turns) = match scope {
        Scope::Round(r) => {
            let turns = of_round(r);
            let answer = *turns.last().ok_or_else(|| not_reached(r, rounds, transcript))?;
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
    transcript.turns.iter().map(|t| t.round + 1).max().unwrap_or(0)
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
    let joined = items.iter().map(|s| format!("{s:?}")).collect::<Vec<_>>().join(", ");
    short(&joined)
}

/// `[a, b]` (the whole shortened).
pub(crate) fn bracket_list(items: &[String]) -> String {
    format!("[{}]", short(&items.join(", ")))
}
