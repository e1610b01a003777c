//! One test as promptfoo runs it: `defaultTest` under the test's own fields,
//! vars read from files, and array vars expanded into one var set per combination.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::files::{extension, file_ref, is_code, resolve};
use crate::node::{Node, Val, read_text};
use crate::providers::model_id;
use crate::testfiles::{TestSrc, read_map};
use crate::{ImportError, Unmapped};

/// A test with `defaultTest` applied.
#[derive(Debug, Default)]
pub(crate) struct Test {
    pub(crate) description: Option<String>,
    pub(crate) vars: Map<String, Value>,
    /// Assertions with the folder their `file://` values resolve against.
    pub(crate) asserts: Vec<(Node, PathBuf)>,
    pub(crate) threshold: Option<f64>,
    pub(crate) prefix: String,
    pub(crate) suffix: String,
    /// The grading model (`options.provider`).
    pub(crate) grader: Option<String>,
    /// `options.transform` (or `postprocess`): JavaScript over the output, and
    /// where it was written.
    pub(crate) transform: Option<(String, Node)>,
    /// `options.rubricPrompt`: the grading instructions of `llm-rubric`
    /// assertions without a value (its messages' text, joined).
    pub(crate) rubric: Option<String>,
    expand: bool,
}

impl Test {
    /// The test `src` over `default` (the `defaultTest`).
    pub(crate) fn new(
        default: Option<&TestSrc>,
        src: &TestSrc,
        notes: &mut Vec<Unmapped>,
    ) -> Result<Test, ImportError> {
        let mut test = Test {
            expand: true,
            ..Test::default()
        };
        if let Some(d) = default {
            test.absorb(&d.node, &d.base, notes)?;
        }
        test.absorb(&src.node, &src.base, notes)?;
        Ok(test)
    }

    fn absorb(
        &mut self,
        node: &Node,
        base: &Path,
        notes: &mut Vec<Unmapped>,
    ) -> Result<(), ImportError> {
        for (key, value) in node.entries() {
            match key.as_str() {
                "description" => {
                    self.description = value.scalar_text().filter(|d| !d.trim().is_empty())
                }
                "vars" => self.vars(value, base, notes)?,
                "assert" => self.asserts.extend(
                    value
                        .items()
                        .into_iter()
                        .map(|a| (a.clone(), base.to_owned())),
                ),
                // promptfoo ignores a threshold of 0 (all assertions must pass).
                "threshold" => self.threshold = value.as_f64().filter(|t| *t != 0.0),
                "options" => self.options(value, notes),
                _ => notes.push(Unmapped::new(format!("test field '{key}'"), value, "")),
            }
        }
        Ok(())
    }

    fn vars(
        &mut self,
        node: &Node,
        base: &Path,
        notes: &mut Vec<Unmapped>,
    ) -> Result<(), ImportError> {
        let loaded;
        let map = match node.as_str().and_then(file_ref) {
            Some(reference) => {
                loaded = read_map(reference, base, node)?;
                &loaded
            }
            None => node,
        };
        if !matches!(map.val, Val::Map(_)) {
            return Err(ImportError::shape(
                node,
                "vars",
                "expected a mapping of vars or a `file://` path",
            ));
        }
        for (name, value) in map.entries() {
            let v = var_value(value, base, notes)?;
            self.vars.insert(name.clone(), v);
        }
        Ok(())
    }

    fn options(&mut self, node: &Node, notes: &mut Vec<Unmapped>) {
        for (key, value) in node.entries() {
            match key.as_str() {
                "prefix" => self.prefix = value.scalar_text().unwrap_or_default(),
                "suffix" => self.suffix = value.scalar_text().unwrap_or_default(),
                "disableVarExpansion" => self.expand = !matches!(value.val, Val::Bool(true)),
                "provider" => {
                    let id = value
                        .as_str()
                        .or_else(|| value.get("id").and_then(Node::as_str));
                    match id.and_then(|id| model_id(id, value.get("config"))) {
                        Some(model) => self.grader = Some(model),
                        None => notes.push(Unmapped::new(
                            "grading provider",
                            value,
                            "not a chat model gavel knows; give the suite a judge.model",
                        )),
                    }
                }
                "rubricPrompt" => {
                    let parts: Vec<String> = match value.as_str() {
                        Some(text) => vec![text.to_owned()],
                        None => value
                            .items()
                            .iter()
                            .filter_map(|m| m.get("content").and_then(Node::scalar_text))
                            .collect(),
                    };
                    self.rubric = (!parts.is_empty()).then(|| parts.join("\n\n"));
                }
                "transform" | "postprocess" => match value.as_str() {
                    Some(code) => self.transform = Some((code.to_owned(), value.clone())),
                    None => notes.push(Unmapped::new(
                        format!("options.{key}"),
                        value,
                        "expected JavaScript text",
                    )),
                },
                _ => notes.push(Unmapped::new(format!("test option '{key}'"), value, "")),
            }
        }
    }

    /// The var sets the test runs with: one per combination of array values
    /// (promptfoo's var expansion), at most `limit`.
    pub(crate) fn var_sets(
        &self,
        limit: usize,
        at: &Node,
    ) -> Result<Vec<Map<String, Value>>, ImportError> {
        let mut sets = vec![Map::new()];
        for (name, value) in &self.vars {
            match value {
                Value::Array(options) if self.expand && !options.is_empty() => {
                    if sets.len().saturating_mul(options.len()) > limit {
                        return Err(ImportError::TooMany { at: at.at(), limit });
                    }
                    sets = sets
                        .into_iter()
                        .flat_map(|set| {
                            options.iter().map(move |o| {
                                let mut s = set.clone();
                                s.insert(name.clone(), o.clone());
                                s
                            })
                        })
                        .collect();
                }
                other => sets.iter_mut().for_each(|s| {
                    s.insert(name.clone(), other.clone());
                }),
            }
        }
        Ok(sets)
    }
}

/// A var's value: `file://` text (or parsed JSON/YAML; several files for a
/// glob), else the value as written.
fn var_value(node: &Node, base: &Path, notes: &mut Vec<Unmapped>) -> Result<Value, ImportError> {
    let Some(reference) = node.as_str().and_then(file_ref) else {
        return Ok(node.to_json());
    };
    if is_code(reference) {
        notes.push(Unmapped::new(
            format!("var from code 'file://{reference}'"),
            node,
            "gavel runs no var code; the path is kept as the var's text",
        ));
        return Ok(node.to_json());
    }
    let mut values = Vec::new();
    for path in resolve(reference, base, node)? {
        let text = read_text(&path, &node.at())?;
        values.push(match extension(&path).as_str() {
            "json" | "yaml" | "yml" => Node::parse(&text, &path.display().to_string())?.to_json(),
            _ => Value::String(text),
        });
    }
    Ok(match values.len() {
        1 => values.pop().unwrap_or_default(),
        _ => Value::Array(values),
    })
}
