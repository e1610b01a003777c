//! Web UI accounts: users with a role, signed-in sessions and per-user API
//! tokens. The store keeps only hashes (an argon2 PHC string for a password, a
//! SHA-256 for session cookies and tokens); hashing is the caller's.

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use serde::Serialize;

use crate::driver::epoch_ms;
use crate::{Store, StoreError};

/// What a user may do. Ordered: each role may do what the ones before it may.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// Reads everything, changes nothing.
    Viewer,
    /// Also writes cases, starts runs and labels executions.
    Editor,
    /// Also manages users.
    Admin,
}

impl Role {
    /// Every role, weakest first.
    pub const ALL: [Role; 3] = [Role::Viewer, Role::Editor, Role::Admin];

    /// The role's word, as stored and shown.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Viewer => "viewer",
            Role::Editor => "editor",
            Role::Admin => "admin",
        }
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Role {
    type Err = String;

    fn from_str(s: &str) -> Result<Role, String> {
        Role::ALL
            .into_iter()
            .find(|r| r.as_str() == s.trim())
            .ok_or_else(|| format!("`{s}` is not a role (viewer, editor or admin)"))
    }
}

/// An account.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct User {
    /// Its sign-in name, recorded with everything it changes.
    pub name: String,
    /// What it may do.
    pub role: Role,
    /// A disabled account cannot sign in; its sessions and tokens stop working.
    pub disabled: bool,
    /// When it was made (RFC 3339 UTC).
    pub created_at: String,
    /// Who made it.
    pub created_by: String,
}

/// An API token as listed (its hash is never read back).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ApiToken {
    /// Its id, for revoking.
    pub id: String,
    /// Whose it is.
    pub user: String,
    /// What it is for, as its maker put it.
    pub label: String,
    /// When it was made (RFC 3339 UTC).
    pub created_at: String,
    /// Who made it.
    pub created_by: String,
    /// When it stops working (RFC 3339 UTC).
    pub expires_at: String,
}

/// Longest user name accepted.
const MAX_NAME: usize = 64;

/// Checks a user name: 1 to 64 letters, digits, `.`, `_`, `-` or `@`.
pub fn check_user_name(name: &str) -> Result<(), StoreError> {
    let ok = !name.is_empty()
        && name.len() <= MAX_NAME
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "._-@".contains(c));
    if ok {
        Ok(())
    } else {
        Err(StoreError::invalid(
            "user name",
            format!(
                "`{}` must be 1 to {MAX_NAME} letters, digits, `.`, `_`, `-` or `@`",
                name.escape_default()
            ),
        ))
    }
}

type UserRow = (String, String, i64, String, String);

macro_rules! user_columns {
    () => {
        "u.name, u.role, u.disabled, u.created_at, u.created_by"
    };
}

fn user_of((name, role, disabled, created_at, created_by): UserRow) -> Result<User, StoreError> {
    let role = role
        .parse()
        .map_err(|e| StoreError::corrupt(format!("role of user `{name}`"), e))?;
    Ok(User {
        name,
        role,
        disabled: disabled != 0,
        created_at,
        created_by,
    })
}

