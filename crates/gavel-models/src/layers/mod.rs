//! The layers every model call goes through, each a [`ChatModel`](crate::ChatModel)
//! wrapping another. [`layered`](crate::layered) composes them, outermost first:
//!
//! | layer | why there |
//! | --- | --- |
//! | [`Cached`] | outermost: a hit, or an identical call already in flight, spends no quota, no slot, no money |
//! | [`RateLimited`] | a call takes its RPM/TPM cells once, however often it is retried |
//! | [`Concurrency`] | a slot is held for the call and its retries |
//! | [`Retry`] | outside the timeout, so each try gets its own deadline; waits out Retry-After inside the limiter, taking no new cells |
//! | [`Timeout`] | per try |
//! | [`Accounting`] | prices and times the try that answered |
//!
//! Providers only classify their failures ([`ErrorKind`](crate::ErrorKind)); these
//! layers act on the classification.

mod accounting;
mod cache;
mod cache_key;
mod concurrency;
mod rate_limit;
mod retry;
mod timeout;

pub use accounting::{Accounting, cost_usd};
pub use cache::{CacheMode, Cached};
pub use cache_key::cache_key;
pub use concurrency::Concurrency;
pub use rate_limit::{RateLimit, RateLimited, estimate_prompt_tokens};
#[cfg(feature = "http")]
pub(crate) use retry::retry_transient;
pub use retry::{BASE_DELAY, MALFORMED_RETRIES, MAX_DELAY, MAX_RETRY_AFTER, Retry};
pub use timeout::Timeout;
