//! Errors of reading a labelled set and of building its report.

use std::path::PathBuf;

/// What can go wrong reading a labelled set or building its report.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CalibrationError {
    /// The file cannot be read: missing, not a regular file, over the size
    /// bound, or not UTF-8.
    #[error("cannot read {}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        source: gavel_core::bounds::FileError,
    },
    /// A line is not a valid record.
    #[error("{}:{line}:{column}: {message}", path.display())]
    Record {
        /// The file.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// What is wrong, naming the field.
        message: String,
    },
    /// The judge cannot be fingerprinted: a bad model id or template.
    #[error("{field}: {message}")]
    Judge {
        /// The setting at fault, e.g. `judge.templates.judge`.
        field: String,
        /// What is wrong.
        message: String,
    },
    /// The set cannot be reported as one: it is empty or mixes kinds of labels.
    #[error("{0}")]
    Set(String),
    /// Two calibration runs were made on different labelled sets (or kinds of
    /// labels), so their items cannot be paired.
    #[error(
        "calibration run `{a}` is on {a_set} but `{b}` is on {b_set}: compare two runs of one labelled set"
    )]
    DifferentSets {
        /// The first run's id.
        a: String,
        /// Its set and kind, e.g. `qags (binary)`.
        a_set: String,
        /// The second run's id.
        b: String,
        /// Its set and kind.
        b_set: String,
    },
}
