//! Pairwise checks need another answer: a different target's in this run (so the
//! execution waits until that one lands) or a stored run's.

use std::collections::HashMap;

use gavel_checks::{PairwiseInput, PairwiseSpec};
use gavel_core::{Execution, ExecutionKey, Status, Transcript, Turn, Verdict};

use crate::{ExecuteOptions, Plan};

/// Holds executions with pairwise checks until their partners have answered.
pub(crate) struct Pairing {
    specs: HashMap<String, Vec<PairwiseSpec>>,
    answers: HashMap<ExecutionKey, Transcript>,
    parked: Vec<Execution>,
}

impl Pairing {
    pub(crate) fn new(plan: &Plan) -> Pairing {
        Pairing {
            specs: plan.pairwise().clone(),
            answers: HashMap::new(),
            parked: Vec::new(),
        }
    }

    /// Takes a finished execution; returns the executions now complete (this one
    /// and any that were waiting for it).
    pub(crate) async fn finished(
        &mut self,
        e: Execution,
        options: &ExecuteOptions<'_>,
    ) -> Vec<Execution> {
        if self.specs.is_empty() {
            return vec![e];
        }
        let case_has_specs = self.specs.contains_key(&e.case_id);
        if self
            .specs
            .values()
            .flatten()
            .any(|s| s.against.target.as_deref() == Some(e.target.as_str()))
        {
            self.answers.insert(e.key(), e.transcript.clone());
        }
        let mut ready = Vec::new();
        if case_has_specs {
            self.parked.push(e);
        } else {
            ready.push(e);
        }
        let (complete, waiting): (Vec<_>, Vec<_>) = std::mem::take(&mut self.parked)
            .into_iter()
            .partition(|p| self.partners_in(p));
        self.parked = waiting;
        for p in complete {
            ready.push(self.complete(p, options).await);
        }
        ready
    }

    /// Completes every execution still waiting: missing partners give `skipped`.
    pub(crate) async fn drain(&mut self, options: &ExecuteOptions<'_>) -> Vec<Execution> {
        let mut out = Vec::new();
        for p in std::mem::take(&mut self.parked) {
            out.push(self.complete(p, options).await);
        }
        out
    }

    fn partners_in(&self, e: &Execution) -> bool {
        self.specs[&e.case_id]
            .iter()
            .all(|s| match &s.against.target {
                Some(t) if *t != e.target => {
                    let partner = ExecutionKey::new(&e.case_id, t, e.repeat_index);
                    self.answers.contains_key(&partner)
                }
                _ => true,
            })
    }

    async fn complete(&self, mut e: Execution, options: &ExecuteOptions<'_>) -> Execution {
        // The target compared against is the reference: it gets no pairwise verdict.
        let specs = self.specs[&e.case_id]
            .iter()
            .filter(|s| s.against.target.as_deref() != Some(e.target.as_str()));
        for spec in specs {
            let verdict = self.compare(spec, &e, options).await.in_round(spec.round);
            e.verdicts.push(verdict);
        }
        e.settle();
        e
    }

    async fn compare(
        &self,
        spec: &PairwiseSpec,
        e: &Execution,
        options: &ExecuteOptions<'_>,
    ) -> Verdict {
        let skip = |reason: String| {
            Verdict::new(
                spec.name(),
                gavel_core::CheckKind::Pairwise,
                Status::Skipped,
                reason,
            )
        };
        let Some(own) = answer(&e.transcript, spec.round) else {
            return skip("no answer of this execution to compare".to_owned());
        };
        let (other, label) = match (&spec.against.target, &spec.against.run) {
            (Some(t), _) => {
                let other = self
                    .answers
                    .get(&ExecutionKey::new(&e.case_id, t, e.repeat_index))
                    .and_then(|tr| answer(tr, spec.round));
                (other.map(|t| t.output.clone()), format!("target `{t}`"))
            }
            (None, Some(run)) => {
                let other = options
                    .baselines
                    .get(run)
                    .and_then(|m| m.get(&(e.case_id.clone(), e.target.clone())))
                    .cloned();
                (other, format!("run `{run}`"))
            }
            (None, None) => (None, "nothing".to_owned()),
        };
        let Some(other) = other else {
            return skip(format!(
                "{label} has no answer for case `{}` (repeat {})",
                e.case_id, e.repeat_index
            ));
        };
        let input = PairwiseInput {
            prompt: &own.input,
            output: &own.output,
            other: &other,
            other_label: &label,
            criteria: "",
        };
        gavel_checks::pairwise(spec, &input, &options.runtime(e.repeat_index)).await
    }
}

/// The judged turn: the last of `round`, or the last of the transcript; none if it failed.
pub(crate) fn answer(t: &Transcript, round: Option<usize>) -> Option<&Turn> {
    let turn = match round {
        Some(r) => t.turns.iter().rev().find(|turn| turn.round == r),
        None => t.turns.last(),
    }?;
    turn.failure.is_none().then_some(turn)
}
