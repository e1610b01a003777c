//! Accounts: passwords hashed with argon2 (Argon2id, the crate's default
//! parameters: 19 MiB a hash), checked on sign-in, and API tokens made and
//! stored as SHA-256. `gavel users add` and the admin's users page both go
//! through [`add_user`]. At most [`Hashing`]'s share of hashes run at once.

use std::sync::OnceLock;
use std::time::Duration;

use argon2::Argon2;
use argon2::password_hash::phc::PasswordHash;
use argon2::password_hash::{PasswordHasher, PasswordVerifier};
use gavel_store::{Role, Store, StoreError, User};
use tokio::sync::{Semaphore, SemaphorePermit};

use crate::auth;

/// Shortest password accepted, in characters.
pub const MIN_PASSWORD: usize = 8;
/// Longest password accepted, in bytes.
pub const MAX_PASSWORD: usize = 1024;
/// API tokens start with this, so that they are easy to spot in a leak.
const TOKEN_PREFIX: &str = "gvl_";
/// Most password hashes at once: each holds 19 MiB while it runs.
const MAX_HASHES: usize = 4;
/// How long a sign-in waits for its turn to hash before it is told to come back.
pub(crate) const HASH_WAIT: Duration = Duration::from_secs(5);
/// The `Retry-After` of a sign-in that found no turn.
pub(crate) const BUSY_RETRY_S: u64 = 2;

/// Why an account could not be made, changed or checked.
#[derive(Debug, thiserror::Error)]
pub enum AccountError {
    /// The password breaks a rule.
    #[error("password: {0}")]
    Password(String),
    /// The store refused or failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The password could not be read from the terminal or stdin.
    #[error("reading the password: {0}")]
    Read(#[from] std::io::Error),
    /// Hashing failed (the OS gave no randomness, or a worker thread died).
    #[error("hashing the password failed: {0}")]
    Hash(String),
    /// Too many passwords were being checked to take one more in time.
    #[error("the server is busy checking other sign-ins: try again in {BUSY_RETRY_S} s")]
    Busy,
}

/// A turn to hash a password: one of at most [`MAX_HASHES`] (fewer on fewer
/// cores) in this process, so a burst of sign-ins queues instead of holding
/// 19 MiB each at once.
pub(crate) struct Hashing {
    _turn: SemaphorePermit<'static>,
}

impl Hashing {
    fn turns() -> &'static Semaphore {
        static TURNS: OnceLock<Semaphore> = OnceLock::new();
        TURNS.get_or_init(|| {
            let cores = std::thread::available_parallelism().map_or(1, usize::from);
            Semaphore::new(cores.clamp(1, MAX_HASHES))
        })
    }

    /// A turn, however long it takes.
    async fn wait() -> Result<Hashing, AccountError> {
        let permit = Self::turns().acquire().await;
        permit
            .map(|turn| Hashing { _turn: turn })
            .map_err(|e| AccountError::Hash(e.to_string()))
    }

    /// A turn within `wait`, else [`AccountError::Busy`].
    pub(crate) async fn within(wait: Duration) -> Result<Hashing, AccountError> {
        tokio::time::timeout(wait, Self::wait())
            .await
            .map_err(|_| AccountError::Busy)?
    }
}

impl AccountError {
    /// Whether the name or password was at fault (the caller can fix it).
    pub fn is_bad_input(&self) -> bool {
        matches!(
            self,
            AccountError::Password(_) | AccountError::Store(StoreError::Invalid { .. })
        )
    }
}

/// Checks a password against the rules: 8 characters to 1024 bytes.
pub fn check_password(password: &str) -> Result<(), AccountError> {
    if password.chars().count() < MIN_PASSWORD {
        return Err(AccountError::Password(format!(
            "use at least {MIN_PASSWORD} characters"
        )));
    }
    if password.len() > MAX_PASSWORD {
        return Err(AccountError::Password(format!(
            "use at most {MAX_PASSWORD} bytes"
        )));
    }
    Ok(())
}

