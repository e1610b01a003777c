//! The one place a check kind meets its compiler: [`compile`] turns a check spec
//! into a compiled check of one of the shapes a [`CheckPlan`](crate::CheckPlan)
//! runs. A new kind is one arm here (when deterministic, also one in
//! [`code::compile`](crate::code::compile), which panel stages share) and its
//! own module.

use gavel_core::CheckSpec;
use gavel_core::agent_check::{Claim, GroundingSpec};

use crate::branches::IsolationCheck;
use crate::check::{AwaitedCheck, CodeCheck, Reads};
use crate::database::DatabaseCheck;
use crate::error::FieldError;
use crate::expected::Expected;
use crate::grounding::GroundingCheck;
use crate::judge::compile::{Compiled, Env, Level, check_model};
use crate::judge::steps::StepJudge;
use crate::judge::{PairwiseSpec, SelectBestSpec};
use crate::script::ScriptCheck;
use crate::similar::SimilarCheck;
use crate::subject::Scope;

/// A compiled check, by when the plan runs it.
pub(crate) enum Entry {
    /// Deterministic, first.
    Code(Box<dyn CodeCheck>),
    /// Reads outside the transcript, after the code checks.
    Probe(Box<dyn AwaitedCheck>),
    /// Asks a judge model, last, gated by the code checks.
    Judge(Box<dyn AwaitedCheck>),
    /// A judge of the level's turn that uses the level's `criteria` (so no
    /// implicit judge is added for them).
    TurnJudge(Box<dyn AwaitedCheck>),
    /// Compared with another answer by the runner.
    Pairwise(PairwiseSpec),
    /// Compared with the case's other executions' answers by the runner.
    SelectBest(SelectBestSpec),
}

/// A compile error, by whether its field path is relative to the check or
/// already absolute.
pub(crate) enum SpecError {
    Relative(FieldError),
    Absolute(FieldError),
}

/// Where a check spec sits: its field path and what its level gives it.
pub(crate) struct Site<'a> {
    /// The check's field path, e.g. `rounds[0].checks[2]`.
    pub(crate) field: &'a str,
    pub(crate) env: &'a Env<'a>,
    pub(crate) level: &'a Level<'a>,
    /// The scope of a check of the level's turn.
    pub(crate) scope: Scope,
    pub(crate) expected: &'a Expected<'a>,
}

