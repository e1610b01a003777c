//! The `replay` target: recorded conversations graded without calling an agent.
//!
//! [`read`] turns a recording file into [`Recordings`]: gavel's JSONL
//! transcripts ([`jsonl`]) or OpenTelemetry GenAI spans in OTLP JSON ([`otlp`]).
//! A stored run becomes recordings in the session, which has the store. The
//! runner asks [`Target::recorded`] for a case's conversation instead of
//! sending messages; see docs/REPLAY.md for how conversations map to cases.

mod jsonl;
mod otlp;

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use gavel_core::target::{ReplayFormat, ReplayTarget};
use gavel_core::{TargetFailure, Transcript};

use crate::{Session, Target, TargetError, permanent};

/// Recorded conversations by conversation id, each a transcript whose
/// `session_id` is the recorded session (conversation) id.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Recordings {
    /// Conversations by id, in id order.
    pub conversations: BTreeMap<String, Transcript>,
    /// Where they came from, for messages (a file path or `run ID`).
    pub origin: String,
}

/// A recording that could not be read: where (`file:line:col` when known) and why.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{at}: {message}")]
pub struct RecordingError {
    /// The file, with line and column when known.
    pub at: String,
    /// What is wrong.
    pub message: String,
}

impl RecordingError {
    pub(crate) fn new(at: impl Into<String>, message: impl Into<String>) -> Self {
        RecordingError {
            at: at.into(),
            message: message.into(),
        }
    }
}

/// Reads the recording file `path` in `format` (by default from its
/// extension: `.jsonl` or `.ndjson` → JSONL transcripts, `.json` or `.otlp` →
/// OTLP JSON). The second names keep recordings beside a suite out of a
/// directory load, which reads `.jsonl` and `.json` files as suites.
pub fn read(path: &Path, format: Option<ReplayFormat>) -> Result<Recordings, RecordingError> {
    let shown = path.display().to_string();
    let format = match format {
        Some(f) => f,
        None => match path.extension().and_then(|e| e.to_str()) {
            Some("jsonl" | "ndjson") => ReplayFormat::Jsonl,
            Some("json" | "otlp") => ReplayFormat::OtlpJson,
            _ => {
                return Err(RecordingError::new(
                    &shown,
                    "cannot tell the format from the extension: set `format: jsonl` or `format: otlp-json`",
                ));
            }
        },
    };
    let text = gavel_core::bounds::read_text(path).map_err(|e| match e.position() {
        Some((line, col)) => RecordingError::new(format!("{shown}:{line}:{col}"), e.to_string()),
        None => RecordingError::new(&shown, e.to_string()),
    })?;
    let conversations = match format {
        ReplayFormat::Jsonl => jsonl::parse(&text, &shown)?,
        ReplayFormat::OtlpJson => otlp::parse(&text, &shown)?,
    };
    Ok(Recordings {
        conversations,
        origin: shown,
    })
}

/// A `replay` target: answers every case from its recordings.
#[derive(Debug)]
pub struct Replay {
    recordings: Arc<Recordings>,
}

impl Replay {
    /// A replay target over `recordings`.
    pub fn new(recordings: Arc<Recordings>) -> Replay {
        Replay { recordings }
    }

    /// Reads the recording file a spec names (a spec with `run` is built by the
    /// session, from the store). Errors name the target and the field.
    pub fn from_file(name: &str, spec: &ReplayTarget) -> Result<Replay, TargetError> {
        let file = check(name, spec)?.ok_or_else(|| {
            TargetError::config(
                name,
                "run",
                "stored runs are read by the session: build this target with Replay::new",
            )
        })?;
        read(Path::new(file), spec.format)
            .map(|r| Replay::new(Arc::new(r)))
            .map_err(|e| TargetError::config(name, "file", e.to_string()))
    }
}

/// The spec's file, or `None` for a stored run; refuses both or neither.
pub fn check<'a>(name: &str, spec: &'a ReplayTarget) -> Result<Option<&'a str>, TargetError> {
    match (&spec.file, &spec.run) {
        (Some(file), None) => Ok(Some(file)),
        (None, Some(_)) if spec.format.is_none() => Ok(None),
        (None, Some(_)) => Err(TargetError::config(
            name,
            "format",
            "`format` describes a `file`; a stored `run` has none",
        )),
        (Some(_), Some(_)) => Err(TargetError::config(
            name,
            "run",
            "give `file` or `run`, not both",
        )),
        (None, None) => Err(TargetError::config(
            name,
            "file",
            "a replay target needs a recording: `file: PATH` or `run: RUN_ID`",
        )),
    }
}

#[async_trait::async_trait]
impl Target for Replay {
    async fn open(&self, _session_id: &str) -> Result<Box<dyn Session>, TargetFailure> {
        Err(permanent(
            "a replay target has no agent to talk to: it only answers with recorded conversations",
        ))
    }

    fn kind(&self) -> &'static str {
        "replay"
    }

    fn recorded(&self, conversation: &str) -> Option<Result<Transcript, TargetFailure>> {
        Some(
            self.recordings
                .conversations
                .get(conversation)
                .cloned()
                .ok_or_else(|| {
                    permanent(format!(
                        "no recorded conversation `{conversation}` in {}",
                        self.recordings.origin
                    ))
                }),
        )
    }
}
