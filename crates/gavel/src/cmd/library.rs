//! `gavel import` and `gavel export`: suite files in and out of the store, where
//! their cases are versioned.

use std::path::{Path, PathBuf};

use anyhow::Context;
use clap::Args;
use gavel::store::SuiteDoc;

use super::{EXIT_BAD_INPUT, EXIT_OK, StoreArgs, print_load_errors};

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
    store: StoreArgs,
}

#[derive(Debug, Args)]
pub(crate) struct ExportArgs {
    /// The suite's name in the store.
    suite: String,
    /// Write to this file instead of stdout.
    #[arg(short = 'o', long = "output")]
    output: Option<PathBuf>,
    #[command(flatten)]
    store: StoreArgs,
}

pub(crate) async fn import(args: ImportArgs) -> anyhow::Result<u8> {
    if let Some(from) = args.from {
        return super::promptfoo::import(from);
    }
    let Some(file) = args.file else {
        return Ok(EXIT_BAD_INPUT); // clap requires FILE without a subcommand
    };
    let text =
        std::fs::read_to_string(&file).with_context(|| format!("reading {}", file.display()))?;
    // The loader's checks first: a bad file is reported by file:line:col and
    // nothing is stored.
    if let Err(errors) = gavel::load::parse_suite_str(&text, &file) {
        super::promptfoo::hint(std::slice::from_ref(&file));
        return Ok(print_load_errors(&errors));
    }
    let doc = match parse_doc(&text, &file) {
        Ok(doc) => doc,
        Err(message) => {
            eprintln!("error: {}: {message}", file.display());
            return Ok(EXIT_BAD_INPUT);
        }
    };
    let name = args
        .name
        .clone()
        .or_else(|| {
            doc.head
                .get("name")
                .and_then(|n| n.as_str())
                .map(str::to_owned)
        })
        .or_else(|| file.file_stem().map(|s| s.to_string_lossy().into_owned()))
        .context("the suite needs a name: pass --name")?;
    let store = args.store.open().await?;
    let summary = store.import_suite(&name, &doc, &args.author).await?;
    eprintln!(
        "suite {name}: {} added, {} changed, {} unchanged, {} removed",
        summary.added, summary.changed, summary.unchanged, summary.removed
    );
    Ok(EXIT_OK)
}

pub(crate) async fn export(args: ExportArgs) -> anyhow::Result<u8> {
    let store = args.store.open().await?;
    let yaml = match gavel_session::stored_yaml(&store, &args.suite).await {
        Ok(yaml) => yaml,
        Err(e) => return Ok(super::session_error(&e)),
    };
    match &args.output {
        Some(path) => {
            std::fs::write(path, yaml).with_context(|| format!("writing {}", path.display()))?
        }
        None => print!("{yaml}"),
    }
    Ok(EXIT_OK)
}

/// Parses a suite file (JSON by extension, else YAML) into its document parts.
fn parse_doc(text: &str, path: &Path) -> Result<SuiteDoc, String> {
    let json = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("json"));
    let value: serde_json::Value = if json {
        serde_json::from_str(text).map_err(|e| e.to_string())?
    } else {
        serde_saphyr::from_str(text).map_err(|e| e.to_string())?
    };
    SuiteDoc::from_value(value).ok_or_else(|| {
        "a suite file is a mapping with `cases`, a list of cases, or one case".into()
    })
}
