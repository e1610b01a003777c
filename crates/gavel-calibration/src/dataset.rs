//! The labelled-set format: one JSON record per line.

use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::CalibrationError;

/// The judging mode of a record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Task {
    /// One response, a pass/fail label or a Likert score.
    Pointwise,
    /// Two responses, an `A`/`B`/`tie` label.
    Pairwise,
}

impl Task {
    /// The judge template a model judges this mode with.
    pub fn template_kind(self) -> gavel_checks::TemplateKind {
        match self {
            Task::Pointwise => gavel_checks::TemplateKind::Judge,
            Task::Pairwise => gavel_checks::TemplateKind::Pairwise,
        }
    }
}

/// The judge templates a model judges `records` with, each once.
pub fn template_kinds(records: &[Record]) -> Vec<gavel_checks::TemplateKind> {
    let mut kinds: Vec<_> = records.iter().map(|r| r.task.template_kind()).collect();
    kinds.sort_by_key(|k| k.as_str());
    kinds.dedup();
    kinds
}

/// The human label's scale.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum ScaleSpec {
    /// `A`, `B` and maybe `tie`.
    Pairwise {
        /// The labels people could give.
        labels: Vec<String>,
    },
    /// `pass` or `fail`.
    Binary {
        /// The labels people could give.
        labels: Vec<String>,
    },
    /// A mean of integer scores from `min` to `max`.
    Likert {
        /// The lowest score.
        min: f64,
        /// The highest score.
        max: f64,
    },
}

/// One labelled item (the shared calibration data's schema; unknown fields are
/// ignored).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Record {
    /// Unique id.
    pub id: String,
    /// The dataset the record comes from (a stratum of `--limit` samples).
    #[serde(default)]
    pub dataset: Option<String>,
    /// The judging mode.
    pub task: Task,
    /// What the label judges, in words: the judge's criteria.
    pub criterion: String,
    /// What the evaluated model was given.
    pub input: String,
    /// Grounding material.
    #[serde(default)]
    pub context: Option<String>,
    /// Pointwise: the response judged.
    #[serde(default)]
    pub response: Option<String>,
    /// Pairwise: the first response.
    #[serde(default)]
    pub response_a: Option<String>,
    /// Pairwise: the second response.
    #[serde(default)]
    pub response_b: Option<String>,
    /// Reference answer(s): a string or a list of strings.
    #[serde(default)]
    pub reference: Option<Value>,
    /// `pass`/`fail` or `A`/`B`/`tie`; null for Likert data.
    #[serde(default)]
    pub human_label: Option<String>,
    /// The Likert mean, or 1/0 (a fraction for QAGS) for binary data.
    #[serde(default)]
    pub human_score: Option<f64>,
    /// The human label's scale.
    pub scale: ScaleSpec,
}

impl Record {
    /// Why the record cannot be judged, naming the field; `None` when it can.
    pub fn problem(&self) -> Option<String> {
        let label = self.human_label.as_deref();
        match (&self.task, &self.scale) {
            (Task::Pairwise, ScaleSpec::Pairwise { .. }) => {
                if self.response_a.is_none() || self.response_b.is_none() {
                    Some("a pairwise record needs `response_a` and `response_b`".into())
                } else if !matches!(label, Some("A" | "B" | "tie")) {
                    Some(format!(
                        "`human_label` must be \"A\", \"B\" or \"tie\", not {label:?}"
                    ))
                } else {
                    None
                }
            }
            (Task::Pointwise, ScaleSpec::Binary { .. }) => {
                if self.response.is_none() {
                    Some("a pointwise record needs `response`".into())
                } else if !matches!(label, Some("pass" | "fail")) {
                    Some(format!(
                        "`human_label` must be \"pass\" or \"fail\", not {label:?}"
                    ))
                } else {
                    None
                }
            }
            (Task::Pointwise, ScaleSpec::Likert { min, max }) => {
                if self.response.is_none() {
                    Some("a pointwise record needs `response`".into())
                } else if (*min, *max) != (1.0, 5.0) {
                    Some(format!(
                        "`scale`: Likert {min}-{max} is not supported (only 1-5)"
                    ))
                } else if !self.human_score.is_some_and(|s| (1.0..=5.0).contains(&s)) {
                    Some(format!(
                        "`human_score` must be a number from 1 to 5, not {:?}",
                        self.human_score
                    ))
                } else {
                    None
                }
            }
            (task, _) => Some(format!(
                "`scale` does not fit `task` {task:?}: pairwise goes with a pairwise scale, pointwise with binary or likert"
            )),
        }
    }
}

/// Reads a JSONL labelled set, as the loader reads suites: a regular file of at
/// most 64 MiB, UTF-8 ([`gavel_core::bounds::read_text`]). Blank lines are
/// skipped. Every bad line is an error naming the file, line and column (the
/// first one found is returned); so is an id seen on an earlier line (one item
/// counted twice would inflate the set).
pub fn load_jsonl(path: &Path) -> Result<Vec<Record>, CalibrationError> {
    let text = gavel_core::bounds::read_text(path).map_err(|source| CalibrationError::Io {
        path: path.to_owned(),
        source,
    })?;
    let mut records = Vec::new();
    let mut seen: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let at = |column: usize, message: String| CalibrationError::Record {
            path: path.to_owned(),
            line: i + 1,
            column,
            message,
        };
        let record: Record =
            serde_json::from_str(line).map_err(|e| at(e.column(), e.to_string()))?;
        if let Some(problem) = record.problem() {
            return Err(at(1, format!("record `{}`: {problem}", record.id)));
        }
        if let Some(first) = seen.insert(record.id.clone(), i + 1) {
            return Err(at(
                1,
                format!("duplicate id `{}` (first on line {first})", record.id),
            ));
        }
        records.push(record);
    }
    Ok(records)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_lines_name_file_line_and_field() {
        let dir = std::env::temp_dir().join(format!("gavel-cal-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("bad.jsonl");
        let good = r#"{"id":"a","task":"pointwise","criterion":"c","input":"i","response":"r","human_label":"pass","scale":{"type":"binary","labels":["pass","fail"]}}"#;
        std::fs::write(&path, format!("{good}\n\n{{\"id\": 3}}\n")).unwrap();
        let err = load_jsonl(&path).unwrap_err().to_string();
        assert!(err.contains("bad.jsonl:3:"), "{err}");
        assert!(err.contains("invalid type"), "{err}");

        let wrong = good.replace("\"pass\",\"scale\"", "\"maybe\",\"scale\"");
        std::fs::write(&path, format!("{good}\n{wrong}\n")).unwrap();
        let err = load_jsonl(&path).unwrap_err().to_string();
        assert!(
            err.contains("bad.jsonl:2:1: record `a`: `human_label`"),
            "{err}"
        );

        std::fs::write(&path, format!("{good}\n{good}\n")).unwrap();
        let err = load_jsonl(&path).unwrap_err().to_string();
        assert!(
            err.contains("bad.jsonl:2:1: duplicate id `a` (first on line 1)"),
            "{err}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn devices_and_fifos_are_refused_by_name_without_reading() {
        let err = load_jsonl(Path::new("/dev/zero")).unwrap_err().to_string();
        assert_eq!(
            err,
            "cannot read /dev/zero: not a regular file: it is a device, FIFO or socket"
        );
        // Opening a FIFO would wait for a writer: it is refused before that.
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("labels.jsonl");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success());
        let err = load_jsonl(&fifo).unwrap_err().to_string();
        assert!(
            err.starts_with(&format!(
                "cannot read {}: not a regular file",
                fifo.display()
            )),
            "{err}"
        );
    }
}
