//! Wiring models for a run: the pool with its layers, the store-backed cache, the
//! default judge, and stored answers for pairwise checks against a run.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use gavel_core::{JudgeSettings, Suite, TargetSpec};
use gavel_runner::{Baselines, Plan};
use gavel_store::Store;

use crate::SessionError;
use gavel_models::{
    CacheError, CacheMode, CacheStore, ChatModel, ErrorKind, ModelError, ModelId, ModelPool,
    ModelSettings, SharedBuckets,
};
use gavel_targets::replay::{Conversations, Replay};
use gavel_targets::{Target, TargetError};

use crate::ModelOptions;
use crate::judge::{self, JudgeChoice, JudgeSources};

/// The judge model a run uses and why (see [`judge`](crate::judge)): the
/// configured one, else the suite's `judge.model`, else the first fallback found.
pub async fn default_judge(options: &ModelOptions, settings: &JudgeSettings) -> JudgeChoice {
    let flag = options.judge.as_ref().map(ToString::to_string);
    let configured = flag.as_deref().map(|m| (m, "--judge")).or_else(|| {
        settings
            .model
            .as_deref()
            .map(|m| (m, "the suite's judge.model"))
    });
    judge::choose(configured, &JudgeSources::from_env()).await
}

/// The pool every model call of the run goes through, caching in the store.
/// With `staged`, new cache entries are committed with the next recorded results
/// or the run's end ([`Store::cache_stage`]) instead of on their own. Unless the
/// suite sets `judge.concurrency`, each provider allows `2 × jobs` calls in flight
/// (at least the default 16): an execution's target call and judge call share a
/// provider when the agent and the judge do, and `-j` alone must reach `jobs`
/// executions at once. RPM and TPM limits are held in the store, shared by
/// every process using it (N `gavel worker`s hold one limit between them).
pub fn pool(
    cache: CacheMode,
    settings: &JudgeSettings,
    store: &Store,
    staged: bool,
    jobs: usize,
) -> ModelPool {
    let mut model_settings = ModelSettings::from_judge(settings);
    model_settings.cache = cache;
    if settings.concurrency.is_none() {
        model_settings.concurrency = model_settings.concurrency.max(jobs.saturating_mul(2));
    }
    let cache: Arc<dyn CacheStore> = Arc::new(StoreCache {
        store: store.clone(),
        staged,
    });
    ModelPool::new(model_settings, Some(cache), provider)
        .with_shared_buckets(Arc::new(StoreBuckets(store.clone())))
}

/// Builds the raw model for an id: `local:` ids run in-process through
/// gavel-local, every other provider through gavel-models.
pub fn provider(id: &ModelId) -> Result<Arc<dyn ChatModel>, ModelError> {
    #[cfg(feature = "local")]
    if id.provider == gavel_models::Provider::Local {
        return gavel_local::provider(id);
    }
    gavel_models::provider(id)
}

/// Builds the targets that need the store: `mcp-agent` targets, whose
/// conversations are checkpointed in it, and `replay` targets, from the
/// recordings read for the run (`crate::replay::recordings`), stored runs
/// included (for `PreparedTargets::prepare`).
pub(crate) fn store_targets<'a>(
    pool: &'a ModelPool,
    store: &'a Store,
    recorded: &'a BTreeMap<String, Arc<Conversations>>,
) -> impl Fn(&str, &TargetSpec) -> Option<Result<Arc<dyn Target>, TargetError>> + Sync + 'a {
    #[cfg(not(feature = "mcp"))]
    let _ = (pool, store);
    move |name, spec| match spec {
        TargetSpec::Replay(_) => recorded
            .get(name)
            .map(|r| Ok(Arc::new(Replay::new(r.clone())) as Arc<dyn Target>)),
        #[cfg(not(feature = "mcp"))]
        TargetSpec::McpAgent(_) => Some(Err(TargetError::config(
            name,
            "type",
            "mcp-agent targets are not in this build (gavel-eval's `mcp` feature; the `gavel` binary has it)",
        ))),
        #[cfg(feature = "mcp")]
        TargetSpec::McpAgent(agent) => {
            let checkpoints: Arc<dyn gavel_mcp::Checkpoints> = Arc::new(store.clone());
            Some(
                gavel_mcp::McpAgent::from_spec(name, agent, pool, checkpoints)
                    .map(|a| Arc::new(a) as Arc<dyn Target>),
            )
        }
        _ => None,
    }
}

