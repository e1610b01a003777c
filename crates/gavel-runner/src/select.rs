//! `select-best` checks compare the answers of several executions of one case:
//! the case's executions are held until all of the plan's have landed, then each
//! comparison (per repeat among targets, per target among repeats) is judged once.

use std::collections::{BTreeMap, HashMap};

use gavel_checks::{Candidate, SelectBestInput, SelectBestSpec};
use gavel_core::Execution;
use gavel_core::judge::SelectAmong;

use crate::pairwise::answer;
use crate::{ExecuteOptions, Plan};

/// Holds the executions of cases with select-best checks until the case is complete.
pub(crate) struct Selecting {
    /// Per case: its specs and how many of its executions the plan runs.
    cases: HashMap<String, (Vec<SelectBestSpec>, usize)>,
    parked: HashMap<String, Vec<Execution>>,
}

impl Selecting {
    pub(crate) fn new(plan: &Plan) -> Selecting {
        Selecting {
            cases: plan.select_best().clone(),
            parked: HashMap::new(),
        }
    }

    /// Takes a finished execution; returns the executions now complete: this one
    /// when its case has no select-best check, else every execution of its case
    /// once the last one landed.
    pub(crate) async fn finished(
        &mut self,
        e: Execution,
        options: &ExecuteOptions<'_>,
    ) -> Vec<Execution> {
        let Some((_, planned)) = self.cases.get(&e.case_id) else {
            return vec![e];
        };
        let planned = *planned;
        let case_id = e.case_id.clone();
        let parked = self.parked.entry(case_id.clone()).or_default();
        parked.push(e);
        if parked.len() < planned {
            return Vec::new();
        }
        let done = self.parked.remove(&case_id).unwrap_or_default();
        self.complete(done, options).await
    }

    /// Completes every case still waiting with the executions that landed.
    pub(crate) async fn drain(&mut self, options: &ExecuteOptions<'_>) -> Vec<Execution> {
        let mut out = Vec::new();
        let parked: Vec<Vec<Execution>> = self.parked.drain().map(|(_, v)| v).collect();
        for executions in parked {
            out.extend(self.complete(executions, options).await);
        }
        out
    }

    async fn complete(
        &self,
        mut executions: Vec<Execution>,
        options: &ExecuteOptions<'_>,
    ) -> Vec<Execution> {
        let Some(first) = executions.first() else {
            return executions;
        };
        let Some((specs, _)) = self.cases.get(&first.case_id) else {
            return executions;
        };
        executions.sort_by(|a, b| (a.repeat_index, &a.target).cmp(&(b.repeat_index, &b.target)));
        let mut judged = vec![false; executions.len()];
        for spec in specs {
            for (group, members) in groups(spec.among, &executions) {
                let labels: Vec<String> = members
                    .iter()
                    .map(|&i| label(spec.among, &executions[i]))
                    .collect();
                let candidates = members
                    .iter()
                    .zip(&labels)
                    .map(|(&i, label)| {
                        let turn = answer(&executions[i].transcript, spec.round);
                        Candidate {
                            label,
                            input: turn.map_or("", |t| t.input.as_str()),
                            output: turn.map(|t| t.output.as_str()),
                        }
                    })
                    .collect();
                let first = &executions[members[0]];
                let input = SelectBestInput {
                    case_id: &first.case_id,
                    group: &group,
                    candidates,
                };
                let rt = options.runtime(first.repeat_index);
                let verdicts = gavel_checks::select_best(spec, &input, &rt).await;
                for (&i, verdict) in members.iter().zip(verdicts) {
                    executions[i].verdicts.push(verdict);
                    judged[i] = true;
                }
            }
        }
        for (e, judged) in executions.iter_mut().zip(judged) {
            if judged {
                e.settle();
            }
        }
        executions
    }
}

/// A candidate's name: its target, or its repeat.
fn label(among: SelectAmong, e: &Execution) -> String {
    match among {
        SelectAmong::Targets => e.target.clone(),
        SelectAmong::Repeats => format!("repeat {}", e.repeat_index),
    }
}

/// The comparisons of one spec: group name → indices of the executions compared.
/// Executions that never ran (no transcript: an unavailable target) keep the
/// status that says why and are left out.
fn groups(among: SelectAmong, executions: &[Execution]) -> BTreeMap<String, Vec<usize>> {
    let mut groups: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for (i, e) in executions.iter().enumerate() {
        if e.transcript.turns.is_empty() {
            continue;
        }
        let group = match among {
            SelectAmong::Targets => format!("repeat {}", e.repeat_index),
            SelectAmong::Repeats => format!("target {}", e.target),
        };
        groups.entry(group).or_default().push(i);
    }
    groups
}
