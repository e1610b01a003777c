//! `file://` references and globs, resolved against the config's folder.

use std::path::{Path, PathBuf};

use crate::ImportError;
use crate::node::Node;

/// Files one reference may match at most.
const MAX_MATCHES: usize = 10_000;

/// The path of a `file://` reference (`None` for other text).
pub(crate) fn file_ref(s: &str) -> Option<&str> {
    s.trim().strip_prefix("file://")
}

/// The files `reference` names (a path or a glob), relative to `base`, sorted.
/// A glob that matches nothing, or a missing file, is an error at `node`.
pub(crate) fn resolve(
    reference: &str,
    base: &Path,
    node: &Node,
) -> Result<Vec<PathBuf>, ImportError> {
    let joined = base.join(reference);
    let shown = joined.display().to_string();
    if !reference.contains(['*', '?', '[']) {
        return if joined.is_file() {
            Ok(vec![joined])
        } else {
            Err(ImportError::File {
                at: node.at(),
                path: shown,
                message: "no such file".into(),
            })
        };
    }
    let pattern = glob::glob(&shown)
        .map_err(|e| ImportError::shape(node, reference, format!("bad glob pattern: {e}")))?;
    let mut found: Vec<PathBuf> = pattern
        .filter_map(Result::ok)
        .filter(|p| p.is_file())
        .take(MAX_MATCHES + 1)
        .collect();
    if found.len() > MAX_MATCHES {
        return Err(ImportError::shape(
            node,
            reference,
            format!("the glob matches more than {MAX_MATCHES} files"),
        ));
    }
    if found.is_empty() {
        return Err(ImportError::File {
            at: node.at(),
            path: shown,
            message: "the glob matches no file".into(),
        });
    }
    found.sort();
    Ok(found)
}

/// The lowercase extension of a path, `""` when it has none.
pub(crate) fn extension(path: &Path) -> String {
    path.extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase)
        .unwrap_or_default()
}

/// Extensions of code promptfoo runs (JavaScript, TypeScript, Python): never run here.
pub(crate) fn is_code(path: &str) -> bool {
    let path = path.split(':').next().unwrap_or(path);
    [".js", ".cjs", ".mjs", ".ts", ".py"]
        .iter()
        .any(|e| path.ends_with(e))
}
