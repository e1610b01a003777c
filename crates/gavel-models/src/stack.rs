//! Composing the layers around a provider: [`layered`], and [`ModelPool`], which
//! builds each model once and shares limits per provider.

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::num::NonZeroU32;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use gavel_core::judge::{JudgeSettings, Price};
use tokio::sync::Semaphore;

use crate::layers::{
    Accounting, CacheMode, Cached, Concurrency, RateLimit, RateLimited, Retry, Timeout,
};
use crate::{
    CacheError, CacheStore, ChatModel, ErrorKind, ModelError, ModelId, ModelSource, Provider,
    SharedBuckets, price_for,
};

/// Per-call timeout when the suite sets none.
pub(crate) const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);
/// Retries of transient failures when the suite sets none.
pub(crate) const DEFAULT_MAX_RETRIES: u32 = 4;
/// Calls in flight per provider when the suite sets none.
pub(crate) const DEFAULT_CONCURRENCY: usize = 16;

/// How the layers around every model behave.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelSettings {
    /// Deadline of each try.
    pub timeout: Duration,
    /// Retries of rate-limited, transient and timed-out calls.
    pub max_retries: u32,
    /// Requests per minute per provider (none: unlimited).
    pub rpm: Option<u32>,
    /// Estimated prompt tokens per minute per provider (none: unlimited).
    pub tpm: Option<u32>,
    /// Calls in flight per provider (at least 1).
    pub concurrency: usize,
    /// How the cache is used.
    pub cache: CacheMode,
    /// Prices by model id, over the built-in table.
    pub price_overrides: BTreeMap<String, Price>,
}

impl Default for ModelSettings {
    fn default() -> Self {
        ModelSettings {
            timeout: DEFAULT_TIMEOUT,
            max_retries: DEFAULT_MAX_RETRIES,
            rpm: None,
            tpm: None,
            concurrency: DEFAULT_CONCURRENCY,
            cache: CacheMode::ReadWrite,
            price_overrides: BTreeMap::new(),
        }
    }
}

impl ModelSettings {
    /// The settings a suite's `judge:` section asks for, defaults filling the rest
    /// (timeout 60 s, 4 retries, 16 in flight, no RPM/TPM limit, cache read and
    /// written). A timeout that is not a positive number of seconds, and zero
    /// concurrency, fall back to the defaults; an RPM or TPM of 0 means no limit.
    /// The cache mode is not a suite setting: the command line sets it.
    pub fn from_judge(settings: &JudgeSettings) -> Self {
        let timeout = settings
            .timeout_s
            .and_then(|s| Duration::try_from_secs_f64(s).ok())
            .filter(|d| !d.is_zero())
            .unwrap_or(DEFAULT_TIMEOUT);
        ModelSettings {
            timeout,
            max_retries: settings.max_retries.unwrap_or(DEFAULT_MAX_RETRIES),
            rpm: settings.rpm.filter(|&n| n > 0),
            tpm: settings.tpm.filter(|&n| n > 0),
            concurrency: settings
                .concurrency
                .filter(|&n| n > 0)
                .unwrap_or(DEFAULT_CONCURRENCY),
            cache: CacheMode::ReadWrite,
            price_overrides: settings.prices.clone(),
        }
    }
}

/// The limits one provider's models share: requests and tokens per minute, and
/// calls in flight.
#[derive(Debug, Clone)]
struct Limits {
    requests: Option<Arc<RateLimit>>,
    tokens: Option<Arc<RateLimit>>,
    in_flight: Arc<Semaphore>,
}

impl Limits {
    /// This process's limits; with `shared`, the RPM and TPM limits take their
    /// cells from the buckets `rpm|KEY` and `tpm|KEY` of the shared store instead.
    fn new(settings: &ModelSettings, shared: Option<(&Arc<dyn SharedBuckets>, &str)>) -> Limits {
        let per_minute = |n: Option<u32>| n.and_then(NonZeroU32::new);
        let share = |limit: RateLimit, kind: &str| match shared {
            Some((buckets, key)) => limit.shared(buckets.clone(), format!("{kind}|{key}")),
            None => limit,
        };
        Limits {
            requests: per_minute(settings.rpm)
                .map(|rpm| Arc::new(share(RateLimit::requests_per_minute(rpm), "rpm"))),
            tokens: per_minute(settings.tpm)
                .map(|tpm| Arc::new(share(RateLimit::tokens_per_minute(tpm), "tpm"))),
            in_flight: Arc::new(Semaphore::new(
                settings.concurrency.clamp(1, Semaphore::MAX_PERMITS),
            )),
        }
    }
}

