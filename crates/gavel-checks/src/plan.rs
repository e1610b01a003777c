//! Compiling a case's checks into a [`CheckPlan`] and running it on a transcript.

use std::fmt;

use gavel_core::agent_check::{Claim, GroundingSpec};
use gavel_core::{Case, CheckSpec, JudgeSettings, Status, Transcript, Turn, Verdict};
use serde_json::Value;

use crate::branches::IsolationCheck;
use crate::clarify::ClarificationCheck;
use crate::cost::CostCheck;
use crate::error::{CheckError, FieldError};
use crate::grounding::GroundingCheck;
use crate::json::JsonCheck;
use crate::judge::compile::{Compiled, Env, Level, Templates, TurnJudge, check_model};
use crate::judge::steps::StepJudge;
use crate::judge::{JudgeRuntime, Judged, PairwiseSpec, VerdictHead};
use crate::latency::LatencyCheck;
use crate::probe::{PlannedProbe, Probe};
use crate::script::ScriptCase;
use crate::stream::StreamCheck;
use crate::text::TextCheck;
use crate::tools::ToolsCheck;
use crate::trajectory::TrajectoryCheck;
use crate::transform::OutputTransform;
use crate::verify::VerifyCheck;

/// A case's checks, compiled once and run on every execution of the case.
pub struct CheckPlan {
    /// Deterministic checks, in plan order.
    checks: Vec<Planned>,
    /// Checks that read outside the transcript (SQL, commands), after the code checks.
    probes: Vec<PlannedProbe>,
    /// Judged checks (`judge`, `rubric`, panels, `step-score`, judged `grounding`
    /// and `branch-isolation`), after the code checks and gated by them.
    judges: Vec<PlannedJudge>,
    /// Pairwise comparisons, which the runner performs.
    pairwise: Vec<PairwiseSpec>,
    /// How many rounds the case has (at least 1).
    rounds: usize,
    /// The case's `transform` of every output, applied before any check reads it.
    transform: Option<OutputTransform>,
}

impl fmt::Debug for CheckPlan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CheckPlan")
            .field("rounds", &self.rounds)
            .field(
                "checks",
                &self.checks.iter().map(|c| &c.name).collect::<Vec<_>>(),
            )
            .field(
                "probes",
                &self.probes.iter().map(|c| &c.name).collect::<Vec<_>>(),
            )
            .field(
                "judges",
                &self.judges.iter().map(|c| &c.name).collect::<Vec<_>>(),
            )
            .field(
                "pairwise",
                &self
                    .pairwise
                    .iter()
                    .map(PairwiseSpec::name)
                    .collect::<Vec<_>>(),
            )
            .finish()
    }
}

