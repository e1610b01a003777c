//! The judge fingerprint a calibration is bound to.

use gavel_checks::{JudgeRuntime, JudgeTemplate, NoJudgeModels, TemplateKind};
use gavel_core::{JudgeFingerprint, JudgeSettings};
use gavel_models::ModelId;

use crate::CalibrationError;

/// The fingerprint of judge `model` under `settings`: provider, model, base URL
/// host, the hash of the template of each of `kinds` (the suite's override, else
/// the built-in one), the effective temperature and token cap, and the suite's
/// default scale. A calibration records the kinds it used; a suite checking its
/// judge passes [`TemplateKind::ALL`].
pub fn fingerprint(
    model: &str,
    settings: &JudgeSettings,
    kinds: &[TemplateKind],
) -> Result<JudgeFingerprint, CalibrationError> {
    let id: ModelId =
        model
            .parse()
            .map_err(|e: gavel_models::ModelIdError| CalibrationError::Judge {
                field: "judge.model".into(),
                message: e.to_string(),
            })?;
    let base_url_host = id
        .base_url
        .as_deref()
        .map(|base| {
            let url = url::Url::parse(base).map_err(|e| CalibrationError::Judge {
                field: "judge.model".into(),
                message: format!("base URL `{base}`: {e}"),
            })?;
            Ok::<_, CalibrationError>(url.host_str().unwrap_or_default().to_owned())
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
        base_url_host,
        templates,
        temperature: rt.temperature,
        max_tokens: rt.max_tokens,
        scale: settings.scale.map(|s| s.as_str().to_owned()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_changed_template_or_temperature_shows() {
        let settings = JudgeSettings::default();
        let model = "openai-compatible:judge@http://127.0.0.1:9999/v1";
        let then = fingerprint(model, &settings, &[TemplateKind::Judge]).unwrap();
        assert_eq!(then.provider, "openai-compatible");
        assert_eq!(then.base_url_host.as_deref(), Some("127.0.0.1"));
        assert_eq!((then.temperature, then.max_tokens), (0.0, 1024));
        let now = fingerprint(model, &settings, &TemplateKind::ALL).unwrap();
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
        let now = fingerprint(model, &changed, &TemplateKind::ALL).unwrap();
        let diff = then.differences(&now);
        assert_eq!(diff.len(), 2, "{diff:?}");
        assert!(diff[0].starts_with("`judge` template "), "{diff:?}");
        assert_eq!(diff[1], "temperature 1.5 ≠ 0 at calibration");

        changed.templates.insert("judge".into(), "/nope.j2".into());
        let err = fingerprint(model, &changed, &[TemplateKind::Judge]).unwrap_err();
        assert!(err.to_string().contains("judge.templates.judge"), "{err}");
        let err = fingerprint("gpt", &settings, &[]).unwrap_err();
        assert!(err.to_string().contains("judge.model"), "{err}");
    }
}
