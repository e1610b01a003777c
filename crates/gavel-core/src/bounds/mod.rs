//! Limits on every number, duration and file that comes in from outside: suite
//! fields, CLI flags and files read by path. Each check returns a typed error
//! whose text says what is wrong and what is allowed.
//!
//! The `parse_*` functions read CLI text and suit clap's `value_parser`:
//!
//! ```
//! use gavel_core::bounds;
//! assert_eq!(bounds::parse_jobs("4"), Ok(4));
//! let e = bounds::parse_seconds("inf").unwrap_err();
//! assert!(e.to_string().contains("not finite"), "{e}");
//! ```

pub(crate) mod de;
mod file;

pub use file::{FileError, MAX_FILE_BYTES, open_text, read_text};

use std::time::Duration;

/// Longest duration accepted anywhere (24 hours), in seconds.
pub const MAX_SECONDS: f64 = 86_400.0;
/// Most parallel jobs (`-j`, `worker -j`, a provider's `concurrency`).
pub const MAX_JOBS: usize = 1024;
/// Most attempts of one call or execution (`--max-attempts`, `retry.attempts`).
pub const MAX_ATTEMPTS: u32 = 100;
/// Most repeats of one case (`repeat`).
pub const MAX_REPEAT: u32 = 10_000;
/// Most extra judgements of one case's output (`rejudge`).
pub const MAX_REJUDGE: u32 = 100;
/// Most paraphrases of one case (`variants`).
pub const MAX_VARIANTS: usize = 1_000;
/// Most executions one run may plan: cases × targets × repeats × inputs.
pub const MAX_EXECUTIONS: u64 = 1_000_000;

/// What is wrong with a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Problem {
    /// The text is not a number of the expected kind.
    #[error("not a number")]
    NotANumber,
    /// NaN or an infinity.
    #[error("not finite")]
    NotFinite,
    /// A number outside the allowed range.
    #[error("out of range")]
    OutOfRange,
}

/// A value outside its bounds: the value as given, the problem and the allowed range.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{given}` is {problem}: {allowed}")]
pub struct BoundsError {
    /// The value as given.
    pub given: String,
    /// What is wrong with it.
    pub problem: Problem,
    /// The allowed range, in words.
    pub allowed: &'static str,
}

impl BoundsError {
    fn new(given: impl ToString, problem: Problem, allowed: &'static str) -> Self {
        BoundsError {
            given: given.to_string(),
            problem,
            allowed,
        }
    }
}

/// A float as shown in messages: exponent notation when very large or small.
fn show(value: f64) -> String {
    let tiny = value != 0.0 && value.abs() < 1e-6;
    match value.is_finite() && (value.abs() >= 1e15 || tiny) {
        true => format!("{value:e}"),
        false => value.to_string(),
    }
}

const SECONDS: &str = "seconds must be above 0 and at most 86400 (24 h)";
const MILLIS: &str = "milliseconds must be above 0 and at most 86400000 (24 h)";
const JOBS: &str = "parallel jobs must be between 1 and 1024";
const ATTEMPTS: &str = "attempts must be between 1 and 100";
const RETRIES: &str = "retries must be between 0 and 100";
const USD: &str = "a cost in USD must be a finite number, 0 or more";
const REPEAT: &str = "repeat must be between 1 and 10000";
const REJUDGE: &str = "rejudge must be between 0 and 100";
const VARIANTS: &str = "a case has at most 1000 variants";
const EXECUTIONS: &str = "a run plans at most 1000000 executions (cases × targets × repeats × variants): lower `repeat`, variants or targets, or split the suite";
const FINITE: &str = "numbers must be finite";
const RATE: &str = "a rate must be within 0..100% (as 80, 80% or 0.8)";
const SHARE: &str = "a share must be within 0..1 (e.g. 0.95)";

/// A duration in seconds: finite, above 0, at most [`MAX_SECONDS`].
pub fn seconds(value: f64) -> Result<Duration, BoundsError> {
    if !value.is_finite() {
        return Err(BoundsError::new(show(value), Problem::NotFinite, SECONDS));
    }
    if value <= 0.0 || value > MAX_SECONDS {
        return Err(BoundsError::new(show(value), Problem::OutOfRange, SECONDS));
    }
    Ok(Duration::from_secs_f64(value))
}

/// A duration in milliseconds: above 0, at most 24 h.
pub fn millis(value: u64) -> Result<Duration, BoundsError> {
    if value == 0 || value as f64 > MAX_SECONDS * 1000.0 {
        return Err(BoundsError::new(value, Problem::OutOfRange, MILLIS));
    }
    Ok(Duration::from_millis(value))
}

/// A count of parallel jobs: 1 to [`MAX_JOBS`].
pub fn jobs(value: usize) -> Result<usize, BoundsError> {
    in_range(value, 1, MAX_JOBS, JOBS)
}

/// A count of attempts (the first try included): 1 to [`MAX_ATTEMPTS`].
pub fn attempts(value: u32) -> Result<u32, BoundsError> {
    in_range(value, 1, MAX_ATTEMPTS, ATTEMPTS)
}

