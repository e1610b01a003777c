//! `gavel import promptfoo CONFIG… [-o suite.yaml]`: a promptfoo config converted
//! to a gavel suite file; and what `gavel validate` and `gavel run` say of promptfoo files.

use std::path::PathBuf;

use clap::{Args, Subcommand};

use super::{EXIT_OK, session_error};

/// Formats `gavel import` converts from.
#[derive(Debug, Subcommand)]
pub(crate) enum ImportFrom {
    /// Convert promptfoo configs (merged in order) into a gavel suite file.
    Promptfoo(PromptfooArgs),
}

#[derive(Debug, Args)]
pub(crate) struct PromptfooArgs {
    /// promptfoo config files (promptfooconfig.yaml).
    #[arg(required = true)]
    configs: Vec<PathBuf>,
    /// Write the suite here instead of stdout.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    output: Option<PathBuf>,
}

/// Converts, checks the suite as `gavel validate` would, writes it and lists
/// what was not mapped.
pub(crate) fn import(from: ImportFrom) -> anyhow::Result<u8> {
    let ImportFrom::Promptfoo(args) = from;
    let shown = args.output.clone().unwrap_or_else(|| "suite.yaml".into());
    let conversion = match gavel_session::convert_promptfoo(&args.configs, &shown) {
        Ok(c) => c,
        Err(e) => return Ok(session_error(&e)),
    };
    super::write_or_print(args.output.as_deref(), &conversion.yaml)?;
    for item in &conversion.unmapped {
        eprintln!("warning: {item}");
    }
    eprintln!("{conversion}");
    eprintln!(
        "note: {} gates at a 100% pass rate (`gate.min_pass_rate`), as promptfoo fails the job on any failed test",
        shown.display()
    );
    Ok(EXIT_OK)
}

/// Tells the user which of `paths` look like promptfoo configs, and how to convert them.
pub(crate) fn hint(paths: &[PathBuf]) {
    for path in paths
        .iter()
        .filter(|p| gavel_promptfoo::is_promptfoo_file(p))
    {
        let shown = path.display();
        eprintln!(
            "note: {shown} looks like a promptfoo config: convert it with `gavel import promptfoo {shown} -o suite.yaml`"
        );
    }
}

/// `gavel run` on promptfoo configs (given, or named `promptfooconfig.*` in a
/// directory given): an error for each naming the import command; true when
/// there was one.
pub(crate) fn refuse_run(paths: &[PathBuf]) -> bool {
    let configs: Vec<PathBuf> = paths
        .iter()
        .flat_map(|path| match std::fs::read_dir(path) {
            Ok(entries) => entries
                .filter_map(|entry| Some(entry.ok()?.path()))
                .filter(|p| {
                    p.file_name()
                        .and_then(|n| n.to_str())
                        .is_some_and(|n| n.starts_with("promptfooconfig."))
                })
                .collect(),
            Err(_) => vec![path.clone()],
        })
        .filter(|p| gavel_promptfoo::is_promptfoo_file(p))
        .collect();
    for config in &configs {
        let shown = config.display();
        eprintln!(
            "error: {shown} is a promptfoo config, not a gavel suite: convert it with `gavel import promptfoo {shown} -o suite.yaml`, then `gavel run suite.yaml`"
        );
    }
    !configs.is_empty()
}
