//! `gavel init`: flags (or answers in a terminal) to a first suite file.

use std::io::IsTerminal;
use std::path::PathBuf;

use clap::Args;
use gavel_scaffold::{Agent, Scaffold, ScaffoldError};

use super::{EXIT_BAD_INPUT, EXIT_INFRA, EXIT_OK};

#[derive(Debug, Args)]
pub(crate) struct InitArgs {
    /// Folder to write gavel.yaml into.
    #[arg(default_value = ".")]
    dir: PathBuf,
    /// The agent is an HTTP endpoint: its chat URL.
    #[arg(long, value_name = "URL", conflicts_with = "command")]
    http: Option<String>,
    /// The agent is a JSON-lines process: its command line (split like a shell
    /// would, never run through one).
    #[arg(long, value_name = "COMMAND_LINE")]
    command: Option<String>,
    /// JSON pointer to the answer text in the agent's reply.
    #[arg(long, default_value = "/output", value_name = "POINTER")]
    output: String,
    /// JSON pointer to the agent's tool calls `[{name, arguments, result}]`.
    #[arg(long, value_name = "POINTER")]
    tool_calls: Option<String>,
    /// The first case's message.
    #[arg(long, default_value = "Hello!", value_name = "TEXT")]
    input: String,
    /// The suite's name.
    #[arg(long, default_value = "my-agent")]
    name: String,
    /// Overwrite an existing gavel.yaml.
    #[arg(long)]
    force: bool,
}

/// Writes the scaffold and says how to run it.
pub(crate) fn init(args: InitArgs) -> anyhow::Result<u8> {
    let scaffold = match (&args.http, &args.command) {
        (Some(url), _) => Ok(with_flags(Agent::Http { url: url.clone() }, &args)),
        (None, Some(line)) => Agent::command_line(line).map(|a| with_flags(a, &args)),
        (None, None) if std::io::stdin().is_terminal() => {
            gavel_scaffold::ask(&mut std::io::stdin().lock(), &mut std::io::stderr())
        }
        (None, None) => {
            eprintln!(
                "error: give --http URL or --command COMMAND_LINE (or run in a terminal to be asked)"
            );
            return Ok(EXIT_BAD_INPUT);
        }
    };
    match scaffold.and_then(|s| s.write(&args.dir, args.force)) {
        Ok(path) => {
            println!(
                "wrote {}\nnext: gavel run {}",
                path.display(),
                path.display()
            );
            Ok(EXIT_OK)
        }
        Err(e @ ScaffoldError::Io { .. }) => {
            eprintln!("error: {e}");
            Ok(EXIT_INFRA)
        }
        Err(e) => {
            eprintln!("error: {e}");
            Ok(EXIT_BAD_INPUT)
        }
    }
}

fn with_flags(agent: Agent, args: &InitArgs) -> Scaffold {
    Scaffold {
        name: args.name.clone(),
        agent,
        output: args.output.clone(),
        tool_calls: args.tool_calls.clone(),
        input: args.input.clone(),
    }
}
