//! Where an mcp-agent session's conversation state is kept between turns.

use gavel_store::Store;

/// Saves and loads a session's state (serialized JSON) under (target, session id).
#[async_trait::async_trait]
pub trait Checkpoints: Send + Sync {
    /// The last state saved for the session, if any.
    async fn load(&self, target: &str, session_id: &str) -> Result<Option<String>, String>;
    /// Saves the session's state, replacing the earlier one.
    async fn save(&self, target: &str, session_id: &str, state: &str) -> Result<(), String>;
}

#[async_trait::async_trait]
impl Checkpoints for Store {
    async fn load(&self, target: &str, session_id: &str) -> Result<Option<String>, String> {
        self.checkpoint_get(target, session_id)
            .await
            .map_err(|e| format!("cannot load the checkpoint: {e}"))
    }

    async fn save(&self, target: &str, session_id: &str, state: &str) -> Result<(), String> {
        self.checkpoint_put(target, session_id, state)
            .await
            .map_err(|e| format!("cannot save the checkpoint: {e}"))
    }
}
