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
    /// A choice made.
    pub fn info(text: impl Into<String>) -> Note {
        Note {
            level: NoteLevel::Info,
            text: text.into(),
        }
    }

    /// A warning.
    pub fn warning(text: impl Into<String>) -> Note {
        Note {
            level: NoteLevel::Warning,
            text: text.into(),
        }
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
