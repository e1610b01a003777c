//! JSON templates: string leaves rendered with minijinja, whole-leaf variables
//! replaced by their JSON value.

use minijinja::{Environment, UndefinedBehavior, Value as Ctx};
use serde_json::Value;

/// Renders every string leaf of `template` against `vars` (a JSON object).
///
/// A leaf that is exactly `{{ name }}` becomes the JSON value of `name` (so objects
/// and numbers keep their type); any other string is rendered as text. Undefined
/// variables are errors.
pub fn render_json(template: &Value, vars: &Value) -> Result<Value, String> {
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
) -> Result<Value, String> {
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
                .collect::<Result<_, String>>()?,
        ),
        other => other.clone(),
    })
}

/// Renders one string template.
pub fn render_str(env: &Environment<'_>, s: &str, ctx: &Ctx) -> Result<String, String> {
    if !s.contains("{{") && !s.contains("{%") {
        return Ok(s.to_owned());
    }
    env.render_str(s, ctx)
        .map_err(|e| format!("template `{s}`: {e}"))
}

fn whole_variable(s: &str) -> Option<&str> {
    let inner = s.trim().strip_prefix("{{")?.strip_suffix("}}")?.trim();
    inner
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '_')
        .then_some(inner)
}

/// Expands `${VAR}` and `${VAR:-default}` from the environment.
pub fn expand_env(s: &str) -> Result<String, String> {
    shellexpand::env(s)
        .map(|c| c.into_owned())
        .map_err(|e| format!("`{s}`: environment variable {} is not set", e.var_name))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

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
