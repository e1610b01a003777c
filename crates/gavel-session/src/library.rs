//! Suites in and out of the store's case library, checked by the one loader.

use std::path::Path;

use gavel_store::{ImportSummary, Store, SuiteDoc};

use crate::SessionError;

/// Checks a suite file's text with the loader (a bad file is refused by
/// file:line:col and nothing is stored), then stores its cases, versioned by
/// `author`, under `name` (else the file's `name`, else its stem). Returns the
/// name used and what changed.
pub async fn import_suite(
    store: &Store,
    text: &str,
    path: &Path,
    name: Option<&str>,
    author: &str,
) -> Result<(String, ImportSummary), SessionError> {
    gavel_core::load::parse_suite_str(text, path).map_err(SessionError::Load)?;
    let doc = parse_doc(text, path)
        .map_err(|message| SessionError::config(path.display().to_string(), message))?;
    let name = name
        .map(str::to_owned)
        .or_else(|| {
            doc.head
                .get("name")
                .and_then(|n| n.as_str())
                .map(str::to_owned)
        })
        .or_else(|| path.file_stem().map(|s| s.to_string_lossy().into_owned()))
        .ok_or_else(|| SessionError::config("--name", "the suite needs a name"))?;
    let summary = store.import_suite(&name, &doc, author).await?;
    Ok((name, summary))
}

/// [`import_suite`] of the file at `path`, read as the loader reads suites: a
/// regular file of at most 64 MiB, UTF-8 (a bad byte is named by line and column).
pub async fn import_file(
    store: &Store,
    path: &Path,
    name: Option<&str>,
    author: &str,
) -> Result<(String, ImportSummary), SessionError> {
    let text = gavel_core::bounds::read_text(path)
        .map_err(|e| SessionError::config(path.display().to_string(), e.to_string()))?;
    import_suite(store, &text, path, name, author).await
}

/// Parses a suite file (JSON by extension, else YAML) into its document parts.
fn parse_doc(text: &str, path: &Path) -> Result<SuiteDoc, String> {
    let json = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("json"));
    let value: serde_json::Value = if json {
        serde_json::from_str(text.trim_start_matches('\u{feff}')).map_err(|e| e.to_string())?
    } else {
        serde_saphyr::from_str(text).map_err(|e| e.to_string())?
    };
    SuiteDoc::from_value(value).ok_or_else(|| {
        "a suite file is a mapping with `cases` (or seed 002's `examples`), a list of cases, or one case"
            .into()
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn import_reads_a_regular_file_only_and_names_it() {
        let store = Store::open("sqlite::memory:").await.unwrap();
        let err = import_file(&store, Path::new("/dev/zero"), None, "me")
            .await
            .unwrap_err();
        assert!(err.is_bad_input());
        assert_eq!(
            err.to_string(),
            "/dev/zero: not a regular file: it is a device, FIFO or socket"
        );
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("smoke.yaml");
        std::fs::write(&file, "cases:\n  - id: a\n    input: hi\n").unwrap();
        let (name, summary) = import_file(&store, &file, None, "me").await.unwrap();
        assert_eq!(
            (name.as_str(), summary.to_string().as_str()),
            ("smoke", "1 added, 0 changed, 0 unchanged, 0 removed")
        );
    }
}
