//! Nunjucks-style templates (promptfoo's) rendered with minijinja: undefined
//! variables render empty as in nunjucks, and the filters nunjucks (and
//! promptfoo) have that minijinja lacks are registered: `load` (JSON text
//! parsed, promptfoo's), `dump` (JSON), `center`, `forceescape`, `nl2br`,
//! `striptags`, `truncate`, `wordcount`.

use minijinja::value::{Kwargs, Serde};
use minijinja::{Environment, Error, ErrorKind, UndefinedBehavior, Value as Ctx};
use serde_json::{Map, Value};

/// What stands for `{{` and `}}` while only control flow is rendered.
const OPEN: &str = "\u{e000}";
const CLOSE: &str = "\u{e001}";

/// Renders `text` over `vars` (a JSON object).
pub(crate) fn render(text: &str, vars: &Value) -> Result<String, String> {
    if !text.contains("{{") && !text.contains("{%") {
        return Ok(text.to_owned());
    }
    environment()
        .render_str(text, Ctx::from(minijinja::value::Serde(vars)))
        .map_err(|e| e.to_string())
}

/// Whether `text` renders over `vars` as a chat target's `user` template does
/// at run time (minijinja alone: undefined variables are errors, no nunjucks
/// filters) to what [`render`] gives.
pub(crate) fn renders_alike(text: &str, vars: &Map<String, Value>) -> bool {
    let vars = Value::Object(vars.clone());
    let mut env = Environment::new();
    env.set_undefined_behavior(UndefinedBehavior::Strict);
    let strict = gavel_core::template::render_str(&env, text, &Ctx::from(Serde(&vars)));
    matches!((strict, render(text, &vars)), (Ok(a), Ok(b)) if a == b)
}

/// Renders only the `{% … %}` tags of `text` over `vars`, leaving every
/// `{{ … }}` as written: a chat prompt file whose message list is built by a
/// loop (`{% for m in _conversation %}`) becomes a list to parse, its message
/// templates still to be rendered per test.
pub(crate) fn control_flow(text: &str, vars: &Value) -> Result<String, String> {
    let hidden = text.replace("{{", OPEN).replace("}}", CLOSE);
    Ok(render(&hidden, vars)?
        .replace(OPEN, "{{")
        .replace(CLOSE, "}}"))
}

fn environment() -> Environment<'static> {
    let mut env = Environment::new();
    env.add_filter("dump", dump);
    env.add_filter("load", load);
    env.add_filter("center", center);
    env.add_filter("forceescape", |s: String| s);
    env.add_filter("nl2br", |s: String| {
        s.replace("\r\n", "<br />\n").replace('\n', "<br />\n")
    });
    env.add_filter("striptags", striptags);
    env.add_filter("truncate", truncate);
    env.add_filter("wordcount", |s: String| s.split_whitespace().count());
    env
}

fn invalid(message: String) -> Error {
    Error::new(ErrorKind::InvalidOperation, message)
}

fn dump(value: Ctx) -> Result<String, Error> {
    serde_json::to_string(&value).map_err(|e| invalid(e.to_string()))
}

/// promptfoo's `load`: JSON text parsed into a value.
fn load(text: String) -> Result<Ctx, Error> {
    serde_json::from_str::<Value>(&text)
        .map(|v| Ctx::from(minijinja::value::Serde(v)))
        .map_err(|e| invalid(format!("load: not JSON: {e}")))
}

/// nunjucks' `center`: padded with spaces to `width` (default 80).
fn center(text: String, width: Option<usize>) -> String {
    let width = width.unwrap_or(80);
    let len = text.chars().count();
    if len >= width {
        return text;
    }
    let left = (width - len) / 2;
    let right = width - len - left;
    format!("{}{text}{}", " ".repeat(left), " ".repeat(right))
}

/// nunjucks' `striptags`: tags removed, whitespace runs made one space.
fn striptags(text: String) -> String {
    let mut out = String::with_capacity(text.len());
    let mut in_tag = false;
    for c in text.chars() {
        match c {
            '<' => in_tag = true,
            '>' if in_tag => {
                in_tag = false;
                out.push(' ');
            }
            c if !in_tag => out.push(c),
            _ => {}
        }
    }
    out.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// nunjucks' `truncate(length=255, killwords=false, end='...')`.
fn truncate(
    text: String,
    length: Option<usize>,
    killwords: Option<bool>,
    end: Option<String>,
    kwargs: Kwargs,
) -> Result<String, Error> {
    let length = length.or(kwargs.get("length")?).unwrap_or(255);
    let killwords = killwords.or(kwargs.get("killwords")?).unwrap_or(false);
    let end = end.or(kwargs.get("end")?).unwrap_or_else(|| "...".into());
    kwargs.assert_all_used()?;
    if text.chars().count() <= length {
        return Ok(text);
    }
    let cut: String = text.chars().take(length).collect();
    let kept = if killwords {
        cut.as_str()
    } else {
        cut.rfind(' ').map_or(cut.as_str(), |i| &cut[..i])
    };
    Ok(format!("{kept}{end}"))
}

#[cfg(test)]
mod tests {
    use super::{control_flow, render, renders_alike};
    use serde_json::json;

    #[test]
    fn vars_render_undefined_is_empty_and_dump_is_json() {
        let vars = json!({"city": "Paris", "list": [1, 2]});
        assert_eq!(render("Hi {{ city }}!", &vars).unwrap(), "Hi Paris!");
        assert_eq!(render("[{{ nope }}]", &vars).unwrap(), "[]");
        assert_eq!(render("{{ list | dump }}", &vars).unwrap(), "[1,2]");
        assert!(render("{{ city | nosuchfilter }}", &vars).is_err());
    }

    #[test]
    fn nunjucks_and_promptfoo_filters() {
        let vars =
            json!({"style": "{\"tone\": \"formal\"}", "t": "<b>a</b>  b", "long": "one two three"});
        let r = |t: &str| render(t, &vars).unwrap();
        assert_eq!(r("{{ (style | load).tone }}"), "formal");
        assert!(
            render("{{ t | load }}", &vars)
                .unwrap_err()
                .contains("not JSON")
        );
        assert_eq!(r("[{{ 'ab' | center(6) }}]"), "[  ab  ]");
        assert_eq!(r("{{ t | striptags }}"), "a b");
        assert_eq!(r("{{ long | truncate(9) }}"), "one two...");
        assert_eq!(r("{{ long | truncate(9, true, '~') }}"), "one two t~");
        assert_eq!(r("{{ long | truncate(length=5, end='') }}"), "one");
        assert_eq!(r("{{ long | wordcount }}"), "3");
        assert_eq!(r("{{ 'a\nb' | nl2br }}"), "a<br />\nb");
    }

    #[test]
    fn a_target_template_renders_alike_only_with_every_variable_and_no_nunjucks_filter() {
        let vars = json!({"topic": "bananas", "list": [1]});
        let vars = vars.as_object().unwrap();
        assert!(renders_alike("About {{ topic }}", vars));
        assert!(renders_alike("No template", vars));
        assert!(!renders_alike("About {{ topic }} {{ nope }}", vars));
        assert!(!renders_alike("{{ list | dump }}", vars));
    }

    #[test]
    fn control_flow_keeps_expressions() {
        let text = "[{% for m in _conversation %}{\"role\": \"user\", \"content\": \"{{ m.input }}\"},{% endfor %}{\"content\": \"{{ q }}\"}]";
        assert_eq!(
            control_flow(text, &json!({"_conversation": []})).unwrap(),
            "[{\"content\": \"{{ q }}\"}]"
        );
    }
}
