//! A suite's own gate (`gate:` in a suite file): the bar its runs must clear
//! unless the command line sets another.

use schemars::JsonSchema;
use serde::{Deserialize, Deserializer, Serialize};

/// `gate:` in a suite file.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GateSettings {
    /// Minimum pass rate over decided cases, as `100`, `"100%"` or `1.0`
    /// (default 80; `--min-pass-rate` wins). An imported promptfoo config
    /// says `100%`: promptfoo fails the job on any failed test.
    #[serde(
        default,
        deserialize_with = "rate",
        skip_serializing_if = "Option::is_none"
    )]
    #[schemars(with = "Option<serde_json::Value>")]
    pub min_pass_rate: Option<f64>,
}

impl GateSettings {
    /// Fills what `self` leaves unset from `other` (a later file).
    pub fn fill_from(&mut self, other: &GateSettings) {
        self.min_pass_rate = self.min_pass_rate.or(other.min_pass_rate);
    }
}

/// A rate given as a number or as text (`"80%"`), read as `--min-pass-rate` is.
fn rate<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Given {
        Number(f64),
        Text(String),
    }
    let text = match Given::deserialize(d)? {
        Given::Number(n) => n.to_string(),
        Given::Text(t) => t,
    };
    crate::bounds::parse_rate(&text)
        .map(Some)
        .map_err(serde::de::Error::custom)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn a_rate_reads_as_the_flag_does() {
        for (given, percent) in [("100", 100.0), ("\"95%\"", 95.0), ("0.5", 50.0)] {
            let g: GateSettings =
                serde_json::from_str(&format!("{{\"min_pass_rate\": {given}}}")).unwrap();
            assert_eq!(g.min_pass_rate, Some(percent), "{given}");
        }
        let e = serde_json::from_str::<GateSettings>("{\"min_pass_rate\": 140}").unwrap_err();
        assert!(e.to_string().contains("140"), "{e}");
    }
}
