//! JSON templates: string leaves rendered with minijinja, whole-leaf variables
//! replaced by their JSON value; and `${NAME}` from the environment.

mod env;

use minijinja::{Environment, UndefinedBehavior, Value as Ctx};
use serde_json::Value;

/// Why a template or a `${VAR}` expansion failed; the message names the text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TemplateError {
    /// The template does not parse or render (e.g. an undefined variable).
    #[error("template `{template}`: {message}")]
    Render {
        /// The template text.
        template: String,
        /// minijinja's message.
        message: String,
    },
    /// `${VAR}` names a variable that is not set.
    #[error("`{text}`: environment variable {var} is not set")]
    UnsetVar {
        /// The text expanded.
        text: String,
        /// The variable's name.
        var: String,
    },
    /// A `${` that is not a variable (unclosed, or not a name).
    #[error("`{text}`: {message}")]
    BadVar {
        /// The text expanded.
        text: String,
        /// What is wrong.
        message: String,
    },
}

/// Renders every string leaf of `template` against `vars` (a JSON object).
///
/// A leaf that is exactly `{{ name }}` becomes the JSON value of `name` (so objects
/// and numbers keep their type); any other string is rendered as text. Undefined
/// variables are errors.
pub fn render_json(template: &Value, vars: &Value) -> Result<Value, TemplateError> {
    let mut env = Environment::new();
    env.set_undefined_behavior(UndefinedBehavior::Strict);
    let ctx = Ctx::from(minijinja::value::Serde(vars));
    render_value(&env, template, vars, &ctx)
}

fn render_value(
    env: &Environment<'_>,
    v: &Value,
    vars: &Value,
    ctx: &Ctx,
) -> Result<Value, TemplateError> {
    Ok(match v {
        Value::String(s) => match whole_variable(s).and_then(|name| vars.get(name)) {
            Some(value) => value.clone(),
            None => Value::String(render_str(env, s, ctx)?),
        },
        Value::Array(items) => Value::Array(
            items
                .iter()
                .map(|i| render_value(env, i, vars, ctx))
                .collect::<Result<_, _>>()?,
        ),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| Ok((k.clone(), render_value(env, v, vars, ctx)?)))
                .collect::<Result<_, TemplateError>>()?,
        ),
        other => other.clone(),
    })
}

/// Renders one string template.
pub fn render_str(env: &Environment<'_>, s: &str, ctx: &Ctx) -> Result<String, TemplateError> {
    if !s.contains("{{") && !s.contains("{%") {
        return Ok(s.to_owned());
    }
    env.render_str(s, ctx).map_err(|e| TemplateError::Render {
        template: s.to_owned(),
        message: e.to_string(),
    })
}

fn whole_variable(s: &str) -> Option<&str> {
    let inner = s.trim().strip_prefix("{{")?.strip_suffix("}}")?.trim();
    inner
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '_')
        .then_some(inner)
}

/// Expands `${VAR}` and `${VAR:-default}` (used when VAR is unset) from the
/// environment; `$$` is one `$`, and any other `$` stays as written (`$0`,
/// `$HOME`). An unset variable without a default, or a `${` that is not a
/// variable, is an error naming the text.
pub fn expand_env(s: &str) -> Result<String, TemplateError> {
    env::expand(s, |name| std::env::var(name).ok())
}

/// Checks the `${…}` of `s` as [`expand_env`] reads them, without reading the
/// environment: the loader refuses a malformed one before anything runs.
pub fn check_env(s: &str) -> Result<(), TemplateError> {
    env::check(s)
}

/// Expands `${VAR}` like [`expand_env`] for a value that is a secret (a header
/// value, a process's environment): every variable's value, and the whole result
/// when it holds one, are registered with [`crate::secrets::register`].
pub fn expand_secret(s: &str) -> Result<String, TemplateError> {
    let mut found = false;
    let expanded = env::expand(s, |name| {
        let value = std::env::var(name).ok()?;
        crate::secrets::register(&value);
        found = true;
        Some(value)
    })?;
    if found {
        crate::secrets::register(&expanded);
    }
    Ok(expanded)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn expanded_secrets_are_registered() {
        // SAFETY: no other test of this binary reads this variable.
        unsafe { std::env::set_var("GAVEL_TEMPLATE_TEST_TOKEN", "tmpl-token-value") };
        let header = expand_secret("Bearer ${GAVEL_TEMPLATE_TEST_TOKEN}").unwrap();
        assert_eq!(header, "Bearer tmpl-token-value");
        assert_eq!(
            crate::secrets::redact("echo: tmpl-token-value"),
            "echo: [redacted]"
        );
        assert!(expand_secret("${GAVEL_TEMPLATE_TEST_UNSET_VAR}").is_err());
    }

    #[test]
    fn whole_leaf_keeps_json_type_and_text_is_rendered() {
        let t = json!({"ctx": "{{ context }}", "msg": "Hi {{ name }}!", "n": 3});
        let out = render_json(&t, &json!({"context": {"a": 1}, "name": "Ana"})).unwrap();
        assert_eq!(out, json!({"ctx": {"a": 1}, "msg": "Hi Ana!", "n": 3}));
    }

    #[test]
    fn undefined_variable_is_an_error() {
        assert!(render_json(&json!("x {{ nope }}"), &json!({})).is_err());
    }
}
