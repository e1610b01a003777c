//! The suite written as YAML text, each unmapped item a comment where it belongs:
//! the config's above `name`, a test's above its case.

use std::collections::{BTreeMap, HashSet};
use std::fmt::Write as _;

use gavel_core::{Case, JudgeSettings, TargetSpec};
use serde::Serialize;

use crate::{Conversion, ImportError, Unmapped};

/// A converted suite before it is written.
pub(crate) struct Doc {
    pub(crate) name: String,
    pub(crate) description: Option<String>,
    pub(crate) sources: Vec<String>,
    pub(crate) judge: JudgeSettings,
    pub(crate) targets: BTreeMap<String, TargetSpec>,
    /// Items of the config as a whole (prompts, providers, keys).
    pub(crate) header: Vec<Unmapped>,
    /// Each case with the items of its test.
    pub(crate) cases: Vec<(Case, Vec<Unmapped>)>,
}

#[derive(Serialize)]
struct Head<'a> {
    name: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    description: Option<&'a str>,
    #[serde(skip_serializing_if = "is_default")]
    judge: &'a JudgeSettings,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    targets: &'a BTreeMap<String, TargetSpec>,
}

fn is_default(j: &&JudgeSettings) -> bool {
    **j == JudgeSettings::default()
}

/// promptfoo's gate, stated in the suite: any failed test fails the job.
const GATE: &str = "\
# promptfoo fails the job when any test fails; gavel's default gate is an 80%
# pass rate. This suite keeps promptfoo's (`--min-pass-rate` overrides it).
gate:
  min_pass_rate: 100%
";

/// Writes the suite and lists its unmapped items (each once).
pub(crate) fn emit(doc: Doc) -> Result<Conversion, ImportError> {
    let mut out = format!(
        "# Converted from promptfoo by `gavel import promptfoo` ({}).\n",
        doc.sources.join(", ")
    );
    out.push_str(GATE);
    if doc
        .header
        .iter()
        .chain(doc.cases.iter().flat_map(|(_, n)| n))
        .next()
        .is_some()
    {
        out.push_str("# Lines marked `gavel import: unmapped` were not converted: review them.\n");
    }
    comments(&mut out, "", &doc.header);
    let head = Head {
        name: &doc.name,
        description: doc.description.as_deref(),
        judge: &doc.judge,
        targets: &doc.targets,
    };
    out.push_str(&yaml(&head)?);
    out.push_str("cases:");
    if doc.cases.is_empty() {
        out.push_str(" []");
    }
    out.push('\n');
    for (case, notes) in &doc.cases {
        comments(&mut out, "  ", notes);
        for line in yaml(&[case])?.lines() {
            if line.is_empty() {
                out.push('\n');
            } else {
                let _ = writeln!(out, "  {line}");
            }
        }
    }
    let mut seen = HashSet::new();
    let unmapped = doc
        .header
        .into_iter()
        .chain(doc.cases.iter().flat_map(|(_, n)| n.iter().cloned()))
        .filter(|u| seen.insert((u.what.clone(), u.at.clone())))
        .collect();
    Ok(Conversion {
        yaml: out,
        unmapped,
        cases: doc.cases.len(),
        targets: doc.targets.len(),
    })
}

fn comments(out: &mut String, indent: &str, notes: &[Unmapped]) {
    for note in notes {
        let text = note.to_string().replace(['\n', '\r'], " ");
        let _ = writeln!(out, "{indent}# gavel import: {text}");
    }
}

fn yaml<T: Serialize>(value: &T) -> Result<String, ImportError> {
    serde_saphyr::to_string(value).map_err(|e| ImportError::Output {
        message: e.to_string(),
    })
}
