//! `gavel validate`'s check of whole suites: they load, and every case's checks
//! compile. Nothing runs.

use gavel_core::Suite;
use gavel_core::load::SuiteSource;

use crate::SessionError;

/// Loads `sources` through the one loader and compiles every case's checks,
/// reporting every compile error at once (`SessionError::Compile`).
pub fn validate(sources: &[SuiteSource]) -> Result<Suite, SessionError> {
    let suite = gavel_core::load::load(sources).map_err(SessionError::Load)?;
    let errors: Vec<_> = suite
        .cases
        .iter()
        .filter_map(|case| gavel_checks::compile(case, &suite.judge).err())
        .collect();
    match errors.is_empty() {
        true => Ok(suite),
        false => Err(SessionError::Compile(errors)),
    }
}

/// Converts promptfoo configs (merged in order) into a gavel suite and checks it
/// as [`validate`] does, shown as read from `shown` in its errors.
#[cfg(feature = "promptfoo")]
pub fn convert_promptfoo(
    configs: &[std::path::PathBuf],
    shown: &std::path::Path,
) -> Result<gavel_promptfoo::Conversion, SessionError> {
    let conversion = gavel_promptfoo::convert(configs)?;
    let converted = SuiteSource::Text {
        text: conversion.yaml.clone(),
        path: shown.to_path_buf(),
    };
    validate(&[converted])?;
    Ok(conversion)
}
