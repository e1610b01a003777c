//! What a run left undone: executions it planned and never recorded, and a run
//! status other than `completed`. Either fails the gate, whatever the pass rate
//! over what ran: a run stopped at `--max-cost`, interrupted, failed or killed
//! (its status still `running`) never passes.

use gavel_core::{RunRecord, RunStatus};
use serde::{Deserialize, Serialize};

/// Why a run did not finish its plan.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum UnfinishedReason {
    /// It stopped scheduling work when the spend reached `--max-cost`.
    BudgetStopped,
    /// It was stopped (Ctrl-C).
    Interrupted,
    /// Its status is still `running`: the process died (or it is not done yet).
    Crashed,
    /// The harness failed before finishing.
    Failed,
    /// It completed without recording every planned execution (work lost, e.g.
    /// a distributed run whose queue was cleared).
    Incomplete,
}

impl UnfinishedReason {
    /// A short phrase for people: `budget stopped: the spend reached --max-cost`.
    pub fn describe(self) -> &'static str {
        match self {
            UnfinishedReason::BudgetStopped => "budget stopped: the spend reached --max-cost",
            UnfinishedReason::Interrupted => "interrupted",
            UnfinishedReason::Crashed => {
                "crashed: the run's status is still running (the process died, or the run is not done yet)"
            }
            UnfinishedReason::Failed => "failed: the harness stopped before finishing",
            UnfinishedReason::Incomplete => {
                "incomplete: the run completed without recording every planned execution"
            }
        }
    }
}

/// What a run left undone; [`Unfinished::new`] is `None` for a run that finished
/// its plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Unfinished {
    /// Why.
    pub reason: UnfinishedReason,
    /// Executions planned, when the run recorded its plan ([`RunRecord::planned`]).
    pub planned: Option<u64>,
    /// Executions recorded.
    pub recorded: u64,
    /// `planned − recorded`: executions that never ran; `None` when the plan is unknown.
    pub unrun: Option<u64>,
    /// Ids of the cases saved with the run that have no execution at all, in
    /// snapshot order.
    pub unrun_cases: Vec<String>,
}

impl Unfinished {
    /// What `run` left undone, from its status, its plan, the executions
    /// `recorded` and the ids of its saved cases with no execution
    /// (`unrun_cases`, in snapshot order); `None` when it completed and
    /// recorded every planned execution (or completed with no plan recorded).
    pub fn new(run: &RunRecord, recorded: u64, unrun_cases: Vec<String>) -> Option<Unfinished> {
        let unrun = run.planned.map(|p| p.saturating_sub(recorded));
        let reason = match run.status {
            RunStatus::Completed if unrun.unwrap_or(0) == 0 => return None,
            RunStatus::Completed => UnfinishedReason::Incomplete,
            RunStatus::Running => UnfinishedReason::Crashed,
            RunStatus::Interrupted => UnfinishedReason::Interrupted,
            RunStatus::BudgetStopped => UnfinishedReason::BudgetStopped,
            RunStatus::Failed => UnfinishedReason::Failed,
        };
        Some(Unfinished {
            reason,
            planned: run.planned,
            recorded,
            unrun,
            unrun_cases,
        })
    }

    /// One sentence for summaries, e.g. `5 of 8 planned executions did not run
    /// (budget stopped: the spend reached --max-cost)`.
    pub fn sentence(&self) -> String {
        let why = self.reason.describe();
        match (self.unrun, self.planned) {
            (Some(0), Some(planned)) => format!(
                "the run did not finish ({why}), although all {planned} planned executions were recorded"
            ),
            (Some(unrun), Some(planned)) => {
                format!("{unrun} of {planned} planned executions did not run ({why})")
            }
            _ if !self.unrun_cases.is_empty() => format!(
                "the run did not finish ({why}): {} of its cases did not run, and how many executions were planned is unknown",
                self.unrun_cases.len()
            ),
            _ => format!(
                "the run did not finish ({why}); how many executions were planned is unknown"
            ),
        }
    }
}
