//! Each layer over a scripted mock model, then the composed stack and the pool.
//!
//! Timing tests run on tokio's paused clock: sleeps advance virtual time at once, so
//! the waits asserted here (to the millisecond) cost no real time.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use gavel_core::judge::Price;
use gavel_models::layers::{
    Accounting, Cached, Concurrency, RateLimit, RateLimited, Retry, Timeout, cache_key,
};
use gavel_models::{
    CacheError, CacheMode, CacheStore, ChatModel, ChatRequest, ChatResponse, ErrorKind, Message,
    ModelError, ModelId, ModelPool, ModelSettings, TokenUsage, layered,
};
use tokio::sync::Semaphore;
use tokio::time::Instant;

// ---------------------------------------------------------------- the mock model

/// What one call of the mock does; once the script is spent, calls answer at once.
#[derive(Debug)]
enum Step {
    Fail(ModelError),
    /// Sleeps, then answers.
    Slow(Duration),
    Answer(ChatResponse),
}

/// Counts calls, tracks how many are in flight (a tracker may be shared between
/// mocks), and follows a script.
#[derive(Debug)]
struct Mock {
    id: ModelId,
    calls: AtomicUsize,
    script: Mutex<VecDeque<Step>>,
    delay: Duration,
    in_flight: Arc<InFlight>,
    started: Mutex<Vec<Instant>>,
}

#[derive(Debug, Default)]
struct InFlight {
    now: AtomicUsize,
    max: AtomicUsize,
}

impl Mock {
    fn new(id: &str) -> Mock {
        Mock {
            id: id.parse().expect("mock id"),
            calls: AtomicUsize::new(0),
            script: Mutex::new(VecDeque::new()),
            delay: Duration::ZERO,
            in_flight: Arc::default(),
            started: Mutex::default(),
        }
    }

    fn script(self, steps: impl IntoIterator<Item = Step>) -> Mock {
        self.script.lock().expect("script").extend(steps);
        self
    }

    /// Every call takes `delay`.
    fn delay(mut self, delay: Duration) -> Mock {
        self.delay = delay;
        self
    }

    fn sharing(mut self, in_flight: &Arc<InFlight>) -> Mock {
        self.in_flight = in_flight.clone();
        self
    }

    fn calls(&self) -> usize {
        self.calls.load(Ordering::SeqCst)
    }

    fn started(&self) -> Vec<Instant> {
        self.started.lock().expect("started").clone()
    }
}

fn answer(n: usize) -> ChatResponse {
    ChatResponse {
        text: format!("answer {n}"),
        usage: TokenUsage {
            input_tokens: 1000,
            output_tokens: 500,
        },
        finish_reason: Some("stop".into()),
        ..ChatResponse::default()
    }
}

fn error(kind: ErrorKind) -> ModelError {
    ModelError::new(kind, format!("scripted {kind:?}"))
}

#[async_trait::async_trait]
impl ChatModel for Mock {
    async fn chat(&self, _request: &ChatRequest) -> Result<ChatResponse, ModelError> {
        let n = self.calls.fetch_add(1, Ordering::SeqCst) + 1;
        self.started.lock().expect("started").push(Instant::now());
        let now = self.in_flight.now.fetch_add(1, Ordering::SeqCst) + 1;
        self.in_flight.max.fetch_max(now, Ordering::SeqCst);
        let step = self.script.lock().expect("script").pop_front();
        tokio::time::sleep(self.delay).await;
        let result = match step {
            Some(Step::Fail(mut e)) => {
                e.message = format!("{} (call {n})", e.message);
                Err(e)
            }
            Some(Step::Slow(d)) => {
                tokio::time::sleep(d).await;
                Ok(answer(n))
            }
            Some(Step::Answer(r)) => Ok(r),
            None => Ok(answer(n)),
        };
        self.in_flight.now.fetch_sub(1, Ordering::SeqCst);
        result
    }

    fn id(&self) -> &ModelId {
        &self.id
    }
}

// ---------------------------------------------------------------- an in-memory cache

#[derive(Default)]
struct MemoryCache {
    entries: Mutex<HashMap<String, (String, String)>>,
    gets: AtomicUsize,
    puts: AtomicUsize,
    fail_get: bool,
    fail_put: bool,
    get_delay: Duration,
}

