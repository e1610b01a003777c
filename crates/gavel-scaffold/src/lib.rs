//! `gavel init`: a first suite for an HTTP or command agent.
//!
//! [`Scaffold`] says what to test (from flags, or from [`ask`] in a terminal);
//! [`Scaffold::render`] writes the suite's YAML (a target and two starter cases);
//! [`Scaffold::write`] puts it in a folder without overwriting anything unless
//! told to. The rendered suite always loads: [`Scaffold::write`] checks it with
//! the same loader `gavel run` uses before writing a byte.

mod options;
mod prompt;
mod render;

use std::path::{Path, PathBuf};

pub use options::InitOptions;
pub use prompt::ask;

/// The file `gavel init` writes.
pub const SUITE_FILE: &str = "gavel.yaml";

/// The agent under test.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Agent {
    /// An HTTP endpoint taking `{session_id, message, context}` as JSON.
    Http {
        /// The endpoint URL.
        url: String,
    },
    /// A process speaking JSON lines on stdin and stdout.
    Command {
        /// Program and arguments.
        argv: Vec<String>,
    },
}

impl Agent {
    /// A command agent from one command line, split as a POSIX shell would
    /// (quotes and backslashes; no expansion, nothing is run through a shell).
    pub fn command_line(line: &str) -> Result<Agent, ScaffoldError> {
        match shlex::split(line) {
            Some(argv) if !argv.is_empty() => Ok(Agent::Command { argv }),
            _ => Err(ScaffoldError::Input {
                field: "--command",
                message: format!("`{line}` is not a command line (empty, or an unclosed quote)"),
            }),
        }
    }
}

/// Everything `gavel init` asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scaffold {
    /// The suite's name.
    pub name: String,
    /// The agent under test.
    pub agent: Agent,
    /// JSON pointer to the answer text in the agent's JSON reply.
    pub output: String,
    /// JSON pointer to the agent's tool calls, if it reports them.
    pub tool_calls: Option<String>,
    /// The first case's user message.
    pub input: String,
}

impl Scaffold {
    /// A scaffold with the defaults: name `my-agent`, answer at `/output`, no
    /// tool calls, input `Hello!`.
    pub fn new(agent: Agent) -> Scaffold {
        Scaffold {
            name: "my-agent".to_owned(),
            agent,
            output: "/output".to_owned(),
            tool_calls: None,
            input: "Hello!".to_owned(),
        }
    }

    /// The suite file's text.
    pub fn render(&self) -> String {
        render::suite(self)
    }

    /// Writes [`SUITE_FILE`] into `dir` (created if missing) and returns its path.
    /// An existing file is kept unless `overwrite`; the text is loaded with
    /// gavel's loader first, so a bad value (a pointer without `/`) is refused
    /// naming the field.
    pub fn write(&self, dir: &Path, overwrite: bool) -> Result<PathBuf, ScaffoldError> {
        self.check()?;
        let path = dir.join(SUITE_FILE);
        let text = self.render();
        if let Err(errors) = gavel_core::load::parse_suite_str(&text, &path) {
            return Err(ScaffoldError::Invalid(errors));
        }
        if path.exists() && !overwrite {
            return Err(ScaffoldError::Exists(path));
        }
        let io = |source| ScaffoldError::Io {
            path: path.clone(),
            source,
        };
        std::fs::create_dir_all(dir).map_err(io)?;
        std::fs::write(&path, text).map_err(io)?;
        Ok(path)
    }

    /// Field-level checks the loader would report less directly.
    fn check(&self) -> Result<(), ScaffoldError> {
        let bad = |field, message: String| Err(ScaffoldError::Input { field, message });
        if let Agent::Http { url } = &self.agent
            && !(url.starts_with("http://") || url.starts_with("https://"))
        {
            return bad(
                "--http",
                format!("`{url}` is not an http:// or https:// URL"),
            );
        }
        for (field, pointer) in [
            ("--output", Some(&self.output)),
            ("--tool-calls", self.tool_calls.as_ref()),
        ] {
            if let Some(p) = pointer
                && !p.starts_with('/')
            {
                return bad(field, format!("`{p}` is not a JSON pointer (try /{p})"));
            }
        }
        if self.name.trim().is_empty() {
            return bad("--name", "the suite name is empty".to_owned());
        }
        Ok(())
    }
}

/// Why a scaffold was not written.
#[derive(Debug, thiserror::Error)]
pub enum ScaffoldError {
    /// A flag or answer is unusable.
    #[error("{field}: {message}")]
    Input {
        /// The flag (or prompt) at fault.
        field: &'static str,
        /// What is wrong with it.
        message: String,
    },
    /// The file is there already.
    #[error("{} already exists (use --force to overwrite it)", .0.display())]
    Exists(PathBuf),
    /// The rendered suite did not load (a value the loader refuses).
    #[error("the scaffolded suite does not load: {}", .0.iter().map(ToString::to_string).collect::<Vec<_>>().join("; "))]
    Invalid(Vec<gavel_core::LoadError>),
    /// Reading an answer or writing the file failed.
    #[error("{}: {source}", .path.display())]
    Io {
        /// The file, or `stdin` for a prompt.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
}

impl ScaffoldError {
    /// Whether the flags or answers were at fault, rather than the file system.
    pub fn is_bad_input(&self) -> bool {
        !matches!(self, ScaffoldError::Io { .. })
    }
}
