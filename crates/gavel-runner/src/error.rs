//! Runner errors: bad plans and broken recorders. Agent failures are never errors
//! here; they are verdicts.

/// Why a run could not be planned or carried out.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RunnerError {
    /// A case's checks do not compile (bad regex, bad schema, ...).
    #[error(transparent)]
    Check(#[from] gavel_checks::CheckError),
    /// A target could not be built or started.
    #[error(transparent)]
    Target(#[from] gavel_targets::TargetError),
    /// The plan refers to a target the suite does not define.
    #[error("case `{case}` names target `{target}`, which is not defined")]
    UnknownTarget {
        /// The case id.
        case: String,
        /// The missing target.
        target: String,
    },
    /// The plan's temporary file, which holds its cases, could not be written or
    /// read.
    #[error("the plan's temporary file of cases: {0}")]
    Spill(#[source] std::io::Error),
    /// A recorder (e.g. the store) could not keep a result; the run stops so that
    /// nothing is silently lost.
    #[error("could not record the result of `{case}`: {source}")]
    Record {
        /// The case id.
        case: String,
        /// What the recorder said.
        source: crate::RecordError,
    },
}
