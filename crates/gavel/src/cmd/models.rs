//! Wiring models for a run: the pool with its layers, the store-backed cache, the
//! default judge, and stored answers for pairwise checks against a run.

use std::collections::BTreeSet;
use std::sync::Arc;

use gavel::runner::{Baselines, Plan};
use gavel::store::Store;
use gavel::{JudgeSettings, Suite, TargetSpec};
use gavel_models::{
    CacheMode, CacheStore, ChatModel, ErrorKind, ModelError, ModelId, ModelPool, ModelSettings,
};
use gavel_targets::{Target, TargetError};

use super::judge_choice::{self, JudgeChoice, Sources};

/// Model-related options of `gavel run`.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct ModelArgs {
    /// Judge model id (overrides the suite's judge.model), e.g. anthropic:claude-opus-4-5
    /// or local:gemma-3-270m-q4_k_m.
    #[arg(long, value_name = "MODEL")]
    judge: Option<String>,
    /// Neither read nor write the model answer cache.
    #[arg(long, conflicts_with = "cache_only")]
    no_cache: bool,
    /// Only answers already in the cache; no model call is made.
    #[arg(long)]
    cache_only: bool,
    /// A judge or target without credentials is an error, not a skip (for CI).
    #[arg(long)]
    pub(crate) strict: bool,
    /// Stop scheduling new work once the run has spent this many US dollars.
    #[arg(long, value_name = "USD")]
    pub(crate) max_cost: Option<f64>,
    /// Embedding model of `similar` checks (overrides the suite's judge.embedder):
    /// all-MiniLM-L6-v2 (default, local), a model folder, openai:NAME or
    /// openai-compatible:NAME@URL.
    #[arg(long, value_name = "MODEL")]
    pub(crate) embedder: Option<String>,
}

/// The judge model a run uses and why (see [`judge_choice`](super::judge_choice)):
/// `--judge`, else the suite's `judge.model`, else the first fallback found.
pub(crate) async fn default_judge(args: &ModelArgs, settings: &JudgeSettings) -> JudgeChoice {
    let configured = args.judge.as_deref().map(|m| (m, "--judge")).or_else(|| {
        settings
            .model
            .as_deref()
            .map(|m| (m, "the suite's judge.model"))
    });
    judge_choice::choose(configured, &Sources::from_env()).await
}

/// The pool every model call of the run goes through, caching in the store.
/// With `staged`, new cache entries are committed with the next recorded results
/// or the run's end ([`Store::cache_stage`]) instead of on their own.
pub(crate) fn pool(
    args: &ModelArgs,
    settings: &JudgeSettings,
    store: &Store,
    staged: bool,
) -> ModelPool {
    let mut model_settings = ModelSettings::from_judge(settings);
    model_settings.cache = match (args.no_cache, args.cache_only) {
        (true, _) => CacheMode::Off,
        (_, true) => CacheMode::Only,
        _ => CacheMode::ReadWrite,
    };
    let cache: Arc<dyn CacheStore> = Arc::new(StoreCache {
        store: store.clone(),
        staged,
    });
    ModelPool::new(model_settings, Some(cache), provider)
}

/// Builds the raw model for an id: `local:` ids run in-process through
/// gavel-local, every other provider through gavel-models.
pub(crate) fn provider(id: &ModelId) -> Result<Arc<dyn ChatModel>, ModelError> {
    #[cfg(feature = "local")]
    if id.provider == gavel_models::Provider::Local {
        return gavel_local::provider(id);
    }
    gavel_models::provider(id)
}

/// Builds the targets that need the store: `mcp-agent` targets, whose
/// conversations are checkpointed in it (for `PreparedTargets::prepare`).
pub(crate) fn store_targets<'a>(
    pool: &'a ModelPool,
    store: &'a Store,
) -> impl Fn(&str, &TargetSpec) -> Option<Result<Arc<dyn Target>, TargetError>> + Sync + 'a {
    move |name, spec| match spec {
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
pub(crate) struct RunJudges<'a> {
    pub(crate) pool: &'a ModelPool,
    pub(crate) default: JudgeChoice,
}

impl gavel::checks::JudgeModels for RunJudges<'_> {
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
pub(crate) fn hierarchy_warnings(suite: &Suite, judge: Option<&str>) -> Vec<String> {
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
        .map(|a| format!("the judge model {a} is also the agent's model: a judge should be a different, stronger model"))
        .collect()
}

/// Loads the stored answers that pairwise checks against a run compare with.
pub(crate) async fn baselines(plan: &Plan, store: &Store) -> anyhow::Result<Baselines> {
    let runs: BTreeSet<String> = plan
        .items
        .iter()
        .flat_map(|i| i.checks.pairwise())
        .filter_map(|s| s.against.run)
        .collect();
    let mut out = Baselines::new();
    for reference in runs {
        let run = match reference.as_str() {
            "latest" => store.latest_run().await?.ok_or_else(|| {
                anyhow::anyhow!("pairwise against run `latest`: the store holds no run")
            })?,
            id => store.run(id).await?,
        };
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

/// The gavel store as the model answer cache.
struct StoreCache {
    store: Store,
    /// Stage new entries rather than commit each.
    staged: bool,
}

#[async_trait::async_trait]
impl CacheStore for StoreCache {
    async fn get(&self, key: &str) -> Result<Option<String>, String> {
        self.store.cache_get(key).await.map_err(|e| e.to_string())
    }

    async fn put(&self, key: &str, model: &str, value: &str) -> Result<(), String> {
        if self.staged {
            self.store.cache_stage(key, model, value);
            return Ok(());
        }
        self.store
            .cache_put(key, model, value)
            .await
            .map_err(|e| e.to_string())
    }
}
