//! Where a provider lives and which key it takes: explicit configuration first,
//! then (when asked) the environment variables the official SDKs read.

use std::fmt;
use std::time::Duration;

use gavel_core::secrets::mask_url;
#[cfg(feature = "http")]
use gavel_core::secrets::{register, register_url};

#[cfg(feature = "http")]
use crate::{ErrorKind, ModelError};
use crate::{ModelId, Provider};

const OPENAI_DEFAULT_BASE: &str = "https://api.openai.com/v1";
const ANTHROPIC_DEFAULT_BASE: &str = "https://api.anthropic.com";
const GEMINI_DEFAULT_BASE: &str = "https://generativelanguage.googleapis.com";

/// How to reach a provider.
///
/// Explicit fields win. When `read_env` is set, what is left unset comes from the
/// environment (see [`provider`](crate::provider) for the variables); when it is
/// not, the environment is never consulted, so tests can build providers without
/// touching process-wide state.
///
/// `Debug` never shows the API key.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct ProviderConfig {
    /// Base URL. For `openai` and `openai-compatible` it is the URL up to and
    /// including `/v1`, as in `OPENAI_BASE_URL` (`https://api.openai.com/v1`); for
    /// `anthropic` and `gemini` it is the API root, as in their SDKs
    /// (`https://api.anthropic.com`), to which `/v1` or `/v1beta` is appended
    /// unless the URL already ends with it. When set, it also overrides the URL
    /// inside an `openai-compatible` id.
    pub base_url: Option<String>,
    /// The API key (`openai-compatible`: optional).
    pub api_key: Option<String>,
    /// Fill unset fields from the environment.
    pub read_env: bool,
    /// Deadline for one whole HTTP call (connect, send, read); none by default, as
    /// the timeout layer owns deadlines. Connecting alone is capped at 30 s.
    pub timeout: Option<Duration>,
}

impl ProviderConfig {
    /// Everything from the environment.
    pub fn from_env() -> Self {
        ProviderConfig {
            read_env: true,
            ..ProviderConfig::default()
        }
    }

    /// Sets the base URL.
    pub fn with_base_url(mut self, base_url: impl Into<String>) -> Self {
        self.base_url = Some(base_url.into());
        self
    }

    /// Sets the API key.
    pub fn with_api_key(mut self, api_key: impl Into<String>) -> Self {
        self.api_key = Some(api_key.into());
        self
    }

    /// Sets the deadline of one HTTP call.
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }
}

impl fmt::Debug for ProviderConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ProviderConfig")
            .field("base_url", &self.base_url.as_deref().map(mask_url))
            .field("api_key", &self.api_key.as_ref().map(|_| "[redacted]"))
            .field("read_env", &self.read_env)
            .field("timeout", &self.timeout)
            .finish()
    }
}

#[cfg(feature = "http")]
/// A provider's resolved location and key.
pub(crate) struct Resolved {
    /// The base URL as genai wants it: ending with `/`, version segment included
    /// (`https://api.openai.com/v1/`, `https://api.anthropic.com/v1/`,
    /// `https://generativelanguage.googleapis.com/v1beta/`).
    pub(crate) endpoint: String,
    /// The base URL as configured, for people (userinfo and query masked).
    pub(crate) display_base: String,
    /// The key; `None` only for `openai-compatible`.
    pub(crate) api_key: Option<String>,
}

