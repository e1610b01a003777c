//! The `dag` panel: a decision graph declared in the suite file, walked from its
//! start node to a verdict leaf. Task nodes write a text later nodes see; binary
//! and non-binary judgement nodes answer a question by picking an edge; score
//! nodes run a judge and branch on its score; leaves give the verdict. Edge
//! weights multiply the leaf's score. The graph is checked when the suite loads:
//! every edge resolves, no cycles, every node reachable, bounded depth.

use gavel_core::CheckKind;
use gavel_core::{Status, Verdict};
use serde_json::{Map, Value, json};

use super::{Record, entry, judge_once, sum_costs, with_context};
use crate::finding::VerdictHead;
use crate::judge::Material;
use crate::judge::choice::{Choice, Mode, choose};
use crate::judge::compile::TurnJudge;
use crate::runtime::JudgeRuntime;
use crate::subject::Judged;

/// The kind of dag panel verdicts.
pub(crate) const KIND: CheckKind = CheckKind::Dag;

/// The longest path allowed, in nodes, when the suite does not say.
const DEFAULT_MAX_DEPTH: u32 = 16;

/// A compiled dag panel.
pub(crate) struct Dag {
    nodes: Vec<Node>,
    start: usize,
}

struct Node {
    name: String,
    step: Step,
}

#[derive(Clone, Copy)]
struct Edge {
    to: usize,
    weight: f64,
}

enum Step {
    Task {
        material: Material,
        next: Edge,
    },
    Binary {
        material: Material,
        yes: Edge,
        no: Edge,
    },
    Choose {
        material: Material,
        options: Vec<(String, Edge)>,
    },
    Score {
        judge: TurnJudge,
        branches: Vec<(Option<f64>, Edge)>,
    },
    Leaf {
        status: Status,
        value: f64,
    },
}

impl Step {
    fn kind(&self) -> &'static str {
        match self {
            Step::Task { .. } => "task",
            Step::Binary { .. } => "binary",
            Step::Choose { .. } => "choose",
            Step::Score { .. } => "score",
            Step::Leaf { .. } => "verdict",
        }
    }

    fn edges(&self) -> Vec<Edge> {
        match self {
            Step::Task { next, .. } => vec![*next],
            Step::Binary { yes, no, .. } => vec![*yes, *no],
            Step::Choose { options, .. } => options.iter().map(|(_, e)| *e).collect(),
            Step::Score { branches, .. } => branches.iter().map(|(_, e)| *e).collect(),
            Step::Leaf { .. } => Vec::new(),
        }
    }
}

mod compile;

impl Dag {
    /// Every node's judge configuration.
    pub(crate) fn judges(&self, name: &str) -> Vec<crate::JudgeUse> {
        use crate::check::AwaitedCheck as _;
        self.nodes
            .iter()
            .flat_map(|n| match &n.step {
                Step::Task { material, .. }
                | Step::Binary { material, .. }
                | Step::Choose { material, .. } => vec![crate::JudgeUse::of(material, name)],
                Step::Score { judge, .. } => judge.judges(),
                Step::Leaf { .. } => Vec::new(),
            })
            .collect()
    }

    /// `dag <start>`.
    pub(crate) fn name(&self) -> String {
        format!("{KIND} {}", self.nodes[self.start].name)
    }