impl MemoryCache {
    fn gets(&self) -> usize {
        self.gets.load(Ordering::SeqCst)
    }
    fn puts(&self) -> usize {
        self.puts.load(Ordering::SeqCst)
    }
    fn len(&self) -> usize {
        self.entries.lock().expect("entries").len()
    }
    fn keys(&self) -> Vec<String> {
        self.entries
            .lock()
            .expect("entries")
            .keys()
            .cloned()
            .collect()
    }
}

#[async_trait::async_trait]
impl CacheStore for MemoryCache {
    async fn get(&self, key: &str) -> Result<Option<String>, CacheError> {
        self.gets.fetch_add(1, Ordering::SeqCst);
        tokio::time::sleep(self.get_delay).await;
        if self.fail_get {
            return Err(CacheError::new("disk on fire"));
        }
        let entries = self.entries.lock().expect("entries");
        Ok(entries.get(key).map(|(_, v)| v.clone()))
    }

    async fn put(&self, key: &str, model: &str, value: &str) -> Result<(), CacheError> {
        self.puts.fetch_add(1, Ordering::SeqCst);
        if self.fail_put {
            return Err(CacheError::new("disk full"));
        }
        self.entries
            .lock()
            .expect("entries")
            .insert(key.to_owned(), (model.to_owned(), value.to_owned()));
        Ok(())
    }
}

fn request(text: &str) -> ChatRequest {
    ChatRequest {
        messages: vec![Message::user(text)],
        temperature: Some(0.0),
        ..ChatRequest::default()
    }
}

fn cached(mock: &Arc<Mock>, store: &Arc<MemoryCache>, mode: CacheMode) -> Cached {
    Cached::new(mock.clone(), store.clone(), mode)
}

// ---------------------------------------------------------------- cache

#[tokio::test(start_paused = true)]
async fn a_hit_is_served_without_a_call_at_no_cost() {
    let mock = Arc::new(Mock::new("openai:gpt-5-mini"));
    let store = Arc::new(MemoryCache {
        get_delay: Duration::from_millis(7),
        ..MemoryCache::default()
    });
    let model = cached(&mock, &store, CacheMode::ReadWrite);

    let first = model.chat(&request("hi")).await.expect("first");
    assert!(!first.cached);
    let second = model.chat(&request("hi")).await.expect("second");
    assert_eq!(mock.calls(), 1, "the second answer came from the cache");
    assert!(second.cached);
    assert_eq!(second.cost_usd, Some(0.0));
    assert_eq!(second.latency_ms, 7, "the lookup's own latency");
    assert_eq!(
        (second.text.as_str(), second.usage),
        (first.text.as_str(), first.usage)
    );

    let (key, (model_name, _)) = store
        .entries
        .lock()
        .expect("entries")
        .iter()
        .next()
        .map(|(k, v)| (k.clone(), v.clone()))
        .expect("one entry");
    assert_eq!(model_name, "openai:gpt-5-mini");
    assert_eq!(key, cache_key(&mock.id, &request("hi")));
}

#[tokio::test]
async fn another_sample_is_another_key() {
    let mock = Arc::new(Mock::new("openai:gpt-5-mini"));
    let store = Arc::new(MemoryCache::default());
    let model = cached(&mock, &store, CacheMode::ReadWrite);
    let sample = |n| ChatRequest {
        sample: n,
        ..request("hi")
    };
    let a = model.chat(&sample(0)).await.expect("sample 0");
    let b = model.chat(&sample(1)).await.expect("sample 1");
    assert_eq!(mock.calls(), 2, "two samples are two real calls");
    assert_ne!(a.text, b.text);
    assert_eq!(store.len(), 2);
    let again = model.chat(&sample(1)).await.expect("sample 1 again");
    assert_eq!((mock.calls(), again.text, again.cached), (2, b.text, true));
    assert_ne!(
        cache_key(&mock.id, &sample(0)),
        cache_key(&mock.id, &sample(1))
    );
}

