//! promptfoo `providers` → gavel targets: chat models become `chat` targets,
//! HTTP providers `http` targets.

use std::collections::BTreeMap;
use std::path::Path;

use gavel_core::TargetSpec;
use gavel_core::target::{ChatTarget, ChatTool, HttpTarget, ResponseMap};
use regex::{Captures, Regex};
use serde_json::Value;

use crate::files::{file_ref, resolve};
use crate::node::{Node, Val, read_text};
use crate::{ImportError, Unmapped};

/// One provider turned target.
#[derive(Debug, Clone)]
pub(crate) struct Provider {
    /// The target's name: the label, else the id.
    pub(crate) name: String,
    pub(crate) spec: TargetSpec,
    /// The labels of the prompts it runs (`prompts:`); empty: every prompt.
    pub(crate) prompts: Vec<String>,
}

/// Reads the `providers` (or `targets`) value.
pub(crate) fn read(
    node: &Node,
    base: &Path,
    notes: &mut Vec<Unmapped>,
) -> Result<Vec<Provider>, ImportError> {
    let mut out = Vec::new();
    for item in node.items() {
        match &item.val {
            Val::Str(s) => match file_ref(s) {
                Some(reference) if !crate::files::is_code(reference) => {
                    for path in resolve(reference, base, item)? {
                        let text = read_text(&path, &item.at())?;
                        let root = Node::parse(&text, &path.display().to_string())?;
                        out.extend(read(&root, base, notes)?);
                    }
                }
                _ => out.extend(provider(s, None, None, item, notes)),
            },
            Val::Map(entries) => match item.get("id").and_then(Node::as_str) {
                Some(id) => {
                    let label = item.get("label").and_then(Node::scalar_text);
                    for (key, value) in entries {
                        if !matches!(key.as_str(), "id" | "label" | "config" | "prompts") {
                            notes.push(Unmapped::new(format!("provider field '{key}'"), value, ""));
                        }
                    }
                    let prompts: Vec<String> = item
                        .get("prompts")
                        .map(|p| p.items().iter().filter_map(|l| l.scalar_text()).collect())
                        .unwrap_or_default();
                    out.extend(
                        provider(id, label, item.get("config"), item, notes)
                            .map(|p| Provider { prompts, ..p }),
                    );
                }
                None if entries.len() == 1 => {
                    // `- openai:gpt-5-mini: {label, config}`
                    let (id, options) = &entries[0];
                    let label = options.get("label").and_then(Node::scalar_text);
                    out.extend(provider(id, label, options.get("config"), options, notes));
                }
                None => {
                    return Err(ImportError::shape(
                        item,
                        "providers",
                        "a provider object needs an `id`",
                    ));
                }
            },
            _ => {
                return Err(ImportError::shape(
                    item,
                    "providers",
                    "expected a provider id or object",
                ));
            }
        }
    }
    Ok(out)
}

fn provider(
    id: &str,
    label: Option<String>,
    config: Option<&Node>,
    node: &Node,
    notes: &mut Vec<Unmapped>,
) -> Option<Provider> {
    let name = label.unwrap_or_else(|| id.to_owned());
    let spec =
        if id.starts_with("http:") || id.starts_with("https:") || id == "http" || id == "https" {
            TargetSpec::Http(http(id, config, notes))
        } else if let Some(model) = model_id(id, config) {
            TargetSpec::Chat(chat(model, config, notes))
        } else {
            notes.push(Unmapped::new(
            format!("provider '{id}'"),
            node,
            "gavel targets are chat models (openai, anthropic, google, ollama) and http endpoints",
        ));
            return None;
        };
    Some(Provider {
        name,
        spec,
        prompts: Vec::new(),
    })
}

/// A gavel model id for a promptfoo provider id (`openai:chat:gpt-5-mini`,
/// `anthropic:messages:…`, `google:…`, `ollama:chat:…`); a custom
/// `apiBaseUrl`/`apiHost` makes it `openai-compatible:MODEL@URL`.
pub(crate) fn model_id(id: &str, config: Option<&Node>) -> Option<String> {
    let setting = |key: &str| config.and_then(|c| c.get(key)).and_then(Node::as_str);
    let base = setting("apiBaseUrl").map(str::to_owned).or_else(|| {
        setting("apiHost").map(|h| {
            if h.contains("://") {
                format!("{h}/v1")
            } else {
                format!("https://{h}/v1")
            }
        })
    });
    let (provider, rest) = id.split_once(':')?;
    let strip = |rest: &'static [&'static str], s: &str| -> String {
        rest.iter()
            .find_map(|p| s.strip_prefix(p))
            .unwrap_or(s)
            .to_owned()
    };
    let model = match provider {
        "openai" => strip(&["chat:", "responses:"], rest),
        "anthropic" => strip(&["messages:"], rest),
        "google" | "gemini" => strip(&["chat:"], rest),
        "ollama" => strip(&["chat:"], rest),
        _ => return None,
    };
    if model.is_empty() || (model.contains(':') && provider != "ollama") {
        return None;
    }
    Some(match (provider, base) {
        ("openai", Some(base)) => {
            format!("openai-compatible:{model}@{}", base.trim_end_matches('/'))
        }
        ("openai", None) => format!("openai:{model}"),
        ("anthropic", _) => format!("anthropic:{model}"),
        ("ollama", base) => {
            let host = setting("baseUrl").map(str::to_owned).or(base);
            let host = host.unwrap_or_else(|| "http://localhost:11434".into());
            let host = host.trim_end_matches('/').trim_end_matches("/v1");
            format!("openai-compatible:{model}@{host}/v1")
        }
        _ => format!("gemini:{model}"),
    })
}

