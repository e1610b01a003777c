//! What the gavel-local tests share: finding the bundled GGUF, or saying why a
//! test is skipped.
#![allow(dead_code, clippy::unwrap_used)]

use std::path::PathBuf;

/// The Gemma 3 270M GGUF (`scripts/setup` installs it), or `None` after printing
/// why the calling test is skipped. Under CI (or `GAVEL_TEST_REQUIRE_MODELS=1`)
/// a missing model fails the test instead.
pub(crate) fn gemma(test: &str) -> Option<PathBuf> {
    match gavel_model_files::locate(
        gavel_model_files::GEMMA_270M,
        gavel_model_files::ModelKind::Gguf,
    ) {
        Ok(found) => Some(found.path),
        Err(e) => {
            gavel_testkit::skip(
                gavel_testkit::Need::Models,
                format_args!("{test}: {e} (run scripts/setup)"),
            );
            None
        }
    }
}

/// A `local:` id for `path` with a short context and one thread, so tests stay quick on a busy machine.
pub(crate) fn id(path: &std::path::Path, extra: &str) -> gavel_models::ModelId {
    format!("local:{}?threads=1&ctx=1024{extra}", path.display())
        .parse()
        .unwrap()
}
