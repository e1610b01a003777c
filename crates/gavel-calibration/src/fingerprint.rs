//! The judge fingerprint a calibration is bound to.

use gavel_checks::{JudgeRuntime, JudgeTemplate, NoJudgeModels, TemplateKind};
use gavel_core::{JudgeFingerprint, JudgeSettings, Scale};
use gavel_models::ModelId;

use crate::CalibrationError;

/// The fingerprint of judge `model` under `settings`: provider, model, where
/// its calls go (`host:port` of the id's base URL, else of the provider's
/// `*_BASE_URL` variable in this process's environment, else its default), the
/// hash of the template of each of `kinds` (the suite's override, else the
/// built-in one), the effective temperature and token cap, and for a pointwise
/// judge its scale and threshold (`scored`; `None` threshold: any).
pub fn fingerprint(
    model: &str,
    settings: &JudgeSettings,
    kinds: &[TemplateKind],
    scored: Option<(Scale, Option<f64>)>,
) -> Result<JudgeFingerprint, CalibrationError> {
    fingerprint_in(model, settings, kinds, scored, |name| {
        std::env::var(name).ok()
    })
}

/// [`fingerprint`] with the environment read through `env`.
pub(crate) fn fingerprint_in(
    model: &str,
    settings: &JudgeSettings,
    kinds: &[TemplateKind],
    scored: Option<(Scale, Option<f64>)>,
    env: impl Fn(&str) -> Option<String>,
) -> Result<JudgeFingerprint, CalibrationError> {
    let bad = |message: String| CalibrationError::Judge {
        field: "judge.model".into(),
        message,
    };
    let id: ModelId = model
        .parse()
        .map_err(|e: gavel_models::ModelIdError| bad(e.to_string()))?;
    let base_url = gavel_models::base_url(&id, env)
        .map(|base| {
            let url = url::Url::parse(&base).map_err(|e| {
                bad(format!(
                    "base URL `{}`: {e}",
                    gavel_core::secrets::mask_url(&base)
                ))
            })?;
            let host = url.host_str().unwrap_or_default();
            Ok::<_, CalibrationError>(match url.port_or_known_default() {
                Some(port) => format!("{host}:{port}"),
                None => host.to_owned(),
            })
        })
        .transpose()?;
    let mut templates = std::collections::BTreeMap::new();
    for &kind in kinds {
        let template = match settings.templates.get(kind.as_str()) {
            None => JudgeTemplate::builtin(kind),
            Some(path) => {
                JudgeTemplate::from_file(kind, path).map_err(|message| CalibrationError::Judge {
                    field: format!("judge.templates.{}", kind.as_str()),
                    message: format!("{path}: {message}"),
                })?
            }
        };
        templates.insert(kind.as_str().to_owned(), template.hash().to_owned());
    }
    // The runtime holds the defaults the judges run with.
    let rt = JudgeRuntime::with_settings(&NoJudgeModels, settings);
    Ok(JudgeFingerprint {
        provider: id.provider.prefix().to_owned(),
        model: id.model,
        base_url,
        templates,
        temperature: rt.temperature,
        max_tokens: rt.max_tokens,
        scale: scored.map(|(s, _)| s.as_str().to_owned()),
        threshold: scored.and_then(|(_, t)| t),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_changed_template_or_temperature_shows() {
        let settings = JudgeSettings::default();
        let model = "openai-compatible:judge@http://127.0.0.1:9999/v1";
        let binary = Some((Scale::ZeroToOne, Some(0.7)));
        let then = fingerprint(model, &settings, &[TemplateKind::Judge], binary).unwrap();
        assert_eq!(then.provider, "openai-compatible");
        assert_eq!(then.base_url.as_deref(), Some("127.0.0.1:9999"));
        assert_eq!((then.temperature, then.max_tokens), (0.0, 1024));
        let now = fingerprint(model, &settings, &[TemplateKind::Judge], binary).unwrap();
        assert!(then.differences(&now).is_empty());

        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("judge.j2");
        std::fs::write(
            &path,
            "{% block system %}Be harsh.{% endblock %}{% block user %}{{ criteria }} {{ output }}{% endblock %}",
        )
        .unwrap();
        let mut changed = settings.clone();
        changed.temperature = Some(1.5);
        changed
            .templates
            .insert("judge".into(), path.display().to_string());
        let now = fingerprint(model, &changed, &[TemplateKind::Judge], binary).unwrap();
        let diff = then.differences(&now);
        assert_eq!(diff.len(), 2, "{diff:?}");
        assert_eq!(diff[0], "temperature 1.5 ≠ 0 at calibration");
        assert!(diff[1].starts_with("`judge` template "), "{diff:?}");

        changed.templates.insert("judge".into(), "/nope.j2".into());
        let err = fingerprint(model, &changed, &[TemplateKind::Judge], None).unwrap_err();
        assert!(err.to_string().contains("judge.templates.judge"), "{err}");
        let err = fingerprint("gpt", &settings, &[], None).unwrap_err();
        assert!(err.to_string().contains("judge.model"), "{err}");
    }

    #[test]
    fn the_base_url_comes_from_the_environment_with_its_port() {
        let settings = JudgeSettings::default();
        let at = |url: Option<&str>| {
            let env = |name: &str| (name == "OPENAI_BASE_URL").then(|| url.map(str::to_owned))?;
            fingerprint_in("openai:gpt-5-mini", &settings, &[], None, env)
                .unwrap()
                .base_url
        };
        assert_eq!(at(None).as_deref(), Some("api.openai.com:443"));
        assert_eq!(
            at(Some("http://proxy.internal:8080/v1")).as_deref(),
            Some("proxy.internal:8080")
        );
        assert_ne!(
            at(Some("http://proxy.internal:8081/v1")),
            at(Some("http://proxy.internal:8080/v1"))
        );
    }
}