#[tokio::test]
async fn off_never_reads_nor_writes() {
    let mock = Arc::new(Mock::new("openai:gpt-5-mini"));
    let store = Arc::new(MemoryCache::default());
    let model = cached(&mock, &store, CacheMode::Off);
    for _ in 0..3 {
        assert!(!model.chat(&request("hi")).await.expect("answer").cached);
    }
    assert_eq!((mock.calls(), store.gets(), store.puts()), (3, 0, 0));
}

#[tokio::test]
async fn cache_only_serves_hits_and_fails_misses_without_calling() {
    let mock = Arc::new(Mock::new("openai:gpt-5-mini"));
    let store = Arc::new(MemoryCache::default());
    let only = cached(&mock, &store, CacheMode::Only);
    let miss = only.chat(&request("hi")).await.expect_err("a miss");
    assert_eq!(miss.kind, ErrorKind::CacheMiss);
    assert!(
        miss.message.contains("not in the cache (--cache-only)"),
        "{}",
        miss.message
    );
    assert_eq!((mock.calls(), store.puts()), (0, 0));

    cached(&mock, &store, CacheMode::ReadWrite)
        .chat(&request("hi"))
        .await
        .expect("fill");
    let hit = only.chat(&request("hi")).await.expect("a hit");
    assert!(hit.cached);
    assert_eq!(mock.calls(), 1);

    // A store that cannot be read is a miss, also under --cache-only.
    let broken = Arc::new(MemoryCache {
        fail_get: true,
        ..MemoryCache::default()
    });
    let err = cached(&mock, &broken, CacheMode::Only)
        .chat(&request("hi"))
        .await
        .expect_err("a miss");
    assert_eq!(err.kind, ErrorKind::CacheMiss);
    assert_eq!(mock.calls(), 1);
}

#[tokio::test]
async fn errors_and_refusals_are_never_cached() {
    let refusal = ChatResponse {
        finish_reason: Some("content_filter".into()),
        ..answer(0)
    };
    let mock = Arc::new(Mock::new("openai:gpt-5-mini").script([
        Step::Fail(error(ErrorKind::Transient)),
        Step::Answer(refusal),
    ]));
    let store = Arc::new(MemoryCache::default());
    let model = cached(&mock, &store, CacheMode::ReadWrite);
    let err = model.chat(&request("hi")).await.expect_err("scripted");
    assert_eq!(err.kind, ErrorKind::Transient);
    let refused = model.chat(&request("hi")).await.expect("refusal");
    assert_eq!(refused.finish_reason.as_deref(), Some("content_filter"));
    assert_eq!(store.puts(), 0);

    let good = model.chat(&request("hi")).await.expect("third call");
    assert_eq!((mock.calls(), store.puts(), good.cached), (3, 1, false));
    assert!(model.chat(&request("hi")).await.expect("hit").cached);
    assert_eq!(mock.calls(), 3);
}

#[tokio::test]
async fn a_broken_store_never_fails_the_call() {
    let mock = Arc::new(Mock::new("openai:gpt-5-mini"));
    let store = Arc::new(MemoryCache {
        fail_get: true,
        fail_put: true,
        ..MemoryCache::default()
    });
    let model = cached(&mock, &store, CacheMode::ReadWrite);
    for _ in 0..2 {
        assert!(!model.chat(&request("hi")).await.expect("answer").cached);
    }
    assert_eq!((mock.calls(), store.gets(), store.puts()), (2, 2, 2));

    // An unreadable entry is a miss, overwritten by the fresh answer.
    let store = Arc::new(MemoryCache::default());
    let key = cache_key(&mock.id, &request("hi"));
    store
        .put(&key, "openai:gpt-5-mini", "{not json")
        .await
        .expect("put");
    let fresh = cached(&mock, &store, CacheMode::ReadWrite)
        .chat(&request("hi"))
        .await
        .expect("answer");
    assert!(!fresh.cached);
    assert_eq!(mock.calls(), 3);
    assert!(
        store.entries.lock().expect("entries")[&key]
            .1
            .starts_with('{')
    );
    assert_eq!(store.keys(), vec![key]);
}