/// Compiles a case's checks: regexes and JSON Schemas are compiled, expected values
/// and tools resolved from the case, implicit checks (`expected_tools`, judge
/// `criteria`) added, judge templates read (`settings.templates` overrides) and
/// judge criteria, thresholds, weights and model ids validated.
///
/// Deterministic checks come first (rounds in order, then the case's), judges last
/// (rounds in order, then the case's); pairwise checks are kept apart for the
/// runner ([`CheckPlan::pairwise`]).
pub fn compile(case: &Case, settings: &JudgeSettings) -> Result<CheckPlan, CheckError> {
    let templates = Templates::load(&settings.templates).map_err(|(kind, path, message)| {
        CheckError::Template {
            kind,
            path,
            message,
        }
    })?;
    let env = Env::new(case, settings, templates);
    let rounds = case.rounds.len().max(1);
    let branches = case.branches();
    let mut plan = CheckPlan {
        checks: Vec::new(),
        probes: Vec::new(),
        judges: Vec::new(),
        pairwise: Vec::new(),
        rounds,
        transform: None,
    };
    // Judge errors carry absolute field paths; the location is the field's own
    // `file:line:column` when the case's YAML file shows it.
    let invalid_at = |e: FieldError| CheckError::Invalid {
        source_loc: gavel_core::load::locate(&case.source, &e.field)
            .unwrap_or_else(|| case.source.clone()),
        case_id: case.id.clone(),
        field: e.field,
        message: e.message,
    };
    let invalid = |field: String, e: FieldError| {
        invalid_at(FieldError::new(
            if e.field.is_empty() {
                field
            } else {
                format!("{field}.{}", e.field)
            },
            e.message,
        ))
    };

    if let Some(spec) = &case.transform {
        let transform =
            OutputTransform::compile(spec).map_err(|e| invalid("transform".into(), e))?;
        plan.transform = Some(transform);
    }
    let script_case = ScriptCase {
        id: &case.id,
        context: case.context.as_ref(),
    };
    for (r, round) in case.rounds.iter().enumerate() {
        let expected = Expected {
            output: round
                .expected_output
                .as_ref()
                .or(case.expected_output.as_ref()),
            tools: &round.expected_tools,
            tools_from: "the round",
            branches: &branches,
            script: &script_case,
        };
        let scope = Scope::Round(r);
        let level = Level::round(case, r);
        let at = |i: usize| format!("rounds[{r}].checks[{i}]");
        plan.add_checks(&round.checks, &env, &level, &at, |_| scope, &expected)
            .map_err(|(field, e, absolute)| {
                if absolute {
                    invalid_at(e)
                } else {
                    invalid(field, e)
                }
            })?;
        if !round.expected_tools.is_empty() && !has_defaulted_tools_check(&round.checks) {
            plan.checks.push(Planned::new(
                scope,
                Check::Tools(ToolsCheck::implicit(&round.expected_tools)),
            ));
        }
        if round.expect_clarification {
            plan.checks.push(Planned::new(
                scope,
                Check::Clarification(ClarificationCheck),
            ));
        }
        plan.add_implicit_judge(case, &round.checks, &env, &level, scope)
            .map_err(invalid_at)?;
    }

    let expected = Expected {
        output: case
            .expected_output
            .as_ref()
            .or(case.rounds.last().and_then(|r| r.expected_output.as_ref())),
        tools: &case.expected_tools,
        tools_from: "the case",
        branches: &branches,
        script: &script_case,
    };
    let level = Level::case(case);
    let at = |i: usize| format!("checks[{i}]");
    let case_scope = |spec: &CheckSpec| match spec {
        CheckSpec::ToolsCalled { .. }
        | CheckSpec::Latency { .. }
        | CheckSpec::Stream { .. }
        | CheckSpec::BranchIsolation { .. }
        | CheckSpec::StepScore(_)
        | CheckSpec::ToolVerification(_)
        | CheckSpec::Trajectory(_)
        | CheckSpec::Cost { .. }
        | CheckSpec::Database(_) => Scope::Transcript,
        CheckSpec::Script(s) if s.input == gavel_core::ScriptInput::Transcript => Scope::Transcript,
        _ => Scope::LastTurn,
    };
    plan.add_checks(&case.checks, &env, &level, &at, case_scope, &expected)
        .map_err(|(field, e, absolute)| {
            if absolute {
                invalid_at(e)
            } else {
                invalid(field, e)
            }
        })?;
    if !case.expected_tools.is_empty() && !has_defaulted_tools_check(&case.checks) {
        plan.checks.push(Planned::new(
            Scope::Transcript,
            Check::Tools(ToolsCheck::implicit(&case.expected_tools)),
        ));
    }
    plan.add_implicit_judge(case, &case.checks, &env, &level, Scope::LastTurn)
        .map_err(invalid_at)?;
    Ok(plan)
}

/// Whether an explicit `tools-called` without `tools` already uses `expected_tools`.
fn has_defaulted_tools_check(checks: &[CheckSpec]) -> bool {
    checks
        .iter()
        .any(|c| matches!(c, CheckSpec::ToolsCalled { tools: None, .. }))
}

/// Whether a judged check of one turn sits among these checks.
fn has_turn_judge(checks: &[CheckSpec]) -> bool {
    checks.iter().any(|c| {
        matches!(
            c,
            CheckSpec::Judge { .. }
                | CheckSpec::Rubric { .. }
                | CheckSpec::GEval(_)
                | CheckSpec::ClosedQa(_)
                | CheckSpec::Procedural(_)
                | CheckSpec::Consensus(_)
                | CheckSpec::Reactive(_)
                | CheckSpec::Dag(_)
        )
    })
}

