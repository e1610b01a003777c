//! Where an mcp-agent session's conversation state is kept between turns.

use gavel_store::Store;

/// Saves and loads a session's state (serialized JSON) under (target, session id).
#[async_trait::async_trait]
pub trait Checkpoints: Send + Sync {
    /// The last state saved for the session, if any.
    async fn load(&self, target: &str, session_id: &str)
    -> Result<Option<String>, CheckpointError>;
    /// Saves the session's state, replacing the earlier one.
    async fn save(
        &self,
        target: &str,
        session_id: &str,
        state: &str,
    ) -> Result<(), CheckpointError>;
}

/// A checkpoint could not be loaded or saved.
#[derive(Debug, thiserror::Error)]
pub enum CheckpointError {
    /// Loading failed.
    #[error("cannot load the checkpoint: {0}")]
    Load(#[source] Box<dyn std::error::Error + Send + Sync>),
    /// Saving failed.
    #[error("cannot save the checkpoint: {0}")]
    Save(#[source] Box<dyn std::error::Error + Send + Sync>),
}

#[async_trait::async_trait]
impl Checkpoints for Store {
    async fn load(
        &self,
        target: &str,
        session_id: &str,
    ) -> Result<Option<String>, CheckpointError> {
        self.checkpoint_get(target, session_id)
            .await
            .map_err(|e| CheckpointError::Load(Box::new(e)))
    }

    async fn save(
        &self,
        target: &str,
        session_id: &str,
        state: &str,
    ) -> Result<(), CheckpointError> {
        self.checkpoint_put(target, session_id, state)
            .await
            .map_err(|e| CheckpointError::Save(Box::new(e)))
    }
}
