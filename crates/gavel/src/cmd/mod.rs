//! Subcommands. Exit codes: 0 gate passed and no errors; 1 gate failed; 2 bad
//! input or configuration; 3 errors kept some cases from a verdict (infrastructure,
//! provider, target down); 130 interrupted.

mod calibrate;
mod compare;
mod export_otel;
mod init;
mod library;
mod mcp;
mod model_files;
mod promptfoo;
mod report;
mod run;
mod schema;
mod serve;
mod users;
mod validate;
mod worker;

use std::path::PathBuf;

use anyhow::Context;
use clap::{Args, Parser, Subcommand};
use gavel::runner::CancellationToken;
use gavel_session::SessionError;

/// Gate passed and no errors.
pub(crate) const EXIT_OK: u8 = 0;
/// The gate failed.
pub(crate) const EXIT_GATE: u8 = 1;
/// Bad input or configuration.
pub(crate) const EXIT_BAD_INPUT: u8 = 2;
/// Infrastructure kept cases from a verdict.
pub(crate) const EXIT_INFRA: u8 = 3;
/// Interrupted by Ctrl-C.
pub(crate) const EXIT_INTERRUPTED: u8 = 130;

/// Exit codes and examples, after the command list of `gavel --help`.
const AFTER_HELP: &str = "\
Exit codes:
  0    the gate passed and nothing errored
  1    the gate failed (pass rate under --min-pass-rate, or a run that did not finish)
  2    bad input or configuration (the message names file:line:col or the flag)
  3    infrastructure kept cases from a verdict (agent down, provider error)
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
    Users(users::UsersArgs),
    /// Serve the stored evaluations over MCP (stdio, or Streamable HTTP with --http).
    Mcp(mcp::McpArgs),
    /// Claim and run the executions of distributed runs (`gavel run --distributed`).
    Worker(worker::WorkerArgs),
    /// Model files run on this machine: list, pull from the hub, print a path.
    Models(model_files::ModelsArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
}

/// Options shared by every command that touches the store.
#[derive(Debug, Clone, Args)]
pub(crate) struct StoreArgs {
    /// Store URL: sqlite://PATH or postgres://...
    #[arg(long, env = "GAVEL_DATABASE_URL", default_value = gavel::DEFAULT_DATABASE_URL, hide_env_values = true)]
    pub(crate) db: String,
}

impl StoreArgs {
    /// Opens the store.
    pub(crate) async fn open(&self) -> anyhow::Result<gavel::store::Store> {
        gavel::store::Store::open(&self.db)
            .await
            .context("opening the store")
    }
}

/// Options shared by commands that report.
#[derive(Debug, Clone, Args)]
pub(crate) struct ReportOutArgs {
    /// Write a report; the format follows the extension (.json, .xml = JUnit, .md, .html). Repeatable.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub(crate) outputs: Vec<PathBuf>,
    /// Colour the terminal summary (auto: when stdout is a terminal).
    #[arg(long, value_enum, default_value = "auto")]
    pub(crate) color: clap::ColorChoice,
}

/// `""` for one, `"s"` otherwise.
pub(crate) fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// Whether to colour terminal output (`auto`: stdout is a terminal and
/// `NO_COLOR` is unset).
pub(crate) fn colored(choice: clap::ColorChoice) -> bool {
    use std::io::IsTerminal;
    match choice {
        clap::ColorChoice::Auto => {
            std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none()
        }
        clap::ColorChoice::Always => true,
        clap::ColorChoice::Never => false,
    }
}

impl Cli {
    /// Runs the chosen command and returns its exit code.
    pub(crate) async fn dispatch(self) -> anyhow::Result<u8> {
        match self.command {
            Command::Init(args) => init::init(args),
            Command::Run(args) => run::run(args).await,
            Command::Validate(args) => validate::validate(args),
            Command::Report(args) => report::report(args).await,
            Command::Schema => schema::schema(),
            Command::Calibrate(args) => calibrate::calibrate(args).await,
            Command::Compare(args) => compare::compare(args).await,
            Command::Import(args) => library::import(args).await,
            Command::Export(args) => export_otel::export(args).await,
            Command::Serve(args) => serve::serve(args).await,
            Command::Users(args) => users::users(args).await,
            Command::Mcp(args) => mcp::mcp(args).await,
            Command::Worker(args) => worker::worker(args).await,
            Command::Models(args) => model_files::models(args).await,
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
    if e.is_bad_input() {
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

/// First Ctrl-C: stop gracefully (keep results, mark interrupted). Second: exit now.
pub(crate) fn watch_ctrl_c(cancel: CancellationToken) {
    tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            eprintln!("\ninterrupting: finishing the record; press Ctrl-C again to quit at once");
            cancel.cancel();
            if tokio::signal::ctrl_c().await.is_ok() {
                std::process::exit(i32::from(EXIT_INTERRUPTED));
            }
        }
    });
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