#[tokio::test(start_paused = true)]
async fn identical_calls_in_flight_make_one_call() {
    let mock = Arc::new(Mock::new("openai:gpt-5-mini").delay(Duration::from_millis(200)));
    let store = Arc::new(MemoryCache::default());
    let model = Arc::new(cached(&mock, &store, CacheMode::ReadWrite));
    let ask = |text: &'static str| {
        let model = model.clone();
        tokio::spawn(async move { model.chat(&request(text)).await })
    };
    let same: Vec<_> = (0..32).map(|_| ask("same")).collect();
    let other: Vec<_> = (0..3).map(|_| ask("other")).collect();
    let mut answers = Vec::new();
    for task in same.into_iter().chain(other) {
        answers.push(task.await.expect("task").expect("answer"));
    }
    assert_eq!(mock.calls(), 2, "one call per distinct request");
    let (paid, shared): (Vec<_>, Vec<_>) = answers.iter().partition(|a| !a.cached);
    assert_eq!((paid.len(), shared.len()), (2, 33));
    assert!(shared.iter().all(|a| a.cost_usd == Some(0.0)));
    assert_eq!(
        answers[..32]
            .iter()
            .map(|a| a.text.as_str())
            .collect::<std::collections::BTreeSet<_>>()
            .len(),
        1,
        "every waiter got the one answer"
    );
    assert_eq!(store.puts(), 2);

    // Nothing is held once answered: a later call is a plain cache hit.
    assert!(model.chat(&request("same")).await.expect("hit").cached);
    assert_eq!(mock.calls(), 2);
}

#[tokio::test(start_paused = true)]
async fn a_failed_call_in_flight_leaves_the_next_waiter_to_call() {
    let mock = Arc::new(
        Mock::new("openai:gpt-5-mini")
            .delay(Duration::from_millis(100))
            .script([Step::Fail(error(ErrorKind::Auth))]),
    );
    let store = Arc::new(MemoryCache::default());
    let model = Arc::new(cached(&mock, &store, CacheMode::ReadWrite));
    let tasks: Vec<_> = (0..3)
        .map(|_| {
            let model = model.clone();
            tokio::spawn(async move { model.chat(&request("hi")).await })
        })
        .collect();
    let mut results = Vec::new();
    for task in tasks {
        results.push(task.await.expect("task"));
    }
    let failed = results.iter().filter(|r| r.is_err()).count();
    let paid = results
        .iter()
        .filter(|r| r.as_ref().is_ok_and(|a| !a.cached))
        .count();
    assert_eq!((failed, paid, mock.calls()), (1, 1, 2), "{results:?}");

    // A cancelled call leaves its waiters to call the model themselves.
    let mock = Arc::new(Mock::new("openai:gpt-5-mini").delay(Duration::from_millis(100)));
    let model = Arc::new(cached(&mock, &store, CacheMode::ReadWrite));
    let first = {
        let model = model.clone();
        tokio::spawn(async move { model.chat(&request("cancelled")).await })
    };
    tokio::time::sleep(Duration::from_millis(10)).await;
    let second = {
        let model = model.clone();
        tokio::spawn(async move { model.chat(&request("cancelled")).await })
    };
    tokio::time::sleep(Duration::from_millis(10)).await;
    first.abort();
    let answer = second.await.expect("task").expect("answer");
    assert!(!answer.cached, "the waiter made the call");
    assert_eq!(mock.calls(), 2);
}

// ---------------------------------------------------------------- retry

#[tokio::test(start_paused = true)]
async fn retryable_errors_are_retried_up_to_the_limit() {
    for kind in [
        ErrorKind::Transient,
        ErrorKind::Timeout,
        ErrorKind::RateLimited,
    ] {
        let mock = Arc::new(
            Mock::new("openai:gpt-5-mini").script((0..10).map(|_| Step::Fail(error(kind)))),
        );
        let err = Retry::new(mock.clone(), 3)
            .chat(&request("hi"))
            .await
            .expect_err("always failing");
        assert_eq!(mock.calls(), 4, "{kind:?}: one try and three retries");
        assert_eq!(err.kind, kind);
        assert!(err.message.ends_with("(call 4)"), "the last error: {err}");
    }

    let mock = Arc::new(Mock::new("openai:gpt-5-mini").script([
        Step::Fail(error(ErrorKind::Transient)),
        Step::Fail(error(ErrorKind::Timeout)),
    ]));
    let ok = Retry::new(mock.clone(), 3)
        .chat(&request("hi"))
        .await
        .expect("third try answers");
    assert_eq!((mock.calls(), ok.text.as_str()), (3, "answer 3"));

    let mock =
        Arc::new(Mock::new("openai:gpt-5-mini").script([Step::Fail(error(ErrorKind::Transient))]));
    Retry::new(mock.clone(), 0)
        .chat(&request("hi"))
        .await
        .expect_err("no retries");
    assert_eq!(mock.calls(), 1);
}

