//! Which judge model a run uses, and why: `--judge`, else the suite's
//! `judge.model`, else a provider whose API key is in the environment, else an
//! OpenAI-compatible server answering on 127.0.0.1:11434 (Ollama's port), else an
//! installed instruction-tuned GGUF, else none (judged checks are skipped).

#[cfg(feature = "http")]
use std::time::Duration;

/// Where the local OpenAI-compatible server is looked for; `GAVEL_LOCAL_SERVER`
/// overrides it (tests point it at a mock; `off` skips the probe).
const LOCAL_SERVER: &str = "http://127.0.0.1:11434";
/// How long the probe of the local server may take: it runs before every run
/// that names no judge, so a missing server must cost next to nothing.
#[cfg(feature = "http")]
const PROBE_TIMEOUT: Duration = Duration::from_millis(500);

/// API keys in the order they are tried, with the model each one picks.
#[cfg(feature = "http")]
const KEYED_DEFAULTS: [(&str, &str); 4] = [
    ("OPENAI_API_KEY", "openai:gpt-5-mini"),
    ("ANTHROPIC_API_KEY", "anthropic:claude-sonnet-4-5"),
    ("GEMINI_API_KEY", "gemini:gemini-2.5-flash"),
    ("GOOGLE_API_KEY", "gemini:gemini-2.5-flash"),
];

/// The judge model chosen for a run (none: judged checks are skipped) and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JudgeChoice {
    /// The model id.
    pub model: Option<String>,
    /// Why this one, or why there is none: one line for people.
    pub why: String,
}

/// `MODEL (why)`, the model's credentials masked, or `none, judged checks will
/// be skipped: why`.
impl std::fmt::Display for JudgeChoice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.model {
            Some(model) => write!(f, "{} ({})", gavel_store::mask_url(model), self.why),
            None => write!(f, "none, judged checks will be skipped: {}", self.why),
        }
    }
}

/// Reads an environment variable (unset and empty are the same).
pub type EnvLookup = Box<dyn Fn(&str) -> Option<String> + Send + Sync>;

/// What the choice looks at; [`JudgeSources::from_env`] for real runs.
pub struct JudgeSources {
    /// An environment variable's value.
    pub var: EnvLookup,
    /// The local server's base URL, or `None` not to probe.
    pub server: Option<String>,
    /// Where installed model files are looked for.
    pub files: gavel_model_files::ModelFiles,
}

impl JudgeSources {
    /// The real environment.
    pub fn from_env() -> Self {
        let var = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
        let server = match var("GAVEL_LOCAL_SERVER") {
            Some(off) if off == "off" => None,
            Some(url) => Some(url),
            None => Some(LOCAL_SERVER.to_owned()),
        };
        JudgeSources {
            var: Box::new(var),
            server,
            files: gavel_model_files::ModelFiles::from_env(),
        }
    }
}

/// The judge for a run: `configured` (`--judge`, else the suite's `judge.model`,
/// with `origin` saying which) wins; otherwise the first of the fallbacks that
/// `sources` offers.
pub async fn choose(configured: Option<(&str, &str)>, sources: &JudgeSources) -> JudgeChoice {
    if let Some((model, origin)) = configured {
        return chosen(model.to_owned(), format!("named by {origin}"));
    }
    #[cfg(feature = "http")]
    if let Some(choice) = hosted(sources).await {
        return choice;
    }
    let (instruct, base_models) = installed_gguf(&sources.files);
    if let Some(path) = instruct {
        return chosen(
            format!("local:{}", path.display()),
            "no API key or local server; an installed instruction-tuned GGUF".to_owned(),
        );
    }
    let mut why = format!(
        "{}; no API key set, no server on {}, no instruction-tuned GGUF in {}",
        gavel_checks::NO_JUDGE_MODEL,
        sources.server.as_deref().unwrap_or("(probe off)"),
        sources.files.models_dir.display(),
    );
    if let Some(name) = base_models.first() {
        why.push_str(&format!(
            " ({name} is a base model, used only when named: --judge local:{name})"
        ));
    }
    if cfg!(not(feature = "http")) {
        why.push_str(" (this build has no hosted providers: gavel-eval's `http` feature)");
    }
    JudgeChoice { model: None, why }
}

