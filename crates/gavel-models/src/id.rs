//! Model ids: `openai:gpt-5-mini`, `anthropic:claude-opus-4-5`,
//! `gemini:gemini-2.5-pro`, `openai-compatible:NAME@http://127.0.0.1:11434/v1`,
//! `local:PATH_OR_NAME` (a GGUF file run in-process, options after `?`).

use std::fmt;
use std::str::FromStr;

/// The provider family behind a model id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Provider {
    /// OpenAI Chat Completions (honours `OPENAI_BASE_URL`).
    OpenAi,
    /// Anthropic Messages.
    Anthropic,
    /// Google Gemini generateContent.
    Gemini,
    /// Any server speaking OpenAI Chat Completions at a given base URL.
    OpenAiCompatible,
    /// A GGUF model run in-process (the `gavel-local` crate): the model name is a
    /// path or an installed model's name, optionally followed by `?key=value&…`.
    Local,
}

impl Provider {
    /// The prefix used in model ids.
    pub fn prefix(self) -> &'static str {
        match self {
            Provider::OpenAi => "openai",
            Provider::Anthropic => "anthropic",
            Provider::Gemini => "gemini",
            Provider::OpenAiCompatible => "openai-compatible",
            Provider::Local => "local",
        }
    }
}

/// A parsed model id.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ModelId {
    /// The provider family.
    pub provider: Provider,
    /// The provider's model name.
    pub model: String,
    /// Base URL (`openai-compatible` only).
    pub base_url: Option<String>,
}

/// Why text is not a model id; each message names the id and the form it needs.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ModelIdError {
    /// No `provider:` prefix.
    #[error(
        "model id `{0}` needs a provider prefix: openai:, anthropic:, gemini:, openai-compatible: or local:"
    )]
    NoProvider(String),
    /// A prefix that names no provider.
    #[error(
        "unknown model provider `{provider}` in `{id}` (expected openai, anthropic, gemini, openai-compatible or local)"
    )]
    UnknownProvider {
        /// The prefix given.
        provider: String,
        /// The whole id.
        id: String,
    },
    /// `openai-compatible:` without `@BASE_URL`.
    #[error(
        "`{0}`: write openai-compatible:NAME@BASE_URL, e.g. openai-compatible:llama3@http://127.0.0.1:11434/v1"
    )]
    NoBaseUrl(String),
    /// A base URL that is not http(s).
    #[error("`{0}`: the base URL must start with http:// or https://")]
    BaseUrlScheme(String),
    /// Nothing after the prefix.
    #[error("model id `{0}` names no model")]
    NoModel(String),
}

impl FromStr for ModelId {
    type Err = ModelIdError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        // Messages show the id with any base URL's credentials masked.
        let shown = || match s.split_once('@') {
            Some((name, url)) => format!("{name}@{}", gavel_core::secrets::mask_url(url)),
            None => s.to_owned(),
        };
        let (prefix, rest) = s
            .split_once(':')
            .ok_or_else(|| ModelIdError::NoProvider(shown()))?;
        let provider = match prefix {
            "openai" => Provider::OpenAi,
            "anthropic" => Provider::Anthropic,
            "gemini" | "google" => Provider::Gemini,
            "openai-compatible" => Provider::OpenAiCompatible,
            "local" => Provider::Local,
            other => {
                return Err(ModelIdError::UnknownProvider {
                    provider: other.to_owned(),
                    id: shown(),
                });
            }
        };
        let (model, base_url) = match provider {
            Provider::OpenAiCompatible => {
                let (name, url) = rest
                    .split_once('@')
                    .ok_or_else(|| ModelIdError::NoBaseUrl(shown()))?;
                if !(url.starts_with("http://") || url.starts_with("https://")) {
                    return Err(ModelIdError::BaseUrlScheme(shown()));
                }
                gavel_core::secrets::register_url(url);
                (name.to_owned(), Some(url.trim_end_matches('/').to_owned()))
            }
            _ => (rest.to_owned(), None),
        };
        if model.is_empty() {
            return Err(ModelIdError::NoModel(shown()));
        }
        Ok(ModelId {
            provider,
            model,
            base_url,
        })
    }
}

/// Shows the id with the base URL's password and key-like query values masked
/// (`openai-compatible:m@http://u:***@h/v1?api_key=***`): ids are logged, stored
/// with verdicts and shown in reports.
impl fmt::Display for ModelId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.provider.prefix(), self.model)?;
        if let Some(url) = &self.base_url {
            write!(f, "@{}", gavel_core::secrets::mask_url(url))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_family_and_round_trips() {
        for s in [
            "openai:gpt-5-mini",
            "anthropic:claude-opus-4-5",
            "gemini:gemini-2.5-pro",
            "openai-compatible:llama3@http://127.0.0.1:11434/v1",
            "local:gemma-3-270m-q4_k_m",
            "local:/models/judge.gguf?threads=2&ctx=2048",
        ] {
            let id: ModelId = s.parse().unwrap();
            assert_eq!(id.to_string(), s);
        }
        let id: ModelId = "openai-compatible:x@http://u:id-pw-77@h:1/v1?api_key=id-key-77"
            .parse()
            .unwrap();
        assert_eq!(
            id.to_string(),
            "openai-compatible:x@http://u:***@h:1/v1?api_key=***"
        );
        assert_eq!(
            gavel_core::secrets::redact("id-pw-77 id-key-77"),
            "[redacted] [redacted]"
        );
        let id: ModelId = "openai-compatible:x@http://h:1/v1/".parse().unwrap();
        assert_eq!(id.base_url.as_deref(), Some("http://h:1/v1"));
        let id: ModelId = "local:C:/models/a.gguf".parse().unwrap();
        assert_eq!(
            (id.provider, id.model.as_str()),
            (Provider::Local, "C:/models/a.gguf")
        );
    }

    #[test]
    fn rejects_bad_ids_with_a_hint() {
        let err = |s: &str| s.parse::<ModelId>().unwrap_err();
        assert_eq!(err("gpt-5"), ModelIdError::NoProvider("gpt-5".into()));
        assert!(
            err("foo:bar")
                .to_string()
                .contains("unknown model provider")
        );
        assert!(
            err("openai-compatible:x")
                .to_string()
                .contains("NAME@BASE_URL")
        );
        assert_eq!(err("local:"), ModelIdError::NoModel("local:".into()));
        // A base URL's credentials never reach the message.
        let e = err("openai-compatible:x@ftp://u:id-pw-88@h/v1");
        assert_eq!(
            e,
            ModelIdError::BaseUrlScheme("openai-compatible:x@ftp://u:***@h/v1".into())
        );
    }
}
