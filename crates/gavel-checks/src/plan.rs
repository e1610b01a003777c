//! Compiling a case's checks into a [`CheckPlan`] and running it on a transcript.
//! Which compiler a check kind takes is the [`registry`](crate::registry)'s
//! business; this module walks a case's levels and runs what they compiled to.

use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;

use gavel_core::{Case, CheckSpec, JudgeSettings, Transcript, Verdict};

use crate::awaited::PlannedAwaited;
use crate::check::Reads;
use crate::clarify::ClarificationCheck;
use crate::code::Planned;
use crate::error::{CheckError, FieldError};
use crate::expected::Expected;
use crate::judge::compile::{Env, Level, Templates};
use crate::judge::{PairwiseSpec, SelectBestSpec};
use crate::names::{Repeats, numbered};
use crate::registry::{Entry, Site, SpecError};
use crate::runtime::JudgeRuntime;
use crate::similar::SimilarCheck;
use crate::subject::Scope;
use crate::tools::ToolsCheck;
use crate::transform::OutputTransform;

/// A case's checks, compiled once and run on every execution of the case.
pub struct CheckPlan {
    /// Deterministic checks, in plan order.
    checks: Vec<Planned>,
    /// Checks that read outside the transcript (SQL, commands), after the code checks.
    probes: Vec<PlannedAwaited>,
    /// Judged checks (`judge`, `rubric`, panels, `step-score`, judged `grounding`
    /// and `branch-isolation`), after the code checks and gated by them.
    judges: Vec<PlannedAwaited>,
    /// Pairwise comparisons, which the runner performs.
    pairwise: Vec<PairwiseSpec>,
    /// Listwise comparisons of the case's executions, which the runner performs.
    select_best: Vec<SelectBestSpec>,
    /// How many rounds the case has (at least 1).
    rounds: usize,
    /// The case's `transform` of every output, applied (once) before any check
    /// reads it; pairwise and select-best specs hold it too.
    transform: Option<Arc<OutputTransform>>,
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
            .field(
                "select_best",
                &self
                    .select_best
                    .iter()
                    .map(SelectBestSpec::name)
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
/// (rounds in order, then the case's); pairwise and select-best checks are kept
/// apart for the runner ([`CheckPlan::pairwise`], [`CheckPlan::select_best`]).
pub fn compile(case: &Case, settings: &JudgeSettings) -> Result<CheckPlan, CheckError> {
    let templates = Templates::load(&settings.templates).map_err(|(kind, path, message)| {
        CheckError::Template {
            kind,
            path,
            message,
        }
    })?;
    let rounds = case.rounds.len().max(1);
    let branches = case.branches();
    // Judge errors carry absolute field paths; the location is the field's own
    // `file:line:column` when the case's YAML file shows it.
    let invalid_at = |e: FieldError| CheckError::Invalid {
        source_loc: gavel_core::load::locate(&case.source, &e.field)
            .unwrap_or_else(|| case.source.clone()),
        case_id: case.id.clone(),
        field: e.field,
        message: e.message,
    };

    let transform = match &case.transform {
        Some(spec) => Some(Arc::new(OutputTransform::compile(spec).map_err(|e| {
            invalid_at(FieldError::new(format!("transform.{}", e.field), e.message))
        })?)),
        None => None,
    };
    let env = Env::new(case, settings, templates, transform.clone());
    let mut plan = CheckPlan {
        checks: Vec::new(),
        probes: Vec::new(),
        judges: Vec::new(),
        pairwise: Vec::new(),
        select_best: Vec::new(),
        rounds,
        transform,
    };
    let script_case = crate::script::ScriptCase {
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
        let turn_judged = plan
            .add_checks(&round.checks, &env, &level, &at, scope, &expected)
            .map_err(invalid_at)?;
        if !round.expected_tools.is_empty() && !has_defaulted_tools_check(&round.checks) {
            plan.checks.push(Planned::new(
                scope,
                Box::new(ToolsCheck::implicit(&round.expected_tools)),
            ));
        }
        if round.expect_clarification {
            plan.checks
                .push(Planned::new(scope, Box::new(ClarificationCheck)));
        }
        if !turn_judged {
            plan.add_implicit_judge(case, &env, &level, scope)
                .map_err(invalid_at)?;
        }
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
    let turn_judged = plan
        .add_checks(&case.checks, &env, &level, &at, Scope::LastTurn, &expected)
        .map_err(invalid_at)?;
    if !case.expected_tools.is_empty() && !has_defaulted_tools_check(&case.checks) {
        plan.checks.push(Planned::new(
            Scope::Transcript,
            Box::new(ToolsCheck::implicit(&case.expected_tools)),
        ));
    }
    if !turn_judged {
        plan.add_implicit_judge(case, &env, &level, Scope::LastTurn)
            .map_err(invalid_at)?;
    }
    plan.number_repeated_names();
    Ok(plan)
}

/// Whether an explicit `tools-called` without `tools` already uses `expected_tools`.
fn has_defaulted_tools_check(checks: &[CheckSpec]) -> bool {
    checks
        .iter()
        .any(|c| matches!(c, CheckSpec::ToolsCalled { tools: None, .. }))
}

impl CheckPlan {
    /// Compiles one level's checks through the registry; `turn` is the scope of a
    /// check of the level's turn. Returns whether a judge of the level's turn uses
    /// its criteria. Errors carry absolute field paths.
    fn add_checks(
        &mut self,
        specs: &[CheckSpec],
        env: &Env<'_>,
        level: &Level<'_>,
        at: &dyn Fn(usize) -> String,
        turn: Scope,
        expected: &Expected<'_>,
    ) -> Result<bool, FieldError> {
        let mut turn_judged = false;
        for (i, spec) in specs.iter().enumerate() {
            let field = at(i);
            let site = Site {
                field: &field,
                env,
                level,
                scope: turn,
                expected,
            };
            let (reads, entry) = crate::registry::compile(spec, &site).map_err(|e| match e {
                SpecError::Absolute(e) => e,
                SpecError::Relative(e) if e.field.is_empty() => {
                    FieldError::new(field.clone(), e.message)
                }
                SpecError::Relative(e) => {
                    FieldError::new(format!("{field}.{}", e.field), e.message)
                }
            })?;
            let scope = match (turn, reads) {
                (Scope::LastTurn, Reads::Transcript) => Scope::Transcript,
                (scope, _) => scope,
            };
            match entry {
                Entry::Code(check) => self.checks.push(Planned::new(scope, check)),
                Entry::Probe(check) => self.probes.push(PlannedAwaited::new(scope, check)),
                Entry::Judge(check) => self.judges.push(PlannedAwaited::new(scope, check)),
                Entry::TurnJudge(check) => {
                    turn_judged = true;
                    self.judges.push(PlannedAwaited::new(scope, check));
                }
                Entry::Pairwise(p) => self.pairwise.push(p),
                Entry::SelectBest(s) => self.select_best.push(s),
            }
        }
        Ok(turn_judged)
    }

    /// Numbers the checks that share a display name and a round (`name #2`):
    /// two verdicts of one execution never share a name, so reports keyed by
    /// name (the JSON `scores`) keep each.
    fn number_repeated_names(&mut self) {
        let rounds = self.rounds;
        let mut repeats = Repeats::default();
        for c in &mut self.checks {
            let number = repeats.number(&c.name, c.round(rounds));
            c.name = numbered(std::mem::take(&mut c.name), number);
        }
        for c in self.probes.iter_mut().chain(&mut self.judges) {
            let number = repeats.number(&c.name, c.round(rounds));
            c.name = numbered(std::mem::take(&mut c.name), number);
        }
        for p in &mut self.pairwise {
            p.number = repeats.number(&p.name(), p.round);
        }
        for s in &mut self.select_best {
            s.number = repeats.number(&s.name(), s.round);
        }
    }

    /// The pointwise judge a level's own `criteria` add.
    fn add_implicit_judge(
        &mut self,
        case: &Case,
        env: &Env<'_>,
        level: &Level<'_>,
        scope: Scope,
    ) -> Result<(), FieldError> {
        if let Some(criteria) = Level::own_criteria(case, level.round) {
            let judge = env.implicit(level, criteria)?;
            self.judges
                .push(PlannedAwaited::new(scope, Box::new(judge)));
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
                .map(|c| c.untransformed(self.rounds, &why))
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
    fn transformed<'t>(&self, transcript: &'t Transcript) -> Result<Cow<'t, Transcript>, String> {
        match &self.transform {
            None => Ok(Cow::Borrowed(transcript)),
            Some(t) => t.apply(transcript).map(Cow::Owned),
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
                let checks = self.checks.iter().map(|c| c.untransformed(rounds, &why));
                let awaited = self.probes.iter().chain(&self.judges);
                return checks
                    .chain(awaited.map(|c| c.untransformed(rounds, &why)))
                    .collect();
            }
        };
        let transcript = transcript.as_ref();
        let mut verdicts = self.run_code_on(transcript);
        let probed = self
            .probes
            .iter()
            .map(|p| p.run(transcript, self.rounds, judges));
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
        verdicts.extend(self.judge(transcript, judges).await);
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
        match self.transformed(transcript) {
            Ok(transcript) => self.judge(&transcript, judges).await,
            Err(why) => self
                .judges
                .iter()
                .map(|j| j.untransformed(self.rounds, &why))
                .collect(),
        }
    }

    /// The judges on a transcript already transformed.
    async fn judge(&self, transcript: &Transcript, judges: &JudgeRuntime<'_>) -> Vec<Verdict> {
        let graded = self
            .judges
            .iter()
            .map(|j| j.run(transcript, self.rounds, judges));
        futures::future::join_all(graded).await
    }

    /// Whether a `similar` check needs an embedder.
    pub fn uses_embeddings(&self) -> bool {
        self.probes.iter().any(|p| p.kind() == SimilarCheck::KIND)
    }

    /// Every judge configuration the case's checks grade with, pairwise and
    /// select-best included, each once.
    pub fn judge_uses(&self) -> Vec<crate::JudgeUse> {
        let mut uses: Vec<crate::JudgeUse> = Vec::new();
        let all = self
            .probes
            .iter()
            .chain(&self.judges)
            .flat_map(PlannedAwaited::judges)
            .chain(self.pairwise.iter().map(PairwiseSpec::judge_use))
            .chain(self.select_best.iter().map(SelectBestSpec::judge_use));
        for u in all {
            if !uses.iter().any(|seen| seen.same_judge(&u)) {
                uses.push(u);
            }
        }
        uses
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

    /// The case's select-best checks, for the runner: it gathers the answers of
    /// the case's executions and calls [`select_best`](crate::select_best).
    pub fn select_best(&self) -> &[SelectBestSpec] {
        &self.select_best
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

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use std::path::Path;

    use gavel_core::{Status, TargetFailure, Turn};

    use crate::CheckError;
    use crate::testing::{case, compile, run_all, run_one, transcript, turn};

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
    fn checks_of_one_round_never_share_a_name() {
        let c = case(
            "rounds:\n  - input: a\n    checks: [{type: contains, value: x}]\n  - input: b\n    checks: [{type: contains, value: x}]\nchecks:\n  - {type: contains, value: x}\n  - {type: handoff-correctness, handoffs: [triage, billing]}\n  - {type: handoff-correctness, handoffs: [triage, billing], exact: true}\n  - {type: select-best}\n  - {type: select-best}\n",
        );
        let plan = compile(&c).unwrap();
        let turns = vec![turn(0, "x"), turn(1, "x")];
        let names: Vec<(String, Option<usize>)> = run_all(&plan, &transcript(turns))
            .into_iter()
            .map(|v| (v.check, v.round))
            .collect();
        let named = |n: &str, r| (n.to_owned(), r);
        assert_eq!(
            names,
            [
                named("contains \"x\"", Some(0)),
                named("contains \"x\"", Some(1)),
                // The case's check reads the last round's answer, as round 2's does.
                named("contains \"x\" #2", Some(1)),
                named("handoff-correctness triage → billing", None),
                named("handoff-correctness triage → billing (exact)", None),
            ]
        );
        let best: Vec<String> = plan.select_best().iter().map(|s| s.name()).collect();
        assert_eq!(
            best,
            ["select-best among targets", "select-best among targets #2"]
        );
    }
}