/// Resolves judge model ids against the pool, `None` meaning the run's default.
pub struct RunJudges<'a> {
    /// The run's model pool.
    pub pool: &'a ModelPool,
    /// The default judge.
    pub default: JudgeChoice,
}

impl gavel_checks::JudgeModels for RunJudges<'_> {
    fn model(&self, id: Option<&str>) -> Result<Arc<dyn ChatModel>, ModelError> {
        match id.or(self.default.model.as_deref()) {
            Some(id) => self.pool.get(id),
            // The skip reason says what was looked for.
            None => Err(ModelError::new(
                ErrorKind::NoCredentials,
                self.default.why.clone(),
            )),
        }
    }
}

/// Warnings about the model hierarchy: a judge should not be the model it judges.
pub fn hierarchy_warnings(suite: &Suite, judge: Option<&str>) -> Vec<String> {
    let Some(judge) = judge else {
        return Vec::new();
    };
    let mut agents: BTreeSet<&str> = suite.judge.agent_model.as_deref().into_iter().collect();
    agents.extend(suite.targets.values().filter_map(|t| match t {
        TargetSpec::Chat(c) => Some(c.model.as_str()),
        TargetSpec::McpAgent(a) => Some(a.model.as_str()),
        _ => None,
    }));
    agents
        .into_iter()
        .filter(|a| *a == judge)
        .map(|a| {
            format!(
                "the judge model {} is also the agent's model: a judge should be a different, stronger model",
                gavel_core::secrets::mask_url(a)
            )
        })
        .collect()
}

/// Loads the stored answers that pairwise checks against a run compare with.
pub async fn baselines(plan: &Plan, store: &Store) -> Result<Baselines, SessionError> {
    let runs: BTreeSet<String> = plan
        .pairwise()
        .values()
        .flatten()
        .filter_map(|s| s.against.run.clone())
        .collect();
    let mut out = Baselines::new();
    for reference in runs {
        let run = store.find_run(&reference).await?;
        let answers = store
            .executions(&run.id)
            .await?
            .into_iter()
            .filter(|e| e.repeat_index == 0)
            .filter_map(|e| {
                let last = e.transcript.turns.last().filter(|t| t.failure.is_none())?;
                Some(((e.case_id.clone(), e.target.clone()), last.output.clone()))
            })
            .collect();
        out.insert(reference, answers);
    }
    Ok(out)
}

/// The gavel store as the home of shared rate-limit buckets.
struct StoreBuckets(Store);

#[async_trait::async_trait]
impl SharedBuckets for StoreBuckets {
    async fn take(
        &self,
        key: &str,
        period: std::time::Duration,
        burst: u32,
        n: u32,
    ) -> Result<Option<std::time::Duration>, Box<dyn std::error::Error + Send + Sync>> {
        Ok(self.0.take_rate_cells(key, period, burst, n).await?)
    }
}

/// The gavel store as the model answer cache.
struct StoreCache {
    store: Store,
    /// Stage new entries rather than commit each.
    staged: bool,
}

#[async_trait::async_trait]
impl CacheStore for StoreCache {
    async fn get(&self, key: &str) -> Result<Option<String>, CacheError> {
        self.store.cache_get(key).await.map_err(CacheError::new)
    }

    async fn put(&self, key: &str, model: &str, value: &str) -> Result<(), CacheError> {
        if self.staged {
            self.store.cache_stage(key, model, value);
            return Ok(());
        }
        self.store
            .cache_put(key, model, value)
            .await
            .map_err(CacheError::new)
    }
}
