//! `gavel import promptfoo`: promptfoo configs converted to a gavel suite.
//!
//! Pure conversion, no network: prompts × tests become cases (the prompt rendered
//! with each test's vars), providers become targets, assertions become checks.
//! Whatever has no gavel equivalent is returned as [`Unmapped`] (with the
//! `file:line` it was written at) and left as a `# gavel import: unmapped …`
//! comment in the suite text, never dropped silently. docs/PROMPTFOO.md has the
//! mapping table.

mod asserts;
mod cases;
mod detect;
mod emit;
mod files;
mod matrix;
mod merge;
mod node;
mod prompts;
mod providers;
mod render;
mod scripts;
mod testfiles;

use std::fmt;
use std::path::{Path, PathBuf};

pub use detect::{is_promptfoo_file, looks_like_promptfoo};
use node::Node;

/// A conversion's result: the suite as YAML text and what could not be mapped.
#[derive(Debug, Clone, PartialEq)]
pub struct Conversion {
    /// The gavel suite, with each unmapped item as a comment where it belongs.
    pub yaml: String,
    /// Every item left out, in the order found.
    pub unmapped: Vec<Unmapped>,
    /// How many cases the suite holds.
    pub cases: usize,
    /// How many targets the suite holds.
    pub targets: usize,
}

/// `N cases, T targets; U items not mapped (…)`: what a conversion made.
impl fmt::Display for Conversion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = gavel_core::plural;
        let (cases, targets, unmapped) = (self.cases, self.targets, self.unmapped.len());
        write!(
            f,
            "{cases} case{}, {targets} target{}; {unmapped} item{} not mapped (marked `# gavel import: unmapped` in the suite)",
            s(cases),
            s(targets),
            s(unmapped)
        )
    }
}

/// One promptfoo item with no gavel equivalent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unmapped {
    /// What it is, e.g. `assert type 'javascript'`.
    pub what: String,
    /// Where it was written: `file:line`.
    pub at: String,
    /// Why it was left out, or what to do instead.
    pub why: String,
}

impl Unmapped {
    pub(crate) fn new(what: impl Into<String>, node: &Node, why: impl Into<String>) -> Self {
        Unmapped {
            what: what.into(),
            at: node.at(),
            why: why.into(),
        }
    }
}

impl fmt::Display for Unmapped {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "unmapped {} at {}", self.what, self.at)?;
        if !self.why.is_empty() {
            write!(f, ": {}", self.why)?;
        }
        Ok(())
    }
}

/// Why a config could not be converted at all.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ImportError {
    /// A file could not be read.
    #[error("{at}: cannot read {path}: {message}")]
    File {
        /// Where the file was named (the config itself: its path).
        at: String,
        /// The file.
        path: String,
        /// The reason.
        message: String,
    },
    /// A file is not valid YAML, JSON or CSV.
    #[error("{at}: {message}")]
    Syntax {
        /// `file:line:col`.
        at: String,
        /// What is wrong.
        message: String,
    },
    /// A value has the wrong shape for promptfoo's format.
    #[error("{at}: {field}: {message}")]
    Shape {
        /// `file:line`.
        at: String,
        /// The field, e.g. `prompts[1]`.
        field: String,
        /// What was expected.
        message: String,
    },
    /// The suite could not be written as YAML.
    #[error("writing the suite: {message}")]
    Output {
        /// What went wrong.
        message: String,
    },
    /// The conversion would make more cases than gavel should hold in one file.
    #[error("{at}: the tests expand to more than {limit} cases")]
    TooMany {
        /// Where the expansion happened.
        at: String,
        /// The limit.
        limit: usize,
    },
}

impl ImportError {
    pub(crate) fn shape(node: &Node, field: impl Into<String>, message: impl Into<String>) -> Self {
        ImportError::Shape {
            at: node.at(),
            field: field.into(),
            message: message.into(),
        }
    }
}

/// Converts promptfoo config files (merged in order, as `promptfoo eval -c A -c B`)
/// into one gavel suite. Relative paths resolve against each config's folder.
pub fn convert(configs: &[PathBuf]) -> Result<Conversion, ImportError> {
    let mut parsed = Vec::new();
    for path in configs {
        let shown = path.display().to_string();
        let text = node::read_text(path, &shown)?;
        parsed.push((Node::parse(&text, &shown)?, base_dir(path)));
    }
    cases::build(&parsed)
}

/// Converts one config's text, as if read from `path`.
pub fn convert_str(text: &str, path: &Path) -> Result<Conversion, ImportError> {
    let root = Node::parse(text, &path.display().to_string())?;
    cases::build(&[(root, base_dir(path))])
}

fn base_dir(path: &Path) -> PathBuf {
    path.parent().map(Path::to_path_buf).unwrap_or_default()
}
