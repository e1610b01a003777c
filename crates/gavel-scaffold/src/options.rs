//! `gavel init`'s options (flags with the `cli` feature) and the one call that
//! turns them, or a terminal's answers, into a written suite.

use std::io::IsTerminal;
use std::path::PathBuf;

use crate::{Agent, Scaffold, ScaffoldError};

/// What `gavel init` is told.
#[derive(Debug, Clone)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
pub struct InitOptions {
    /// Folder to write gavel.yaml into.
    #[cfg_attr(feature = "cli", arg(default_value = "."))]
    pub dir: PathBuf,
    /// The agent is an HTTP endpoint: its chat URL.
    #[cfg_attr(
        feature = "cli",
        arg(long, value_name = "URL", conflicts_with = "command")
    )]
    pub http: Option<String>,
    /// The agent is a JSON-lines process: its command line (split like a shell
    /// would, never run through one).
    #[cfg_attr(feature = "cli", arg(long, value_name = "COMMAND_LINE"))]
    pub command: Option<String>,
    /// JSON pointer to the answer text in the agent's reply.
    #[cfg_attr(
        feature = "cli",
        arg(long, default_value = "/output", value_name = "POINTER")
    )]
    pub output: String,
    /// JSON pointer to the agent's tool calls `[{name, arguments, result}]`.
    #[cfg_attr(feature = "cli", arg(long, value_name = "POINTER"))]
    pub tool_calls: Option<String>,
    /// The first case's message.
    #[cfg_attr(
        feature = "cli",
        arg(long, default_value = "Hello!", value_name = "TEXT")
    )]
    pub input: String,
    /// The suite's name.
    #[cfg_attr(feature = "cli", arg(long, default_value = "my-agent"))]
    pub name: String,
    /// Overwrite an existing gavel.yaml.
    #[cfg_attr(feature = "cli", arg(long))]
    pub force: bool,
}

impl InitOptions {
    /// Writes the suite the flags describe or, with neither `--http` nor
    /// `--command`, the one a terminal's answers describe; returns its path.
    pub fn init(&self) -> Result<PathBuf, ScaffoldError> {
        let agent = match (&self.http, &self.command) {
            (Some(url), _) => Agent::Http { url: url.clone() },
            (None, Some(line)) => Agent::command_line(line)?,
            (None, None) if std::io::stdin().is_terminal() => {
                let asked = crate::ask(&mut std::io::stdin().lock(), &mut std::io::stderr())?;
                return asked.write(&self.dir, self.force);
            }
            (None, None) => {
                return Err(ScaffoldError::Input {
                    field: "--http",
                    message: "give --http URL or --command COMMAND_LINE (or run in a terminal to be asked)".into(),
                });
            }
        };
        let scaffold = Scaffold {
            name: self.name.clone(),
            agent,
            output: self.output.clone(),
            tool_calls: self.tool_calls.clone(),
            input: self.input.clone(),
        };
        scaffold.write(&self.dir, self.force)
    }
}
