//! `gavel import` and `gavel export`: suite files in and out of the store, where
//! their cases are versioned.

use std::path::PathBuf;

use clap::Args;

use super::{EXIT_OK, StoreLocation};

#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub(crate) struct ImportArgs {
    #[command(subcommand)]
    from: Option<super::promptfoo::ImportFrom>,
    /// A suite file (YAML or JSON).
    #[arg(required = true)]
    file: Option<PathBuf>,
    /// The suite's name in the store (default: the file's `name`, else its stem).
    #[arg(long)]
    name: Option<String>,
    /// Who makes the change, recorded with every new case version (default: $USER).
    #[arg(long, env = "USER", default_value = "unknown")]
    author: String,
    #[command(flatten)]
    store: StoreLocation,
}

#[derive(Debug, Args)]
pub(crate) struct ExportArgs {
    /// The suite's name in the store.
    #[arg(required = true)]
    suite: Option<String>,
    /// Write to this file instead of stdout.
    #[arg(short = 'o', long = "output")]
    output: Option<PathBuf>,
    #[command(flatten)]
    store: StoreLocation,
}

pub(crate) async fn import(args: ImportArgs) -> anyhow::Result<u8> {
    if let Some(from) = args.from {
        return super::promptfoo::import(from);
    }
    let Some(file) = args.file else {
        return Ok(super::EXIT_BAD_INPUT); // clap requires FILE without a subcommand
    };
    let store = args.store.open().await?;
    let imported =
        gavel_session::import_file(&store, &file, args.name.as_deref(), &args.author).await;
    let (name, summary) = match imported {
        Ok(done) => done,
        Err(e) => {
            if matches!(e, gavel_session::SessionError::Load(_)) {
                super::promptfoo::hint(std::slice::from_ref(&file));
            }
            return Ok(super::session_error(&e));
        }
    };
    eprintln!("suite {name}: {summary}");
    Ok(EXIT_OK)
}

pub(crate) async fn export(args: ExportArgs) -> anyhow::Result<u8> {
    let Some(suite) = args.suite else {
        return Ok(super::EXIT_BAD_INPUT); // clap requires SUITE without a subcommand
    };
    let store = args.store.open().await?;
    let yaml = match gavel_session::stored_yaml(&store, &suite).await {
        Ok(yaml) => yaml,
        Err(e) => return Ok(super::session_error(&e)),
    };
    super::write_or_print(args.output.as_deref(), &yaml)?;
    Ok(EXIT_OK)
}
