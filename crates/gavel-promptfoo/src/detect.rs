//! Telling a promptfoo config from a gavel suite, so `gavel run` and `gavel
//! validate` can name `gavel import promptfoo` instead of failing on its keys.

use std::path::Path;

use serde_json::Value;

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

/// The top-level keys of a YAML or JSON mapping; of a text that does not parse,
/// the `key:` its lines start with (quotes trimmed). `None` for a document
/// that is not a mapping.
fn top_keys(text: &str) -> Option<Vec<String>> {
    match serde_saphyr::from_str::<Value>(text) {
        Ok(Value::Object(map)) => Some(map.into_iter().map(|(k, _)| k).collect()),
        Ok(_) => None,
        Err(_) => Some(
            text.lines()
                .filter_map(|line| {
                    let (key, _) = line.trim_start_matches('"').split_once(':')?;
                    Some(key.trim_end().trim_end_matches('"').to_owned())
                })
                .collect(),
        ),
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
