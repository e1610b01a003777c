//! The wait a provider or an agent's server asks for before the next try.

use std::time::{Duration, SystemTime};

/// How long the provider asked us to wait: `retry-after-ms` (OpenAI, Anthropic),
/// else `Retry-After` in seconds or as an HTTP date.
pub fn retry_after<'a>(
    header: &impl Fn(&str) -> Option<&'a str>,
    now: SystemTime,
) -> Option<Duration> {
    if let Some(ms) = header("retry-after-ms").and_then(|value| value.trim().parse::<f64>().ok())
        && ms.is_finite()
        && ms >= 0.0
    {
        return Some(Duration::from_secs_f64(ms / 1000.0));
    }
    let value = header("retry-after")?.trim();
    if let Ok(seconds) = value.parse::<f64>() {
        return (seconds.is_finite() && seconds >= 0.0).then(|| Duration::from_secs_f64(seconds));
    }
    let at = httpdate::parse_http_date(value).ok()?;
    Some(at.duration_since(now).unwrap_or(Duration::ZERO))
}