#[cfg(feature = "http")]
/// Resolves `config` for `id`, reading variables through `env` when
/// `config.read_env` is set.
pub(crate) fn resolve(
    id: &ModelId,
    config: &ProviderConfig,
    env: impl Fn(&str) -> Option<String>,
) -> Result<Resolved, ModelError> {
    let var = |name: &str| {
        if config.read_env {
            env(name)
                .map(|value| value.trim().to_owned())
                .filter(|value| !value.is_empty())
        } else {
            None
        }
    };
    let explicit_key = config.api_key.clone().filter(|key| !key.is_empty());
    let explicit_base = config.base_url.clone().filter(|url| !url.is_empty());
    // The id without its URL, which may carry a password.
    let name = format!("{}:{}", id.provider.prefix(), id.model);
    let missing = |vars: &str| {
        let message = if config.read_env {
            format!("{vars} is not set")
        } else {
            format!("no API key given for {name} ({vars} is not read from the environment here)")
        };
        ModelError::new(ErrorKind::NoCredentials, message)
    };

    let (base, base_source) = match base_of(id, explicit_base, var) {
        Some(found) => found,
        None if id.provider == Provider::Local => {
            return Err(ModelError::new(
                ErrorKind::Permanent,
                format!(
                    "{name}: local models run in-process through the gavel-local crate, not over HTTP; this program was built without it (the gavel crate's `local` feature)"
                ),
            ));
        }
        None => {
            return Err(ModelError::new(
                ErrorKind::Permanent,
                format!(
                    "{name}: an openai-compatible model needs a base URL (openai-compatible:NAME@BASE_URL)"
                ),
            ));
        }
    };
    let api_key = match id.provider {
        Provider::Local => None,
        Provider::OpenAi => Some(
            explicit_key
                .or_else(|| var("OPENAI_API_KEY"))
                .ok_or_else(|| missing("OPENAI_API_KEY"))?,
        ),
        Provider::OpenAiCompatible => {
            // The environment's key goes only to the base URL the environment
            // binds it to, when it names one.
            let env_key = var("OPENAI_COMPATIBLE_API_KEY").filter(|_| {
                var("OPENAI_COMPATIBLE_BASE_URL").is_none_or(|bound| same_base(&bound, &base))
            });
            explicit_key.or(env_key)
        }
        Provider::Anthropic => Some(
            explicit_key
                .or_else(|| var("ANTHROPIC_API_KEY"))
                .ok_or_else(|| missing("ANTHROPIC_API_KEY"))?,
        ),
        Provider::Gemini => Some(
            explicit_key
                .or_else(|| var("GEMINI_API_KEY"))
                .or_else(|| var("GOOGLE_API_KEY"))
                .ok_or_else(|| missing("GEMINI_API_KEY (or GOOGLE_API_KEY)"))?,
        ),
    };

    let base = base.trim().to_owned();
    if !(base.starts_with("http://") || base.starts_with("https://")) {
        return Err(ModelError::new(
            ErrorKind::Permanent,
            format!(
                "{name}: {base_source} `{}` must start with http:// or https://",
                mask_url(&base)
            ),
        ));
    }
    let endpoint = match id.provider {
        // Refused above: a local model has no endpoint.
        Provider::OpenAi | Provider::OpenAiCompatible | Provider::Local => with_slash(&base),
        Provider::Anthropic => versioned(&base, &["v1"], "v1"),
        Provider::Gemini => versioned(&base, &["v1beta", "v1"], "v1beta"),
    };
    // Whatever is shown, logged or stored from now on is scrubbed of these.
    register_url(&base);
    if let Some(key) = &api_key {
        register(key);
    }
    Ok(Resolved {
        endpoint,
        display_base: mask_url(&base),
        api_key,
    })
}

/// The explicit base URL, else the environment's, with where it came from.
/// Where calls to `id` go: `explicit`, else the provider's base URL variable
/// read through `var`, else its default (`openai-compatible`: the id's URL),
/// with where it came from; `None` for a local model or an `openai-compatible`
/// id without a URL.
fn base_of(
    id: &ModelId,
    explicit: Option<String>,
    var: impl Fn(&str) -> Option<String>,
) -> Option<(String, &'static str)> {
    let (name, default) = match id.provider {
        Provider::Local => return None,
        Provider::OpenAiCompatible => {
            let base = explicit.or_else(|| id.base_url.clone())?;
            return Some((base, "the base URL"));
        }
        Provider::OpenAi => ("OPENAI_BASE_URL", OPENAI_DEFAULT_BASE),
        Provider::Anthropic => ("ANTHROPIC_BASE_URL", ANTHROPIC_DEFAULT_BASE),
        Provider::Gemini => ("GEMINI_BASE_URL", GEMINI_DEFAULT_BASE),
    };
    let (base, source) = pick_base(explicit, var(name), name);
    Some((base.unwrap_or_else(|| default.to_owned()), source))
}

/// The base URL calls to `id` go to under the environment `env` (as
/// [`provider`](crate::provider) resolves it: the id's URL, the provider's
/// `*_BASE_URL` variable, else its default); `None` for a local model.
pub fn base_url(id: &ModelId, env: impl Fn(&str) -> Option<String>) -> Option<String> {
    let var = |name: &str| {
        env(name)
            .map(|value| value.trim().to_owned())
            .filter(|value| !value.is_empty())
    };
    base_of(id, None, var).map(|(base, _)| base)
}

fn pick_base(
    explicit: Option<String>,
    from_env: Option<String>,
    var: &'static str,
) -> (Option<String>, &'static str) {
    match (explicit, from_env) {
        (Some(url), _) => (Some(url), "the base URL"),
        (None, Some(url)) => (Some(url), var),
        (None, None) => (None, "the base URL"),
    }
}

#[cfg(feature = "http")]
/// Whether two base URLs are the same, trailing slashes aside.
fn same_base(a: &str, b: &str) -> bool {
    a.trim().trim_end_matches('/') == b.trim().trim_end_matches('/')
}

