//! Wiring models for a run: the pool with its layers, the store-backed cache, the
//! default judge, and stored answers for pairwise checks against a run.

use std::collections::BTreeSet;
use std::sync::Arc;

use gavel::runner::{Baselines, Plan};
use gavel::store::Store;
use gavel::{JudgeSettings, Suite, TargetSpec};
use gavel_models::{CacheMode, CacheStore, ChatModel, ModelError, ModelPool, ModelSettings};

/// Model-related options of `gavel run`.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct ModelArgs {
    /// Judge model id (overrides the suite's judge.model), e.g. anthropic:claude-opus-4-5.
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

/// The judge model a run uses: `--judge`, else the suite's `judge.model`, else a
/// provider whose API key is in the environment.
pub(crate) fn default_judge(args: &ModelArgs, settings: &JudgeSettings) -> Option<String> {
    args.judge
        .clone()
        .or_else(|| settings.model.clone())
        .or_else(|| {
            [
                ("OPENAI_API_KEY", "openai:gpt-5-mini"),
                ("ANTHROPIC_API_KEY", "anthropic:claude-sonnet-4-5"),
                ("GEMINI_API_KEY", "gemini:gemini-2.5-flash"),
                ("GOOGLE_API_KEY", "gemini:gemini-2.5-flash"),
            ]
            .into_iter()
            .find(|(var, _)| std::env::var_os(var).is_some_and(|v| !v.is_empty()))
            .map(|(_, model)| model.to_owned())
        })
}

/// The pool every model call of the run goes through, caching in the store.
pub(crate) fn pool(args: &ModelArgs, settings: &JudgeSettings, store: &Store) -> ModelPool {
    let mut model_settings = ModelSettings::from_judge(settings);
    model_settings.cache = match (args.no_cache, args.cache_only) {
        (true, _) => CacheMode::Off,
        (_, true) => CacheMode::Only,
        _ => CacheMode::ReadWrite,
    };
    let cache: Arc<dyn CacheStore> = Arc::new(StoreCache(store.clone()));
    ModelPool::new(model_settings, Some(cache), gavel_models::provider)
}

/// Resolves judge model ids against the pool, `None` meaning the run's default.
pub(crate) struct RunJudges<'a> {
    pub(crate) pool: &'a ModelPool,
    pub(crate) default: Option<String>,
}

impl gavel::checks::JudgeModels for RunJudges<'_> {
    fn model(&self, id: Option<&str>) -> Result<Arc<dyn ChatModel>, ModelError> {
        match id.or(self.default.as_deref()) {
            Some(id) => self.pool.get(id),
            None => Err(gavel::checks::no_judge_model()),
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
struct StoreCache(Store);

#[async_trait::async_trait]
impl CacheStore for StoreCache {
    async fn get(&self, key: &str) -> Result<Option<String>, String> {
        self.0.cache_get(key).await.map_err(|e| e.to_string())
    }

    async fn put(&self, key: &str, model: &str, value: &str) -> Result<(), String> {
        self.0
            .cache_put(key, model, value)
            .await
            .map_err(|e| e.to_string())
    }
}
