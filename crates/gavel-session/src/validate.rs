//! `gavel validate`'s check of whole suites: they load, the recordings of
//! their `replay` targets read, and every case's checks compile. Nothing runs.

use gavel_core::Suite;
use gavel_core::load::SuiteSource;

use crate::{SessionError, StoreLocation};

/// What [`validate`] found: the suite's settings and how many cases (and
/// rounds) it holds; the cases themselves are not kept.
#[derive(Debug)]
pub struct Validated {
    /// The suite's name, files, targets, judge and warnings (its cases may be
    /// left out: they are counted).
    pub suite: Suite,
    /// Cases read.
    pub cases: usize,
    /// Their rounds, summed.
    pub rounds: usize,
}

impl Validated {
    fn whole(suite: Suite) -> Validated {
        Validated {
            cases: suite.cases.len(),
            rounds: suite.cases.iter().map(|c| c.rounds.len()).sum(),
            suite,
        }
    }
}

impl std::fmt::Display for Validated {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let s = gavel_core::plural;
        let (targets, files) = (self.suite.targets.len(), self.suite.files.len());
        write!(
            f,
            "{} case{} ({} round{}), {targets} target{} in {files} file{}",
            self.cases,
            s(self.cases),
            self.rounds,
            s(self.rounds),
            s(targets),
            s(files)
        )
    }
}

/// Loads `sources` through the one loader and compiles every case's checks
/// as it is read, reporting every compile error at once
/// (`SessionError::Compile`): a suite of any size (a dataset of a million
/// rows) is held one case at a time. Suites with `replay` targets are loaded
/// whole: the recordings of those targets are read and `each_conversation`
/// cases expanded as a run does (a stored run from the store at `location`,
/// opened only for one) before their checks compile.
pub async fn validate(
    sources: &[SuiteSource],
    location: &StoreLocation,
) -> Result<Validated, SessionError> {
    let loading = gavel_core::load::open(sources);
    if crate::replay::replays(loading.suite()) {
        let mut suite = loading.collect().map_err(SessionError::Load)?;
        let store = match crate::replay::needs_store(&suite) {
            true => Some(location.open().await?),
            false => None,
        };
        let expanded = crate::replay::expand(&mut suite, store.as_ref()).await;
        if let Some(store) = store {
            store.close().await;
        }
        expanded?;
        return compile(suite).map(Validated::whole);
    }
    let judge = loading.suite().judge.clone();
    let (mut cases, mut rounds, mut errors) = (0, 0, Vec::new());
    let suite = loading
        .cases(|case| {
            cases += 1;
            rounds += case.rounds.len();
            if let Err(e) = gavel_checks::compile(&case, &judge) {
                errors.push(e);
            }
        })
        .map_err(SessionError::Load)?;
    if !errors.is_empty() {
        return Err(SessionError::Compile(errors));
    }
    Ok(Validated {
        suite,
        cases,
        rounds,
    })
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