impl Store {
    /// Adds an account. Refused when the name is taken or malformed.
    pub async fn create_user(
        &self,
        name: &str,
        role: Role,
        password_hash: &str,
        by: &str,
    ) -> Result<(), StoreError> {
        check_user_name(name)?;
        if self.user(name).await?.is_some() {
            return Err(StoreError::invalid(
                "user name",
                format!("a user `{name}` exists already"),
            ));
        }
        sqlx::query(
            "INSERT INTO users (name, role, password_hash, disabled, created_at, created_by) \
             VALUES ($1, $2, $3, 0, $4, $5)",
        )
        .bind(name)
        .bind(role.as_str())
        .bind(password_hash)
        .bind(gavel_core::now_rfc3339())
        .bind(by)
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    /// Every account, by name.
    pub async fn users(&self) -> Result<Vec<User>, StoreError> {
        let rows: Vec<UserRow> = sqlx::query_as(concat!(
            "SELECT ",
            user_columns!(),
            " FROM users u ORDER BY u.name"
        ))
        .fetch_all(&self.pool)
        .await?;
        rows.into_iter().map(user_of).collect()
    }

    /// Whether any account exists.
    pub async fn has_users(&self) -> Result<bool, StoreError> {
        let n: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM users")
            .fetch_one(&self.pool)
            .await?;
        Ok(n > 0)
    }

    /// One account.
    pub async fn user(&self, name: &str) -> Result<Option<User>, StoreError> {
        let row: Option<UserRow> = sqlx::query_as(concat!(
            "SELECT ",
            user_columns!(),
            " FROM users u WHERE u.name = $1"
        ))
        .bind(name)
        .fetch_optional(&self.pool)
        .await?;
        row.map(user_of).transpose()
    }

    /// An enabled account and its password hash, for signing in.
    pub async fn user_for_sign_in(&self, name: &str) -> Result<Option<(User, String)>, StoreError> {
        let row: Option<(String, String, i64, String, String, String)> = sqlx::query_as(concat!(
            "SELECT ",
            user_columns!(),
            ", u.password_hash FROM users u \
             WHERE u.name = $1 AND u.disabled = 0"
        ))
        .bind(name)
        .fetch_optional(&self.pool)
        .await?;
        row.map(|(n, r, d, at, by, hash)| Ok((user_of((n, r, d, at, by))?, hash)))
            .transpose()
    }

    /// Changes an account's role or disables it (and ends its sessions). The last
    /// enabled admin can be neither demoted nor disabled.
    pub async fn update_user(
        &self,
        name: &str,
        role: Role,
        disabled: bool,
    ) -> Result<(), StoreError> {
        let user = self
            .user(name)
            .await?
            .ok_or_else(|| StoreError::NotFound(format!("user `{name}`")))?;
        let stays_admin = role == Role::Admin && !disabled;
        if user.role == Role::Admin && !user.disabled && !stays_admin {
            let admins: i64 = sqlx::query_scalar(
                "SELECT COUNT(*) FROM users WHERE role = 'admin' AND disabled = 0",
            )
            .fetch_one(&self.pool)
            .await?;
            if admins <= 1 {
                return Err(StoreError::invalid(
                    format!("user `{name}`"),
                    "it is the last admin: make another admin first",
                ));
            }
        }
        let mut tx = self.begin_write().await?;
        sqlx::query("UPDATE users SET role = $2, disabled = $3 WHERE name = $1")
            .bind(name)
            .bind(role.as_str())
            .bind(i64::from(disabled))
            .execute(&mut *tx)
            .await?;
        if disabled {
            sqlx::query("DELETE FROM user_sessions WHERE user_name = $1")
                .bind(name)
                .execute(&mut *tx)
                .await?;
        }
        tx.commit().await?;
        Ok(())
    }

    /// Sets an account's password hash, ends its sessions and revokes its API
    /// tokens: whoever held the old password may have made one.
    pub async fn set_password(&self, name: &str, password_hash: &str) -> Result<(), StoreError> {
        let mut tx = self.begin_write().await?;
        let done = sqlx::query("UPDATE users SET password_hash = $2 WHERE name = $1")
            .bind(name)
            .bind(password_hash)
            .execute(&mut *tx)
            .await?;
        if done.rows_affected() == 0 {
            return Err(StoreError::NotFound(format!("user `{name}`")));
        }
        sqlx::query("DELETE FROM user_sessions WHERE user_name = $1")
            .bind(name)
            .execute(&mut *tx)
            .await?;
        sqlx::query("DELETE FROM api_tokens WHERE user_name = $1")
            .bind(name)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(())
    }

    /// Records a signed-in session under the hash of its cookie, for `ttl`.
    pub async fn create_session(
        &self,
        id_hash: &str,
        user: &str,
        ttl: Duration,
    ) -> Result<(), StoreError> {
        sqlx::query(
            "INSERT INTO user_sessions (id_hash, user_name, created_at, expires_ms) \
             VALUES ($1, $2, $3, $4)",
        )
        .bind(id_hash)
        .bind(user)
        .bind(gavel_core::now_rfc3339())
        .bind(epoch_ms(ttl))
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    /// The enabled account of an unexpired session.
    pub async fn session_user(&self, id_hash: &str) -> Result<Option<User>, StoreError> {
        let row: Option<UserRow> = sqlx::query_as(concat!(
            "SELECT ",
            user_columns!(),
            " FROM user_sessions s JOIN users u ON u.name = s.user_name \
             WHERE s.id_hash = $1 AND s.expires_ms > $2 AND u.disabled = 0"
        ))
        .bind(id_hash)
        .bind(epoch_ms(Duration::ZERO))
        .fetch_optional(&self.pool)
        .await?;
        row.map(user_of).transpose()
    }

    /// Ends a session (signing out), and drops every expired one.
    pub async fn end_session(&self, id_hash: &str) -> Result<(), StoreError> {
        sqlx::query("DELETE FROM user_sessions WHERE id_hash = $1 OR expires_ms <= $2")
            .bind(id_hash)
            .bind(epoch_ms(Duration::ZERO))
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    /// Stores a new API token of `user` under its hash, working for `ttl`;
    /// returns its id.
    pub async fn create_api_token(
        &self,
        user: &str,
        label: &str,
        token_hash: &str,
        by: &str,
        ttl: Duration,
    ) -> Result<String, StoreError> {
        if self.user(user).await?.is_none() {
            return Err(StoreError::NotFound(format!("user `{user}`")));
        }
        sqlx::query("DELETE FROM api_tokens WHERE expires_ms <= $1")
            .bind(epoch_ms(Duration::ZERO))
            .execute(&self.pool)
            .await?;
        let id = uuid::Uuid::now_v7().to_string();
        sqlx::query(
            "INSERT INTO api_tokens \
             (id, user_name, label, token_hash, created_at, created_by, expires_ms) \
             VALUES ($1, $2, $3, $4, $5, $6, $7)",
        )
        .bind(id.as_str())
        .bind(user)
        .bind(label)
        .bind(token_hash)
        .bind(gavel_core::now_rfc3339())
        .bind(by)
        .bind(epoch_ms(ttl))
        .execute(&self.pool)
        .await?;
        Ok(id)
    }

    /// A user's API tokens, oldest first, expired ones left out (tokens made
    /// before tokens expired, undated yet, are listed as expiring `-`).
    pub async fn api_tokens(&self, user: &str) -> Result<Vec<ApiToken>, StoreError> {
        let rows: Vec<(String, String, String, String, String, Option<i64>)> = sqlx::query_as(
            "SELECT id, user_name, label, created_at, created_by, expires_ms FROM api_tokens \
             WHERE user_name = $1 AND (expires_ms IS NULL OR expires_ms > $2) \
             ORDER BY created_at, id",
        )
        .bind(user)
        .bind(epoch_ms(Duration::ZERO))
        .fetch_all(&self.pool)
        .await?;
        Ok(rows
            .into_iter()
            .map(
                |(id, user, label, created_at, created_by, expires_ms)| ApiToken {
                    id,
                    user,
                    label,
                    created_at,
                    created_by,
                    expires_at: expires_ms
                        .map_or_else(|| "-".to_owned(), gavel_core::rfc3339_of_ms),
                },
            )
            .collect())
    }

    /// The enabled account an unexpired API token (by its hash) belongs to.
    pub async fn token_user(&self, token_hash: &str) -> Result<Option<User>, StoreError> {
        let row: Option<UserRow> = sqlx::query_as(concat!(
            "SELECT ",
            user_columns!(),
            " FROM api_tokens t JOIN users u ON u.name = t.user_name \
             WHERE t.token_hash = $1 AND t.expires_ms > $2 AND u.disabled = 0"
        ))
        .bind(token_hash)
        .bind(epoch_ms(Duration::ZERO))
        .fetch_optional(&self.pool)
        .await?;
        row.map(user_of).transpose()
    }

    /// Gives the tokens made before tokens expired (none has an expiry) `ttl`
    /// from now; returns how many there were.
    pub async fn date_undated_tokens(&self, ttl: Duration) -> Result<u64, StoreError> {
        let done = sqlx::query("UPDATE api_tokens SET expires_ms = $1 WHERE expires_ms IS NULL")
            .bind(epoch_ms(ttl))
            .execute(&self.pool)
            .await?;
        Ok(done.rows_affected())
    }

    /// Revokes one of `user`'s tokens; `NotFound` when it has no such token.
    pub async fn revoke_api_token(&self, user: &str, id: &str) -> Result<(), StoreError> {
        let done = sqlx::query("DELETE FROM api_tokens WHERE id = $1 AND user_name = $2")
            .bind(id)
            .bind(user)
            .execute(&self.pool)
            .await?;
        if done.rows_affected() == 0 {
            return Err(StoreError::NotFound(format!(
                "API token `{id}` of `{user}`"
            )));
        }
        Ok(())
    }

    /// Records who started a run (the web UI's signed-in user).
    pub async fn set_run_started_by(&self, run_id: &str, who: &str) -> Result<(), StoreError> {
        sqlx::query("UPDATE runs SET started_by = $2 WHERE id = $1")
            .bind(run_id)
            .bind(who)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    /// Who started a run from the web UI, if anyone did.
    pub async fn run_started_by(&self, run_id: &str) -> Result<Option<String>, StoreError> {
        let who: Option<Option<String>> =
            sqlx::query_scalar("SELECT started_by FROM runs WHERE id = $1")
                .bind(run_id)
                .fetch_optional(&self.pool)
                .await?;
        Ok(who.flatten())
    }
}