fn chat(model: String, config: Option<&Node>, notes: &mut Vec<Unmapped>) -> ChatTarget {
    let mut target = ChatTarget {
        model,
        system: None,
        user: None,
        tools: Vec::new(),
        temperature: None,
        max_tokens: None,
        max_steps: None,
    };
    for (key, value) in config.map(Node::entries).unwrap_or_default() {
        match key.as_str() {
            "apiBaseUrl" | "apiHost" | "baseUrl" => {}
            "temperature" => target.temperature = value.as_f64(),
            "max_tokens" | "max_completion_tokens" | "maxOutputTokens" | "maxTokens" => {
                target.max_tokens = value
                    .as_f64()
                    .map(|n| n.clamp(1.0, f64::from(u32::MAX)) as u32);
            }
            "tools" => tools(value, &mut target.tools, notes),
            "apiKey" | "apiKeyEnvar" => notes.push(Unmapped::new(
                format!("provider config '{key}'"),
                value,
                "gavel reads keys from OPENAI_API_KEY, ANTHROPIC_API_KEY or GEMINI_API_KEY",
            )),
            _ => notes.push(Unmapped::new(format!("provider config '{key}'"), value, "")),
        }
    }
    target
}

/// OpenAI (`{type: function, function: {…}}`) or Anthropic (`{name, input_schema}`) tools.
fn tools(node: &Node, out: &mut Vec<ChatTool>, notes: &mut Vec<Unmapped>) {
    for tool in node.items() {
        let f = tool.get("function").unwrap_or(tool);
        match f.get("name").and_then(Node::as_str) {
            Some(name) => out.push(ChatTool {
                name: name.to_owned(),
                description: f
                    .get("description")
                    .and_then(Node::scalar_text)
                    .unwrap_or_default(),
                parameters: f
                    .get("parameters")
                    .or_else(|| f.get("input_schema"))
                    .map(Node::to_json),
                result: None,
            }),
            None => notes.push(Unmapped::new("provider tool", tool, "a tool needs a name")),
        }
    }
}

fn http(id: &str, config: Option<&Node>, notes: &mut Vec<Unmapped>) -> HttpTarget {
    let mut target = HttpTarget {
        url: if id.contains("://") {
            id.to_owned()
        } else {
            String::new()
        },
        method: None,
        headers: BTreeMap::new(),
        body: None,
        response: ResponseMap::default(),
        timeout_s: None,
        start: None,
        stream: None,
        restart: None,
        fork: None,
        retry: None,
    };
    let mut parsed_response = false;
    for (key, value) in config.map(Node::entries).unwrap_or_default() {
        match (key.as_str(), &value.val) {
            ("url", Val::Str(url)) => target.url = url.clone(),
            ("method", Val::Str(m)) => target.method = Some(m.to_uppercase()),
            ("headers", Val::Map(headers)) => {
                for (name, v) in headers {
                    if let Some(v) = v.scalar_text() {
                        target.headers.insert(name.clone(), env_refs(&v));
                    }
                }
            }
            ("body", _) => target.body = body(value, notes),
            ("transformResponse" | "responseParser", Val::Str(expr)) => match pointer(expr) {
                Some(p) => {
                    target.response.output = p;
                    parsed_response = true;
                }
                None => notes.push(Unmapped::new(
                    format!("http transformResponse '{expr}'"),
                    value,
                    "only `json.a.b[0].c` paths map (to a JSON pointer)",
                )),
            },
            _ => notes.push(Unmapped::new(
                format!("http provider config '{key}'"),
                value,
                "",
            )),
        }
    }
    if !parsed_response {
        let at = config.map_or_else(String::new, Node::at);
        notes.push(Unmapped {
            what: "http response parsing".into(),
            at,
            why: "no `transformResponse` path: gavel reads the answer at /output; set response.output".into(),
        });
    }
    target
}