/// `provider` wrapped in every layer (see [`layers`](crate::layers)), with limits of
/// its own. To share limits between models, take them from a [`ModelPool`].
///
/// Without a cache store, the cache layer is left out, unless the mode is
/// [`CacheMode::Only`], where every call is then a cache miss.
///
/// ```
/// use std::sync::Arc;
/// use gavel_models::{ChatModel, ChatRequest, ChatResponse, Message, ModelError, ModelId,
///     ModelSettings, TokenUsage, layered};
///
/// #[derive(Debug)]
/// struct Echo(ModelId);
///
/// #[async_trait::async_trait]
/// impl ChatModel for Echo {
///     async fn chat(&self, request: &ChatRequest) -> Result<ChatResponse, ModelError> {
///         let usage = TokenUsage { input_tokens: 1_000_000, output_tokens: 0 };
///         Ok(ChatResponse { text: request.messages[0].content.clone(), usage, ..Default::default() })
///     }
///     fn id(&self) -> &ModelId { &self.0 }
/// }
///
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// let provider = Arc::new(Echo("openai:gpt-5-mini".parse().unwrap()));
/// let model = layered(provider, &ModelSettings::default(), None);
/// let request = ChatRequest { messages: vec![Message::user("hi")], ..Default::default() };
/// let answer = model.chat(&request).await?;
/// assert_eq!(answer.text, "hi");
/// assert_eq!(answer.cost_usd, Some(0.25)); // a million input tokens at the list price
/// # Ok::<(), ModelError>(())
/// # }).unwrap();
/// ```
pub fn layered(
    provider: Arc<dyn ChatModel>,
    settings: &ModelSettings,
    cache: Option<Arc<dyn CacheStore>>,
) -> Arc<dyn ChatModel> {
    stack(provider, settings, cache, &Limits::new(settings, None))
}

type Layer<'a> = Box<dyn FnOnce(Arc<dyn ChatModel>) -> Option<Arc<dyn ChatModel>> + 'a>;

/// The one place the order of the layers is set, outermost first. A layer that has
/// nothing to do (no cache, no rate limit) answers `None` and is left out.
fn stack(
    provider: Arc<dyn ChatModel>,
    settings: &ModelSettings,
    cache: Option<Arc<dyn CacheStore>>,
    limits: &Limits,
) -> Arc<dyn ChatModel> {
    let price = price_for(provider.id(), &settings.price_overrides);
    let outermost_first: [Layer<'_>; 6] = [
        Box::new(|inner| {
            let store = match (settings.cache, cache) {
                (CacheMode::Off, _) | (CacheMode::ReadWrite, None) => return None,
                (_, Some(store)) => store,
                (CacheMode::Only, None) => Arc::new(NoCache),
            };
            Some(Arc::new(Cached::new(inner, store, settings.cache)))
        }),
        Box::new(|inner| {
            (limits.requests.is_some() || limits.tokens.is_some()).then(|| {
                Arc::new(RateLimited::new(
                    inner,
                    limits.requests.clone(),
                    limits.tokens.clone(),
                )) as Arc<dyn ChatModel>
            })
        }),
        Box::new(|inner| Some(Arc::new(Concurrency::new(inner, limits.in_flight.clone())))),
        Box::new(|inner| Some(Arc::new(Retry::new(inner, settings.max_retries)))),
        Box::new(|inner| Some(Arc::new(Timeout::new(inner, settings.timeout)))),
        Box::new(|inner| Some(Arc::new(Accounting::new(inner, price)))),
    ];
    outermost_first
        .into_iter()
        .rev()
        .fold(provider, |inner, layer| {
            layer(inner.clone()).unwrap_or(inner)
        })
}

/// A cache with nothing in it: `--cache-only` without a store.
struct NoCache;

#[async_trait::async_trait]
impl CacheStore for NoCache {
    async fn get(&self, _key: &str) -> Result<Option<String>, CacheError> {
        Ok(None)
    }

    async fn put(&self, _key: &str, _model: &str, _value: &str) -> Result<(), CacheError> {
        Ok(())
    }
}

/// Builds a provider for a model id (or says why it cannot: no credentials…).
type Factory = dyn Fn(&ModelId) -> Result<Arc<dyn ChatModel>, ModelError> + Send + Sync;

/// Hands out one layered model per model id, built on first use, so every caller of
/// a model shares its limits.
///
/// Limits are per provider and endpoint (provider family plus base URL), not per
/// model: the suite's `rpm`, `tpm` and `concurrency` are documented per provider,
/// and one account's quota is what a run mostly exhausts. So
/// `openai:gpt-5` and `openai:gpt-5-mini` share one RPM limiter, one TPM budget
/// and one set of in-flight slots, while two `openai-compatible` servers (two base
/// URLs) each have their own.
///
/// Outcomes are kept too: an id that does not parse, or whose provider cannot be
/// built (no credentials), gives the same error on every call without retrying.
pub struct ModelPool {
    settings: ModelSettings,
    cache: Option<Arc<dyn CacheStore>>,
    shared: Option<Arc<dyn SharedBuckets>>,
    factory: Box<Factory>,
    state: Mutex<PoolState>,
}

