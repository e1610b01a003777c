//! `gavel validate`'s check of whole suites: they load, the recordings of
//! their `replay` targets read, and every case's checks compile. Nothing runs.

use gavel_core::Suite;
use gavel_core::load::SuiteSource;

use crate::{SessionError, StoreLocation};

/// Loads `sources` through the one loader, reads the recordings of its
/// `replay` targets and expands `each_conversation` cases as a run does (a
/// stored run from the store at `location`, opened only for one), then
/// compiles every case's checks, reporting every compile error at once
/// (`SessionError::Compile`).
pub async fn validate(
    sources: &[SuiteSource],
    location: &StoreLocation,
) -> Result<Suite, SessionError> {
    let mut suite = gavel_core::load::load(sources).map_err(SessionError::Load)?;
    let store = match crate::replay::needs_store(&suite) {
        true => Some(location.open().await?),
        false => None,
    };
    let expanded = crate::replay::expand(&mut suite, store.as_ref()).await;
    if let Some(store) = store {
        store.close().await;
    }
    expanded?;
    compile(suite)
}

/// `suite` if every case's checks compile, else every compile error.
fn compile(suite: Suite) -> Result<Suite, SessionError> {
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
    compile(gavel_core::load::load(&[converted]).map_err(SessionError::Load)?)?;
    Ok(conversion)
}