/// A compile error: the check's field path, the error and whether its field is
/// already absolute.
type AddError = (String, FieldError, bool);

impl CheckPlan {
    /// Compiles one level's checks: code checks, explicit judges, pairwise specs.
    fn add_checks(
        &mut self,
        specs: &[CheckSpec],
        env: &Env<'_>,
        level: &Level<'_>,
        at: &dyn Fn(usize) -> String,
        scope_of: impl Fn(&CheckSpec) -> Scope,
        expected: &Expected<'_>,
    ) -> Result<(), AddError> {
        for (i, spec) in specs.iter().enumerate() {
            let field = at(i);
            let scope = scope_of(spec);
            match spec {
                CheckSpec::Judge { .. }
                | CheckSpec::Rubric { .. }
                | CheckSpec::Pairwise { .. }
                | CheckSpec::GEval(_)
                | CheckSpec::Factuality(_)
                | CheckSpec::ClosedQa(_)
                | CheckSpec::AnswerRelevance(_)
                | CheckSpec::ContextRecall(_)
                | CheckSpec::ContextRelevance(_)
                | CheckSpec::ContextFaithfulness(_)
                | CheckSpec::Summarization(_) => {
                    match env
                        .explicit(spec, &field, level)
                        .map_err(|e| (field.clone(), e, true))?
                    {
                        Compiled::Turn(judge) => self
                            .judges
                            .push(PlannedJudge::new(scope, Judging::Turn(judge))),
                        Compiled::Pairwise(p) => self.pairwise.push(p),
                    }
                }
                CheckSpec::StepScore(spec) => {
                    let judge = StepJudge::compile(spec, &field, env, level)
                        .map_err(|e| (field.clone(), e, true))?;
                    self.judges
                        .push(PlannedJudge::new(scope, Judging::Steps(judge)));
                }
                CheckSpec::Grounding(
                    spec @ GroundingSpec {
                        claim: Claim::Judge(what),
                        ..
                    },
                ) => {
                    check_model(spec.model.as_ref(), format!("{field}.model"))
                        .map_err(|e| (field.clone(), e, true))?;
                    let material = env.material(
                        what.clone(),
                        None,
                        level,
                        spec.model.as_ref(),
                        &env.templates.extract,
                    );
                    let check = GroundingCheck::compile(spec, Some(material))
                        .map_err(|e| (field.clone(), e, false))?;
                    self.judges
                        .push(PlannedJudge::new(scope, Judging::Grounding(check)));
                }
                CheckSpec::BranchIsolation {
                    markers,
                    judge: true,
                    model,
                } => {
                    check_model(model.as_ref(), format!("{field}.model"))
                        .map_err(|e| (field.clone(), e, true))?;
                    let material = env.choice_material(String::new(), level, model.as_ref());
                    let check = IsolationCheck::compile(markers, expected.branches, Some(material))
                        .map_err(|e| (field.clone(), e, false))?;
                    self.judges
                        .push(PlannedJudge::new(scope, Judging::Isolation(check)));
                }
                CheckSpec::Grounding(_)
                | CheckSpec::Database(_)
                | CheckSpec::Similar { .. }
                | CheckSpec::Script(_) => self.probes.push(PlannedProbe::new(
                    scope,
                    Probe::compile(spec, expected).map_err(|e| (field, e, false))?,
                )),
                CheckSpec::Procedural(_)
                | CheckSpec::Consensus(_)
                | CheckSpec::Reactive(_)
                | CheckSpec::Dag(_) => {
                    let panel = crate::panel::compile(spec, &field, env, level, scope, expected)
                        .map_err(|e| (field.clone(), e, true))?;
                    self.judges
                        .push(PlannedJudge::new(scope, Judging::Turn(panel)));
                }
                _ => self
                    .checks
                    .push(Planned::compile(spec, scope, expected).map_err(|e| (field, e, false))?),
            }
        }
        Ok(())
    }

