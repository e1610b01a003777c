//! gavel's local judge: a GGUF model run in-process through llama.cpp, for judging
//! with no API key and no data leaving the machine.
//!
//! A `local:` model id names a GGUF file by path or by an installed model's name
//! (found by `gavel-model-files`: `$GAVEL_MODELS`, then the Hugging Face cache;
//! never downloaded here), with options after `?` (see [`LocalOptions`]):
//!
//! ```no_run
//! use gavel_models::{ChatModel, ChatRequest, Message, OutputSchema};
//!
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let id = "local:gemma-3-270m-q4_k_m?threads=2&ctx=2048".parse().unwrap();
//! let model = gavel_local::provider(&id)?;
//! let request = ChatRequest {
//!     messages: vec![Message::user("Is 2 + 2 = 4? Answer as JSON.")],
//!     max_tokens: Some(64),
//!     schema: Some(OutputSchema {
//!         name: "verdict".into(),
//!         schema: serde_json::json!({
//!             "type": "object",
//!             "properties": { "pass": { "type": "boolean" } },
//!             "required": ["pass"],
//!         }),
//!     }),
//!     ..ChatRequest::default()
//! };
//! let answer = model.chat(&request).await?;
//! let verdict: serde_json::Value = serde_json::from_str(&answer.text).unwrap();
//! assert!(verdict["pass"].is_boolean());
//! # Ok::<(), gavel_models::ModelError>(())
//! # });
//! ```
//!
//! The chat template comes from the GGUF metadata; a base model, which has none,
//! gets a plain `User:` / `Assistant:` transcript. Answers to requests with an
//! output schema are constrained to it by llguidance, so they always parse.

mod bounded;
mod generate;
mod gguf;
mod model;
mod options;
mod prompt;
mod weights;

use std::sync::Arc;

pub use gguf::{GgufInfo, inspect};
pub use model::{LocalModel, Timings};
pub use options::{LocalOptions, LocalSpec, SpecError};

use gavel_models::{ChatModel, ModelError, ModelId};

/// The chat model for a `local:` id, as `gavel_models::provider` gives the
/// others: the file is found and checked now, loaded on the first call.
pub fn provider(id: &ModelId) -> Result<Arc<dyn ChatModel>, ModelError> {
    Ok(Arc::new(LocalModel::open(id)?))
}
