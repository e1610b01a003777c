//! Things a session wants a person to know, which front doors show as they see fit.

/// How much a note matters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoteLevel {
    /// A choice made (which judge, which embedder).
    Info,
    /// Something that may be wrong but does not stop the run.
    Warning,
}

/// One line for people.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Note {
    /// How much it matters.
    pub level: NoteLevel,
    /// The line.
    pub text: String,
}

impl Note {
    /// A choice made, its secrets redacted.
    pub fn info(text: impl Into<String>) -> Note {
        Note::new(NoteLevel::Info, text.into())
    }

    /// A warning, its secrets redacted.
    pub fn warning(text: impl Into<String>) -> Note {
        Note::new(NoteLevel::Warning, text.into())
    }

    /// A note of `level`; a note is printed and served, so its secrets are
    /// redacted here.
    fn new(level: NoteLevel, mut text: String) -> Note {
        gavel_core::secrets::redact_in_place(&mut text);
        Note { level, text }
    }
}

impl std::fmt::Display for Note {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.level {
            NoteLevel::Info => f.write_str(&self.text),
            NoteLevel::Warning => write!(f, "warning: {}", self.text),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Note;

    #[test]
    fn notes_are_redacted() {
        gavel_core::secrets::register("note-secret-4411");
        let note = Note::warning("the process printed note-secret-4411 and note-secr");
        assert_eq!(
            note.to_string(),
            "warning: the process printed [redacted] and [redacted]"
        );
    }

    #[test]
    fn the_self_judge_warning_masks_the_url_password() {
        let suite: gavel_core::Suite = serde_json::from_value(serde_json::json!({
            "name": "s", "files": [], "cases": [], "warnings": [], "judge": {},
            "targets": {"a": {"type": "chat", "model": "openai-compatible:m@http://u:self-judge-pw@h/v1"}}
        }))
        .unwrap();
        let warnings = crate::hierarchy_warnings(
            &suite,
            Some("openai-compatible:m@http://u:self-judge-pw@h/v1"),
        );
        assert_eq!(warnings.len(), 1);
        assert!(warnings[0].contains("http://u:***@h/v1"), "{}", warnings[0]);
    }
}