/// A count of retries (the first try not included): 0 to [`MAX_ATTEMPTS`].
pub fn retries(value: u32) -> Result<u32, BoundsError> {
    in_range(value, 0, MAX_ATTEMPTS, RETRIES)
}

/// A cost in US dollars: finite, 0 or more.
pub fn usd(value: f64) -> Result<f64, BoundsError> {
    if !value.is_finite() {
        return Err(BoundsError::new(show(value), Problem::NotFinite, USD));
    }
    if value < 0.0 {
        return Err(BoundsError::new(show(value), Problem::OutOfRange, USD));
    }
    Ok(value)
}

/// A repeat count: 1 to [`MAX_REPEAT`].
pub fn repeat(value: u32) -> Result<u32, BoundsError> {
    in_range(value, 1, MAX_REPEAT, REPEAT)
}

/// A rejudge count: 0 to [`MAX_REJUDGE`].
pub fn rejudge(value: u32) -> Result<u32, BoundsError> {
    in_range(value, 0, MAX_REJUDGE, REJUDGE)
}

/// A number of variants: at most [`MAX_VARIANTS`].
pub fn variants(count: usize) -> Result<usize, BoundsError> {
    in_range(count, 0, MAX_VARIANTS, VARIANTS)
}

/// A planned execution count: at most [`MAX_EXECUTIONS`].
pub fn executions(count: u64) -> Result<u64, BoundsError> {
    in_range(count, 0, MAX_EXECUTIONS, EXECUTIONS)
}

/// Any number read from input: finite.
pub fn finite(value: f64) -> Result<f64, BoundsError> {
    match value.is_finite() {
        true => Ok(value),
        false => Err(BoundsError::new(show(value), Problem::NotFinite, FINITE)),
    }
}

fn in_range<T: PartialOrd + ToString>(
    value: T,
    min: T,
    max: T,
    allowed: &'static str,
) -> Result<T, BoundsError> {
    match value >= min && value <= max {
        true => Ok(value),
        false => Err(BoundsError::new(value, Problem::OutOfRange, allowed)),
    }
}

/// Parses CLI text with `parse`, reporting text that is no number of that kind.
fn number<T: std::str::FromStr>(text: &str, allowed: &'static str) -> Result<T, BoundsError> {
    text.trim()
        .parse()
        .map_err(|_| BoundsError::new(text, Problem::NotANumber, allowed))
}

/// `--timeout`, `--lease` and other seconds flags: see [`seconds`].
pub fn parse_seconds(text: &str) -> Result<Duration, BoundsError> {
    seconds(number(text, SECONDS)?)
}

/// `-j` and `worker -j`: see [`jobs`].
pub fn parse_jobs(text: &str) -> Result<usize, BoundsError> {
    jobs(number(text, JOBS)?)
}

/// `--max-attempts`: see [`attempts`].
pub fn parse_attempts(text: &str) -> Result<u32, BoundsError> {
    attempts(number(text, ATTEMPTS)?)
}

/// `--max-cost`: see [`usd`].
pub fn parse_usd(text: &str) -> Result<f64, BoundsError> {
    usd(number(text, USD)?)
}

/// `--repeat`: see [`repeat`].
pub fn parse_repeat(text: &str) -> Result<u32, BoundsError> {
    repeat(number(text, REPEAT)?)
}

/// `--min-pass-rate`: a rate in percent. `80`, `80%` and `0.8` all mean 80%: a
/// number up to 1 without `%` is a fraction.
pub fn parse_rate(text: &str) -> Result<f64, BoundsError> {
    let trimmed = text.trim();
    let percent_sign = trimmed.ends_with('%');
    let value: f64 = number(trimmed.trim_end_matches('%'), RATE)?;
    let percent = match percent_sign || value > 1.0 {
        true => value,
        false => value * 100.0,
    };
    match (0.0..=100.0).contains(&percent) {
        true => Ok(percent),
        false => Err(BoundsError::new(text, Problem::OutOfRange, RATE)),
    }
}

/// `--min-coverage` and other shares: a fraction from 0 to 1.
pub fn parse_share(text: &str) -> Result<f64, BoundsError> {
    let value: f64 = number(text, SHARE)?;
    match (0.0..=1.0).contains(&value) {
        true => Ok(value),
        false => Err(BoundsError::new(text, Problem::OutOfRange, SHARE)),
    }
}

/// The executions a suite plans: per case, targets × repeats × inputs (the input
/// and each variant), with `repeat_override` (a `--repeat` flag) in place of each
/// case's own count. Saturates instead of overflowing.
pub fn planned_executions(suite: &crate::Suite, repeat_override: Option<u32>) -> u64 {
    suite
        .cases
        .iter()
        .map(|case| case_executions(case, repeat_override))
        .fold(0u64, u64::saturating_add)
}

/// The executions one case plans: targets × repeats × inputs (at least one target).
pub fn case_executions(case: &crate::Case, repeat_override: Option<u32>) -> u64 {
    let repeats = repeat_override
        .unwrap_or_else(|| case.repeat_count())
        .max(1);
    (case.targets.len().max(1) as u64)
        .saturating_mul(u64::from(repeats))
        .saturating_mul(u64::from(case.input_count()))
}

#[cfg(test)]
mod tests;
