//! What the encoder tests share: finding the installed model, or skipping.

use gavel_embed::{EmbedderSpec, MiniLm};

/// The installed all-MiniLM-L6-v2, or `None` after printing why the test is
/// skipped. With `GAVEL_TEST_REQUIRE_MODELS=1` (CI) a missing model fails the test.
pub(crate) fn minilm() -> Option<MiniLm> {
    match EmbedderSpec::default().local() {
        Ok(model) => Some(model),
        Err(e)
            if e.is_missing()
                && std::env::var("GAVEL_TEST_REQUIRE_MODELS").as_deref() != Ok("1") =>
        {
            eprintln!("skipped: {e}");
            None
        }
        Err(e) => panic!("all-MiniLM-L6-v2 is required here: {e}"),
    }
}