    /// The pointwise judge a level's own `criteria` add, unless the level has an
    /// explicit `judge` or `rubric`.
    fn add_implicit_judge(
        &mut self,
        case: &Case,
        specs: &[CheckSpec],
        env: &Env<'_>,
        level: &Level<'_>,
        scope: Scope,
    ) -> Result<(), FieldError> {
        if has_turn_judge(specs) {
            return Ok(());
        }
        if let Some(criteria) = Level::own_criteria(case, level.round) {
            let judge = env.implicit(level, criteria)?;
            self.judges
                .push(PlannedJudge::new(scope, Judging::Turn(judge)));
        }
        Ok(())
    }

    /// Runs the deterministic checks against the transcript of one execution of
    /// the case, one verdict per check, in plan order. No model is called.
    pub fn run_code(&self, transcript: &Transcript) -> Vec<Verdict> {
        match self.transformed(transcript) {
            Ok(transcript) => self.run_code_on(&transcript),
            Err(why) => self
                .checks
                .iter()
                .map(|c| untransformed(&c.name, c.kind(), c.scope, self.rounds, &why))
                .collect(),
        }
    }

    fn run_code_on(&self, transcript: &Transcript) -> Vec<Verdict> {
        self.checks
            .iter()
            .map(|c| c.run(transcript, self.rounds))
            .collect()
    }

    /// The transcript the checks read: the case's `transform` applied, or why it
    /// could not be.
    fn transformed<'t>(
        &self,
        transcript: &'t Transcript,
    ) -> Result<std::borrow::Cow<'t, Transcript>, String> {
        match &self.transform {
            None => Ok(std::borrow::Cow::Borrowed(transcript)),
            Some(t) => t.apply(transcript).map(std::borrow::Cow::Owned),
        }
    }

    /// Runs everything but the pairwise checks: the code checks
    /// ([`run_code`](Self::run_code)), then the judges, concurrently, in plan
    /// order. One verdict per check ([`len`](Self::len) in all). Judges never
    /// panic and never pass by default: without a model they are `skipped` (an
    /// `error` when `judges.strict`), a broken call or an unusable answer is an
    /// `error`.
    pub async fn run(&self, transcript: &Transcript, judges: &JudgeRuntime<'_>) -> Vec<Verdict> {
        let transcript = match self.transformed(transcript) {
            Ok(transcript) => transcript,
            Err(why) => {
                let rounds = self.rounds;
                let checks = self
                    .checks
                    .iter()
                    .map(|c| untransformed(&c.name, c.kind(), c.scope, rounds, &why));
                let probes = self
                    .probes
                    .iter()
                    .map(|p| untransformed(&p.name, p.kind(), p.scope, rounds, &why));
                let judges = self
                    .judges
                    .iter()
                    .map(|j| untransformed(&j.name, j.judge.kind(), j.scope, rounds, &why));
                return checks.chain(probes).chain(judges).collect();
            }
        };
        let transcript = transcript.as_ref();
        let mut verdicts = self.run_code_on(transcript);
        let probed = self
            .probes
            .iter()
            .map(|p| p.run(transcript, self.rounds, judges.embeddings));
        verdicts.extend(futures::future::join_all(probed).await);
        if let Some(gate) = crate::gate::closed_by(&verdicts) {
            let gated: Vec<Verdict> = self
                .judges
                .iter()
                .map(|j| j.gated(transcript, self.rounds, gate))
                .collect();
            verdicts.extend(gated);
            return verdicts;
        }
        verdicts.extend(self.run_judges(transcript, judges).await);
        verdicts
    }

    /// Runs the judges alone, concurrently: one verdict per judge, in plan order,
    /// as the last [`judge_count`](Self::judge_count) verdicts of
    /// [`run`](Self::run). With `judges.rejudge` set, a re-judgement of an output
    /// already judged.
    pub async fn run_judges(
        &self,
        transcript: &Transcript,
        judges: &JudgeRuntime<'_>,
    ) -> Vec<Verdict> {
        let transcript = match self.transformed(transcript) {
            Ok(transcript) => transcript,
            Err(why) => {
                return self
                    .judges
                    .iter()
                    .map(|j| untransformed(&j.name, j.judge.kind(), j.scope, self.rounds, &why))
                    .collect();
            }
        };
        let transcript = transcript.as_ref();
        let graded = self
            .judges
            .iter()
            .map(|j| j.run(transcript, self.rounds, judges));
        futures::future::join_all(graded).await
    }

    /// Whether a `similar` check needs an embedder.
    pub fn uses_embeddings(&self) -> bool {
        self.probes.iter().any(PlannedProbe::embeds)
    }

    /// The number of judges [`run`](Self::run) calls (pairwise excluded).
    pub fn judge_count(&self) -> usize {
        self.judges.len()
    }

    /// The case's pairwise checks, for the runner: it finds the other answer and
    /// calls [`pairwise`](crate::pairwise).
    pub fn pairwise(&self) -> Vec<PairwiseSpec> {
        self.pairwise.clone()
    }

    /// The number of verdicts [`run`](Self::run) gives: code checks and judges.
    pub fn len(&self) -> usize {
        self.checks.len() + self.probes.len() + self.judges.len()
    }

    /// Whether [`run`](Self::run) has nothing to check (pairwise checks aside).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
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
    /// The case's branch names.
    pub(crate) branches: &'a [&'a str],
    /// What a `script` check sends besides the turns.
    pub(crate) script: &'a ScriptCase<'a>,
}

