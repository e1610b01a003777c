use std::path::PathBuf;

/// Why a model could not be found, checked or fetched.
#[derive(Debug, thiserror::Error)]
pub enum ModelFilesError {
    /// Nowhere it was looked for had it.
    #[error("{kind} model `{spec}` is not installed (looked in: {}); {hint}", looked.join(", "))]
    NotFound {
        /// What was asked for.
        spec: String,
        /// `encoder` or `gguf`.
        kind: &'static str,
        /// Every place looked at.
        looked: Vec<String>,
        /// How to install it.
        hint: String,
    },
    /// A path was found but is not a model of the kind wanted.
    #[error("{}: {reason}", path.display())]
    Invalid {
        /// The file or folder.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
    /// The name cannot be fetched from the hub.
    #[error("cannot pull `{spec}`: {reason}")]
    Unpullable {
        /// What was asked for.
        spec: String,
        /// Why.
        reason: String,
    },
    /// A download failed.
    #[error("downloading {url} failed: {reason}")]
    Download {
        /// The file's URL.
        url: String,
        /// What went wrong (network, HTTP status, disk).
        reason: String,
    },
    /// A file could not be read or written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
}