#[cfg(feature = "http")]
/// `base` with its path ending in `/` (a query string is kept after it).
fn with_slash(base: &str) -> String {
    let (path, query) = match base.split_once('?') {
        Some((path, query)) => (path, Some(query)),
        None => (base, None),
    };
    let mut url = format!("{}/", path.trim_end_matches('/'));
    if let Some(query) = query {
        url.push('?');
        url.push_str(query);
    }
    url
}

#[cfg(feature = "http")]
/// `base` ending in one of `accepted` version segments (else `append` is added),
/// then `/`.
fn versioned(base: &str, accepted: &[&str], append: &str) -> String {
    let trimmed = base.trim_end_matches('/');
    let has_version = accepted
        .iter()
        .any(|version| trimmed.ends_with(&format!("/{version}")));
    if has_version {
        format!("{trimmed}/")
    } else {
        format!("{trimmed}/{append}/")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(s: &str) -> ModelId {
        s.parse().unwrap()
    }

    fn env_of(vars: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |name| {
            vars.iter()
                .find(|(key, _)| *key == name)
                .map(|(_, value)| (*value).to_owned())
        }
    }

    #[test]
    fn openai_reads_key_and_base_url_from_env_like_the_sdk() {
        let resolved = resolve(
            &id("openai:gpt-4o"),
            &ProviderConfig::from_env(),
            env_of(&[
                ("OPENAI_API_KEY", "sk-env"),
                ("OPENAI_BASE_URL", "http://127.0.0.1:9/v1/"),
            ]),
        )
        .unwrap();
        assert_eq!(resolved.api_key.as_deref(), Some("sk-env"));
        assert_eq!(resolved.endpoint, "http://127.0.0.1:9/v1/");

        let default = resolve(
            &id("openai:gpt-4o"),
            &ProviderConfig::from_env(),
            env_of(&[("OPENAI_API_KEY", "sk-env")]),
        )
        .unwrap();
        assert_eq!(default.endpoint, "https://api.openai.com/v1/");
    }

    #[test]
    fn explicit_values_beat_the_environment() {
        let config = ProviderConfig::from_env()
            .with_api_key("sk-explicit")
            .with_base_url("http://127.0.0.1:1/v1");
        let resolved = resolve(
            &id("openai:gpt-4o"),
            &config,
            env_of(&[
                ("OPENAI_API_KEY", "sk-env"),
                ("OPENAI_BASE_URL", "http://elsewhere/v1"),
            ]),
        )
        .unwrap();
        assert_eq!(resolved.api_key.as_deref(), Some("sk-explicit"));
        assert_eq!(resolved.endpoint, "http://127.0.0.1:1/v1/");
    }

    #[test]
    fn missing_keys_name_the_variables() {
        for (model, var) in [
            ("openai:gpt-4o", "OPENAI_API_KEY is not set"),
            (
                "anthropic:claude-sonnet-4-5",
                "ANTHROPIC_API_KEY is not set",
            ),
            (
                "gemini:gemini-2.5-flash",
                "GEMINI_API_KEY (or GOOGLE_API_KEY) is not set",
            ),
        ] {
            let err = resolve(&id(model), &ProviderConfig::from_env(), env_of(&[]))
                .err()
                .unwrap();
            assert_eq!(err.kind, ErrorKind::NoCredentials);
            assert_eq!(err.message, var);
        }
        // An empty variable counts as unset.
        let err = resolve(
            &id("openai:gpt-4o"),
            &ProviderConfig::from_env(),
            env_of(&[("OPENAI_API_KEY", "  ")]),
        )
        .err()
        .unwrap();
        assert_eq!(err.kind, ErrorKind::NoCredentials);
    }

    #[test]
    fn without_read_env_the_environment_is_never_consulted() {
        let err = resolve(&id("openai:gpt-4o"), &ProviderConfig::default(), |name| {
            panic!("read {name}")
        })
        .err()
        .unwrap();
        assert_eq!(err.kind, ErrorKind::NoCredentials);
        assert!(err.message.contains("OPENAI_API_KEY"), "{}", err.message);
    }

    #[test]
    fn gemini_falls_back_to_google_api_key() {
        let resolved = resolve(
            &id("gemini:gemini-2.5-flash"),
            &ProviderConfig::from_env(),
            env_of(&[("GOOGLE_API_KEY", "g-key")]),
        )
        .unwrap();
        assert_eq!(resolved.api_key.as_deref(), Some("g-key"));
        assert_eq!(
            resolved.endpoint,
            "https://generativelanguage.googleapis.com/v1beta/"
        );
    }

    #[test]
    fn anthropic_and_gemini_append_their_version_once() {
        let cases = [
            (
                "anthropic:claude-sonnet-4-5",
                "http://h:1",
                "http://h:1/v1/",
            ),
            (
                "anthropic:claude-sonnet-4-5",
                "http://h:1/v1/",
                "http://h:1/v1/",
            ),
            (
                "anthropic:claude-sonnet-4-5",
                "http://h:1/proxy",
                "http://h:1/proxy/v1/",
            ),
            (
                "gemini:gemini-2.5-flash",
                "http://h:1/",
                "http://h:1/v1beta/",
            ),
            (
                "gemini:gemini-2.5-flash",
                "http://h:1/v1beta",
                "http://h:1/v1beta/",
            ),
        ];
        for (model, base, endpoint) in cases {
            let resolved = resolve(
                &id(model),
                &ProviderConfig::default()
                    .with_api_key("k")
                    .with_base_url(base),
                env_of(&[]),
            )
            .unwrap();
            assert_eq!(resolved.endpoint, endpoint, "{model} {base}");
        }
    }

    #[test]
    fn openai_compatible_needs_no_key_and_keeps_a_query() {
        let resolved = resolve(
            &id("openai-compatible:llama3@http://127.0.0.1:11434/v1"),
            &ProviderConfig::from_env(),
            env_of(&[]),
        )
        .unwrap();
        assert_eq!(resolved.api_key, None);
        assert_eq!(resolved.endpoint, "http://127.0.0.1:11434/v1/");

        let with_key = resolve(
            &id("openai-compatible:llama3@http://127.0.0.1:11434/v1"),
            &ProviderConfig::from_env(),
            env_of(&[("OPENAI_COMPATIBLE_API_KEY", "local-key")]),
        )
        .unwrap();
        assert_eq!(with_key.api_key.as_deref(), Some("local-key"));

        // A key bound to a base URL goes there and nowhere else.
        let bound = |url: &str| {
            resolve(
                &id(&format!("openai-compatible:m@{url}")),
                &ProviderConfig::from_env(),
                env_of(&[
                    ("OPENAI_COMPATIBLE_API_KEY", "local-key"),
                    ("OPENAI_COMPATIBLE_BASE_URL", "http://127.0.0.1:11434/v1/"),
                ]),
            )
            .unwrap()
            .api_key
        };
        assert_eq!(
            bound("http://127.0.0.1:11434/v1").as_deref(),
            Some("local-key")
        );
        assert_eq!(bound("http://evil.example/v1"), None);

        let query = resolve(
            &id("openai:gpt-4o"),
            &ProviderConfig::default()
                .with_api_key("k")
                .with_base_url("https://h/openai/v1?api-version=2025-01-01"),
            env_of(&[]),
        )
        .unwrap();
        assert_eq!(
            query.endpoint,
            "https://h/openai/v1/?api-version=2025-01-01"
        );
        assert_eq!(
            query.display_base, "https://h/openai/v1?api-version=2025-01-01",
            "a query without secrets is shown"
        );
    }

    #[test]
    fn bad_base_urls_are_permanent_errors_naming_their_source() {
        let err = resolve(
            &id("openai:gpt-4o"),
            &ProviderConfig::from_env(),
            env_of(&[
                ("OPENAI_API_KEY", "k"),
                ("OPENAI_BASE_URL", "api.openai.com/v1"),
            ]),
        )
        .err()
        .unwrap();
        assert_eq!(err.kind, ErrorKind::Permanent);
        assert!(err.message.contains("OPENAI_BASE_URL"), "{}", err.message);
    }

    #[test]
    fn local_ids_are_not_http_providers() {
        let err = resolve(
            &id("local:gemma-3-270m-q4_k_m"),
            &ProviderConfig::from_env(),
            env_of(&[]),
        )
        .err()
        .unwrap();
        assert_eq!(err.kind, ErrorKind::Permanent);
        assert!(err.message.contains("gavel-local"), "{}", err.message);
    }

    #[test]
    fn debug_and_masking_hide_secrets() {
        let config = ProviderConfig::default()
            .with_api_key("sk-very-secret")
            .with_base_url("https://user:pw@h:1/v1?key=abc");
        let shown = format!("{config:?}");
        assert!(!shown.contains("sk-very-secret"), "{shown}");
        assert!(!shown.contains("pw"), "{shown}");
        assert!(!shown.contains("abc"), "{shown}");
        assert_eq!(
            mask_url("https://user:pw@h:1/v1"),
            "https://user:***@h:1/v1"
        );
        assert_eq!(mask_url("http://h:1/v1"), "http://h:1/v1");
    }
}