#[tokio::test(start_paused = true)]
async fn other_errors_are_never_retried() {
    for kind in [
        ErrorKind::Auth,
        ErrorKind::Permanent,
        ErrorKind::NoCredentials,
        ErrorKind::CacheMiss,
    ] {
        let mock = Arc::new(Mock::new("openai:gpt-5-mini").script([Step::Fail(error(kind))]));
        let start = Instant::now();
        let err = Retry::new(mock.clone(), 4)
            .chat(&request("hi"))
            .await
            .expect_err("fails");
        assert_eq!((mock.calls(), err.kind), (1, kind));
        assert_eq!(start.elapsed(), Duration::ZERO, "no wait either");
    }
}

#[tokio::test(start_paused = true)]
async fn retry_after_is_honoured_and_capped() {
    let rate_limited =
        |after: Duration| Step::Fail(error(ErrorKind::RateLimited).retry_after(Some(after)));
    // The provider's 200 ms, not the 500 ms (+ jitter) backoff step.
    let mock =
        Arc::new(Mock::new("openai:gpt-5-mini").script([rate_limited(Duration::from_millis(200))]));
    let start = Instant::now();
    Retry::new(mock.clone(), 4)
        .chat(&request("hi"))
        .await
        .expect("second try answers");
    assert_eq!(start.elapsed(), Duration::from_millis(200));
    assert_eq!(
        mock.started()[1] - mock.started()[0],
        Duration::from_millis(200)
    );

    // Ten minutes asked, one minute waited.
    let mock =
        Arc::new(Mock::new("openai:gpt-5-mini").script([rate_limited(Duration::from_secs(600))]));
    let start = Instant::now();
    Retry::new(mock.clone(), 4)
        .chat(&request("hi"))
        .await
        .expect("second try answers");
    assert_eq!(start.elapsed(), Duration::from_secs(60));

    // Without Retry-After: exponential steps 0.5, 1, 2, 4 s, each plus up to itself
    // of jitter.
    let mock = Arc::new(
        Mock::new("openai:gpt-5-mini")
            .script((0..4).map(|_| Step::Fail(error(ErrorKind::Transient)))),
    );
    let start = Instant::now();
    Retry::new(mock.clone(), 4)
        .chat(&request("hi"))
        .await
        .expect("fifth try answers");
    let waited = start.elapsed();
    assert!(
        waited >= Duration::from_millis(7500) && waited < Duration::from_secs(15),
        "{waited:?}"
    );
    let started = mock.started();
    let gaps: Vec<Duration> = started.windows(2).map(|w| w[1] - w[0]).collect();
    for (gap, step) in gaps.iter().zip([500, 1000, 2000, 4000]) {
        let step = Duration::from_millis(step);
        assert!(*gap >= step && *gap < 2 * step, "{gaps:?}");
    }
}

// ---------------------------------------------------------------- timeout

#[tokio::test(start_paused = true)]
async fn each_try_has_its_own_deadline() {
    let mock =
        Arc::new(Mock::new("openai:gpt-5-mini").script([Step::Slow(Duration::from_secs(3600))]));
    let start = Instant::now();
    let err = Timeout::new(mock.clone(), Duration::from_millis(1500))
        .chat(&request("hi"))
        .await
        .expect_err("too slow");
    assert_eq!(err.kind, ErrorKind::Timeout);
    assert_eq!(err.message, "openai:gpt-5-mini: timed out after 1.5s");
    assert_eq!(start.elapsed(), Duration::from_millis(1500));

    // Inside the retry layer: the hung try times out, the next one answers.
    let mock = Arc::new(Mock::new("openai:gpt-5-mini").script([
        Step::Slow(Duration::from_secs(3600)),
        Step::Slow(Duration::from_secs(2)),
    ]));
    let timeout: Arc<dyn ChatModel> = Arc::new(Timeout::new(mock.clone(), Duration::from_secs(5)));
    let start = Instant::now();
    let ok = Retry::new(timeout, 2)
        .chat(&request("hi"))
        .await
        .expect("second try answers");
    assert_eq!((mock.calls(), ok.text.as_str()), (2, "answer 2"));
    let waited = start.elapsed();
    // 5 s deadline + a 0.5-1 s backoff step + 2 s answer.
    assert!(
        waited >= Duration::from_millis(7500) && waited < Duration::from_secs(8),
        "{waited:?}"
    );
}

