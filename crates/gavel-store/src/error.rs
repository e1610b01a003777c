//! The store's one error type, and the URL masking that keeps passwords out of it.

/// Everything that can go wrong reading or writing the store.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// The run (or other record) does not exist.
    #[error("not found: {0}")]
    NotFound(String),
    /// A short run id matched more than one run.
    #[error("run id prefix `{prefix}` matches {candidates} runs; type more of the id")]
    Ambiguous {
        /// The prefix as given.
        prefix: String,
        /// How many runs it matched.
        candidates: usize,
    },
    /// The database could not be reached or created.
    #[error("cannot open the store at {url}")]
    Open {
        /// The URL, its password masked.
        url: String,
        /// Why.
        #[source]
        source: sqlx::Error,
    },
    /// The schema migrations failed (or the database has migrations this build lacks).
    #[error("cannot migrate the store at {url}")]
    Migrate {
        /// The URL, its password masked.
        url: String,
        /// Why.
        #[source]
        source: sqlx::migrate::MigrateError,
    },
    /// A query failed (the database's own message follows).
    #[error("store query failed: {0}")]
    Db(sqlx::Error),
    /// A statement on the direct SQLite connection failed. Writes that fail there
    /// are done again through the pool, whose error is the one reported.
    #[error("store query failed: {0}")]
    Sqlite(#[from] rusqlite::Error),
    /// A stored row holds something unreadable (bad JSON, an unknown status word).
    #[error("corrupt {what} in the store: {message}")]
    Corrupt {
        /// Which row and column.
        what: String,
        /// What is wrong with it.
        message: String,
    },
    /// A value cannot be stored (a number out of the database's range).
    #[error("cannot store {what}: {message}")]
    Invalid {
        /// Which value.
        what: String,
        /// Why.
        message: String,
    },
}

impl StoreError {
    pub(crate) fn corrupt(what: impl Into<String>, message: impl ToString) -> StoreError {
        StoreError::Corrupt {
            what: what.into(),
            message: message.to_string(),
        }
    }

    pub(crate) fn invalid(what: impl Into<String>, message: impl ToString) -> StoreError {
        StoreError::Invalid {
            what: what.into(),
            message: message.to_string(),
        }
    }
}

impl From<sqlx::Error> for StoreError {
    fn from(e: sqlx::Error) -> Self {
        StoreError::Db(e)
    }
}