/// A hosted judge: the first provider whose API key is set, else the first model
/// of an OpenAI-compatible server answering at `sources.server`.
#[cfg(feature = "http")]
async fn hosted(sources: &JudgeSources) -> Option<JudgeChoice> {
    if let Some((var, model)) = KEYED_DEFAULTS
        .iter()
        .find(|(var, _)| (sources.var)(var).is_some())
    {
        return Some(chosen((*model).to_owned(), format!("{var} is set")));
    }
    let server = sources.server.as_ref()?;
    let name = probe(server).await?;
    let base = format!("{}/v1", server.trim_end_matches('/'));
    Some(chosen(
        format!("openai-compatible:{name}@{base}"),
        format!("an OpenAI-compatible server answers on {base} (its first model)"),
    ))
}

fn chosen(model: String, why: String) -> JudgeChoice {
    JudgeChoice {
        model: Some(model),
        why,
    }
}

/// The first model an OpenAI-compatible server at `base` lists, if one answers
/// `GET /v1/models` in time.
#[cfg(feature = "http")]
async fn probe(base: &str) -> Option<String> {
    let client = reqwest::Client::builder()
        .timeout(PROBE_TIMEOUT)
        .build()
        .ok()?;
    let url = format!("{}/v1/models", base.trim_end_matches('/'));
    let body: serde_json::Value = client
        .get(url)
        .send()
        .await
        .ok()?
        .error_for_status()
        .ok()?
        .json()
        .await
        .ok()?;
    body.pointer("/data/0/id")?.as_str().map(str::to_owned)
}

/// The first installed GGUF with a chat template (by name), and the names of
/// the base models (no template) passed over.
#[cfg(feature = "local")]
fn installed_gguf(
    files: &gavel_model_files::ModelFiles,
) -> (Option<std::path::PathBuf>, Vec<String>) {
    let mut ggufs: Vec<_> = files
        .list()
        .into_iter()
        .filter(|m| m.kind == gavel_model_files::ModelKind::Gguf)
        .collect();
    ggufs.sort_by(|a, b| a.name.cmp(&b.name));
    let mut base = Vec::new();
    for model in ggufs {
        match gavel_local::inspect(&model.path) {
            Ok(info) if info.has_chat_template => return (Some(model.path), base),
            Ok(_) => base.push(model.name),
            Err(_) => {}
        }
    }
    (None, base)
}

