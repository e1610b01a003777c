//! One driver per run: the process executing or resuming a run holds a lease on
//! it, so a second `--resume` of the same run is refused instead of running the
//! same executions twice.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::{Store, StoreError};

/// Milliseconds since the Unix epoch, `ahead` from now.
pub(crate) fn epoch_ms(ahead: Duration) -> i64 {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    i64::try_from((now + ahead).as_millis()).unwrap_or(i64::MAX)
}

impl Store {
    /// Takes (or renews) the lease on driving `run_id` for `driver`, for `lease`;
    /// also from `dead`, a holder known to be gone. `Some(holder)` when another
    /// driver holds an unexpired lease.
    pub async fn drive_run(
        &self,
        run_id: &str,
        driver: &str,
        lease: Duration,
        dead: Option<&str>,
    ) -> Result<Option<String>, StoreError> {
        let taken = sqlx::query(
            "UPDATE runs SET driver = $2, driver_until_ms = $3 WHERE id = $1 \
             AND (driver IS NULL OR driver = $2 OR driver_until_ms < $4 OR driver = $5)",
        )
        .bind(run_id)
        .bind(driver)
        .bind(epoch_ms(lease))
        .bind(epoch_ms(Duration::ZERO))
        .bind(dead.unwrap_or(driver))
        .execute(&self.pool)
        .await?;
        if taken.rows_affected() > 0 {
            return Ok(None);
        }
        let holder: Option<Option<String>> =
            sqlx::query_scalar("SELECT driver FROM runs WHERE id = $1")
                .bind(run_id)
                .fetch_optional(&self.pool)
                .await?;
        match holder {
            None => Err(StoreError::NotFound(format!("run `{run_id}`"))),
            Some(holder) => Ok(Some(holder.unwrap_or_default())),
        }
    }

    /// Gives up driving `run_id` (when `driver` holds it).
    pub async fn release_run(&self, run_id: &str, driver: &str) -> Result<(), StoreError> {
        sqlx::query(
            "UPDATE runs SET driver = NULL, driver_until_ms = NULL WHERE id = $1 AND driver = $2",
        )
        .bind(run_id)
        .bind(driver)
        .execute(&self.pool)
        .await?;
        Ok(())
    }
}
