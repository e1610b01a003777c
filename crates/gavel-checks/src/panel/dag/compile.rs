//! Compiling a `dag` panel from the suite file, and checking its graph: every
//! edge resolves, no cycles, every node reachable, bounded depth. Errors name the
//! node and its field.

use gavel_core::Status;
use gavel_core::panel::{DagEdge, DagNode, DagSpec};

use super::{DEFAULT_MAX_DEPTH, Dag, Edge, Node, Step};
use crate::error::FieldError;
use crate::judge::compile::{Env, Level};
use crate::panel::{check_model, pointwise};

/// The fields each node kind may use besides `name` and `model`.
fn allowed(kind: &str) -> &'static [&'static str] {
    match kind {
        "task" => &["next"],
        "binary" => &["yes", "no"],
        "choose" => &["options"],
        "score" => &["branches", "scale"],
        _ => &["value"],
    }
}

/// The node's kind and its question, or why it has none or several.
fn node_kind(node: &DagNode) -> Result<(&'static str, Option<&String>), String> {
    let kinds: Vec<(&'static str, Option<&String>)> = [
        ("task", node.task.as_ref()),
        ("binary", node.binary.as_ref()),
        ("choose", node.choose.as_ref()),
        ("score", node.score.as_ref()),
    ]
    .into_iter()
    .filter(|(_, q)| q.is_some())
    .chain(node.verdict.map(|_| ("verdict", None)))
    .collect();
    match kinds.as_slice() {
        [one] => Ok(*one),
        _ => Err(format!(
            "node `{}` needs exactly one of `task`, `binary`, `choose`, `score` or `verdict`",
            node.name
        )),
    }
}

/// The fields a node sets, besides `name`, `model` and its kind.
fn fields_set(node: &DagNode) -> Vec<&'static str> {
    [
        ("next", node.next.is_some()),
        ("yes", node.yes.is_some()),
        ("no", node.no.is_some()),
        ("options", !node.options.is_empty()),
        ("branches", !node.branches.is_empty()),
        ("scale", node.scale.is_some()),
        ("value", node.value.is_some()),
    ]
    .into_iter()
    .filter_map(|(f, set)| set.then_some(f))
    .collect()
}

