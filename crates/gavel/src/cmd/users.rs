//! `gavel users add NAME --role ROLE`: a web UI account (the first admin comes
//! from here), its password prompted for or read from stdin's first line.

use clap::Subcommand;
use gavel_web::NewAccount;

use super::{EXIT_BAD_INPUT, EXIT_OK, StoreLocation};

#[derive(Debug, Subcommand)]
pub(crate) enum UsersCommand {
    /// Make an account of the web UI; the password is prompted for (or read
    /// from stdin's first line).
    Add {
        #[command(flatten)]
        account: NewAccount,
        #[command(flatten)]
        store: StoreLocation,
    },
}

pub(crate) async fn users(command: UsersCommand) -> anyhow::Result<u8> {
    let UsersCommand::Add { account, store } = command;
    let store = store.open().await?;
    match account.add(&store).await {
        Ok(()) => {
            eprintln!("user {} ({}) added", account.name, account.role);
            Ok(EXIT_OK)
        }
        Err(e) if e.is_bad_input() => {
            eprintln!("error: {e}");
            Ok(EXIT_BAD_INPUT)
        }
        Err(e) => Err(e.into()),
    }
}