    pub(crate) async fn run(
        &self,
        head: VerdictHead<'_>,
        judged: &Judged<'_>,
        rt: &JudgeRuntime<'_>,
        record: &Record,
    ) -> Verdict {
        let mut at = self.start;
        let mut weight = 1.0;
        let mut notes: Vec<String> = Vec::new();
        let mut names: Vec<&str> = Vec::new();
        // The graph is acyclic, so the walk ends at a leaf within the node count.
        for _ in 0..self.nodes.len() {
            let node = &self.nodes[at];
            names.push(&node.name);
            let h = VerdictHead {
                name: &node.name,
                kind: KIND,
                round: head.round,
            };
            let taken = match &node.step {
                Step::Leaf { status, value } => {
                    let mut e = Map::new();
                    e.insert("node".into(), json!(node.name));
                    e.insert("kind".into(), json!("verdict"));
                    e.insert("verdict".into(), json!(status));
                    e.insert("value".into(), json!(value));
                    record.push(Value::Object(e));
                    return self.verdict(head, *status, value * weight, &names, record.take());
                }
                Step::Task { material, next } => {
                    Self::ask(material, Mode::Text, &[], &notes, h, judged, rt)
                        .await
                        .map(|(text, e)| {
                            notes.push(format!("- {}: {}", node.name, text));
                            (*next, e)
                        })
                }
                Step::Binary { material, yes, no } => {
                    let options = [choice("yes"), choice("no")];
                    Self::ask(material, Mode::One, &options, &notes, h, judged, rt)
                        .await
                        .map(|(a, e)| {
                            notes.push(format!("- {}: {a}", node.name));
                            (if a == "yes" { *yes } else { *no }, e)
                        })
                }
                Step::Choose { material, options } => {
                    let shown: Vec<Choice> = options.iter().map(|(o, _)| choice(o)).collect();
                    Self::ask(material, Mode::One, &shown, &notes, h, judged, rt)
                        .await
                        .and_then(|(a, e)| {
                            notes.push(format!("- {}: {a}", node.name));
                            options
                                .iter()
                                .find(|(o, _)| *o == a)
                                .map(|(_, edge)| (*edge, e))
                                .ok_or_else(|| {
                                    Box::new(h.verdict(
                                        Status::Error,
                                        format!(
                                            "node `{}`: the answer `{a}` is not an option",
                                            node.name
                                        ),
                                    ))
                                })
                        })
                }
                Step::Score { judge, branches } => {
                    let judge = if notes.is_empty() {
                        judge.clone()
                    } else {
                        with_context(judge, &format!("Findings so far:\n{}", notes.join("\n")))
                    };
                    let v = judge_once(&judge, h, judged, rt).await;
                    match v
                        .score
                        .filter(|_| matches!(v.status, Status::Pass | Status::Fail))
                    {
                        None => Err(Box::new(v)),
                        Some(score) => {
                            notes.push(format!("- {}: score {score:.2}", node.name));
                            let edge = branches
                                .iter()
                                .find(|(min, _)| min.is_none_or(|m| score >= m))
                                .map(|(_, e)| *e)
                                .unwrap_or(Edge {
                                    to: at,
                                    weight: 1.0,
                                });
                            Ok((edge, entry(&node.name, &v)))
                        }
                    }
                }
            };
            match taken {
                Ok((edge, mut e)) => {
                    e.insert("node".into(), json!(node.name));
                    e.insert("kind".into(), json!(node.step.kind()));
                    e.insert("next".into(), json!(self.nodes[edge.to].name));
                    e.insert("weight".into(), json!(edge.weight));
                    record.push(Value::Object(e));
                    weight *= edge.weight;
                    at = edge.to;
                }
                Err(failed) => {
                    let mut e = entry(&node.name, &failed);
                    e.insert("node".into(), json!(node.name));
                    e.insert("kind".into(), json!(node.step.kind()));
                    record.push(Value::Object(e));
                    let path = record.take();
                    let status = if failed.status == Status::Skipped {
                        Status::Skipped
                    } else {
                        Status::Error
                    };
                    let mut v = head
                        .verdict(
                            status,
                            format!("node `{}` gave no answer: {}", node.name, failed.reason),
                        )
                        .with_evidence(json!({ "panel": KIND, "path": path }));
                    v.cost_usd = sum_costs(path.iter().map(|p| p["cost_usd"].as_f64()));
                    return v;
                }
            }
        }
        head.verdict(
            Status::Error,
            "internal error: the dag walk did not reach a leaf",
        )
    }

    /// Asks a task or judgement node; the answer and the node's record, or the
    /// verdict saying why there is none.
    async fn ask(
        material: &Material,
        mode: Mode,
        options: &[Choice],
        notes: &[String],
        h: VerdictHead<'_>,
        judged: &Judged<'_>,
        rt: &JudgeRuntime<'_>,
    ) -> Result<(String, Map<String, Value>), Box<Verdict>> {
        let chosen = choose(material, mode, options, &notes.join("\n"), h, judged, rt).await?;
        let mut e = chosen.evidence;
        e.insert("cost_usd".into(), json!(chosen.cost_usd));
        Ok((chosen.answer.join(", "), e))
    }

    fn verdict(
        &self,
        head: VerdictHead<'_>,
        status: Status,
        score: f64,
        names: &[&str],
        path: Vec<Value>,
    ) -> Verdict {
        let cost = sum_costs(path.iter().map(|p| p["cost_usd"].as_f64()));
        let leaf = names.last().copied().unwrap_or_default();
        let mut v = head
            .verdict(
                status,
                format!("path {} → leaf `{leaf}`: {status}", names.join(" → ")),
            )
            .with_score(score, None)
            .with_evidence(json!({ "panel": KIND, "path": path, "nodes": names, "leaf": leaf }));
        v.cost_usd = cost;
        v
    }
}

/// An option shown by its name alone.
fn choice(name: &str) -> Choice {
    Choice {
        name: name.to_owned(),
        description: String::new(),
    }
}