// ---------------------------------------------------------------- concurrency

#[tokio::test(start_paused = true)]
async fn in_flight_calls_never_exceed_the_bound() {
    let mock = Arc::new(Mock::new("openai:gpt-5-mini").delay(Duration::from_millis(100)));
    let model = Arc::new(Concurrency::new(mock.clone(), Arc::new(Semaphore::new(3))));
    let start = Instant::now();
    let calls: Vec<_> = (0..20)
        .map(|i| {
            let model = model.clone();
            tokio::spawn(async move { model.chat(&request(&format!("q{i}"))).await })
        })
        .collect();
    for call in calls {
        call.await.expect("join").expect("answer");
    }
    assert_eq!(mock.calls(), 20);
    assert_eq!(mock.in_flight.max.load(Ordering::SeqCst), 3);
    // 20 calls of 100 ms, 3 at a time: 7 waves.
    assert_eq!(start.elapsed(), Duration::from_millis(700));
}

// ---------------------------------------------------------------- rate limit

#[tokio::test(start_paused = true)]
async fn requests_per_minute_are_spaced_evenly() {
    let mock = Arc::new(Mock::new("openai:gpt-5-mini"));
    let rpm = Arc::new(RateLimit::requests_per_minute(
        60.try_into().expect("nonzero"),
    ));
    let model = Arc::new(RateLimited::new(mock.clone(), Some(rpm), None));
    let start = Instant::now();
    let calls: Vec<_> = (0..5)
        .map(|_| {
            let model = model.clone();
            tokio::spawn(async move { model.chat(&request("hi")).await })
        })
        .collect();
    for call in calls {
        call.await.expect("join").expect("answer");
    }
    let offsets: Vec<u128> = mock
        .started()
        .iter()
        .map(|t| (*t - start).as_millis())
        .collect();
    assert_eq!(offsets, [0, 1000, 2000, 3000, 4000]);
}

#[tokio::test(start_paused = true)]
async fn tokens_per_minute_wait_for_the_estimated_prompt() {
    let mock = Arc::new(Mock::new("openai:gpt-5-mini"));
    let tpm = Arc::new(RateLimit::tokens_per_minute(
        1000.try_into().expect("nonzero"),
    ));
    let model = RateLimited::new(mock.clone(), None, Some(tpm));
    let big = request(&"x".repeat(2000)); // ~500 tokens
    let start = Instant::now();
    for _ in 0..3 {
        model.chat(&big).await.expect("answer");
    }
    let offsets: Vec<u128> = mock
        .started()
        .iter()
        .map(|t| (*t - start).as_millis())
        .collect();
    // Two fit the minute's budget; the third waits for 500 tokens: 30 s.
    assert_eq!(offsets, [0, 0, 30_000]);
}

// ---------------------------------------------------------------- accounting

#[tokio::test(start_paused = true)]
async fn accounting_prices_usage_and_measures_latency() {
    let price = Price {
        input_per_mtok: 1.0,
        output_per_mtok: 2.0,
    };
    let mock = Arc::new(
        Mock::new("openai-compatible:x@http://127.0.0.1:1/v1").delay(Duration::from_millis(250)),
    );
    let answer = Accounting::new(mock.clone(), Some(price))
        .chat(&request("hi"))
        .await
        .expect("answer");
    // 1000 input tokens at $1/M + 500 output at $2/M.
    assert_eq!(answer.cost_usd, Some(0.002));
    assert_eq!(answer.latency_ms, 250);

    let told = ChatResponse {
        latency_ms: 42,
        ..answer_with_cost(None)
    };
    let mock = Arc::new(
        Mock::new("openai-compatible:x@http://127.0.0.1:1/v1")
            .script([Step::Answer(told)])
            .delay(Duration::from_millis(250)),
    );
    let unpriced = Accounting::new(mock, None)
        .chat(&request("hi"))
        .await
        .expect("answer");
    assert_eq!(unpriced.cost_usd, None, "no price: cost unknown");
    assert_eq!(
        unpriced.latency_ms, 42,
        "the provider's own latency is kept"
    );
}