/// Which turns a check reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Scope {
    /// The last turn of round `i` (its text), or all its turns (tools, latency).
    Round(usize),
    /// The last turn of the conversation, which must have reached the last round.
    LastTurn,
    /// Every turn; the conversation must be complete and unbroken.
    Transcript,
}

impl Scope {
    /// The round a verdict of this scope applies to, once the answer is known.
    pub(crate) fn round(self, answer: Option<&Turn>, rounds: usize) -> Option<usize> {
        match self {
            Scope::Round(r) => Some(r),
            Scope::LastTurn => Some(answer.map_or(rounds - 1, |a| a.round)),
            Scope::Transcript => None,
        }
    }
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

    /// The verdict under `head`, scored 1 for a pass and 0 for a fail unless
    /// `scored` gives the score and its threshold.
    pub(crate) fn verdict(self, head: VerdictHead<'_>, scored: Option<(f64, f64)>) -> Verdict {
        let status = self.status;
        let verdict = head
            .verdict(status, self.reason)
            .with_evidence(self.evidence);
        match (scored, status) {
            (Some((score, threshold)), _) => verdict.with_score(score, Some(threshold)),
            (None, Status::Pass) => verdict.with_score(1.0, None),
            (None, Status::Fail) => verdict.with_score(0.0, None),
            (None, Status::Error | Status::Skipped) => verdict,
        }
    }
}

/// The verdict of a check whose turns are missing or broke.
pub(crate) fn unanswered(
    name: &str,
    kind: &str,
    scope: Scope,
    rounds: usize,
    why: &str,
) -> Verdict {
    Verdict::new(
        name,
        kind,
        Status::Skipped,
        format!("no answer to check: {why}"),
    )
    .in_round(scope.round(None, rounds))
}

/// The `error` verdict of a check whose outputs the case's `transform` could not
/// rewrite.
fn untransformed(name: &str, kind: &str, scope: Scope, rounds: usize, why: &str) -> Verdict {
    Verdict::new(name, kind, Status::Error, why).in_round(scope.round(None, rounds))
}

/// One compiled deterministic check with its display name and scope.
pub(crate) struct Planned {
    name: String,
    scope: Scope,
    check: Check,
}

enum Check {
    Text(TextCheck),
    Json(JsonCheck),
    Tools(ToolsCheck),
    Verify(VerifyCheck),
    Trajectory(TrajectoryCheck),
    Latency(LatencyCheck),
    Cost(CostCheck),
    Stream(StreamCheck),
    Isolation(IsolationCheck),
    Clarification(ClarificationCheck),
}

