//! What a `local:` model id says: the model (a path or an installed model's name)
//! and its options, written after `?` as `key=value` pairs joined by `&`.

use std::fmt;
use std::num::NonZeroU32;

/// Context length when the id sets none: room for a judge prompt and its answer.
const DEFAULT_CTX: u32 = 4096;
/// Sampling seed when the id sets none.
const DEFAULT_SEED: u32 = 0;

/// How a local model runs, from the id's query (`local:judge.gguf?threads=2&ctx=2048`).
///
/// | key | meaning | default |
/// | --- | --- | --- |
/// | `threads` | CPU threads for prompt and generation | every core |
/// | `ctx` | context length in tokens (prompt + answer) | 4096 |
/// | `seed` | seed of the sampler when the temperature is above 0 | 0 |
/// | `max_tokens` | answer length cap, over the request's (the suite's `judge.max_tokens`) | the request's |
/// | `temperature` | sampling temperature, over the request's (`judge.temperature`) | the request's, else 0 |
#[derive(Debug, Clone, PartialEq)]
pub struct LocalOptions {
    /// CPU threads (none: every core the process may use).
    pub threads: Option<NonZeroU32>,
    /// Context length in tokens.
    pub ctx: NonZeroU32,
    /// Sampler seed.
    pub seed: u32,
    /// Answer length cap that wins over the request's.
    pub max_tokens: Option<u32>,
    /// Temperature that wins over the request's.
    pub temperature: Option<f32>,
}

impl Default for LocalOptions {
    fn default() -> Self {
        LocalOptions {
            threads: None,
            ctx: NonZeroU32::new(DEFAULT_CTX).unwrap_or(NonZeroU32::MIN),
            seed: DEFAULT_SEED,
            max_tokens: None,
            temperature: None,
        }
    }
}

impl LocalOptions {
    /// The threads to run on: the option, else every core the process may use.
    pub(crate) fn thread_count(&self) -> i32 {
        let n = self.threads.map(NonZeroU32::get).unwrap_or_else(|| {
            std::thread::available_parallelism().map_or(1, |n| u32::try_from(n.get()).unwrap_or(1))
        });
        i32::try_from(n).unwrap_or(i32::MAX)
    }
}

/// A `local:` model id's model and options.
#[derive(Debug, Clone, PartialEq)]
pub struct LocalSpec {
    /// A path to a `.gguf` file or an installed model's name.
    pub model: String,
    /// How to run it.
    pub options: LocalOptions,
}

/// A `local:` id that does not parse: names the key and what was wrong with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpecError(String);

impl fmt::Display for SpecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for SpecError {}

impl std::str::FromStr for LocalSpec {
    type Err = SpecError;

    /// Parses the part after `local:`, e.g. `gemma-3-270m-q4_k_m?threads=2&ctx=1024`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let (model, query) = s.split_once('?').unwrap_or((s, ""));
        if model.is_empty() {
            return Err(SpecError(format!(
                "local:{s}: name a GGUF file or an installed model before the options"
            )));
        }
        let mut options = LocalOptions::default();
        for pair in query.split('&').filter(|p| !p.is_empty()) {
            let (key, value) = pair.split_once('=').ok_or_else(|| {
                SpecError(format!(
                    "local:{s}: option `{pair}` needs a value (key=value)"
                ))
            })?;
            let bad =
                |what: &str| SpecError(format!("local:{s}: `{key}` must be {what}, not `{value}`"));
            match key {
                "threads" => {
                    options.threads =
                        Some(value.parse().map_err(|_| bad("a whole number above 0"))?);
                }
                "ctx" => options.ctx = value.parse().map_err(|_| bad("a whole number above 0"))?,
                "seed" => options.seed = value.parse().map_err(|_| bad("a whole number"))?,
                "max_tokens" => {
                    options.max_tokens = Some(value.parse().map_err(|_| bad("a whole number"))?);
                }
                "temperature" => {
                    let t: f32 = value.parse().map_err(|_| bad("a number of 0 or more"))?;
                    if !(t.is_finite() && t >= 0.0) {
                        return Err(bad("a number of 0 or more"));
                    }
                    options.temperature = Some(t);
                }
                other => {
                    return Err(SpecError(format!(
                        "local:{s}: unknown option `{other}` (known: threads, ctx, seed, max_tokens, temperature)"
                    )));
                }
            }
        }
        Ok(LocalSpec {
            model: model.to_owned(),
            options,
        })
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn model_alone_takes_the_defaults() {
        let spec: LocalSpec = "gemma-3-270m-q4_k_m".parse().unwrap();
        assert_eq!(spec.model, "gemma-3-270m-q4_k_m");
        assert_eq!(spec.options, LocalOptions::default());
        assert_eq!(spec.options.ctx.get(), 4096);
    }

    #[test]
    fn every_option() {
        let spec: LocalSpec = "/m/a.gguf?threads=2&ctx=1024&seed=7&max_tokens=64&temperature=0.5"
            .parse()
            .unwrap();
        assert_eq!(spec.model, "/m/a.gguf");
        let o = spec.options;
        assert_eq!(o.threads.map(NonZeroU32::get), Some(2));
        assert_eq!(o.thread_count(), 2);
        assert_eq!((o.ctx.get(), o.seed), (1024, 7));
        assert_eq!((o.max_tokens, o.temperature), (Some(64), Some(0.5)));
    }

    #[test]
    fn bad_options_are_named() {
        for (id, needle) in [
            (
                "a.gguf?threads=0",
                "`threads` must be a whole number above 0",
            ),
            ("a.gguf?ctx=big", "`ctx` must be a whole number above 0"),
            (
                "a.gguf?temperature=-1",
                "`temperature` must be a number of 0 or more",
            ),
            ("a.gguf?threads", "option `threads` needs a value"),
            ("a.gguf?gpu=1", "unknown option `gpu`"),
            ("?ctx=1", "name a GGUF file"),
        ] {
            let err = id.parse::<LocalSpec>().unwrap_err().to_string();
            assert!(err.contains(needle), "{id}: {err}");
        }
    }
}
