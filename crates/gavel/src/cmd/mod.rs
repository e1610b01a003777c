//! Subcommands. Exit codes: 0 gate passed and no errors; 1 gate failed; 2 bad
//! input or configuration; 3 the run did not finish, errors kept some cases
//! from a verdict (infrastructure, provider, target down), or nothing was
//! decided; 130 interrupted.

mod calibrate;
mod compare;
mod export_otel;
mod init;
mod library;
mod model_files;
mod promptfoo;
mod report;
mod run;
mod serve;
mod users;
mod validate;
mod worker;

use anyhow::Context;
use clap::{Parser, Subcommand};
pub(crate) use gavel::plural;
use gavel::runner::CancellationToken;
use gavel_session::SessionError;
pub(crate) use gavel_session::StoreLocation;

/// Gate passed and no errors.
pub(crate) const EXIT_OK: u8 = 0;
/// The gate failed.
pub(crate) const EXIT_GATE: u8 = 1;
/// Bad input or configuration.
pub(crate) const EXIT_BAD_INPUT: u8 = 2;
/// The run did not finish, or infrastructure kept cases from a verdict.
pub(crate) const EXIT_INFRA: u8 = 3;
/// Interrupted by Ctrl-C.
pub(crate) const EXIT_INTERRUPTED: u8 = 130;

/// Exit codes and examples, after the command list of `gavel --help`.
const AFTER_HELP: &str = "\
Exit codes:
  0    the gate passed and nothing errored
  1    the gate failed (pass rate under --min-pass-rate, judge calibration, required judges)
  2    bad input or configuration (the message names file:line:col or the flag)
  3    the run did not finish (--max-cost, interrupted, fewer executions than planned),
       errors kept cases from a verdict (agent down, provider error), nothing was
       decided (every case skipped, e.g. judges without credentials), or an
       OpenTelemetry export failed
  130  interrupted (Ctrl-C)

Examples:
  gavel init --http http://127.0.0.1:8787/chat --output /reply
  gavel run gavel.yaml -o report.md -o junit.xml
  gavel run examples/quickstart --judge anthropic:claude-opus-4-5 --min-pass-rate 90
  gavel compare previous latest
  gavel completions bash > ~/.local/share/bash-completion/completions/gavel";

/// End-to-end tests for AI agents, graded by checks and LLM judges.
#[derive(Parser)]
#[command(name = "gavel", version, about, long_about = None, after_help = AFTER_HELP)]
pub(crate) struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Write a first suite (gavel.yaml) for an HTTP or command agent, from flags
    /// or, in a terminal, from answers to a few questions.
    Init(gavel_scaffold::InitOptions),
    /// Run suites against their targets, store every result and report.
    Run(run::RunArgs),
    /// Check suite files without running anything.
    Validate(validate::ValidateArgs),
    /// Rebuild reports of a stored run.
    Report(report::ReportArgs),
    /// Print the JSON Schema of the native suite format.
    Schema,
    /// Compare two stored runs: regressions, fixes, score, cost and latency deltas.
    Compare(compare::CompareArgs),
    /// Measure a judge against human labels; store the calibration run.
    Calibrate(calibrate::CalibrateArgs),
    /// Store a suite file's cases in the database, versioned.
    Import(library::ImportArgs),
    /// Write a suite stored in the database as a YAML file; `export otel RUN_ID`
    /// sends a stored run to OpenTelemetry.
    Export(export_otel::ExportCommand),
    /// Serve the web UI over the store.
    Serve(serve::ServeArgs),
    /// Accounts of the web UI: `users add NAME --role admin` makes the first admin.
    Users {
        #[command(subcommand)]
        command: users::UsersCommand,
    },
    /// Serve the stored evaluations over MCP (stdio, or Streamable HTTP with --http).
    Mcp(serve::McpArgs),
    /// Claim and run the executions of distributed runs (`gavel run --distributed`).
    Worker(worker::WorkerArgs),
    /// Model files run on this machine: list, pull from the hub, print a path.
    Models {
        #[command(subcommand)]
        action: gavel_model_files::ModelsAction,
    },
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
}

