//! Templates: embedded, autoescaped (every name ends in `.html`), rendered with the
//! signed-in user (`me`) and its CSRF token in their context.

use axum::response::Html;
use minijinja::{Environment, Value, context};

use crate::{AppState, WebError};

const TEMPLATES: &[(&str, &str)] = &[
    ("base.html", include_str!("../templates/base.html")),
    ("runs.html", include_str!("../templates/runs.html")),
    (
        "start_preview.html",
        include_str!("../templates/start_preview.html"),
    ),
    ("run.html", include_str!("../templates/run.html")),
    ("review.html", include_str!("../templates/review.html")),
    ("progress.html", include_str!("../templates/progress.html")),
    ("compare.html", include_str!("../templates/compare.html")),
    ("trends.html", include_str!("../templates/trends.html")),
    ("suites.html", include_str!("../templates/suites.html")),
    ("suite.html", include_str!("../templates/suite.html")),
    ("case.html", include_str!("../templates/case.html")),
    ("login.html", include_str!("../templates/login.html")),
    ("account.html", include_str!("../templates/account.html")),
    ("users.html", include_str!("../templates/users.html")),
    ("history.html", include_str!("../templates/history.html")),
    ("diff.html", include_str!("../templates/diff.html")),
    ("retired.html", include_str!("../templates/retired.html")),
    ("tried.html", include_str!("../templates/tried.html")),
    (
        "transcript.html",
        include_str!("../templates/transcript.html"),
    ),
    (
        "compare_case.html",
        include_str!("../templates/compare_case.html"),
    ),
];

/// The template environment. minijinja escapes every value in `.html` templates.
pub(crate) fn templates() -> Result<Environment<'static>, WebError> {
    let mut env = Environment::new();
    env.add_filter("when", |t: String| crate::summary::short_time(&t));
    env.add_filter("usd", |c: Option<f64>| gavel_report::format_cost(c));
    env.add_filter("json", json_text);
    for (name, source) in TEMPLATES {
        env.add_template(name, source)
            .map_err(|e| WebError::Render(name, e))?;
    }
    Ok(env)
}

/// A value as JSON text, left for autoescape to escape once (minijinja's
/// `tojson` escapes `<` as `\u003c` itself and marks the text safe, so pages
/// would show `\u003c` where the agent sent `<`).
fn json_text(value: Value) -> Result<String, minijinja::Error> {
    serde_json::to_string(&value)
        .map_err(|e| minijinja::Error::new(minijinja::ErrorKind::InvalidOperation, e.to_string()))
}

/// Any serializable value as a template value.
pub(crate) fn ser<T: serde::Serialize + ?Sized>(value: &T) -> Value {
    Value::from(minijinja::value::Serde(value))
}

/// Renders `name` with `ctx`, the request's actor (`me`: name, role, open) and
/// its CSRF token.
pub(crate) fn render(
    state: &AppState,
    name: &'static str,
    ctx: Value,
) -> Result<Html<String>, WebError> {
    let template = state
        .templates
        .get_template(name)
        .map_err(|e| WebError::Render(name, e))?;
    let (me, csrf) = crate::auth::CURRENT
        .try_with(|a| {
            let me = context! {
                name => a.name.clone(),
                role => a.role.as_str(),
                open => a.proof == crate::auth::Proof::Open,
                can_write => a.role >= gavel_store::Role::Editor,
                admin => a.role >= gavel_store::Role::Admin,
            };
            (Some(me), a.csrf.clone())
        })
        .unwrap_or_else(|_| (None, state.csrf.to_string()));
    let ctx = context! { csrf => csrf, me => me, ..ctx };
    template
        .render(ctx)
        .map(Html)
        .map_err(|e| WebError::Render(name, e))
}
