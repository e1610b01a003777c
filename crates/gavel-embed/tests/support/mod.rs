//! What the encoder tests share: finding the installed model, or skipping.

use gavel_embed::{EmbedderSpec, MiniLm};
use gavel_testkit::{Need, skip};

/// The installed all-MiniLM-L6-v2, or `None` after printing why the test is
/// skipped. Under CI (or `GAVEL_TEST_REQUIRE_MODELS=1`) a missing model fails
/// the test.
pub(crate) fn minilm() -> Option<MiniLm> {
    match EmbedderSpec::default().local() {
        Ok(model) => Some(model),
        Err(e) if e.is_missing() => {
            skip(Need::Models, format_args!("{e} (run scripts/setup)"));
            None
        }
        Err(e) => panic!("all-MiniLM-L6-v2 is required here: {e}"),
    }
}