/// Compiles one check spec, with what it reads at the case level. The match is
/// exhaustive (no catch-all arm): a new kind does not compile without its arm.
pub(crate) fn compile(spec: &CheckSpec, site: &Site<'_>) -> Result<(Reads, Entry), SpecError> {
    use SpecError::{Absolute, Relative};
    let field = site.field;
    let model_of = |model: Option<&String>| check_model(model, format!("{field}.model"));
    let entry = match spec {
        CheckSpec::Judge { .. }
        | CheckSpec::Rubric { .. }
        | CheckSpec::Pairwise { .. }
        | CheckSpec::SelectBest { .. } => {
            match site
                .env
                .explicit(spec, field, site.level)
                .map_err(Absolute)?
            {
                Compiled::Turn(judge) => (Reads::Turn, Entry::TurnJudge(Box::new(judge))),
                Compiled::Pairwise(p) => (Reads::Turn, Entry::Pairwise(p)),
                Compiled::SelectBest(s) => (Reads::Turn, Entry::SelectBest(s)),
            }
        }
        CheckSpec::Procedural(_)
        | CheckSpec::Consensus(_)
        | CheckSpec::Reactive(_)
        | CheckSpec::Dag(_) => {
            let panel =
                crate::panel::compile(spec, field, site.env, site.level, site.scope, site.expected)
                    .map_err(Absolute)?;
            (Reads::Turn, Entry::TurnJudge(Box::new(panel)))
        }
        CheckSpec::StepScore(spec) => {
            let judge = StepJudge::compile(spec, field, site.env, site.level).map_err(Absolute)?;
            (Reads::Transcript, Entry::Judge(Box::new(judge)))
        }
        CheckSpec::Grounding(
            spec @ GroundingSpec {
                claim: Claim::Judge(what),
                ..
            },
        ) => {
            model_of(spec.model.as_ref()).map_err(Absolute)?;
            let material = site.env.material(
                what.clone(),
                None,
                site.level,
                spec.model.as_ref(),
                &site.env.templates.extract,
            );
            let check = GroundingCheck::compile(spec, Some(material)).map_err(Relative)?;
            (Reads::Turn, Entry::Judge(Box::new(check)))
        }
        CheckSpec::BranchIsolation {
            markers,
            judge: true,
            model,
        } => {
            model_of(model.as_ref()).map_err(Absolute)?;
            let material = site
                .env
                .choice_material(String::new(), site.level, model.as_ref());
            let check = IsolationCheck::compile(markers, site.expected.branches, Some(material))
                .map_err(Relative)?;
            (Reads::Transcript, Entry::Judge(Box::new(check)))
        }
        CheckSpec::Grounding(spec) => {
            let check = GroundingCheck::compile(spec, None).map_err(Relative)?;
            (Reads::Turn, Entry::Probe(Box::new(check)))
        }
        CheckSpec::Database(spec) => {
            let check = DatabaseCheck::compile(spec).map_err(Relative)?;
            (Reads::Transcript, Entry::Probe(Box::new(check)))
        }
        CheckSpec::Script(spec) => {
            let check = ScriptCheck::compile(spec, site.expected).map_err(Relative)?;
            let reads = match spec.input {
                gavel_core::ScriptInput::Turn => Reads::Turn,
                gavel_core::ScriptInput::Transcript => Reads::Transcript,
            };
            (reads, Entry::Probe(Box::new(check)))
        }
        CheckSpec::GEval(_) | CheckSpec::ClosedQa(_) => match site
            .env
            .explicit(spec, field, site.level)
            .map_err(Absolute)?
        {
            Compiled::Turn(judge) => (Reads::Turn, Entry::TurnJudge(Box::new(judge))),
            Compiled::Pairwise(p) => (Reads::Turn, Entry::Pairwise(p)),
            Compiled::SelectBest(s) => (Reads::Turn, Entry::SelectBest(s)),
        },
        CheckSpec::Factuality(_)
        | CheckSpec::AnswerRelevance(_)
        | CheckSpec::ContextRecall(_)
        | CheckSpec::ContextRelevance(_)
        | CheckSpec::ContextFaithfulness(_)
        | CheckSpec::Summarization(_)
        | CheckSpec::TaskCompletion(_)
        | CheckSpec::ConversationCompleteness(_)
        | CheckSpec::TurnRelevancy(_)
        | CheckSpec::ContextRetention(_)
        | CheckSpec::RoleAdherence(_) => match site
            .env
            .explicit(spec, field, site.level)
            .map_err(Absolute)?
        {
            Compiled::Turn(judge) => (Reads::Turn, Entry::Judge(Box::new(judge))),
            Compiled::Pairwise(p) => (Reads::Turn, Entry::Pairwise(p)),
            Compiled::SelectBest(s) => (Reads::Turn, Entry::SelectBest(s)),
        },
        CheckSpec::Similar { value, threshold } => {
            let check = SimilarCheck::compile(value.as_ref(), *threshold, site.expected)
                .map_err(Relative)?;
            (Reads::Turn, Entry::Probe(Box::new(check)))
        }
        CheckSpec::Equals { .. }
        | CheckSpec::Contains { .. }
        | CheckSpec::Icontains { .. }
        | CheckSpec::ContainsAny { .. }
        | CheckSpec::IcontainsAny { .. }
        | CheckSpec::NotContains { .. }
        | CheckSpec::Regex { .. }
        | CheckSpec::IsJson { .. }
        | CheckSpec::JsonSchema { .. }
        | CheckSpec::RequiredKeys { .. }
        | CheckSpec::NumericFields { .. }
        | CheckSpec::ToolsCalled { .. }
        | CheckSpec::Latency { .. }
        | CheckSpec::Cost { .. }
        | CheckSpec::Stream { .. }
        | CheckSpec::BranchIsolation { judge: false, .. }
        | CheckSpec::ToolVerification(_)
        | CheckSpec::Trajectory(_)
        | CheckSpec::ArgumentValidity(_)
        | CheckSpec::HandoffCorrectness(_)
        | CheckSpec::CollaborationEfficiency(_)
        | CheckSpec::File(_)
        | CheckSpec::Diff(_)
        | CheckSpec::Command(_) => match crate::code::compile(spec, site.expected) {
            Some(compiled) => {
                let (reads, check) = compiled.map_err(Relative)?;
                (reads, Entry::Code(check))
            }
            None => {
                return Err(Relative(FieldError::new(
                    "",
                    format!("internal error: `{}` has no compiler", spec.kind()),
                )));
            }
        },
    };
    Ok(entry)
}
