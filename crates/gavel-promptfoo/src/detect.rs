//! Telling a promptfoo config from a gavel suite, so `gavel run` and `gavel
//! validate` can name `gavel import promptfoo` instead of failing on its keys.

use std::path::Path;

/// Top-level keys only promptfoo configs have.
const PROMPTFOO_KEYS: &[&str] = &["prompts", "providers", "defaultTest", "tests"];

/// The formats promptfoo configs are read in by shape; other files (datasets,
/// JavaScript configs) only by name.
const CONFIG_EXTENSIONS: &[&str] = &["yaml", "yml", "json"];

/// Whether the file at `path` is a promptfoo config: named `promptfooconfig.*`
/// (unless it holds gavel `cases`), or a YAML or JSON file that
/// [`looks_like_promptfoo`]. A file that cannot be read as text (a directory, a
/// device, too large) is not.
pub fn is_promptfoo_file(path: &Path) -> bool {
    let named = path
        .file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.starts_with("promptfooconfig."));
    let config_format = path
        .extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| CONFIG_EXTENSIONS.contains(&e.to_ascii_lowercase().as_str()));
    if !named && !config_format {
        return false;
    }
    let Ok(text) = gavel_core::bounds::read_text(path) else {
        return false;
    };
    if named {
        !top_keys(&text).is_some_and(|keys| keys.iter().any(|k| k == "cases"))
    } else {
        looks_like_promptfoo(&text)
    }
}

/// True when `text` looks like a promptfoo config: a mapping with a top-level
/// `prompts`, `providers`, `defaultTest` or `tests` key and no gavel `cases`.
pub fn looks_like_promptfoo(text: &str) -> bool {
    top_keys(text).is_some_and(|keys| {
        let has = |key: &str| keys.iter().any(|k| k == key);
        !has("cases") && PROMPTFOO_KEYS.iter().any(|k| has(k))
    })
}

/// The top-level keys of a YAML or JSON mapping, read without building the
/// document: `gavel run` asks this of every suite file it is given, so it
/// must cost a small part of loading it. JSON: the object's keys, its values
/// skipped; YAML (or JSON that does not parse): the `key:` that lines start
/// with at column 0. `None` for a document that is a list.
fn top_keys(text: &str) -> Option<Vec<String>> {
    let body = text.trim_start_matches('\u{feff}').trim_start();
    if body.starts_with('[') || (body.starts_with('-') && !body.starts_with("---")) {
        return None;
    }
    if body.starts_with('{')
        && let Ok(Keys(keys)) = serde_json::from_str::<Keys>(body)
    {
        return Some(keys);
    }
    Some(
        text.lines()
            .filter(|line| {
                line.starts_with(|c: char| c.is_alphanumeric() || c == '"' || c == '\'' || c == '_')
            })
            .filter_map(|line| {
                let (key, _) = line.split_once(':')?;
                Some(key.trim_end().trim_matches(['"', '\'']).to_owned())
            })
            .collect(),
    )
}

/// A JSON object's keys, its values skipped.
struct Keys(Vec<String>);

impl<'de> serde::Deserialize<'de> for Keys {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Keys, D::Error> {
        struct Visit;
        impl<'de> serde::de::Visitor<'de> for Visit {
            type Value = Keys;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Keys, A::Error> {
                let mut keys = Vec::new();
                while let Some((key, serde::de::IgnoredAny)) = map.next_entry::<String, _>()? {
                    keys.push(key);
                }
                Ok(Keys(keys))
            }
        }
        d.deserialize_map(Visit)
    }
}

#[cfg(test)]
mod tests {
    use super::{is_promptfoo_file, looks_like_promptfoo};

    #[test]
    fn promptfoo_configs_are_told_from_gavel_suites() {
        assert!(looks_like_promptfoo(
            "prompts: [hi]\nproviders: [openai:gpt-5-mini]\n"
        ));
        assert!(looks_like_promptfoo("defaultTest:\n  assert: []\n"));
        assert!(looks_like_promptfoo("{\"providers\": [\"echo\"]}"));
        assert!(looks_like_promptfoo("prompts:\n  - [unclosed\n"));
        assert!(!looks_like_promptfoo("cases:\n  - input: hi\n"));
        assert!(!looks_like_promptfoo("- prompt: hi\n"));
        assert!(!looks_like_promptfoo("name: x\nprompt: hi\n"));
    }

    #[test]
    fn files_are_told_by_shape_or_by_name() {
        let dir = tempfile::tempdir().unwrap();
        let file = |name: &str, text: &str| {
            let path = dir.path().join(name);
            std::fs::write(&path, text).unwrap();
            path
        };
        assert!(is_promptfoo_file(&file("evals.yaml", "tests: []\n")));
        assert!(is_promptfoo_file(&file(
            "promptfooconfig.js",
            "module.exports = { prompts: ['hi'] };\n"
        )));
        assert!(is_promptfoo_file(&file(
            "promptfooconfig.yaml",
            "description: x\n"
        )));
        assert!(!is_promptfoo_file(&file(
            "promptfooconfig.yml",
            "cases:\n  - input: hi\n"
        )));
        assert!(!is_promptfoo_file(&file("rows.jsonl", "{\"tests\": 1}\n")));
        assert!(!is_promptfoo_file(&file("suite.yaml", "cases: []\n")));
        assert!(!is_promptfoo_file(dir.path()));
    }
}
