//! Questions asked in a terminal when `gavel init` gets no agent flag.

use std::io::{BufRead, Write};
use std::path::PathBuf;

use crate::{Agent, Scaffold, ScaffoldError};

/// At most this many tries per question before giving up.
const TRIES: usize = 3;

/// Asks for the agent (HTTP URL or command line), where its answer is, and the
/// first message, reading answers line by line from `input`. Empty answers take
/// the default shown in brackets; end of input is an error.
pub fn ask(input: &mut impl BufRead, output: &mut impl Write) -> Result<Scaffold, ScaffoldError> {
    let mut q = Questions { input, output };
    let kind = q.choose("Agent kind: http or command", "http", |a| {
        matches!(a, "http" | "command").then(|| a.to_owned())
    })?;
    let agent = if kind == "http" {
        let url = q.choose(
            "URL of the chat endpoint",
            "http://127.0.0.1:8787/chat",
            |a| (a.starts_with("http://") || a.starts_with("https://")).then(|| a.to_owned()),
        )?;
        Agent::Http { url }
    } else {
        q.choose("Command line that starts the agent", "", |a| {
            Agent::command_line(a).ok()
        })?
    };
    let mut s = Scaffold::new(agent);
    s.output = q.choose("JSON pointer to the answer text", "/output", pointer)?;
    let tools = q.choose("JSON pointer to its tool calls (- for none)", "-", |a| {
        if a == "-" {
            Some(None)
        } else {
            pointer(a).map(Some)
        }
    })?;
    s.tool_calls = tools;
    s.input = q.choose("A first message to send it", "Hello!", |a| {
        Some(a.to_owned())
    })?;
    s.name = q.choose("Suite name", "my-agent", |a| Some(a.to_owned()))?;
    Ok(s)
}

fn pointer(a: &str) -> Option<String> {
    a.starts_with('/').then(|| a.to_owned())
}

struct Questions<'a, R, W> {
    input: &'a mut R,
    output: &'a mut W,
}

impl<R: BufRead, W: Write> Questions<'_, R, W> {
    /// Asks `question` until `accept` takes the answer (or the default).
    fn choose<T>(
        &mut self,
        question: &str,
        default: &str,
        accept: impl Fn(&str) -> Option<T>,
    ) -> Result<T, ScaffoldError> {
        let io = |source| ScaffoldError::Io {
            path: PathBuf::from("stdin"),
            source,
        };
        for _ in 0..TRIES {
            if default.is_empty() {
                write!(self.output, "{question}: ").map_err(io)?;
            } else {
                write!(self.output, "{question} [{default}]: ").map_err(io)?;
            }
            self.output.flush().map_err(io)?;
            let mut line = String::new();
            if self.input.read_line(&mut line).map_err(io)? == 0 {
                return Err(ScaffoldError::Input {
                    field: "prompt",
                    message: format!("no answer to \"{question}\" (end of input)"),
                });
            }
            let answer = match line.trim() {
                "" => default,
                a => a,
            };
            if let Some(v) = accept(answer) {
                return Ok(v);
            }
            writeln!(self.output, "  `{answer}` will not do; try again").map_err(io)?;
        }
        Err(ScaffoldError::Input {
            field: "prompt",
            message: format!("no usable answer to \"{question}\" after {TRIES} tries"),
        })
    }
}