fn answer_with_cost(cost: Option<f64>) -> ChatResponse {
    ChatResponse {
        cost_usd: cost,
        ..answer(0)
    }
}

// ---------------------------------------------------------------- the composed stack

fn settings() -> ModelSettings {
    ModelSettings {
        timeout: Duration::from_secs(5),
        max_retries: 4,
        rpm: Some(60),
        ..ModelSettings::default()
    }
}

#[tokio::test(start_paused = true)]
async fn a_cache_hit_takes_no_rate_limit_slot() {
    let mock = Arc::new(Mock::new("openai:gpt-5-mini"));
    let store = Arc::new(MemoryCache::default());
    let model = layered(mock.clone(), &settings(), Some(store.clone()));
    let start = Instant::now();
    let first = model.chat(&request("a")).await.expect("miss");
    for _ in 0..10 {
        assert!(model.chat(&request("a")).await.expect("hit").cached);
    }
    assert_eq!(
        start.elapsed(),
        Duration::ZERO,
        "hits never wait for the limiter"
    );
    model.chat(&request("b")).await.expect("miss");
    // 60 RPM: the second real call takes the next slot, 1 s after the first; ten
    // hits in between took none.
    assert_eq!(start.elapsed(), Duration::from_secs(1));
    assert_eq!(mock.calls(), 2);
    // Accounting ran inside: the real call was priced (gpt-5-mini's list price),
    // the hit is free.
    assert_eq!(first.cost_usd, Some(0.00125));
}

#[tokio::test(start_paused = true)]
async fn a_retried_call_is_cached_once_and_limited_once() {
    let mock = Arc::new(Mock::new("openai:gpt-5-mini").script([
        Step::Fail(error(ErrorKind::RateLimited).retry_after(Some(Duration::from_millis(200)))),
        Step::Fail(error(ErrorKind::Transient).retry_after(Some(Duration::from_millis(300)))),
    ]));
    let store = Arc::new(MemoryCache::default());
    let model = layered(mock.clone(), &settings(), Some(store.clone()));
    let start = Instant::now();
    let ok = model.chat(&request("a")).await.expect("third try answers");
    // Retries inside the limiter wait out Retry-After only (0.2 + 0.3 s), not the
    // 1 s a new RPM slot would take.
    assert_eq!(start.elapsed(), Duration::from_millis(500));
    assert_eq!((mock.calls(), ok.text.as_str()), (3, "answer 3"));
    // The cache saw one call: one lookup, one entry.
    assert_eq!((store.gets(), store.puts()), (1, 1));
    let hit = model.chat(&request("a")).await.expect("hit");
    assert_eq!(
        (hit.cached, hit.text.as_str(), mock.calls()),
        (true, "answer 3", 3)
    );
}

#[tokio::test(start_paused = true)]
async fn the_stack_times_out_each_try_and_retries_it() {
    let mock =
        Arc::new(Mock::new("openai:gpt-5-mini").script([Step::Slow(Duration::from_secs(3600))]));
    let model = layered(mock.clone(), &settings(), None);
    let ok = model.chat(&request("a")).await.expect("second try answers");
    assert_eq!((mock.calls(), ok.text.as_str()), (2, "answer 2"));

    let mock = Arc::new(
        Mock::new("openai:gpt-5-mini")
            .script((0..10).map(|_| Step::Slow(Duration::from_secs(3600)))),
    );
    let model = layered(
        mock.clone(),
        &ModelSettings {
            max_retries: 2,
            ..settings()
        },
        None,
    );
    let err = model
        .chat(&request("a"))
        .await
        .expect_err("every try hangs");
    assert_eq!(err.kind, ErrorKind::Timeout);
    assert_eq!(mock.calls(), 3);
}