impl Cli {
    /// Runs the chosen command and returns its exit code.
    pub(crate) async fn dispatch(self) -> anyhow::Result<u8> {
        match self.command {
            Command::Init(args) => init::init(args),
            Command::Run(args) => run::run(args).await,
            Command::Validate(args) => validate::validate(args).await,
            Command::Report(args) => report::report(args).await,
            Command::Schema => {
                let schema = gavel::load::suite_schema();
                println!("{}", serde_json::to_string_pretty(&schema)?);
                Ok(EXIT_OK)
            }
            Command::Calibrate(args) => calibrate::calibrate(args).await,
            Command::Compare(args) => compare::compare(args).await,
            Command::Import(args) => library::import(args).await,
            Command::Export(args) => export_otel::export(args).await,
            Command::Serve(args) => serve::serve(args).await,
            Command::Users { command } => users::users(command).await,
            Command::Mcp(args) => serve::mcp(args).await,
            Command::Worker(args) => worker::worker(args).await,
            Command::Models { action } => model_files::models(action).await,
            Command::Completions { shell } => {
                use clap::CommandFactory;
                clap_complete::generate(
                    shell,
                    &mut Cli::command(),
                    "gavel",
                    &mut std::io::stdout(),
                );
                Ok(EXIT_OK)
            }
        }
    }
}

/// Prints a session's refusal and returns its exit code: 2 for bad input, 3
/// for the harness.
pub(crate) fn session_error(e: &SessionError) -> u8 {
    match e {
        SessionError::Load(errors) => print_all(errors),
        SessionError::Compile(errors) => print_all(errors),
        other => eprintln!("error: {other}"),
    }
    refused(e.is_bad_input())
}

/// The exit code of a refusal: 2 when the input was at fault, else 3.
pub(crate) fn refused(bad_input: bool) -> u8 {
    if bad_input {
        EXIT_BAD_INPUT
    } else {
        EXIT_INFRA
    }
}

/// Errors one per line, then their count.
fn print_all(errors: &[impl std::fmt::Display]) {
    for e in errors {
        eprintln!("error: {e}");
    }
    eprintln!("{} error{} found", errors.len(), plural(errors.len()));
}

/// A token cancelled by the first Ctrl-C, after printing `note`; a second
/// Ctrl-C exits at once.
pub(crate) fn cancel_on_ctrl_c(note: &'static str) -> CancellationToken {
    let cancel = CancellationToken::new();
    let token = cancel.clone();
    tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            eprintln!("\n{note}");
            token.cancel();
            if tokio::signal::ctrl_c().await.is_ok() {
                std::process::exit(i32::from(EXIT_INTERRUPTED));
            }
        }
    });
    cancel
}

/// Writes `text` to `path`, or prints it when there is none.
pub(crate) fn write_or_print(path: Option<&std::path::Path>, text: &str) -> anyhow::Result<()> {
    match path {
        Some(path) => {
            std::fs::write(path, text).with_context(|| format!("writing {}", path.display()))
        }
        None => {
            print!("{text}");
            Ok(())
        }
    }
}

/// Writes `value` as pretty JSON to `path` and says so.
pub(crate) fn write_json(
    path: &std::path::Path,
    value: &impl serde::Serialize,
) -> anyhow::Result<()> {
    std::fs::write(path, serde_json::to_string_pretty(value)?)
        .with_context(|| format!("writing {}", path.display()))?;
    eprintln!("wrote {}", path.display());
    Ok(())
}

#[cfg(test)]
mod tests {
    /// clap's own consistency checks over every subcommand (unique ids, valid
    /// defaults), which otherwise fire only when a command is first parsed.
    #[test]
    fn the_command_line_is_well_formed() {
        use clap::CommandFactory;
        super::Cli::command().debug_assert();
    }
}
