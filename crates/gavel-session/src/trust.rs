//! What suites written by others may ask of the machine that runs them: the
//! web UI stores suites and cases its editors write, and runs them on the
//! server. Programs, databases, files, environment variables and exports
//! ([`gavel_core::capability`]) come only from the operator's files; models
//! only from those the operator configured ([`Allowed`]), so a provider key
//! goes only where the operator sent it (docs/SECURITY.md).

use std::path::PathBuf;

use gavel_core::capability::{self, Capability, Finding};
use gavel_core::load::SuiteSource;
use gavel_models::{ModelId, Provider};
use gavel_store::Store;

use crate::SessionError;

/// The environment variable that binds `OPENAI_COMPATIBLE_API_KEY` to one base URL.
pub const COMPATIBLE_BASE_VAR: &str = "OPENAI_COMPATIBLE_BASE_URL";

/// The models the operator configured: the only ones suites written by others
/// may call. `openai`, `anthropic` and `gemini` ids are allowed (their keys
/// go only to the base URL their environment names); an `openai-compatible`
/// id only at a base URL the operator named, a `local` id only as named.
#[derive(Debug, Clone, Default)]
pub struct Allowed {
    models: Vec<ModelId>,
    compatible_bases: Vec<String>,
}

impl Allowed {
    /// The models named by the operator's suite files (their judge settings
    /// and targets), the server's default judge, and the base URL of
    /// `OPENAI_COMPATIBLE_BASE_URL`.
    pub fn operator(files: &[PathBuf], judge: Option<&ModelId>) -> Allowed {
        let sources: Vec<SuiteSource> = files.iter().cloned().map(SuiteSource::Path).collect();
        let loading = gavel_core::load::open(&sources);
        let suite = loading.suite();
        let mut found = capability::settings(&suite.judge);
        for (name, spec) in &suite.targets {
            found.extend(capability::target(name, spec));
        }
        let configured = found.into_iter().filter_map(|f| match f.capability {
            Capability::Model(id) => id.parse().ok(),
            _ => None,
        });
        let env_base = std::env::var(COMPATIBLE_BASE_VAR).ok();
        Allowed::of(judge.cloned().into_iter().chain(configured), env_base)
    }

    /// These models, and openai-compatible servers at `compatible_base`.
    pub fn of(
        models: impl IntoIterator<Item = ModelId>,
        compatible_base: Option<String>,
    ) -> Allowed {
        let models: Vec<ModelId> = models.into_iter().collect();
        let compatible_bases = models
            .iter()
            .filter(|m| m.provider == Provider::OpenAiCompatible)
            .filter_map(|m| m.base_url.clone())
            .chain(compatible_base)
            .map(|b| normal_base(&b))
            .collect();
        Allowed {
            models,
            compatible_bases,
        }
    }

    /// Whether a model may be called for suites written by others.
    pub fn permits(&self, id: &ModelId) -> bool {
        match id.provider {
            Provider::OpenAi | Provider::Anthropic | Provider::Gemini => true,
            Provider::OpenAiCompatible => id
                .base_url
                .as_deref()
                .is_some_and(|b| self.compatible_bases.contains(&normal_base(b))),
            Provider::Local => self.models.contains(id),
        }
    }

    /// Checks a model id someone chose (at `field`): it parses and is allowed.
    pub fn check_model(&self, field: &str, id: &str) -> Result<ModelId, SessionError> {
        let parsed = crate::check_model(field, id)?;
        if self.permits(&parsed) {
            return Ok(parsed);
        }
        Err(SessionError::NotAllowed(vec![Finding {
            field: field.to_owned(),
            capability: Capability::Model(id.to_owned()),
        }]))
    }

    /// The findings suites written by others may not have: every one but the
    /// models allowed.
    pub fn refused(&self, found: Vec<Finding>) -> Vec<Finding> {
        found
            .into_iter()
            .filter(|f| match &f.capability {
                Capability::Model(id) => !id.parse::<ModelId>().is_ok_and(|m| self.permits(&m)),
                _ => true,
            })
            .collect()
    }

    /// Refuses a case someone wants to store when it asks for what they may
    /// not have (fields relative to the case).
    pub fn check_case(&self, case: &gavel_core::Case) -> Result<(), SessionError> {
        self.refuse(capability::case(case))
    }

    /// Refuses a stored suite before a run others started: its settings and
    /// its cases, as stored (even those stored before this check existed).
    pub async fn check_stored(&self, store: &Store, name: &str) -> Result<(), SessionError> {
        let text = crate::stored_yaml(store, name).await?;
        let shown = PathBuf::from(format!("{name}.yaml"));
        let found = gavel_core::load::capabilities(&text, &shown)
            .map_err(|e| SessionError::Load(vec![e]))?;
        self.refuse(found)
    }

    fn refuse(&self, found: Vec<Finding>) -> Result<(), SessionError> {
        match self.refused(found) {
            refused if refused.is_empty() => Ok(()),
            refused => Err(SessionError::NotAllowed(refused)),
        }
    }
}

/// What refusing `found` says: the field, what it does, and what to do instead.
pub fn refusal(found: &Finding) -> String {
    let instead = match found.capability {
        Capability::Model(_) => MODELS_ALLOWED,
        _ => {
            "only the server's operator may add this, in a suite file given to `gavel serve --with` (docs/SECURITY.md)"
        }
    };
    format!("{found}: {instead}")
}

/// Which models suites written by others may call.
pub const MODELS_ALLOWED: &str = "pick a model this server is configured with: `openai:`, `anthropic:` or `gemini:`, or one named by its `gavel serve --with` files, `--judge` or OPENAI_COMPATIBLE_BASE_URL (docs/SECURITY.md)";

/// A base URL compared without its trailing slashes.
fn normal_base(url: &str) -> String {
    url.trim().trim_end_matches('/').to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(s: &str) -> ModelId {
        s.parse().unwrap()
    }

    #[test]
    fn only_configured_compatible_servers_and_local_models_are_allowed() {
        let allowed = Allowed::of(
            [
                id("openai-compatible:llama@http://127.0.0.1:11434/v1/"),
                id("local:gemma"),
            ],
            Some("http://10.0.0.5:8000/v1".into()),
        );
        assert!(allowed.permits(&id("openai:gpt-4o")));
        assert!(allowed.permits(&id("anthropic:claude-opus-4-5")));
        assert!(allowed.permits(&id("openai-compatible:other@http://127.0.0.1:11434/v1")));
        assert!(allowed.permits(&id("openai-compatible:x@http://10.0.0.5:8000/v1")));
        assert!(!allowed.permits(&id("openai-compatible:any@http://evil.example/v1")));
        assert!(allowed.permits(&id("local:gemma")));
        assert!(!allowed.permits(&id("local:/etc/passwd")));
        let err = allowed
            .check_model(
                "judge",
                "openai-compatible:any@http://user:pw@evil.example/v1",
            )
            .unwrap_err();
        let text = err.to_string();
        assert!(err.is_bad_input(), "{text}");
        assert!(
            text.contains("judge: model") && !text.contains("pw@"),
            "{text}"
        );
    }

    #[test]
    fn programs_are_refused_whatever_the_models() {
        let allowed = Allowed::default();
        let found = vec![
            Finding {
                field: "checks[0]".into(),
                capability: Capability::Script,
            },
            Finding {
                field: "checks[1].model".into(),
                capability: Capability::Model("gemini:gemini-2.5-pro".into()),
            },
        ];
        let refused = allowed.refused(found);
        assert_eq!(refused.len(), 1);
        assert_eq!(refused[0].field, "checks[0]");
    }
}