/// The argon2 PHC string of a password, hashed off the async threads.
pub(crate) async fn hash_password(password: &str) -> Result<String, AccountError> {
    check_password(password)?;
    let password = password.to_owned();
    let turn = Hashing::wait().await?;
    tokio::task::spawn_blocking(move || {
        let _turn = turn;
        Argon2::default()
            .hash_password(password.as_bytes())
            .map(|h| h.to_string())
            .map_err(|e| AccountError::Hash(e.to_string()))
    })
    .await
    .map_err(|e| AccountError::Hash(e.to_string()))?
}

/// Whether `password` matches the PHC string `hash`.
fn verify(password: &str, hash: &str) -> bool {
    PasswordHash::new(hash).is_ok_and(|h| {
        Argon2::default()
            .verify_password(password.as_bytes(), &h)
            .is_ok()
    })
}

/// A hash no password matches in practice, checked for unknown names so that
/// they take as long as known ones.
fn decoy_hash() -> &'static str {
    static DECOY: OnceLock<String> = OnceLock::new();
    DECOY.get_or_init(|| {
        let secret = auth::random_hex(32).unwrap_or_default();
        Argon2::default()
            .hash_password(secret.as_bytes())
            .map(|h| h.to_string())
            .unwrap_or_default()
    })
}

/// Makes an account, its password hashed; `by` is recorded as its maker.
pub async fn add_user(
    store: &Store,
    name: &str,
    role: Role,
    password: &str,
    by: &str,
) -> Result<(), AccountError> {
    gavel_store::check_user_name(name)?;
    let hash = hash_password(password).await?;
    store.create_user(name, role, &hash, by).await?;
    Ok(())
}

/// Sets an account's password (which ends its sessions).
pub(crate) async fn set_password(
    store: &Store,
    name: &str,
    password: &str,
) -> Result<(), AccountError> {
    let hash = hash_password(password).await?;
    store.set_password(name, &hash).await?;
    Ok(())
}

/// The enabled account whose password this is; `None` for a wrong name or
/// password (the same answer, after the same work, for both). Takes its turn
/// to hash; [`crate::throttle::sign_in`] is what handlers call.
pub(crate) async fn sign_in(
    store: &Store,
    name: &str,
    password: &str,
    turn: Hashing,
) -> Result<Option<User>, AccountError> {
    let found = if password.len() > MAX_PASSWORD {
        None
    } else {
        store.user_for_sign_in(name).await?
    };
    let password = password.to_owned();
    tokio::task::spawn_blocking(move || {
        let _turn = turn;
        match found {
            Some((user, hash)) => verify(&password, &hash).then_some(user),
            None => {
                verify(&password, decoy_hash());
                None
            }
        }
    })
    .await
    .map_err(|e| AccountError::Hash(e.to_string()))
}

/// Makes an API token for `user`, working for `ttl`: returns its id and the
/// token, which is shown once and stored only as its SHA-256.
pub(crate) async fn new_api_token(
    store: &Store,
    user: &str,
    label: &str,
    by: &str,
    ttl: Duration,
) -> Result<(String, String), AccountError> {
    let secret = auth::random_hex(32).map_err(|e| AccountError::Hash(e.to_string()))?;
    let token = format!("{TOKEN_PREFIX}{secret}");
    let label = match label.trim() {
        "" => "token",
        l => l,
    };
    let id = store
        .create_api_token(user, label, &auth::sha256_hex(&token), by, ttl)
        .await?;
    Ok((id, token))
}

impl axum::response::IntoResponse for AccountError {
    fn into_response(self) -> axum::response::Response {
        match self {
            AccountError::Store(e) => crate::WebError::from(e).into_response(),
            AccountError::Password(_) => {
                crate::WebError::BadRequest(self.to_string()).into_response()
            }
            AccountError::Hash(e) => crate::WebError::Internal(e).into_response(),
            AccountError::Read(e) => crate::WebError::Internal(e.to_string()).into_response(),
            AccountError::Busy => crate::WebError::Busy(BUSY_RETRY_S).into_response(),
        }
    }
}
