//! `gavel users add NAME --role ROLE`: a web UI account (the first admin comes
//! from here). The password is read from a prompt, typed twice, or, when stdin
//! is not a terminal, from its first line: never from a flag, which `ps` shows.

use std::io::{BufRead, IsTerminal, Read};

use anyhow::{Context, bail};
use clap::{Args, Subcommand};
use gavel::store::{Role, StoreError};
use gavel_web::{AccountError, MAX_PASSWORD};

use super::{EXIT_BAD_INPUT, EXIT_OK, StoreArgs};

#[derive(Debug, Args)]
pub(crate) struct UsersArgs {
    #[command(subcommand)]
    command: UsersCommand,
}

#[derive(Debug, Subcommand)]
enum UsersCommand {
    /// Make an account of the web UI; the password is prompted for (or read
    /// from stdin's first line).
    Add(AddArgs),
}

#[derive(Debug, Args)]
struct AddArgs {
    /// Its sign-in name: letters, digits, `.`, `_`, `-`, `@`.
    name: String,
    /// viewer (reads), editor (also writes cases, starts runs), admin (also users).
    #[arg(long, value_parser = |s: &str| s.parse::<Role>())]
    role: Role,
    /// Who makes it, recorded with the account (default: $USER).
    #[arg(long, env = "USER", default_value = "cli")]
    by: String,
    #[command(flatten)]
    store: StoreArgs,
}

pub(crate) async fn users(args: UsersArgs) -> anyhow::Result<u8> {
    let UsersCommand::Add(args) = args.command;
    let password = read_password()?;
    let store = args.store.open().await?;
    match gavel_web::add_user(&store, &args.name, args.role, &password, &args.by).await {
        Ok(()) => {
            eprintln!("user {} ({}) added", args.name, args.role);
            Ok(EXIT_OK)
        }
        Err(e @ (AccountError::Password(_) | AccountError::Store(StoreError::Invalid { .. }))) => {
            eprintln!("error: {e}");
            Ok(EXIT_BAD_INPUT)
        }
        Err(e) => Err(e.into()),
    }
}

/// The password: prompted twice on a terminal, else stdin's first line.
fn read_password() -> anyhow::Result<String> {
    let stdin = std::io::stdin();
    if stdin.is_terminal() {
        let first = rpassword::prompt_password("password: ").context("reading the password")?;
        let again = rpassword::prompt_password("again: ").context("reading the password")?;
        if first != again {
            bail!("the two passwords differ");
        }
        return Ok(first);
    }
    let mut line = String::new();
    // One byte past the limit, so that a longer password is refused, not cut.
    let limit = u64::try_from(MAX_PASSWORD + 3).unwrap_or(u64::MAX);
    stdin
        .lock()
        .take(limit)
        .read_line(&mut line)
        .context("reading the password from stdin")?;
    Ok(line.trim_end_matches(['\n', '\r']).to_owned())
}