impl Planned {
    fn new(scope: Scope, check: Check) -> Self {
        let name = match &check {
            Check::Text(c) => c.name(),
            Check::Json(c) => c.name(),
            Check::Tools(c) => c.name(),
            Check::Verify(c) => c.name(),
            Check::Trajectory(c) => c.name(),
            Check::Latency(c) => c.name(),
            Check::Cost(c) => c.name(),
            Check::Stream(c) => c.name(),
            Check::Isolation(c) => c.name(),
            Check::Clarification(c) => c.name(),
        };
        Planned { name, scope, check }
    }

    pub(crate) fn compile(
        spec: &CheckSpec,
        scope: Scope,
        expected: &Expected<'_>,
    ) -> Result<Self, FieldError> {
        let check = match spec {
            CheckSpec::Equals { .. }
            | CheckSpec::Contains { .. }
            | CheckSpec::Icontains { .. }
            | CheckSpec::ContainsAny { .. }
            | CheckSpec::IcontainsAny { .. }
            | CheckSpec::NotContains { .. }
            | CheckSpec::Regex { .. } => Check::Text(TextCheck::compile(spec, expected)?),
            CheckSpec::Cost { max_usd } => Check::Cost(CostCheck::compile(*max_usd)?),
            CheckSpec::IsJson { .. }
            | CheckSpec::JsonSchema { .. }
            | CheckSpec::RequiredKeys { .. }
            | CheckSpec::NumericFields { .. } => Check::Json(JsonCheck::compile(spec, expected)?),
            CheckSpec::ToolsCalled {
                tools,
                mode,
                strict,
                allow_errors,
            } => Check::Tools(
                ToolsCheck::compile(tools.as_deref(), *mode, *strict, expected)?
                    .allowing_errors(*allow_errors),
            ),
            CheckSpec::Latency { max_ms } => Check::Latency(LatencyCheck::new(*max_ms)),
            CheckSpec::Stream {
                min_deltas,
                require_done,
                non_empty,
                max_first_token_ms,
            } => Check::Stream(StreamCheck::new(
                *min_deltas,
                *require_done,
                *non_empty,
                *max_first_token_ms,
            )),
            CheckSpec::BranchIsolation {
                markers,
                judge: false,
                model,
            } => {
                if model.is_some() {
                    return Err(FieldError::new("model", "only `judge: true` uses a model"));
                }
                Check::Isolation(IsolationCheck::compile(markers, expected.branches, None)?)
            }
            CheckSpec::ToolVerification(spec) => Check::Verify(VerifyCheck::compile(spec)?),
            CheckSpec::Trajectory(spec) => Check::Trajectory(TrajectoryCheck::compile(spec)?),
            CheckSpec::Grounding(_)
            | CheckSpec::Database(_)
            | CheckSpec::Similar { .. }
            | CheckSpec::BranchIsolation { judge: true, .. }
            | CheckSpec::StepScore(_)
            | CheckSpec::Judge { .. }
            | CheckSpec::Rubric { .. }
            | CheckSpec::Pairwise { .. }
            | CheckSpec::Procedural(_)
            | CheckSpec::Consensus(_)
            | CheckSpec::Reactive(_)
            | CheckSpec::Dag(_)
            | CheckSpec::Script(_)
            | CheckSpec::GEval(_)
            | CheckSpec::Factuality(_)
            | CheckSpec::ClosedQa(_)
            | CheckSpec::AnswerRelevance(_)
            | CheckSpec::ContextRecall(_)
            | CheckSpec::ContextRelevance(_)
            | CheckSpec::ContextFaithfulness(_)
            | CheckSpec::Summarization(_) => {
                return Err(FieldError::new(
                    "",
                    format!("internal error: `{}` is not a code check", spec.kind()),
                ));
            }
        };
        Ok(Planned::new(scope, check))
    }

