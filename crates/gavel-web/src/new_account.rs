//! `gavel users add NAME --role ROLE`: an account made from the command line
//! (the first admin comes from here). The password is read from a prompt,
//! typed twice, or, when stdin is not a terminal, from its first line: never
//! from a flag, which `ps` shows.

use std::io::{BufRead, IsTerminal, Read};

use gavel_store::{Role, Store};

use crate::accounts::{AccountError, MAX_PASSWORD, add_user};

/// An account to make from the command line.
#[derive(Debug, Clone, clap::Args)]
pub struct NewAccount {
    /// Its sign-in name: letters, digits, `.`, `_`, `-`, `@`.
    pub name: String,
    /// viewer (reads), editor (also writes cases, starts runs), admin (also users).
    #[arg(long, value_parser = |s: &str| s.parse::<Role>())]
    pub role: Role,
    /// Who makes it, recorded with the account (default: $USER).
    #[arg(long, env = "USER", default_value = "cli")]
    pub by: String,
}

impl NewAccount {
    /// Reads the password and makes the account.
    pub async fn add(&self, store: &Store) -> Result<(), AccountError> {
        let password = read_password()?;
        add_user(store, &self.name, self.role, &password, &self.by).await
    }
}

/// The password: prompted twice on a terminal, else stdin's first line.
fn read_password() -> Result<String, AccountError> {
    let stdin = std::io::stdin();
    if stdin.is_terminal() {
        let first = rpassword::prompt_password("password: ")?;
        let again = rpassword::prompt_password("again: ")?;
        if first != again {
            return Err(AccountError::Password("the two passwords differ".into()));
        }
        return Ok(first);
    }
    let mut line = String::new();
    // One byte past the limit, so that a longer password is refused, not cut.
    let limit = u64::try_from(MAX_PASSWORD + 3).unwrap_or(u64::MAX);
    stdin.lock().take(limit).read_line(&mut line)?;
    Ok(line.trim_end_matches(['\n', '\r']).to_owned())
}
