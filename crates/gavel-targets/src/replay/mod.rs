//! The `replay` target: recorded conversations graded without calling an agent.
//!
//! [`read`] turns a recording file into [`Recordings`], keyed by conversation
//! and recorded target: gavel's JSONL transcripts ([`jsonl`]) or OpenTelemetry
//! GenAI spans in OTLP JSON ([`otlp`]). A stored run becomes recordings in the
//! session, which has the store. [`Recordings::select`] picks the
//! [`Conversations`] one replay target answers with; the runner asks
//! [`Target::recorded`] for a case's conversation instead of sending
//! messages. See docs/REPLAY.md for how conversations map to cases.

mod jsonl;
mod otlp;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::Arc;

use gavel_core::target::{ReplayFormat, ReplayTarget};
use gavel_core::{TargetFailure, Transcript};

use crate::{Session, Target, TargetError, permanent};

/// Where a recorded conversation sits: its id and, when the recording says,
/// the target it was recorded on (`gavel.target` in gavel's OTLP export, a
/// stored execution's target, `target` in JSONL).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ConversationKey {
    /// The conversation id (a case id for gavel's own recordings).
    pub id: String,
    /// The target it was recorded on, when known.
    pub target: Option<String>,
}

impl ConversationKey {
    /// The conversation `id` recorded on `target`.
    pub fn new(id: impl Into<String>, target: Option<String>) -> ConversationKey {
        ConversationKey {
            id: id.into(),
            target,
        }
    }
}

/// Recorded conversations by id and target, each a transcript whose
/// `session_id` is the recorded session (conversation) id.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Recordings {
    /// Conversations by id, then target.
    pub conversations: BTreeMap<ConversationKey, Transcript>,
    /// Where they came from, for messages (a file path or `run ID`).
    pub origin: String,
}

impl Recordings {
    /// The targets the recording names, in name order.
    pub fn targets(&self) -> BTreeSet<&str> {
        self.conversations
            .keys()
            .filter_map(|k| k.target.as_deref())
            .collect()
    }

    /// The conversations replay target `name` answers with, by id: those
    /// recorded on `pick` (the spec's `target`) when given, else on the
    /// target called `name` when the recording names it, else on the only
    /// target it names; conversations recorded with no target, always. A
    /// recording of several targets, none called `name`, needs `pick`.
    pub fn select(self, name: &str, pick: Option<&str>) -> Result<Conversations, RecordingError> {
        let targets = self.targets();
        let listed = || {
            targets
                .iter()
                .map(|t| format!("`{t}`"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let chosen = match pick {
            Some(p) if targets.contains(p) => Some(p.to_owned()),
            Some(p) => {
                return Err(RecordingError::new(
                    &self.origin,
                    format!(
                        "no conversation was recorded on target `{p}` (recorded: {})",
                        match targets.is_empty() {
                            true => "none named".to_owned(),
                            false => listed(),
                        }
                    ),
                ));
            }
            None if targets.contains(name) => Some(name.to_owned()),
            None if targets.len() <= 1 => targets.first().map(|t| (*t).to_owned()),
            None => {
                return Err(RecordingError::new(
                    &self.origin,
                    format!(
                        "conversations were recorded on targets {}: set `target:` to the one `{name}` replays",
                        listed()
                    ),
                ));
            }
        };
        let several = targets.len() > 1;
        let origin = match &chosen {
            Some(t) if pick.is_some() || several => format!("{} (target `{t}`)", self.origin),
            _ => self.origin,
        };
        // A conversation of the chosen target wins over one with no target.
        let mut by_id = BTreeMap::new();
        for (key, transcript) in self.conversations {
            if key.target.is_some() && key.target != chosen {
                continue;
            }
            if key.target.is_some() || !by_id.contains_key(&key.id) {
                by_id.insert(key.id, transcript);
            }
        }
        Ok(Conversations { by_id, origin })
    }
}

/// The recorded conversations one replay target answers with, by id.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Conversations {
    /// Transcripts by conversation id, in id order.
    pub by_id: BTreeMap<String, Transcript>,
    /// Where they came from, for messages (a file path or `run ID`, and the
    /// recorded target when the recording holds several).
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

/// A `replay` target: answers every case from its recorded conversations.
#[derive(Debug)]
pub struct Replay {
    conversations: Arc<Conversations>,
}

impl Replay {
    /// A replay target over `conversations`.
    pub fn new(conversations: Arc<Conversations>) -> Replay {
        Replay { conversations }
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
        let recordings = read(Path::new(file), spec.format)
            .map_err(|e| TargetError::config(name, "file", e.to_string()))?;
        recordings
            .select(name, spec.target.as_deref())
            .map(|c| Replay::new(Arc::new(c)))
            .map_err(|e| TargetError::config(name, "target", e.to_string()))
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
            self.conversations
                .by_id
                .get(conversation)
                .cloned()
                .ok_or_else(|| {
                    permanent(format!(
                        "no recorded conversation `{conversation}` in {}",
                        self.conversations.origin
                    ))
                }),
        )
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use gavel_core::Turn;

    fn said(output: &str) -> Transcript {
        Transcript {
            session_id: "s".into(),
            turns: vec![Turn {
                output: output.into(),
                ..Turn::default()
            }],
        }
    }

    /// `c` on targets `a` and `b`, and `u` recorded with no target.
    fn two_targets() -> Recordings {
        let key = |id: &str, t: Option<&str>| ConversationKey::new(id, t.map(str::to_owned));
        Recordings {
            conversations: BTreeMap::from([
                (key("c", Some("a")), said("from a")),
                (key("c", Some("b")), said("from b")),
                (key("c", None), said("untargeted")),
                (key("u", None), said("anyone's")),
            ]),
            origin: "rec.jsonl".into(),
        }
    }

    fn output(c: &Conversations, id: &str) -> String {
        c.by_id[id].turns[0].output.clone()
    }

    #[test]
    fn each_target_replays_its_own_conversations() {
        let a = two_targets().select("a", None).unwrap();
        let b = two_targets().select("b", None).unwrap();
        assert_eq!(
            (output(&a, "c"), output(&b, "c")),
            ("from a".into(), "from b".into())
        );
        assert_eq!(output(&a, "u"), "anyone's");
        let picked = two_targets().select("regrade", Some("b")).unwrap();
        assert_eq!(output(&picked, "c"), "from b");
        assert!(picked.origin.contains("`b`"), "{}", picked.origin);
    }

    #[test]
    fn several_recorded_targets_none_named_need_a_pick() {
        let e = two_targets().select("regrade", None).unwrap_err();
        assert!(
            e.message.contains("`a`, `b`") && e.message.contains("`target:`"),
            "{e}"
        );
        let e = two_targets().select("a", Some("c")).unwrap_err();
        assert!(e.message.contains("`c`"), "{e}");
        // One recorded target: whatever this target is called.
        let mut one = two_targets();
        one.conversations
            .retain(|k, _| k.target.as_deref() != Some("b"));
        assert_eq!(output(&one.select("regrade", None).unwrap(), "c"), "from a");
    }
}