    fn kind(&self) -> &'static str {
        match &self.check {
            Check::Text(c) => c.kind(),
            Check::Json(c) => c.kind(),
            Check::Tools(_) => "tools-called",
            Check::Verify(_) => "tool-verification",
            Check::Trajectory(_) => "trajectory",
            Check::Latency(_) => "latency",
            Check::Cost(_) => "cost",
            Check::Stream(_) => "stream",
            Check::Isolation(_) => "branch-isolation",
            Check::Clarification(_) => ClarificationCheck::KIND,
        }
    }

    pub(crate) fn run(&self, transcript: &Transcript, rounds: usize) -> Verdict {
        let subject = match resolve(self.scope, transcript, rounds) {
            Ok(subject) => subject,
            Err(why) => return unanswered(&self.name, self.kind(), self.scope, rounds, &why),
        };
        let round = self.scope.round(Some(subject.answer), rounds);
        let mut scored = None;
        let finding = match &self.check {
            Check::Text(c) => c.evaluate(subject.answer),
            Check::Json(c) => c.evaluate(subject.answer),
            Check::Tools(c) => c.evaluate(&subject.turns),
            Check::Verify(c) => {
                let (finding, score) = c.evaluate(&subject.turns);
                scored = Some((score, c.threshold()));
                finding
            }
            Check::Trajectory(c) => c.evaluate(&subject.turns),
            Check::Latency(c) => c.evaluate(&subject.turns),
            Check::Cost(c) => c.evaluate(&subject.turns),
            Check::Stream(c) => c.evaluate(&subject),
            Check::Isolation(c) => c.evaluate(&subject),
            Check::Clarification(c) => c.evaluate(subject.answer),
        };
        let head = VerdictHead {
            name: &self.name,
            kind: self.kind(),
            round,
        };
        finding.verdict(head, scored)
    }
}

/// A check that asks a judge model.
enum Judging {
    /// A judge of one turn: `judge`, `rubric`, a panel.
    Turn(TurnJudge),
    /// `step-score`: a judge per step of the scope's turns.
    Steps(StepJudge),
    /// `grounding` whose claim a judge extracts.
    Grounding(GroundingCheck),
    /// `branch-isolation` with a judge.
    Isolation(IsolationCheck),
}

impl Judging {
    fn name(&self) -> String {
        match self {
            Judging::Turn(j) => j.name(),
            Judging::Steps(j) => j.name(),
            Judging::Grounding(c) => c.name(),
            Judging::Isolation(c) => c.name(),
        }
    }

    fn kind(&self) -> &'static str {
        match self {
            Judging::Turn(j) => j.kind(),
            Judging::Steps(_) => crate::judge::steps::KIND,
            Judging::Grounding(_) => "grounding",
            Judging::Isolation(_) => "branch-isolation",
        }
    }
}

/// One compiled judged check with its display name and scope.
struct PlannedJudge {
    name: String,
    scope: Scope,
    judge: Judging,
}

impl PlannedJudge {
    fn new(scope: Scope, judge: Judging) -> Self {
        PlannedJudge {
            name: judge.name(),
            scope,
            judge,
        }
    }

    /// The `skipped` verdict of a judge whose gate (a failed code check) is closed.
    fn gated(&self, transcript: &Transcript, rounds: usize, gate: &Verdict) -> Verdict {
        let answer = resolve(self.scope, transcript, rounds)
            .ok()
            .map(|s| s.answer);
        Verdict::new(
            &self.name,
            self.judge.kind(),
            Status::Skipped,
            format!("gated by {}", gate.check),
        )
        .in_round(self.scope.round(answer, rounds))
    }

