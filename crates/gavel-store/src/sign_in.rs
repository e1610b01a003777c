//! Failed sign-ins, counted per account name and per client address in the
//! store, so that every `gavel serve` on it slows down and locks out the same
//! password guessing. How many failures block for how long is the caller's.

use std::fmt;
use std::time::Duration;

use serde::Serialize;

use crate::driver::epoch_ms;
use crate::{Store, StoreError};

/// What failed sign-ins are counted against.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
#[serde(tag = "kind", content = "subject", rename_all = "lowercase")]
pub enum SignInSubject {
    /// A name typed at sign-in, whether or not an account has it (so that a
    /// lock tells nothing about which names exist).
    Account(String),
    /// A client's IP address, as text.
    Address(String),
}

impl SignInSubject {
    /// `account` or `address`, as stored.
    pub fn kind(&self) -> &'static str {
        match self {
            SignInSubject::Account(_) => "account",
            SignInSubject::Address(_) => "address",
        }
    }

    /// The name or address.
    pub fn subject(&self) -> &str {
        match self {
            SignInSubject::Account(s) | SignInSubject::Address(s) => s,
        }
    }

    fn of(kind: &str, subject: String) -> Result<SignInSubject, StoreError> {
        match kind {
            "account" => Ok(SignInSubject::Account(subject)),
            "address" => Ok(SignInSubject::Address(subject)),
            other => Err(StoreError::corrupt(
                "sign_in_failures.kind",
                format!("`{other}` is neither `account` nor `address`"),
            )),
        }
    }
}

impl fmt::Display for SignInSubject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} `{}`", self.kind(), self.subject())
    }
}

/// One subject's failed sign-ins.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SignInFailures {
    /// Whose.
    #[serde(flatten)]
    pub subject: SignInSubject,
    /// How many in a row (since the count last restarted).
    pub failures: u32,
    /// The latest, epoch milliseconds.
    pub last_ms: i64,
    /// Sign-ins are refused before this time, epoch milliseconds.
    pub blocked_until_ms: i64,
}

type Row = (String, String, i64, i64, i64);

fn failures_of(
    (kind, subject, failures, last_ms, blocked_until_ms): Row,
) -> Result<SignInFailures, StoreError> {
    Ok(SignInFailures {
        subject: SignInSubject::of(&kind, subject)?,
        failures: u32::try_from(failures).unwrap_or(u32::MAX),
        last_ms,
        blocked_until_ms,
    })
}

impl Store {
    /// The failures recorded against each of `subjects` that has any.
    pub async fn sign_in_failures(
        &self,
        subjects: &[SignInSubject],
    ) -> Result<Vec<SignInFailures>, StoreError> {
        let mut found = Vec::new();
        for subject in subjects {
            let row: Option<Row> = sqlx::query_as(
                "SELECT kind, subject, failures, last_ms, blocked_until_ms \
                 FROM sign_in_failures WHERE kind = $1 AND subject = $2",
            )
            .bind(subject.kind())
            .bind(subject.subject())
            .fetch_optional(&self.pool)
            .await?;
            found.extend(row.map(failures_of).transpose()?);
        }
        Ok(found)
    }

    /// Counts one more failure of `subject`, starting the count again when the
    /// last was `forget` ago or longer; `block(failures)` says how long the
    /// subject is then refused. Also drops the records of subjects that are
    /// neither blocked nor recent. Returns the new record.
    pub async fn record_sign_in_failure(
        &self,
        subject: &SignInSubject,
        forget: Duration,
        block: impl FnOnce(u32) -> Duration,
    ) -> Result<SignInFailures, StoreError> {
        let now = epoch_ms(Duration::ZERO);
        let forget_ms = i64::try_from(forget.as_millis()).unwrap_or(i64::MAX);
        let stale = now.saturating_sub(forget_ms);
        let mut tx = self.begin_write().await?;
        sqlx::query("DELETE FROM sign_in_failures WHERE last_ms <= $1 AND blocked_until_ms <= $2")
            .bind(stale)
            .bind(now)
            .execute(&mut *tx)
            .await?;
        let before: Option<(i64, i64)> = sqlx::query_as(
            "SELECT failures, last_ms FROM sign_in_failures WHERE kind = $1 AND subject = $2",
        )
        .bind(subject.kind())
        .bind(subject.subject())
        .fetch_optional(&mut *tx)
        .await?;
        let counted = before
            .filter(|&(_, last)| last > stale)
            .map_or(0, |(n, _)| n);
        let failures = u32::try_from(counted).unwrap_or(u32::MAX).saturating_add(1);
        let blocked_ms = i64::try_from(block(failures).as_millis()).unwrap_or(i64::MAX);
        let until = now.saturating_add(blocked_ms);
        sqlx::query(
            "INSERT INTO sign_in_failures (kind, subject, failures, last_ms, blocked_until_ms) \
             VALUES ($1, $2, $3, $4, $5) \
             ON CONFLICT (kind, subject) DO UPDATE SET failures = excluded.failures, \
             last_ms = excluded.last_ms, blocked_until_ms = excluded.blocked_until_ms",
        )
        .bind(subject.kind())
        .bind(subject.subject())
        .bind(i64::from(failures))
        .bind(now)
        .bind(until)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(SignInFailures {
            subject: subject.clone(),
            failures,
            last_ms: now,
            blocked_until_ms: until,
        })
    }

    /// Forgets `subject`'s failures (a good sign-in, or an admin lifting a
    /// lock); whether it had any.
    pub async fn clear_sign_in_failures(
        &self,
        subject: &SignInSubject,
    ) -> Result<bool, StoreError> {
        let done = sqlx::query("DELETE FROM sign_in_failures WHERE kind = $1 AND subject = $2")
            .bind(subject.kind())
            .bind(subject.subject())
            .execute(&self.pool)
            .await?;
        Ok(done.rows_affected() > 0)
    }

    /// Every subject whose sign-ins are refused now, longest blocked first.
    pub async fn blocked_sign_ins(&self) -> Result<Vec<SignInFailures>, StoreError> {
        let rows: Vec<Row> = sqlx::query_as(
            "SELECT kind, subject, failures, last_ms, blocked_until_ms FROM sign_in_failures \
             WHERE blocked_until_ms > $1 ORDER BY blocked_until_ms DESC, kind, subject",
        )
        .bind(epoch_ms(Duration::ZERO))
        .fetch_all(&self.pool)
        .await?;
        rows.into_iter().map(failures_of).collect()
    }
}
