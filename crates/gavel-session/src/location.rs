//! Which store a front door opens.

use gavel_store::{DEFAULT_URL, Store, StoreError, mask_url};

/// The store a command works on: `--db` or `GAVEL_DATABASE_URL`, by default a
/// SQLite file in `.gavel/` under the working directory.
#[derive(Debug, Clone)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
pub struct StoreLocation {
    /// Store URL: sqlite://PATH or postgres://...
    #[cfg_attr(feature = "cli", arg(long, env = "GAVEL_DATABASE_URL", default_value = DEFAULT_URL, hide_env_values = true))]
    pub db: String,
}

impl Default for StoreLocation {
    fn default() -> Self {
        StoreLocation {
            db: DEFAULT_URL.to_owned(),
        }
    }
}

impl StoreLocation {
    /// Opens (and migrates) the store.
    pub async fn open(&self) -> Result<Store, StoreError> {
        Store::open(&self.db).await
    }

    /// The URL as shown to people: any password masked.
    pub fn shown(&self) -> String {
        mask_url(&self.db)
    }
}