/// `{{env.NAME}}` → `${NAME}` (gavel expands these from the environment).
fn env_refs(s: &str) -> String {
    let re = Regex::new(r"\{\{\s*env\.([A-Za-z_][A-Za-z0-9_]*)\s*\}\}").ok();
    match re {
        Some(re) => re.replace_all(s, "$${$1}").into_owned(),
        None => s.to_owned(),
    }
}

/// The body template with `{{prompt}}` as `{{ message }}` and other vars read
/// from the case context, where the converter puts the test's vars.
fn body(node: &Node, notes: &mut Vec<Unmapped>) -> Option<Value> {
    let json = match &node.val {
        Val::Str(s) => match serde_json::from_str::<Value>(s) {
            Ok(v) => v,
            Err(_) => {
                notes.push(Unmapped::new(
                    "http text body",
                    node,
                    "gavel sends a JSON body template",
                ));
                return None;
            }
        },
        _ => node.to_json(),
    };
    Some(rewrite(json))
}

fn rewrite(v: Value) -> Value {
    match v {
        Value::String(s) => Value::String(template(&s)),
        Value::Array(items) => Value::Array(items.into_iter().map(rewrite).collect()),
        Value::Object(map) => {
            Value::Object(map.into_iter().map(|(k, v)| (k, rewrite(v))).collect())
        }
        other => other,
    }
}

fn template(s: &str) -> String {
    let s = env_refs(s);
    let Ok(re) = Regex::new(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*") else {
        return s;
    };
    re.replace_all(&s, |c: &Captures<'_>| match &c[1] {
        "prompt" => "{{ message ".to_owned(),
        name => format!("{{{{ context.{name} "),
    })
    .into_owned()
}

/// `json.choices[0].message.content` → `/choices/0/message/content`.
fn pointer(expr: &str) -> Option<String> {
    let rest = expr.trim().strip_prefix("json")?;
    let re =
        Regex::new(r"^(?:\.[A-Za-z_][A-Za-z0-9_]*|\[\d+\]|\['[^']*'\]|\[\x22[^\x22]*\x22\])+$")
            .ok()?;
    if !re.is_match(rest) {
        return None;
    }
    let parts =
        Regex::new(r"\.([A-Za-z_][A-Za-z0-9_]*)|\[(\d+)\]|\['([^']*)'\]|\[\x22([^\x22]*)\x22\]")
            .ok()?;
    let mut out = String::new();
    for c in parts.captures_iter(rest) {
        let part = (1..=4).find_map(|i| c.get(i)).map(|m| m.as_str())?;
        out.push('/');
        out.push_str(&part.replace('~', "~0").replace('/', "~1"));
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn provider_ids_map_to_gavel_models() {
        assert_eq!(
            model_id("openai:gpt-5-mini", None).as_deref(),
            Some("openai:gpt-5-mini")
        );
        assert_eq!(
            model_id("openai:chat:gpt-4o", None).as_deref(),
            Some("openai:gpt-4o")
        );
        assert_eq!(
            model_id("anthropic:messages:claude-sonnet-4-5", None).as_deref(),
            Some("anthropic:claude-sonnet-4-5")
        );
        assert_eq!(
            model_id("google:gemini-2.5-pro", None).as_deref(),
            Some("gemini:gemini-2.5-pro")
        );
        assert_eq!(
            model_id("ollama:chat:llama3.1:8b", None).as_deref(),
            Some("openai-compatible:llama3.1:8b@http://localhost:11434/v1")
        );
        let config = Node::parse("apiBaseUrl: http://127.0.0.1:8080/v1\n", "c.yaml").unwrap();
        assert_eq!(
            model_id("openai:chat:mock", Some(&config)).as_deref(),
            Some("openai-compatible:mock@http://127.0.0.1:8080/v1")
        );
        assert_eq!(model_id("echo", None), None);
        assert_eq!(model_id("openai:completion:x:y", None), None);
        assert_eq!(model_id("bedrock:x", None), None);
    }

    #[test]
    fn http_templates_paths_and_env() {
        assert_eq!(template("{{prompt}}"), "{{ message }}");
        assert_eq!(template("{{ a | upper }}"), "{{ context.a | upper }}");
        assert_eq!(template("Q: {{ question }}"), "Q: {{ context.question }}");
        assert_eq!(env_refs("Bearer {{env.API_TOKEN}}"), "Bearer ${API_TOKEN}");
        assert_eq!(
            pointer("json.choices[0].message.content").as_deref(),
            Some("/choices/0/message/content")
        );
        assert_eq!(pointer("json['a/b'].c").as_deref(), Some("/a~1b/c"));
        assert_eq!(pointer("(json) => json.x"), None);
        assert_eq!(pointer("json"), None);
    }
}