/// Without the `local` feature no GGUF can run.
#[cfg(not(feature = "local"))]
fn installed_gguf(
    _files: &gavel_model_files::ModelFiles,
) -> (Option<std::path::PathBuf>, Vec<String>) {
    (None, Vec::new())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use std::path::Path;

    use wiremock::matchers::{method, path};
    use wiremock::{Mock, MockServer, ResponseTemplate};

    use super::*;

    /// A GGUF file holding only string metadata (no tensors): enough for a header read.
    #[cfg(feature = "local")]
    fn write_gguf(file: &Path, metadata: &[(&str, &str)]) {
        let mut bytes = b"GGUF".to_vec();
        bytes.extend(3u32.to_le_bytes());
        bytes.extend(0u64.to_le_bytes());
        bytes.extend((metadata.len() as u64).to_le_bytes());
        let string = |bytes: &mut Vec<u8>, text: &str| {
            bytes.extend((text.len() as u64).to_le_bytes());
            bytes.extend(text.as_bytes());
        };
        for (key, value) in metadata {
            string(&mut bytes, key);
            bytes.extend(8u32.to_le_bytes()); // GGUF_TYPE_STRING
            string(&mut bytes, value);
        }
        bytes.resize(bytes.len().next_multiple_of(32), 0);
        std::fs::write(file, bytes).unwrap();
    }

    /// JudgeSources with only `vars` set, the server at `server`, models in `dir`.
    fn sources(
        vars: &'static [(&'static str, &'static str)],
        server: Option<String>,
        dir: &Path,
    ) -> JudgeSources {
        JudgeSources {
            var: Box::new(move |name| {
                vars.iter()
                    .find(|(k, _)| *k == name)
                    .map(|(_, v)| (*v).to_owned())
            }),
            server,
            files: gavel_model_files::ModelFiles {
                models_dir: dir.to_owned(),
                hf_cache: None,
                endpoint: "http://127.0.0.1:9".into(),
            },
        }
    }

    /// A URL nothing listens on.
    fn closed_port() -> String {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://{}", listener.local_addr().unwrap())
    }

    #[tokio::test]
    async fn configured_model_wins_over_everything() {
        let dir = tempfile::tempdir().unwrap();
        let s = sources(&[("OPENAI_API_KEY", "k")], None, dir.path());
        let choice = choose(Some(("local:x.gguf", "--judge")), &s).await;
        assert_eq!(choice.model.as_deref(), Some("local:x.gguf"));
        assert_eq!(choice.why, "named by --judge");
    }

    #[tokio::test]
    async fn an_api_key_comes_next() {
        let dir = tempfile::tempdir().unwrap();
        let s = sources(
            &[("ANTHROPIC_API_KEY", "k")],
            Some(closed_port()),
            dir.path(),
        );
        let choice = choose(None, &s).await;
        assert_eq!(choice.model.as_deref(), Some("anthropic:claude-sonnet-4-5"));
        assert_eq!(choice.why, "ANTHROPIC_API_KEY is set");
    }

    #[tokio::test]
    async fn then_a_local_server_with_its_first_model() {
        let server = MockServer::start().await;
        Mock::given(method("GET"))
            .and(path("/v1/models"))
            .respond_with(ResponseTemplate::new(200).set_body_json(serde_json::json!({
                "object": "list",
                "data": [{"id": "qwen2.5:7b", "object": "model"}, {"id": "other"}],
            })))
            .mount(&server)
            .await;
        let dir = tempfile::tempdir().unwrap();
        let choice = choose(None, &sources(&[], Some(server.uri()), dir.path())).await;
        assert_eq!(
            choice.model,
            Some(format!("openai-compatible:qwen2.5:7b@{}/v1", server.uri()))
        );
        assert!(
            choice.why.contains("OpenAI-compatible server"),
            "{}",
            choice.why
        );
    }

    #[cfg(feature = "local")]
    #[tokio::test]
    async fn then_an_installed_instruct_gguf_never_a_base_model() {
        let dir = tempfile::tempdir().unwrap();
        write_gguf(&dir.path().join("a-base.gguf"), &[("general.name", "base")]);
        let s = sources(&[], Some(closed_port()), dir.path());
        let choice = choose(None, &s).await;
        assert_eq!(choice.model, None);
        assert!(
            choice.why.starts_with(gavel_checks::NO_JUDGE_MODEL),
            "{}",
            choice.why
        );
        assert!(
            choice
                .why
                .contains("a-base.gguf is a base model, used only when named"),
            "{}",
            choice.why
        );

        let instruct = dir.path().join("b-instruct.gguf");
        write_gguf(
            &instruct,
            &[
                ("general.name", "instruct"),
                (
                    "tokenizer.chat_template",
                    "{% for m in messages %}{{ m.content }}{% endfor %}",
                ),
            ],
        );
        assert!(gavel_local::inspect(&instruct).unwrap().has_chat_template);
        let choice = choose(None, &s).await;
        assert_eq!(choice.model, Some(format!("local:{}", instruct.display())));
        assert!(
            choice.why.contains("instruction-tuned GGUF"),
            "{}",
            choice.why
        );
    }

    #[tokio::test]
    async fn with_nothing_the_judged_checks_are_skipped_with_the_reason() {
        let dir = tempfile::tempdir().unwrap();
        let choice = choose(None, &sources(&[], None, dir.path())).await;
        assert_eq!(choice.model, None);
        assert!(choice.why.contains("(probe off)"), "{}", choice.why);
    }
}