impl Dag {
    pub(crate) fn compile(
        spec: &DagSpec,
        at: &str,
        env: &Env<'_>,
        level: &Level<'_>,
    ) -> Result<Self, FieldError> {
        if spec.nodes.is_empty() {
            return Err(FieldError::new(
                format!("{at}.nodes"),
                "a dag panel needs at least one node",
            ));
        }
        let names: Vec<&str> = spec.nodes.iter().map(|n| n.name.as_str()).collect();
        let resolve = |edge: &DagEdge, field: String, node: &str| -> Result<Edge, FieldError> {
            let to = names.iter().position(|n| *n == edge.to()).ok_or_else(|| {
                FieldError::new(
                    field.clone(),
                    format!(
                        "node `{node}` leads to `{}`, which is not a node (nodes: {})",
                        edge.to(),
                        names.join(", ")
                    ),
                )
            })?;
            let weight = edge.weight();
            if !(weight.is_finite() && (0.0..=1.0).contains(&weight)) {
                return Err(FieldError::new(
                    format!("{field}.weight"),
                    format!("node `{node}`: edge weight {weight} must be between 0 and 1"),
                ));
            }
            Ok(Edge { to, weight })
        };
        let mut nodes = Vec::with_capacity(spec.nodes.len());
        for (i, node) in spec.nodes.iter().enumerate() {
            let nat = format!("{at}.nodes[{i}]");
            let name = node.name.as_str();
            if name.trim().is_empty() {
                return Err(FieldError::new(
                    format!("{nat}.name"),
                    "a node needs a name",
                ));
            }
            if names[..i].contains(&name) {
                return Err(FieldError::new(
                    format!("{nat}.name"),
                    format!("node name `{name}` is used twice"),
                ));
            }
            let (kind, question) = node_kind(node).map_err(|e| FieldError::new(&nat, e))?;
            if let Some(extra) = fields_set(node)
                .into_iter()
                .find(|f| !allowed(kind).contains(f))
            {
                return Err(FieldError::new(
                    format!("{nat}.{extra}"),
                    format!("node `{name}` is a `{kind}` node, which takes no `{extra}`"),
                ));
            }
            if kind == "verdict" && node.model.is_some() {
                return Err(FieldError::new(
                    format!("{nat}.model"),
                    format!("node `{name}` is a verdict leaf, which calls no model"),
                ));
            }
            check_model(&format!("{nat}.model"), node.model.as_ref())?;
            let material = |q: &String| env.choice_material(q.clone(), level, node.model.as_ref());
            let need = |edge: &Option<DagEdge>, field: &str| -> Result<Edge, FieldError> {
                let e = edge.as_ref().ok_or_else(|| {
                    FieldError::new(
                        format!("{nat}.{field}"),
                        format!("`{kind}` node `{name}` needs `{field}`"),
                    )
                })?;
                resolve(e, format!("{nat}.{field}"), name)
            };
            let step = match (kind, question) {
                ("task", Some(q)) => Step::Task {
                    material: material(q),
                    next: need(&node.next, "next")?,
                },
                ("binary", Some(q)) => Step::Binary {
                    material: material(q),
                    yes: need(&node.yes, "yes")?,
                    no: need(&node.no, "no")?,
                },
                ("choose", Some(q)) => {
                    if node.options.len() < 2 {
                        return Err(FieldError::new(
                            format!("{nat}.options"),
                            format!("`choose` node `{name}` needs at least two options"),
                        ));
                    }
                    let options = node
                        .options
                        .iter()
                        .map(|(answer, e)| {
                            Ok((
                                answer.clone(),
                                resolve(e, format!("{nat}.options.{answer}"), name)?,
                            ))
                        })
                        .collect::<Result<Vec<_>, FieldError>>()?;
                    Step::Choose {
                        material: material(q),
                        options,
                    }
                }
                ("score", Some(q)) => Step::Score {
                    judge: pointwise(
                        env,
                        &nat,
                        level,
                        Some(q),
                        node.scale,
                        None,
                        node.model.as_ref(),
                    )?,
                    branches: Self::branches(node, &nat, &resolve)?,
                },
                _ => Self::leaf(node, &nat)?,
            };
            nodes.push(Node {
                name: name.to_owned(),
                step,
            });
        }
        let start = match &spec.start {
            None => 0,
            Some(s) => names.iter().position(|n| n == s).ok_or_else(|| {
                FieldError::new(
                    format!("{at}.start"),
                    format!("start `{s}` is not a node (nodes: {})", names.join(", ")),
                )
            })?,
        };
        let max_depth = spec.max_depth.unwrap_or(DEFAULT_MAX_DEPTH);
        if max_depth == 0 {
            return Err(FieldError::new(
                format!("{at}.max_depth"),
                "max_depth must be at least 1",
            ));
        }
        let dag = Dag { nodes, start };
        dag.check_shape(at, max_depth)?;
        Ok(dag)
    }

