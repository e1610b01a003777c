//! Shared rate limits: GCRA buckets in the store, so that every process on it
//! (N `gavel worker`s on one PostgreSQL) holds one requests- or tokens-per-minute
//! limit between them. A take is one conditional upsert, atomic on both engines.
//!
//! Times are the callers' clocks (epoch microseconds): processes on several
//! machines are assumed to keep their clocks in sync (NTP); a skew of `s` lets a
//! machine run up to `s` ahead of its share.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::{Store, StoreError};

/// Microseconds in `d`, saturating.
fn micros(d: Duration) -> i64 {
    i64::try_from(d.as_micros()).unwrap_or(i64::MAX)
}

impl Store {
    /// Takes `n` cells of the bucket `key`, which frees one cell every `period`
    /// and holds at most `burst`: `None` when taken, `Some(wait)` when `n` cells
    /// are free only after `wait` (then nothing was taken). `n` is raised to 1
    /// and capped at `burst`.
    pub async fn take_rate_cells(
        &self,
        key: &str,
        period: Duration,
        burst: u32,
        n: u32,
    ) -> Result<Option<Duration>, StoreError> {
        let now = micros(
            SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .unwrap_or_default(),
        );
        let period = micros(period).max(1);
        let burst = i64::from(burst.max(1));
        let step = period.saturating_mul(i64::from(n).clamp(1, burst));
        let tolerance = period.saturating_mul(burst);
        // GCRA: the next arrival time moves on from max(tat, now) by `step`, as
        // long as it stays within `tolerance` of now.
        let taken = sqlx::query(
            "INSERT INTO rate_buckets (key, tat_us) VALUES ($1, $2 + $3) \
             ON CONFLICT (key) DO UPDATE SET tat_us = \
               (CASE WHEN rate_buckets.tat_us > $2 THEN rate_buckets.tat_us ELSE $2 END) + $3 \
             WHERE (CASE WHEN rate_buckets.tat_us > $2 THEN rate_buckets.tat_us ELSE $2 END) \
               + $3 - $2 <= $4",
        )
        .bind(key)
        .bind(now)
        .bind(step)
        .bind(tolerance)
        .execute(&self.pool)
        .await?;
        if taken.rows_affected() > 0 {
            return Ok(None);
        }
        let tat: Option<i64> = sqlx::query_scalar("SELECT tat_us FROM rate_buckets WHERE key = $1")
            .bind(key)
            .fetch_optional(&self.pool)
            .await?;
        let wait = tat.unwrap_or(now).saturating_add(step) - now - tolerance;
        Ok(Some(Duration::from_micros(
            u64::try_from(wait).unwrap_or(0).max(1),
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_bucket_gives_its_burst_then_says_how_long_to_wait() {
        let store = Store::open("sqlite::memory:").await.unwrap();
        let minute = Duration::from_secs(60);
        for _ in 0..3 {
            assert_eq!(
                store.take_rate_cells("rpm|x", minute, 3, 1).await.unwrap(),
                None
            );
        }
        let wait = store
            .take_rate_cells("rpm|x", minute, 3, 1)
            .await
            .unwrap()
            .unwrap();
        assert!(wait > Duration::from_secs(50) && wait <= minute, "{wait:?}");
        // Another key has its own bucket.
        assert_eq!(
            store.take_rate_cells("rpm|y", minute, 1, 5).await.unwrap(),
            None
        );
        assert!(
            store
                .take_rate_cells("rpm|y", minute, 1, 1)
                .await
                .unwrap()
                .is_some()
        );
    }
}
