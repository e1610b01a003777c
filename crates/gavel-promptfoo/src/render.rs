//! Nunjucks-style templates (promptfoo's) rendered with minijinja: undefined
//! variables render empty as in nunjucks, and `dump` is JSON as there.

use minijinja::{Environment, Error, ErrorKind, Value as Ctx};
use serde_json::Value;

/// Renders `text` over `vars` (a JSON object).
pub(crate) fn render(text: &str, vars: &Value) -> Result<String, String> {
    if !text.contains("{{") && !text.contains("{%") {
        return Ok(text.to_owned());
    }
    let mut env = Environment::new();
    env.add_filter("dump", dump);
    env.render_str(text, Ctx::from(minijinja::value::Serde(vars)))
        .map_err(|e| e.to_string())
}

fn dump(value: Ctx) -> Result<String, Error> {
    serde_json::to_string(&value)
        .map_err(|e| Error::new(ErrorKind::InvalidOperation, e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::render;
    use serde_json::json;

    #[test]
    fn vars_render_undefined_is_empty_and_dump_is_json() {
        let vars = json!({"city": "Paris", "list": [1, 2]});
        assert_eq!(render("Hi {{ city }}!", &vars).unwrap(), "Hi Paris!");
        assert_eq!(render("[{{ nope }}]", &vars).unwrap(), "[]");
        assert_eq!(render("{{ list | dump }}", &vars).unwrap(), "[1,2]");
        assert!(render("{{ city | nosuchfilter }}", &vars).is_err());
    }
}