#[derive(Default)]
struct PoolState {
    /// By id as written, and by its normal form (`google:` → `gemini:`).
    models: HashMap<String, Result<Arc<dyn ChatModel>, ModelError>>,
    limits: HashMap<(Provider, Option<String>), Limits>,
}

impl ModelPool {
    /// A pool building providers with `factory` and wrapping them per `settings`,
    /// caching answers in `cache` when given.
    pub fn new(
        settings: ModelSettings,
        cache: Option<Arc<dyn CacheStore>>,
        factory: impl Fn(&ModelId) -> Result<Arc<dyn ChatModel>, ModelError> + Send + Sync + 'static,
    ) -> Self {
        ModelPool {
            settings,
            cache,
            shared: None,
            factory: Box::new(factory),
            state: Mutex::new(PoolState::default()),
        }
    }

    /// The pool with its RPM and TPM limits held in `buckets`, shared with every
    /// other process using them: one bucket per provider and endpoint (its URL
    /// masked, see [`gavel_core::secrets::mask_url`]).
    pub fn with_shared_buckets(mut self, buckets: Arc<dyn SharedBuckets>) -> Self {
        self.shared = Some(buckets);
        self
    }

    /// The settings every model of the pool is layered with.
    pub fn settings(&self) -> &ModelSettings {
        &self.settings
    }

    /// The layered model for `id` (e.g. `openai:gpt-5-mini`), the same instance on
    /// every call. A bad id is a [`ErrorKind::Permanent`] error naming the problem;
    /// the factory's error (e.g. [`ErrorKind::NoCredentials`]) is returned as is.
    pub fn get(&self, id: &str) -> Result<Arc<dyn ChatModel>, ModelError> {
        let mut state = self
            .state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(found) = state.models.get(id) {
            return found.clone();
        }
        let outcome = match id.parse::<ModelId>() {
            Err(e) => Err(ModelError::new(ErrorKind::Permanent, e.to_string())),
            Ok(parsed) => {
                let normal = parsed.to_string();
                match state.models.get(&normal) {
                    Some(found) => found.clone(),
                    None => {
                        let built = (self.factory)(&parsed).map(|provider| {
                            let limits = state
                                .limits
                                .entry((parsed.provider, parsed.base_url.clone()))
                                .or_insert_with(|| {
                                    let key = format!(
                                        "{}|{}",
                                        parsed.provider.prefix(),
                                        parsed
                                            .base_url
                                            .as_deref()
                                            .map(gavel_core::secrets::mask_url)
                                            .unwrap_or_default()
                                    );
                                    Limits::new(
                                        &self.settings,
                                        self.shared.as_ref().map(|b| (b, key.as_str())),
                                    )
                                });
                            stack(provider, &self.settings, self.cache.clone(), limits)
                        });
                        state.models.insert(normal, built.clone());
                        built
                    }
                }
            }
        };
        state.models.insert(id.to_owned(), outcome.clone());
        outcome
    }
}

impl ModelSource for ModelPool {
    fn model(&self, id: &str) -> Result<Arc<dyn ChatModel>, ModelError> {
        self.get(id)
    }
}

impl fmt::Debug for ModelPool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let models: Vec<String> = self
            .state
            .lock()
            .map(|state| state.models.keys().cloned().collect())
            .unwrap_or_default();
        f.debug_struct("ModelPool")
            .field("settings", &self.settings)
            .field("cache", &self.cache.is_some())
            .field("shared", &self.shared.is_some())
            .field("models", &models)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_from_the_suite() {
        let defaults = ModelSettings::from_judge(&JudgeSettings::default());
        assert_eq!(defaults, ModelSettings::default());
        assert_eq!(defaults.timeout, Duration::from_secs(60));
        assert_eq!(defaults.max_retries, 4);
        assert_eq!(defaults.concurrency, 16);
        assert_eq!((defaults.rpm, defaults.tpm), (None, None));
        assert_eq!(defaults.cache, CacheMode::ReadWrite);

        let judge = JudgeSettings {
            timeout_s: Some(2.5),
            max_retries: Some(0),
            rpm: Some(30),
            tpm: Some(0),
            concurrency: Some(0),
            prices: BTreeMap::from([(
                "openai:x".to_owned(),
                Price {
                    input_per_mtok: 1.0,
                    output_per_mtok: 2.0,
                },
            )]),
            ..JudgeSettings::default()
        };
        let settings = ModelSettings::from_judge(&judge);
        assert_eq!(settings.timeout, Duration::from_millis(2500));
        assert_eq!(settings.max_retries, 0);
        assert_eq!(settings.rpm, Some(30));
        assert_eq!(settings.tpm, None);
        assert_eq!(settings.concurrency, 16);
        assert_eq!(settings.price_overrides.len(), 1);

        for bad in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            let judge = JudgeSettings {
                timeout_s: Some(bad),
                ..JudgeSettings::default()
            };
            assert_eq!(ModelSettings::from_judge(&judge).timeout, DEFAULT_TIMEOUT);
        }
    }
}
