//! `gavel import promptfoo CONFIG… [-o suite.yaml]`: a promptfoo config converted
//! to a gavel suite file; and the hint `gavel validate` gives for promptfoo files.

use std::path::{Path, PathBuf};

use anyhow::Context;
use clap::{Args, Subcommand};

use super::{EXIT_BAD_INPUT, EXIT_OK, plural, session_error};

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
    let conversion = match gavel_promptfoo::convert(&args.configs) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("error: {e}");
            return Ok(EXIT_BAD_INPUT);
        }
    };
    let shown = args.output.clone().unwrap_or_else(|| "suite.yaml".into());
    let converted = gavel::load::SuiteSource::Text {
        text: conversion.yaml.clone(),
        path: shown,
    };
    if let Err(e) = gavel_session::validate(&[converted]) {
        return Ok(session_error(&e));
    }
    match &args.output {
        Some(path) => std::fs::write(path, &conversion.yaml)
            .with_context(|| format!("writing {}", path.display()))?,
        None => print!("{}", conversion.yaml),
    }
    for item in &conversion.unmapped {
        eprintln!("warning: {item}");
    }
    eprintln!(
        "{} case{}, {} target{}; {} item{} not mapped (marked `# gavel import: unmapped` in the suite)",
        conversion.cases,
        plural(conversion.cases),
        conversion.targets,
        plural(conversion.targets),
        conversion.unmapped.len(),
        plural(conversion.unmapped.len()),
    );
    Ok(EXIT_OK)
}

/// Tells the user which of `paths` look like promptfoo configs, and how to convert them.
pub(crate) fn hint(paths: &[PathBuf]) {
    for path in paths.iter().filter(|p| is_promptfoo(p)) {
        let shown = path.display();
        eprintln!(
            "note: {shown} looks like a promptfoo config: convert it with `gavel import promptfoo {shown} -o suite.yaml`"
        );
    }
}

fn is_promptfoo(path: &Path) -> bool {
    path.is_file()
        && std::fs::read_to_string(path).is_ok_and(|t| gavel_promptfoo::looks_like_promptfoo(&t))
}
