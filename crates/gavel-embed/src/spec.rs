//! Which embedder to use, as written on the command line or in a suite.

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

#[cfg(feature = "local")]
use gavel_model_files::{ModelFilesError, ModelKind};
#[cfg(feature = "http")]
use gavel_models::ProviderConfig;
use gavel_models::{ModelId, ModelSettings};

#[cfg(feature = "local")]
use crate::MiniLm;
#[cfg(feature = "http")]
use crate::ProviderEmbedder;
use crate::{EmbedError, Embedder};

/// The embedder when none is named: all-MiniLM-L6-v2, run locally.
pub const DEFAULT_EMBEDDER: &str = gavel_model_files::MINILM;

/// An embedder named by `--embedder` or a suite's `judge.embedder`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EmbedderSpec {
    /// A local encoder: a known name (`all-MiniLM-L6-v2`), a model folder, or a
    /// hub repository `org/name` in the Hugging Face cache.
    Local(String),
    /// A provider's embeddings: `openai:NAME` or `openai-compatible:NAME@URL`.
    Provider(ModelId),
}

impl Default for EmbedderSpec {
    fn default() -> Self {
        EmbedderSpec::Local(DEFAULT_EMBEDDER.to_owned())
    }
}

impl FromStr for EmbedderSpec {
    type Err = EmbedError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let s = s.trim();
        if s.is_empty() {
            return Err(EmbedError::Spec("the embedder is empty".into()));
        }
        match s.split_once(':').map(|(prefix, _)| prefix) {
            Some("openai" | "openai-compatible") => s
                .parse::<ModelId>()
                .map(EmbedderSpec::Provider)
                .map_err(|e| EmbedError::Spec(e.to_string())),
            Some(other @ ("anthropic" | "gemini" | "google" | "local")) => {
                Err(EmbedError::Spec(format!(
                    "`{s}`: {other}: models give no embeddings here; use a local encoder (all-MiniLM-L6-v2), openai:NAME or openai-compatible:NAME@URL"
                )))
            }
            _ => Ok(EmbedderSpec::Local(s.to_owned())),
        }
    }
}

impl fmt::Display for EmbedderSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EmbedderSpec::Local(name) => f.write_str(name),
            EmbedderSpec::Provider(id) => write!(f, "{id}"),
        }
    }
}

impl EmbedderSpec {
    /// The local encoder this names, found without any network and loaded. A
    /// model that is not installed is [`EmbedError::Missing`], saying how to
    /// install it.
    #[cfg(feature = "local")]
    pub fn local(&self) -> Result<MiniLm, EmbedError> {
        let EmbedderSpec::Local(spec) = self else {
            return Err(EmbedError::Spec(format!("`{self}` is not a local encoder")));
        };
        let located = gavel_model_files::locate(spec, ModelKind::Encoder).map_err(|e| match e {
            ModelFilesError::NotFound { .. } => {
                EmbedError::Missing(format!("embedding model not installed: {e}"))
            }
            other => EmbedError::Spec(other.to_string()),
        })?;
        MiniLm::load(&located.path, &located.name)
    }

    /// The embedder: the local encoder, or the provider configured from the
    /// environment (`OPENAI_API_KEY`, `OPENAI_BASE_URL`, `OPENAI_COMPATIBLE_API_KEY`)
    /// whose calls `settings` retries and times out.
    pub fn build(&self, settings: &ModelSettings) -> Result<Arc<dyn Embedder>, EmbedError> {
        match self {
            #[cfg(feature = "local")]
            EmbedderSpec::Local(_) => Ok(Arc::new(self.local()?)),
            #[cfg(not(feature = "local"))]
            EmbedderSpec::Local(name) => Err(EmbedError::Missing(format!(
                "local encoder `{name}`: this build has no local encoder (gavel-eval's `embed` feature); use openai:NAME or openai-compatible:NAME@URL"
            ))),
            #[cfg(feature = "http")]
            EmbedderSpec::Provider(id) => Ok(Arc::new(ProviderEmbedder::new(
                id,
                &ProviderConfig::from_env(),
                settings,
            )?)),
            #[cfg(not(feature = "http"))]
            EmbedderSpec::Provider(id) => {
                let _ = settings;
                Err(EmbedError::Provider(format!(
                    "{id}: this build has no provider embeddings (gavel-eval's `http` feature; the `gavel` binary has them)"
                )))
            }
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn specs_parse_into_local_encoders_and_providers() {
        assert_eq!(
            "all-MiniLM-L6-v2".parse::<EmbedderSpec>().unwrap(),
            EmbedderSpec::default()
        );
        assert_eq!(
            "./models/minilm".parse::<EmbedderSpec>().unwrap(),
            EmbedderSpec::Local("./models/minilm".into())
        );
        let spec: EmbedderSpec = "openai-compatible:nomic@http://127.0.0.1:1/v1"
            .parse()
            .unwrap();
        assert_eq!(
            spec.to_string(),
            "openai-compatible:nomic@http://127.0.0.1:1/v1"
        );
        assert!(matches!(
            "openai:text-embedding-3-small"
                .parse::<EmbedderSpec>()
                .unwrap(),
            EmbedderSpec::Provider(_)
        ));
        let err = "anthropic:claude-haiku-4-5"
            .parse::<EmbedderSpec>()
            .unwrap_err();
        assert!(err.to_string().contains("give no embeddings"), "{err}");
        let err = "openai-compatible:nomic"
            .parse::<EmbedderSpec>()
            .unwrap_err();
        assert!(err.to_string().contains("NAME@BASE_URL"), "{err}");
    }

    #[cfg(feature = "local")]
    #[test]
    fn a_missing_model_says_how_to_install_it() {
        let spec = EmbedderSpec::Local("/nonexistent/gavel-test/minilm".into());
        let err = spec.local().unwrap_err();
        assert!(
            !err.is_missing(),
            "a wrong path is a mistake, not a skip: {err}"
        );
        assert!(err.to_string().contains("no such file or folder"), "{err}");
        let err = EmbedderSpec::Local("no-such-encoder-xyz".into())
            .local()
            .unwrap_err();
        assert!(err.is_missing(), "{err}");
        assert!(err.to_string().contains("not installed"), "{err}");
    }

    #[cfg(not(feature = "local"))]
    #[test]
    fn without_the_local_encoder_a_local_embedder_is_missing() {
        let err = EmbedderSpec::default()
            .build(&ModelSettings::default())
            .unwrap_err();
        assert!(err.is_missing(), "{err}");
        assert!(err.to_string().contains("`embed` feature"), "{err}");
    }
}