    /// Grades the judged turn: that round's last turn, or the conversation's last
    /// turn; the judge sees every turn before it, and the tool calls of the round
    /// (of the whole conversation for case-level judges).
    async fn run(&self, transcript: &Transcript, rounds: usize, rt: &JudgeRuntime<'_>) -> Verdict {
        let kind = self.judge.kind();
        let subject = match resolve(self.scope, transcript, rounds) {
            Ok(subject) => subject,
            Err(why) => return unanswered(&self.name, kind, self.scope, rounds, &why),
        };
        let index = position(transcript, subject.answer);
        let tool_calls = match self.scope {
            Scope::Round(_) => subject
                .turns
                .iter()
                .flat_map(|t| t.tool_calls.iter())
                .collect(),
            Scope::LastTurn | Scope::Transcript => transcript.tool_calls().collect(),
        };
        let history = seen_before(transcript, index, subject.answer.branch.as_deref());
        let judged = Judged {
            withheld: None,
            history: &history,
            turn: subject.answer,
            tool_calls,
        };
        let head = VerdictHead {
            name: &self.name,
            kind,
            round: self.scope.round(Some(subject.answer), rounds),
        };
        match &self.judge {
            Judging::Turn(TurnJudge::Pointwise(j)) => j.run(head, &judged, rt).await,
            Judging::Turn(TurnJudge::Rubric(j)) => j.run(head, &judged, rt).await,
            Judging::Turn(TurnJudge::Metric(j)) => j.run(head, &judged, rt).await,
            Judging::Turn(TurnJudge::Panel(p)) => {
                p.run(head, &judged, transcript, rounds, rt).await
            }
            Judging::Steps(j) => j.run(head, &subject.turns, transcript, rt).await,
            Judging::Grounding(c) => c.judged(head, &judged, &transcript.session_id, rt).await,
            Judging::Isolation(c) => c.judged(head, &subject, transcript, rt).await,
        }
    }
}

/// Where `turn` sits in the transcript (its length when it is not there).
pub(crate) fn position(transcript: &Transcript, turn: &Turn) -> usize {
    transcript
        .turns
        .iter()
        .position(|t| std::ptr::eq(t, turn))
        .unwrap_or(transcript.turns.len())
}

/// The turns before position `index` that a turn of `branch` was answered seeing:
/// the parent's and its own branch's only.
pub(crate) fn seen_before(
    transcript: &Transcript,
    index: usize,
    branch: Option<&str>,
) -> Vec<Turn> {
    transcript.turns[..index.min(transcript.turns.len())]
        .iter()
        .filter(|t| t.branch.is_none() || t.branch.as_deref() == branch)
        .cloned()
        .collect()
}

/// Finds the turns a scope reads, or says why there is no answer to check.
pub(crate) fn resolve(
    scope: Scope,
    transcript: &Transcript,
    rounds: usize,
) -> Result<Subject<'_>, String> {
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
        let e = compile(&case(
            "input: q\nchecks:\n  - type: regex\n    pattern: '('\n",
        ))
        .unwrap_err();
        let CheckError::Invalid {
            source_loc,
            case_id,
            field,
            message,
        } = &e
        else {
            panic!("{e:?}")
        };
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
        let plan = compile(&case("input: q\n")).unwrap();
        assert!(plan.is_empty());
        assert!(run_all(&plan, &transcript(vec![turn(0, "x")])).is_empty());
    }

    #[test]
    fn round_checks_read_the_last_turn_of_their_round() {
        let c = case(
            "rounds:\n  - input: find me a house\n    checks: [{type: contains, value: Beach House}]\n  - input: book it\n    checks: [{type: contains, value: booked}]\nchecks: [{type: contains, value: booked}]\n",
        );
        let plan = compile(&c).unwrap();
        // Round 0 got a clarifying question, then the real answer.
        let turns = vec![
            turn(0, "Which town?"),
            turn(0, "Beach House is free"),
            turn(1, "booked"),
        ];
        let verdicts = run_all(&plan, &transcript(turns));
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
        let verdicts = run_all(&plan, &transcript(turns));
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
        let plan = compile(&c).unwrap();
        let verdicts = run_all(&plan, &transcript(vec![turn(0, "x")]));
        assert_eq!(verdicts.len(), 2);
        for v in &verdicts {
            assert_eq!((v.status, v.round), (Status::Skipped, None));
            assert_eq!(v.reason, "no answer to check: round 2 of 2 was not reached");
        }
        let verdicts = run_all(
            &plan,
            &transcript(vec![turn(0, "x"), failed(1, "reset by peer")]),
        );
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
        let plan = compile(&suite.cases[0]).unwrap();
        let v = &run_all(&plan, &transcript(vec![turn(0, "[error] upstream")]))[0];
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
