//! Password checks within limits: a name or address blocked by its failed
//! sign-ins ([`crate::policy`]) is refused without a hash; every failure counts
//! against both; a success forgets the name's. Hashes take turns
//! ([`accounts::Hashing`]), so a burst of sign-ins cannot eat the memory.

use std::net::{IpAddr, Ipv6Addr, SocketAddr};
use std::time::Duration;

use axum::extract::ConnectInfo;
use axum::http::HeaderMap;
use gavel_store::{SignInFailures, SignInSubject, User, check_user_name};

use crate::AppState;
use crate::accounts::{self, AccountError, Hashing};
use crate::policy::FORGET;

/// How a password check went.
pub(crate) enum Attempt {
    /// The password is the account's.
    In(User),
    /// Wrong name or password.
    Wrong,
    /// Not tried: too many failures.
    Refused(Refusal),
}

/// Why a sign-in was not tried, and when to try again.
#[derive(Debug)]
pub(crate) struct Refusal {
    /// Whole seconds to wait (at least 1).
    pub(crate) retry_after: u64,
    /// For the person signing in.
    pub(crate) message: String,
}

/// Checks `password` for the account `name` asked from `address`, within the
/// server's limits.
pub(crate) async fn sign_in(
    state: &AppState,
    name: &str,
    password: &str,
    address: Option<IpAddr>,
) -> Result<Attempt, AccountError> {
    let mut subjects = Vec::with_capacity(2);
    // A name no account can have is counted only against the address.
    if check_user_name(name).is_ok() {
        subjects.push(SignInSubject::Account(name.to_owned()));
    }
    if let Some(address) = address {
        subjects.push(SignInSubject::Address(address_key(address)));
    }
    if let Some(refusal) = refusal(state, &subjects).await? {
        return Ok(Attempt::Refused(refusal));
    }
    let hashing = Hashing::within(accounts::HASH_WAIT).await?;
    // Failures recorded while this one waited its turn count too.
    if let Some(refusal) = refusal(state, &subjects).await? {
        return Ok(Attempt::Refused(refusal));
    }
    let user = accounts::sign_in(&state.store, name, password, hashing).await?;
    if let Some(user) = user {
        let account = subjects
            .iter()
            .find(|s| matches!(s, SignInSubject::Account(_)));
        if let Some(account) = account {
            state.store.clear_sign_in_failures(account).await?;
        }
        return Ok(Attempt::In(user));
    }
    let policy = &state.policy;
    for subject in &subjects {
        let recorded = state
            .store
            .record_sign_in_failure(subject, FORGET, |n| policy.block_for(subject, n))
            .await?;
        if recorded.failures == policy.limit(subject) {
            tracing::warn!(
                "sign-in locked for {} min after {} failures: {subject}",
                policy.lock_minutes,
                recorded.failures
            );
        }
    }
    Ok(Attempt::Wrong)
}

/// The refusal of the longest block among `subjects`, if any is blocked now.
async fn refusal(
    state: &AppState,
    subjects: &[SignInSubject],
) -> Result<Option<Refusal>, AccountError> {
    let now = now_ms();
    let failures = state.store.sign_in_failures(subjects).await?;
    let Some(worst) = failures
        .iter()
        .filter(|f| f.blocked_until_ms > now)
        .max_by_key(|f| f.blocked_until_ms)
    else {
        return Ok(None);
    };
    let wait_ms = u64::try_from(worst.blocked_until_ms - now).unwrap_or(0);
    let retry_after = wait_ms.div_ceil(1000).max(1);
    Ok(Some(Refusal {
        retry_after,
        message: message(state, worst, retry_after),
    }))
}

fn message(state: &AppState, blocked: &SignInFailures, wait_s: u64) -> String {
    let whose = match &blocked.subject {
        SignInSubject::Account(_) => "this name",
        SignInSubject::Address(_) => "your address",
    };
    if state.policy.locks(&blocked.subject, blocked.failures) {
        let minutes = wait_s.div_ceil(60);
        format!(
            "too many failed sign-ins for {whose}: locked for {minutes} min \
             (an admin can unlock it sooner)"
        )
    } else {
        format!("too many failed sign-ins for {whose}: try again in {wait_s} s")
    }
}

/// The client's address: the peer's, or behind a trusted proxy the last
/// `X-Forwarded-For` entry (the one the proxy added).
pub(crate) fn client_address(
    state: &AppState,
    peer: Option<&ConnectInfo<SocketAddr>>,
    headers: &HeaderMap,
) -> Option<IpAddr> {
    let forwarded = || {
        headers
            .get_all("x-forwarded-for")
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(','))
            .next_back()
            .and_then(|last| last.trim().parse::<IpAddr>().ok())
    };
    let from_proxy = state.policy.trust_forwarded_for.then(forwarded).flatten();
    from_proxy.or_else(|| peer.map(|p| p.0.ip()))
}

/// An address as sign-in failures count it: IPv4 whole, IPv6 by its /64 (one
/// host's usual share), IPv4-mapped IPv6 as IPv4.
pub fn address_key(address: IpAddr) -> String {
    match address.to_canonical() {
        IpAddr::V4(v4) => v4.to_string(),
        IpAddr::V6(v6) => {
            let bits = u128::from(v6) & !u128::from(u64::MAX);
            format!("{}/64", Ipv6Addr::from(bits))
        }
    }
}

fn now_ms() -> i64 {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or(Duration::ZERO);
    i64::try_from(now.as_millis()).unwrap_or(i64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ipv6_clients_count_by_their_64() {
        let a: IpAddr = "2001:db8:1:2:aaaa::1".parse().unwrap();
        assert_eq!(address_key(a), "2001:db8:1:2::/64");
        let mapped: IpAddr = "::ffff:10.0.0.7".parse().unwrap();
        assert_eq!(address_key(mapped), "10.0.0.7");
    }
}
