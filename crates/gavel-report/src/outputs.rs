//! Where a command's reports go: report files by extension, and whether the
//! terminal summary is coloured.

use std::path::PathBuf;

use crate::{Files, ReportError};

/// The reports a command writes and how it shows its summary.
#[derive(Debug, Clone, Default)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
pub struct Outputs {
    /// Write a report; the format follows the extension (.json, .xml = JUnit, .md, .html). Repeatable.
    #[cfg_attr(
        feature = "cli",
        arg(short = 'o', long = "output", value_name = "FILE")
    )]
    pub files: Vec<PathBuf>,
    /// Colour the terminal summary (auto: when stdout is a terminal).
    #[cfg_attr(feature = "cli", arg(long, value_enum, default_value = "auto"))]
    pub color: Color,
}

/// Whether to colour terminal output.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
pub enum Color {
    /// When stdout is a terminal and `NO_COLOR` is unset.
    #[default]
    Auto,
    /// Always.
    Always,
    /// Never.
    Never,
}

impl Outputs {
    /// Writers for the report files ([`Files::create`]): refuses an
    /// extension that names no format before anything runs.
    pub fn writers(&self) -> Result<Files, ReportError> {
        Files::create(&self.files)
    }

    /// Whether the terminal summary is coloured.
    pub fn colored(&self) -> bool {
        use std::io::IsTerminal;
        match self.color {
            Color::Auto => {
                std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none()
            }
            Color::Always => true,
            Color::Never => false,
        }
    }
}
