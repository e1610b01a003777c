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

/// The URL with any password replaced by `***`: the one in the user info
/// (`postgres://user:***@host/db`, even when the password holds `@`, `:` or `?`) and
/// any `password`-like query parameter.
pub fn mask_url(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return mask_query(url);
    };
    let rest = match rest.find('@') {
        Some(first_at) => {
            let path_start = rest[first_at..]
                .find('/')
                .map_or(rest.len(), |i| first_at + i);
            let last_at = rest[..path_start].rfind('@').unwrap_or(first_at);
            match rest[..last_at].find(':') {
                Some(colon) => format!("{}:***{}", &rest[..colon], mask_query(&rest[last_at..])),
                None => mask_query(rest),
            }
        }
        None => mask_query(rest),
    };
    format!("{scheme}://{rest}")
}

/// Masks the values of `password`-like query parameters.
fn mask_query(text: &str) -> String {
    let Some((head, query)) = text.split_once('?') else {
        return text.to_owned();
    };
    let pairs: Vec<String> = query
        .split('&')
        .map(|pair| match pair.split_once('=') {
            Some((key, _)) if key.to_ascii_lowercase().contains("password") => format!("{key}=***"),
            _ => pair.to_owned(),
        })
        .collect();
    format!("{head}?{}", pairs.join("&"))
}

#[cfg(test)]
mod tests {
    use super::mask_url;

    #[test]
    fn passwords_are_masked() {
        assert_eq!(
            mask_url("postgres://gavel:s3cr3t@db:5432/gavel"),
            "postgres://gavel:***@db:5432/gavel"
        );
        assert_eq!(
            mask_url("postgres://gavel:p@s?s:@db/gavel"),
            "postgres://gavel:***@db/gavel"
        );
        assert_eq!(mask_url("postgres://:s3cr3t@db"), "postgres://:***@db");
        assert_eq!(
            mask_url("postgresql://db/gavel?sslmode=require&password=s3cr3t"),
            "postgresql://db/gavel?sslmode=require&password=***"
        );
        assert_eq!(
            mask_url("postgres://gavel@db/gavel"),
            "postgres://gavel@db/gavel"
        );
        assert_eq!(
            mask_url("sqlite://.gavel/gavel.db?mode=rwc"),
            "sqlite://.gavel/gavel.db?mode=rwc"
        );
        assert_eq!(mask_url("sqlite::memory:"), "sqlite::memory:");
    }
}
