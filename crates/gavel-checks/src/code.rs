//! Deterministic checks: the one place a deterministic check kind is compiled
//! ([`compile`]), and a compiled check with its scope ([`Planned`]).

use gavel_core::{CheckSpec, Transcript, Verdict};

use crate::arguments::ArgumentsCheck;
use crate::branches::IsolationCheck;
use crate::check::{CodeCheck, Reads};
use crate::cost::CostCheck;
use crate::error::FieldError;
use crate::expected::Expected;
use crate::finding::{VerdictHead, unanswered};
use crate::handoffs::{CollaborationCheck, HandoffCheck};
use crate::json::JsonCheck;
use crate::latency::LatencyCheck;
use crate::stream::StreamCheck;
use crate::subject::{Scope, resolve};
use crate::text::TextCheck;
use crate::tools::ToolsCheck;
use crate::trajectory::TrajectoryCheck;
use crate::verify::VerifyCheck;
use crate::workspace::{CommandCheck, DiffCheck, FileCheck};

/// A compiled deterministic check and what it reads at the case level.
pub(crate) type CompiledCode = (Reads, Box<dyn CodeCheck>);

/// Compiles a deterministic check kind, with what it reads at the case level;
/// `None` when `spec` is not a deterministic kind. Field paths in errors are
/// relative to the check. The match is exhaustive: a new kind says here whether
/// it is deterministic.
pub(crate) fn compile(
    spec: &CheckSpec,
    expected: &Expected<'_>,
) -> Option<Result<CompiledCode, FieldError>> {
    fn turn(c: impl CodeCheck + 'static) -> CompiledCode {
        (Reads::Turn, Box::new(c))
    }
    fn whole(c: impl CodeCheck + 'static) -> CompiledCode {
        (Reads::Transcript, Box::new(c))
    }
    let compiled = match spec {
        CheckSpec::Equals { .. }
        | CheckSpec::Contains { .. }
        | CheckSpec::Icontains { .. }
        | CheckSpec::ContainsAny { .. }
        | CheckSpec::IcontainsAny { .. }
        | CheckSpec::NotContains { .. }
        | CheckSpec::Regex { .. } => TextCheck::compile(spec, expected).map(turn),
        CheckSpec::IsJson { .. }
        | CheckSpec::JsonSchema { .. }
        | CheckSpec::RequiredKeys { .. }
        | CheckSpec::NumericFields { .. } => JsonCheck::compile(spec, expected).map(turn),
        CheckSpec::ToolsCalled {
            tools,
            mode,
            strict,
            allow_errors,
        } => ToolsCheck::compile(tools.as_deref(), *mode, *strict, expected)
            .map(|c| whole(c.allowing_errors(*allow_errors))),
        CheckSpec::Latency { max_ms } => Ok(whole(LatencyCheck::new(*max_ms))),
        CheckSpec::Cost { max_usd } => CostCheck::compile(*max_usd).map(whole),
        CheckSpec::Stream {
            min_deltas,
            require_done,
            non_empty,
            max_first_token_ms,
        } => Ok(whole(StreamCheck::new(
            *min_deltas,
            *require_done,
            *non_empty,
            *max_first_token_ms,
        ))),
        CheckSpec::BranchIsolation {
            markers,
            judge: false,
            model,
        } => match model {
            Some(_) => Err(FieldError::new("model", "only `judge: true` uses a model")),
            None => IsolationCheck::compile(markers, expected.branches, None).map(whole),
        },
        CheckSpec::ToolVerification(spec) => VerifyCheck::compile(spec).map(whole),
        CheckSpec::Trajectory(spec) => TrajectoryCheck::compile(spec).map(whole),
        CheckSpec::ArgumentValidity(spec) => ArgumentsCheck::compile(spec).map(whole),
        CheckSpec::HandoffCorrectness(spec) => HandoffCheck::compile(spec).map(whole),
        CheckSpec::CollaborationEfficiency(spec) => CollaborationCheck::compile(spec).map(whole),
        CheckSpec::File(spec) => FileCheck::compile(spec).map(turn),
        CheckSpec::Diff(spec) => DiffCheck::compile(spec).map(turn),
        CheckSpec::Command(spec) => CommandCheck::compile(spec).map(turn),
        CheckSpec::BranchIsolation { judge: true, .. }
        | CheckSpec::Grounding(_)
        | CheckSpec::Database(_)
        | CheckSpec::Script(_)
        | CheckSpec::Similar { .. }
        | CheckSpec::StepScore(_)
        | CheckSpec::Judge { .. }
        | CheckSpec::Rubric { .. }
        | CheckSpec::Pairwise { .. }
        | CheckSpec::SelectBest { .. }
        | CheckSpec::Procedural(_)
        | CheckSpec::Consensus(_)
        | CheckSpec::Reactive(_)
        | CheckSpec::Dag(_)
        | CheckSpec::GEval(_)
        | CheckSpec::Factuality(_)
        | CheckSpec::ClosedQa(_)
        | CheckSpec::AnswerRelevance(_)
        | CheckSpec::ContextRecall(_)
        | CheckSpec::ContextRelevance(_)
        | CheckSpec::ContextFaithfulness(_)
        | CheckSpec::Summarization(_)
        | CheckSpec::TaskCompletion(_)
        | CheckSpec::ConversationCompleteness(_)
        | CheckSpec::TurnRelevancy(_)
        | CheckSpec::ContextRetention(_)
        | CheckSpec::RoleAdherence(_) => return None,
    };
    Some(compiled)
}

/// One compiled deterministic check with its display name and scope.
pub(crate) struct Planned {
    pub(crate) name: String,
    scope: Scope,
    check: Box<dyn CodeCheck>,
}

impl Planned {
    /// The check, reading what `scope` finds.
    pub(crate) fn new(scope: Scope, check: Box<dyn CodeCheck>) -> Self {
        Planned {
            name: check.name(),
            scope,
            check,
        }
    }

    /// The round its verdicts are of (`None`: the whole transcript).
    pub(crate) fn round(&self, rounds: usize) -> Option<usize> {
        self.scope.round(None, rounds)
    }

    /// The `error` verdict of a check whose outputs the case's `transform` could
    /// not rewrite.
    pub(crate) fn untransformed(&self, rounds: usize, why: &str) -> Verdict {
        Verdict::new(
            &self.name,
            self.check.kind(),
            gavel_core::Status::Error,
            why,
        )
        .in_round(self.scope.round(None, rounds))
    }

    /// Grades one execution's transcript; unanswered turns skip the check.
    pub(crate) fn run(&self, transcript: &Transcript, rounds: usize) -> Verdict {
        let kind = self.check.kind();
        let subject = match resolve(self.scope, transcript, rounds) {
            Ok(subject) => subject,
            Err(why) => return unanswered(&self.name, kind, self.scope, rounds, &why),
        };
        let head = VerdictHead {
            name: &self.name,
            kind,
            round: self.scope.round(Some(subject.answer), rounds),
        };
        self.check.evaluate(&subject).verdict(head)
    }
}
