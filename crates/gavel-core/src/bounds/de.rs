//! `deserialize_with` helpers that hold suite fields to their bounds while the
//! file is read, so the YAML or JSON reader puts the line and column on the error.

use serde::de::{Deserialize, Deserializer, Error};

use super::BoundsError;

/// The field's value as read, checked by `check`; the error names the field.
fn checked<'de, D, T, U>(
    d: D,
    field: &str,
    check: impl Fn(T) -> Result<U, BoundsError>,
) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de> + Copy,
{
    let value = T::deserialize(d)?;
    check(value)
        .map(|_| value)
        .map_err(|e| D::Error::custom(format!("`{field}`: {e}")))
}

/// Generates an `Option` helper for one field name.
macro_rules! optional {
    ($name:ident, $field:literal, $ty:ty, $check:path) => {
        #[doc = concat!("`", $field, "`, checked by [`", stringify!($check), "`].")]
        pub(crate) fn $name<'de, D: Deserializer<'de>>(d: D) -> Result<Option<$ty>, D::Error> {
            checked(d, $field, |v: Option<$ty>| v.map($check).transpose())
        }
    };
}

optional!(timeout_s, "timeout_s", f64, super::seconds);
optional!(timeout_ms, "timeout_ms", u64, super::millis);
optional!(max_first_token_ms, "max_first_token_ms", u64, super::millis);
optional!(repeat, "repeat", u32, super::repeat);
optional!(rejudge, "rejudge", u32, super::rejudge);
optional!(max_cost, "max_cost", f64, super::usd);
optional!(max_retries, "max_retries", u32, super::retries);
optional!(concurrency, "concurrency", usize, super::jobs);

optional!(backoff_ms, "backoff_ms", u64, super::millis);

/// `attempts` of a target's `retry`, checked by [`super::attempts`].
pub(crate) fn attempts<'de, D: Deserializer<'de>>(d: D) -> Result<u32, D::Error> {
    checked(d, "attempts", super::attempts)
}

/// `max_ms` of a latency check, checked by [`super::millis`].
pub(crate) fn max_ms<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
    checked(d, "max_ms", super::millis)
}

/// `variants`: at most [`super::MAX_VARIANTS`] paraphrases.
pub(crate) fn variants<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    let list = Vec::<String>::deserialize(d)?;
    super::variants(list.len()).map_err(|e| {
        D::Error::custom(format!("`variants`: {} given; {}", list.len(), e.allowed))
    })?;
    Ok(list)
}
