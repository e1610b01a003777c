//! How long accounts' credentials hold: failed sign-ins slow down, then lock,
//! per account name and per client address; API tokens expire. With the `cli`
//! feature, `gavel serve`'s flags.

use std::time::Duration;

use gavel_store::SignInSubject;

/// Failures of one subject free of any wait: an account name's, an address's.
const FREE_ACCOUNT: u32 = 3;
const FREE_ADDRESS: u32 = 10;
/// The longest back-off before the lock.
const MAX_BACKOFF: Duration = Duration::from_secs(60);
/// A subject's count restarts after this long without a failure.
pub(crate) const FORGET: Duration = Duration::from_secs(3600);

/// Sign-in limits and token lifetimes.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
pub struct AccountPolicy {
    /// Failed sign-ins for one account name before it is locked (after 3, each
    /// further try waits 1 s, 2 s, 4 s … up to a minute).
    #[cfg_attr(feature = "cli", arg(long, default_value_t = 10, value_name = "N"))]
    pub lock_after: u32,
    /// Failed sign-ins from one client address before it is locked (back-off
    /// after 10).
    #[cfg_attr(feature = "cli", arg(long, default_value_t = 50, value_name = "N"))]
    pub address_lock_after: u32,
    /// How long a lock lasts; an admin lifts it sooner (the users page, or
    /// `gavel users unlock`).
    #[cfg_attr(
        feature = "cli",
        arg(long, default_value_t = 15, value_name = "MINUTES")
    )]
    pub lock_minutes: u64,
    /// The first back-off; it doubles with each further failure.
    #[cfg_attr(feature = "cli", arg(skip = Duration::from_secs(1)))]
    pub backoff: Duration,
    /// Take the client address from the last `X-Forwarded-For` entry: only
    /// behind a reverse proxy that sets it (else clients could pick their own).
    #[cfg_attr(feature = "cli", arg(long))]
    pub trust_forwarded_for: bool,
    /// API tokens stop working this many days after they are made.
    #[cfg_attr(feature = "cli", arg(long, default_value_t = 90, value_name = "DAYS"))]
    pub token_days: u32,
}

impl Default for AccountPolicy {
    fn default() -> AccountPolicy {
        AccountPolicy {
            lock_after: 10,
            address_lock_after: 50,
            lock_minutes: 15,
            backoff: Duration::from_secs(1),
            trust_forwarded_for: false,
            token_days: 90,
        }
    }
}

impl AccountPolicy {
    /// How long a subject is refused after its `failures`-th failure in a row.
    pub(crate) fn block_for(&self, subject: &SignInSubject, failures: u32) -> Duration {
        if self.locks(subject, failures) {
            return self.lock();
        }
        let free = match subject {
            SignInSubject::Account(_) => FREE_ACCOUNT,
            SignInSubject::Address(_) => FREE_ADDRESS,
        };
        match failures.checked_sub(free + 1) {
            None => Duration::ZERO,
            Some(doublings) => self
                .backoff
                .saturating_mul(2u32.saturating_pow(doublings))
                .min(MAX_BACKOFF),
        }
    }

    /// Failures in a row that lock `subject`.
    pub(crate) fn limit(&self, subject: &SignInSubject) -> u32 {
        match subject {
            SignInSubject::Account(_) => self.lock_after,
            SignInSubject::Address(_) => self.address_lock_after,
        }
    }

    /// Whether `failures` in a row lock `subject`.
    pub(crate) fn locks(&self, subject: &SignInSubject, failures: u32) -> bool {
        failures >= self.limit(subject)
    }

    /// How long a lock lasts.
    pub(crate) fn lock(&self) -> Duration {
        Duration::from_secs(self.lock_minutes.saturating_mul(60))
    }

    /// How long a new API token works.
    pub(crate) fn token_ttl(&self) -> Duration {
        Duration::from_secs(u64::from(self.token_days) * 24 * 3600)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failures_back_off_then_lock() {
        let policy = AccountPolicy::default();
        let ana = SignInSubject::Account("ana".into());
        let waits: Vec<u64> = (1..=10)
            .map(|n| policy.block_for(&ana, n).as_secs())
            .collect();
        assert_eq!(waits, [0, 0, 0, 1, 2, 4, 8, 16, 32, 900]);
        let here = SignInSubject::Address("127.0.0.1".into());
        assert_eq!(policy.block_for(&here, 10), Duration::ZERO);
        assert_eq!(policy.block_for(&here, 18), MAX_BACKOFF);
        assert!(!policy.locks(&here, 49) && policy.locks(&here, 50));
    }
}