#[tokio::test]
async fn cache_modes_through_the_stack() {
    let mock = Arc::new(Mock::new("openai:gpt-5-mini"));
    let only = ModelSettings {
        cache: CacheMode::Only,
        ..ModelSettings::default()
    };
    let err = layered(mock.clone(), &only, None)
        .chat(&request("a"))
        .await
        .expect_err("no store, cache only");
    assert_eq!(err.kind, ErrorKind::CacheMiss);

    let store = Arc::new(MemoryCache::default());
    let off = ModelSettings {
        cache: CacheMode::Off,
        ..ModelSettings::default()
    };
    layered(mock.clone(), &off, Some(store.clone()))
        .chat(&request("a"))
        .await
        .expect("answer");
    assert_eq!((mock.calls(), store.gets(), store.puts()), (1, 0, 0));
}

// ---------------------------------------------------------------- the pool

#[tokio::test(start_paused = true)]
async fn the_pool_builds_each_model_once_and_shares_limits_per_provider() {
    let built = Arc::new(AtomicUsize::new(0));
    let openai = Arc::new(InFlight::default());
    let local_a = Arc::new(InFlight::default());
    let local_b = Arc::new(InFlight::default());
    let factory = {
        let built = built.clone();
        let (openai, local_a, local_b) = (openai.clone(), local_a.clone(), local_b.clone());
        move |id: &ModelId| -> Result<Arc<dyn ChatModel>, ModelError> {
            built.fetch_add(1, Ordering::SeqCst);
            let in_flight = match id.base_url.as_deref() {
                None if id.model == "secret" => {
                    return Err(ModelError::new(
                        ErrorKind::NoCredentials,
                        "OPENAI_API_KEY is not set",
                    ));
                }
                None => &openai,
                Some(url) if url.ends_with(":1/v1") => &local_a,
                Some(_) => &local_b,
            };
            Ok(Arc::new(
                Mock::new(&id.to_string())
                    .delay(Duration::from_millis(100))
                    .sharing(in_flight),
            ))
        }
    };
    let pool = Arc::new(ModelPool::new(
        ModelSettings {
            concurrency: 1,
            ..ModelSettings::default()
        },
        None,
        factory,
    ));

    let a = pool.get("openai:gpt-5").expect("gpt-5");
    let again = pool.get("openai:gpt-5").expect("gpt-5 again");
    assert!(Arc::ptr_eq(&a, &again));
    let g = pool.get("gemini:gemini-2.5-pro").expect("gemini");
    assert!(Arc::ptr_eq(
        &g,
        &pool.get("google:gemini-2.5-pro").expect("google")
    ));
    assert_eq!(built.load(Ordering::SeqCst), 2);

    let bad = pool.get("gpt-5").expect_err("no prefix");
    assert_eq!(bad.kind, ErrorKind::Permanent);
    assert!(bad.message.contains("provider prefix"), "{bad}");
    for _ in 0..2 {
        let err = pool.get("openai:secret").expect_err("no key");
        assert_eq!(err.kind, ErrorKind::NoCredentials);
    }
    assert_eq!(built.load(Ordering::SeqCst), 3, "failures are kept too");

    // Concurrency 1 per provider+endpoint: two OpenAI models queue behind each
    // other; two local servers run side by side.
    let ids = [
        "openai:gpt-5",
        "openai:gpt-5-mini",
        "openai-compatible:m@http://127.0.0.1:1/v1",
        "openai-compatible:m@http://127.0.0.1:2/v1",
        "openai-compatible:n@http://127.0.0.1:2/v1",
    ];
    let start = Instant::now();
    let calls: Vec<_> = ids
        .iter()
        .flat_map(|id| [*id, *id])
        .map(|id| {
            let model = pool.get(id).expect("model");
            tokio::spawn(async move { model.chat(&request("hi")).await })
        })
        .collect();
    for call in calls {
        call.await.expect("join").expect("answer");
    }
    assert_eq!(openai.max.load(Ordering::SeqCst), 1);
    assert_eq!(local_a.max.load(Ordering::SeqCst), 1);
    assert_eq!(local_b.max.load(Ordering::SeqCst), 1);
    // Four calls each on OpenAI and on server 2, two on server 1: 400 ms in all.
    assert_eq!(start.elapsed(), Duration::from_millis(400));
}
