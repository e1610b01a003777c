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
}
