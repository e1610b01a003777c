//! `gavel users`: the web UI's accounts from the command line. `add` makes one
//! (the first admin comes from here), its password prompted for or read from
//! stdin's first line; `list` shows them and the sign-in locks; `unlock` lifts
//! a lock; `tokens` and `revoke` list and revoke an account's API tokens.

use std::net::IpAddr;

use clap::Subcommand;
use gavel_store::{SignInSubject, Store};
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
    /// List the accounts, and the names and addresses whose sign-ins are
    /// refused now (back-off or lock).
    List {
        #[command(flatten)]
        store: StoreLocation,
    },
    /// Lift the sign-in lock of an account name or, with --address, of a
    /// client address (an IPv6 address counts by its /64).
    Unlock {
        /// The name as typed at sign-in.
        #[arg(required_unless_present = "address", conflicts_with = "address")]
        name: Option<String>,
        /// A client address instead of a name.
        #[arg(long, value_name = "IP")]
        address: Option<IpAddr>,
        #[command(flatten)]
        store: StoreLocation,
    },
    /// List an account's unexpired API tokens (never their values).
    Tokens {
        /// The account.
        name: String,
        #[command(flatten)]
        store: StoreLocation,
    },
    /// Revoke one of an account's API tokens, by the id `tokens` shows.
    Revoke {
        /// The account.
        name: String,
        /// The token's id.
        id: String,
        #[command(flatten)]
        store: StoreLocation,
    },
}

pub(crate) async fn users(command: UsersCommand) -> anyhow::Result<u8> {
    match command {
        UsersCommand::Add { account, store } => add(&account, &store.open().await?).await,
        UsersCommand::List { store } => list(&store.open().await?).await,
        UsersCommand::Unlock {
            name,
            address,
            store,
        } => {
            // clap asks for exactly one of the two.
            let subject = match address {
                Some(ip) => SignInSubject::Address(gavel_web::address_key(ip)),
                None => SignInSubject::Account(name.unwrap_or_default()),
            };
            let store = store.open().await?;
            if store.clear_sign_in_failures(&subject).await? {
                eprintln!("{subject}: sign-in failures forgotten, lock lifted");
            } else {
                eprintln!("{subject}: no failed sign-ins recorded");
            }
            Ok(EXIT_OK)
        }
        UsersCommand::Tokens { name, store } => {
            let store = store.open().await?;
            if store.user(&name).await?.is_none() {
                eprintln!("error: no user `{name}`");
                return Ok(EXIT_BAD_INPUT);
            }
            for t in store.api_tokens(&name).await? {
                println!(
                    "{}  {}  made {} by {}  expires {}",
                    t.id, t.label, t.created_at, t.created_by, t.expires_at
                );
            }
            Ok(EXIT_OK)
        }
        UsersCommand::Revoke { name, id, store } => {
            match store.open().await?.revoke_api_token(&name, &id).await {
                Ok(()) => {
                    eprintln!("token {id} of {name} revoked");
                    Ok(EXIT_OK)
                }
                Err(gavel_store::StoreError::NotFound(what)) => {
                    eprintln!("error: no {what}");
                    Ok(EXIT_BAD_INPUT)
                }
                Err(e) => Err(e.into()),
            }
        }
    }
}

async fn add(account: &NewAccount, store: &Store) -> anyhow::Result<u8> {
    match account.add(store).await {
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

async fn list(store: &Store) -> anyhow::Result<u8> {
    for u in store.users().await? {
        let disabled = if u.disabled { "  disabled" } else { "" };
        println!("{}  {}{disabled}", u.name, u.role);
    }
    for b in store.blocked_sign_ins().await? {
        println!(
            "refused: {}  after {} failed sign-ins, until {}",
            b.subject,
            b.failures,
            gavel_core::rfc3339_of_ms(b.blocked_until_ms)
        );
    }
    Ok(EXIT_OK)
}
