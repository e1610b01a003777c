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