    fn branches(
        node: &DagNode,
        nat: &str,
        resolve: &dyn Fn(&DagEdge, String, &str) -> Result<Edge, FieldError>,
    ) -> Result<Vec<(Option<f64>, Edge)>, FieldError> {
        let name = &node.name;
        let at = format!("{nat}.branches");
        let Some(last) = node.branches.last() else {
            return Err(FieldError::new(
                at,
                format!("`score` node `{name}` needs `branches`"),
            ));
        };
        if last.min.is_some() {
            return Err(FieldError::new(
                format!("{at}[{}].min", node.branches.len() - 1),
                format!(
                    "node `{name}`: the last branch takes every other score, so it has no `min`"
                ),
            ));
        }
        let mut out = Vec::with_capacity(node.branches.len());
        let mut above = f64::INFINITY;
        for (i, b) in node.branches.iter().enumerate() {
            let bat = format!("{at}[{i}]");
            if i + 1 < node.branches.len() {
                let Some(min) = b.min else {
                    return Err(FieldError::new(
                        format!("{bat}.min"),
                        format!("node `{name}`: every branch but the last needs `min`"),
                    ));
                };
                if !(min.is_finite() && (0.0..=1.0).contains(&min) && min < above) {
                    return Err(FieldError::new(
                        format!("{bat}.min"),
                        format!(
                            "node `{name}`: min {min} must be between 0 and 1 and below the branch before"
                        ),
                    ));
                }
                above = min;
            }
            out.push((b.min, resolve(&b.next, format!("{bat}.next"), name)?));
        }
        Ok(out)
    }

    fn leaf(node: &DagNode, nat: &str) -> Result<Step, FieldError> {
        let name = &node.name;
        let status = match node.verdict {
            Some(s @ (Status::Pass | Status::Fail)) => s,
            other => {
                return Err(FieldError::new(
                    format!("{nat}.verdict"),
                    format!("leaf `{name}`: verdict must be pass or fail, not {other:?}"),
                ));
            }
        };
        let value = node
            .value
            .unwrap_or(if status == Status::Pass { 1.0 } else { 0.0 });
        if !(value.is_finite() && (0.0..=1.0).contains(&value)) {
            return Err(FieldError::new(
                format!("{nat}.value"),
                format!("leaf `{name}`: value {value} must be between 0 and 1"),
            ));
        }
        Ok(Step::Leaf { status, value })
    }

    /// No cycle, every node reachable from the start, no path longer than
    /// `max_depth` nodes.
    fn check_shape(&self, at: &str, max_depth: u32) -> Result<(), FieldError> {
        // Depth-first from the start: `depth[n]` is the longest path from n, in nodes.
        let n = self.nodes.len();
        let mut depth: Vec<Option<u32>> = vec![None; n];
        let mut on_path = vec![false; n];
        let mut stack: Vec<(usize, usize)> = vec![(self.start, 0)];
        on_path[self.start] = true;
        while let Some(&(node, next)) = stack.last() {
            let edges = self.nodes[node].step.edges();
            if let Some(edge) = edges.get(next) {
                if let Some(top) = stack.last_mut() {
                    top.1 += 1;
                }
                if on_path[edge.to] {
                    let cycle: Vec<&str> = stack
                        .iter()
                        .skip_while(|(s, _)| *s != edge.to)
                        .map(|(s, _)| self.nodes[*s].name.as_str())
                        .chain([self.nodes[edge.to].name.as_str()])
                        .collect();
                    return Err(FieldError::new(
                        format!("{at}.nodes[{node}]"),
                        format!(
                            "node `{}` closes a cycle: {}",
                            self.nodes[node].name,
                            cycle.join(" → ")
                        ),
                    ));
                }
                if depth[edge.to].is_none() {
                    on_path[edge.to] = true;
                    stack.push((edge.to, 0));
                }
            } else {
                let longest = edges.iter().filter_map(|e| depth[e.to]).max().unwrap_or(0) + 1;
                depth[node] = Some(longest);
                on_path[node] = false;
                stack.pop();
            }
        }
        if let Some(i) = depth.iter().position(Option::is_none) {
            return Err(FieldError::new(
                format!("{at}.nodes[{i}]"),
                format!(
                    "node `{}` cannot be reached from the start `{}`",
                    self.nodes[i].name, self.nodes[self.start].name
                ),
            ));
        }
        let longest = depth[self.start].unwrap_or(0);
        if longest > max_depth {
            return Err(FieldError::new(
                format!("{at}.max_depth"),
                format!(
                    "the longest path from `{}` has {longest} nodes, more than max_depth {max_depth}",
                    self.nodes[self.start].name
                ),
            ));
        }
        Ok(())
    }
}
