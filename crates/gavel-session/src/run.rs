//! One run, from a [`RunConfig`] to a stored, gated [`Finished`] run.

use gavel_checks::Embeddings;
use gavel_core::{RunRecord, RunStatus, Suite};
use gavel_models::ModelPool;
use gavel_report::{Files, Report};
use gavel_runner::{
    Baselines, CancellationToken, ExecuteOptions, Plan, PlannedExecution, PreparedTargets,
    RunReport,
};
use gavel_store::{CaseVersion, PAGE_SIZE, SnapshotCase, Store};

use crate::config::StoredConfig;
use crate::events::{Event, ExecutionRef, RunEnd, RunStart, Sinks};
use crate::live::Live;
use crate::prepare::{self, Loaded};
use crate::record::StoreSink;
use crate::{JudgeChoice, Note, Regate, RunConfig, SessionError, models};

/// A run ready to start: suites loaded, judge chosen, plan compiled. Nothing is
/// stored and no target is started until [`PreparedRun::execute`] or
/// [`PreparedRun::enqueue`].
pub struct PreparedRun {
    store: Store,
    pub(crate) config: RunConfig,
    pub(crate) suite: Suite,
    pub(crate) plan: Plan,
    run: RunRecord,
    /// The run is in the store (resumed, or stored by [`PreparedRun::store_run`]).
    stored: bool,
    /// Its case snapshot was saved from this plan, in plan order (a new run).
    cases_saved: bool,
    versions: Vec<CaseVersion>,
    pub(crate) judge: JudgeChoice,
    pub(crate) pool: ModelPool,
    pub(crate) baselines: Baselines,
    notes: Vec<Note>,
}

/// What a run is prepared from: its suite and plan, and its record when it is
/// stored already.
struct Restored {
    suite: Suite,
    versions: Vec<CaseVersion>,
    plan: Plan,
    run: Option<RunRecord>,
    /// New model cache entries wait for the next recorded results.
    staged: bool,
}

/// A run that ended, with its report and how it went.
pub struct Finished {
    /// The run as stored at the end.
    pub run: RunRecord,
    /// What execution did (`None`: the run failed before or during it).
    pub outcome: Option<RunReport>,
    /// Why the run failed, when it did.
    pub error: Option<SessionError>,
    /// The report, gate applied, with the outcomes [`RunConfig::report`] asks for.
    pub report: Report,
    /// What the run found worth telling once its targets were up (e.g. which
    /// embedder `similar` checks used), besides [`PreparedRun::notes`].
    pub notes: Vec<Note>,
}

impl PreparedRun {
    /// Loads, resolves and plans `config` against `store`; refuses (with a typed
    /// error) anything that would fail the run before it starts. With
    /// [`RunConfig::resume`], prepares that stored run again
    /// ([`PreparedRun::stored`]) to finish what it left undone.
    pub async fn new(store: Store, config: RunConfig) -> Result<PreparedRun, SessionError> {
        if let Some(id) = config.resume.clone() {
            return PreparedRun::resume(store, config, &id).await;
        }
        let (Loaded { suite, versions }, plan) = prepare::load_planned(&store, &config).await?;
        let loaded = Restored {
            suite,
            versions,
            plan,
            run: None,
            staged: true,
        };
        PreparedRun::finish(store, config, loaded, Vec::new()).await
    }

    /// Stored run `run_id` prepared again from its suite snapshot and its
    /// stored configuration (selection, deadline, gate, judge, `--strict`, the
    /// cache, the embedder, the budget; [`RunConfig`]'s own model options add to
    /// them): what a `gavel worker` runs the run's claimed executions with. Its
    /// plan holds every execution, recorded or not.
    pub async fn stored(
        store: Store,
        run_id: &str,
        mut config: RunConfig,
    ) -> Result<PreparedRun, SessionError> {
        let run = store.run(run_id).await?;
        let suite = store.suite_settings(run_id).await?;
        let stored = StoredConfig::of(&run)?;
        stored.check_templates(run_id, &suite.judge)?;
        stored.apply(&mut config);
        let plan =
            prepare::plan_stored(&store, run_id, &suite, &config, Default::default()).await?;
        let loaded = Restored {
            suite,
            versions: Vec::new(),
            plan,
            run: Some(run),
            staged: false,
        };
        PreparedRun::finish(store, config, loaded, Vec::new()).await
    }

    /// `--resume ID`: the stored run, planned without what it recorded (errors
    /// run again); suite arguments given must match its snapshot.
    async fn resume(
        store: Store,
        mut config: RunConfig,
        id: &str,
    ) -> Result<PreparedRun, SessionError> {
        let mut notes = Vec::new();
        let (run, suite, stored, done) = prepare::resumed(&store, id, &mut notes).await?;
        stored.check_templates(&run.id, &suite.judge)?;
        stored.apply(&mut config);
        if !config.sources.suites.is_empty() || config.sources.stored.is_some() {
            let mut disk = prepare::load(&store, &config.sources).await?.suite;
            let now = prepare::plan(&mut disk, &config, Default::default())?;
            let cases = store.cases(&run.id).await?;
            let changes = prepare::suite_changes(&suite, &cases, &disk, &now)?;
            if !changes.is_empty() {
                return Err(SessionError::config(
                    "--resume",
                    format!(
                        "the suite changed since run {} was planned; resuming runs its stored snapshot, so drop the suite arguments to finish it as planned, or start a new run:\n  {}",
                        run.id,
                        changes.join("\n  ")
                    ),
                ));
            }
        }
        let plan = prepare::plan_stored(&store, &run.id, &suite, &config, done).await?;
        let loaded = Restored {
            suite,
            versions: Vec::new(),
            plan,
            run: Some(run),
            staged: true,
        };
        PreparedRun::finish(store, config, loaded, notes).await
    }

    /// Checks the suite's judge, chooses the judge, reads baselines, builds the
    /// model pool; a new run's record is made here, with its calibration gate
    /// decided once for every door that reports it.
    async fn finish(
        store: Store,
        config: RunConfig,
        loaded: Restored,
        mut notes: Vec<Note>,
    ) -> Result<PreparedRun, SessionError> {
        let Restored {
            suite,
            versions,
            plan,
            run,
            staged,
        } = loaded;
        prepare::check_suite_judge(&suite)?;
        for w in &suite.warnings {
            notes.push(Note::warning(w.clone()));
        }
        let judge = models::default_judge(&config.models, &suite.judge).await;
        for w in models::hierarchy_warnings(&suite, judge.model.as_deref()) {
            notes.push(Note::warning(w));
        }
        let baselines = models::baselines(&plan, &store).await?;
        let pool = models::pool(
            config.models.cache(),
            &suite.judge,
            &store,
            staged,
            config.jobs,
        );
        let stored = run.is_some();
        let run = match run {
            Some(run) => run,
            None => {
                let calibration = crate::gate::calibration(
                    &store,
                    &suite.judge,
                    judge.model.as_deref(),
                    plan.judge_uses(),
                )
                .await?;
                prepare::new_run(&suite, &config, &plan, judge.model.as_deref(), calibration)
            }
        };
        Ok(PreparedRun {
            store,
            config,
            suite,
            plan,
            run,
            stored,
            cases_saved: false,
            versions,
            judge,
            pool,
            baselines,
            notes,
        })
    }

    /// The run's id.
    pub fn run_id(&self) -> &str {
        &self.run.id
    }

    /// The run's suite: its settings and targets. Its cases are in the plan.
    pub fn suite(&self) -> &Suite {
        &self.suite
    }

    /// Executions to run now, and those recorded before (a resumed run).
    pub fn planned(&self) -> (usize, usize) {
        (self.plan.executions, self.plan.already_done)
    }

    /// The default judge model, or why there is none.
    pub fn judge(&self) -> &JudgeChoice {
        &self.judge
    }

    /// What the preparation found worth telling: warnings and choices made.
    pub fn notes(&self) -> &[Note] {
        &self.notes
    }

    /// The addresses (`host:port`) of the targets this run starts a process
    /// for: two runs starting one of them at once would collide on its port.
    pub fn fixed_ports(&self) -> Vec<String> {
        let used: std::collections::BTreeSet<&str> = self.plan.targets().collect();
        self.suite
            .targets
            .iter()
            .filter(|(name, _)| used.contains(name.as_str()))
            .filter_map(|(_, spec)| match spec {
                gavel_core::TargetSpec::Http(http) if http.start.is_some() => {
                    Some(authority(&http.url))
                }
                _ => None,
            })
            .collect()
    }

    /// Stores the run with its cases and suite snapshot, status `running`, so
    /// that it can be shown before it starts (done by `execute` otherwise).
    pub async fn store_run(&mut self) -> Result<(), SessionError> {
        if self.stored {
            return Ok(());
        }
        self.store.create_run(&self.run).await?;
        self.save_cases().await?;
        self.store
            .save_run_case_versions(&self.run.id, &self.versions)
            .await?;
        // `${VAR}` references are kept; literal header values and URL
        // passwords are not (a resume or a worker reads the snapshot).
        let mut snapshot = Suite {
            cases: Vec::new(),
            ..self.suite.clone()
        };
        snapshot.scrub_secrets();
        self.store.save_suite(&self.run.id, &snapshot).await?;
        self.stored = true;
        self.cases_saved = true;
        Ok(())
    }

    /// Stores the plan's cases with the run, a page at a time.
    async fn save_cases(&self) -> Result<(), SessionError> {
        let mut texts = self.plan.case_texts();
        let mut page: Vec<(String, String, String)> = Vec::with_capacity(PAGE_SIZE);
        let mut saved = 0;
        loop {
            let text = texts.next_text().map_err(SessionError::Plan)?;
            let last = text.is_none();
            if let Some(t) = text {
                page.push((t.id, t.source, t.json.to_owned()));
            }
            if page.len() == PAGE_SIZE || (last && !page.is_empty()) {
                let rows: Vec<SnapshotCase<'_>> = page
                    .iter()
                    .map(|(id, source, json)| SnapshotCase { id, source, json })
                    .collect();
                self.store.append_cases(&self.run.id, saved, &rows).await?;
                saved += page.len();
                page.clear();
            }
            if last {
                return Ok(());
            }
        }
    }

    /// Stores the run, starts its targets, executes the plan (results stored as
    /// they land, events to `sinks`), stops the targets, and builds the gated
    /// report. Cancelling `cancel` interrupts the run; what landed is kept.
    pub async fn execute(
        mut self,
        sinks: &Sinks,
        cancel: &CancellationToken,
    ) -> Result<Finished, SessionError> {
        let files = Files::create(&self.config.report_files)?;
        self.store_run().await?;
        let driver = crate::drive::Driver::take(&self.store, &self.run.id).await?;
        let PreparedRun {
            store,
            config,
            suite,
            plan,
            run,
            judge,
            pool,
            baselines,
            cases_saved,
            ..
        } = self;
        let mut notes = Vec::new();
        let start = RunStart {
            run: run.clone(),
            planned: plan.executions,
            already_done: plan.already_done,
            judge: judge.clone(),
        };
        let failed = |error: SessionError| async {
            let end = RunEnd {
                run_id: run.id.clone(),
                status: RunStatus::Failed,
                finished_at: gavel_core::now_rfc3339(),
                recorded: 0,
                error: Some(error.to_string()),
                gate: None,
            };
            store.fail_run(&run.id, &error.to_string()).await?;
            sinks.emit(&Event::RunFinished(&end));
            Err::<Finished, _>(error)
        };
        let prepared = match crate::replay::recordings(&suite, &store).await {
            Ok(recorded) => {
                let extra = models::store_targets(&pool, &store, &recorded);
                PreparedTargets::prepare(&suite, &plan, &pool, &extra)
                    .await
                    .map_err(SessionError::Targets)
            }
            Err(e) => Err(e),
        };
        let targets = match prepared {
            Ok(t) => t,
            Err(e) => return failed(e).await,
        };
        let embeddings = match crate::embeddings::for_plan(
            config.models.embedder.as_deref(),
            &suite.judge,
            &plan,
            &store,
            &mut notes,
        ) {
            Ok(e) => e,
            Err(e) => {
                targets.stop().await;
                return failed(e).await;
            }
        };
        // A new run's report is folded as its cases become whole; a resumed
        // run's snapshot is not in its plan's order, so it is folded at the end.
        let live = match cases_saved {
            true => match Live::start(&store, &run.id, files).await {
                Ok(live) => Some(live),
                Err(e) => {
                    tracing::warn!(run = %run.id, "the report is folded once the run ends: {e}");
                    None
                }
            },
            false => None,
        };
        sinks.emit(&Event::RunStarted(&start));
        let judges = models::RunJudges {
            pool: &pool,
            default: judge.clone(),
        };
        let executed = execute_plan(
            &plan,
            &targets,
            &run.id,
            Execution {
                config: &config,
                suite: &suite,
                judges: &judges,
                baselines: &baselines,
                embeddings: embeddings.as_ref(),
                live: live.as_ref(),
            },
            &store,
            sinks,
            cancel,
        );
        let outcome = tokio::select! {
            outcome = executed => outcome,
            lost = driver.keep(&store, &run.id) => {
                targets.stop().await;
                return failed(lost).await;
            }
        };
        targets.stop().await;
        driver.release(&store, &run.id).await?;
        let status = match &outcome {
            Ok(r) if r.interrupted => RunStatus::Interrupted,
            Ok(r) if r.budget_stopped => RunStatus::BudgetStopped,
            Ok(_) => RunStatus::Completed,
            Err(_) => RunStatus::Failed,
        };
        let finished_at = gavel_core::now_rfc3339();
        store.finish_run(&run.id, status, &finished_at).await?;
        if let Err(e) = &outcome {
            store.fail_run(&run.id, &e.to_string()).await?;
        }
        // The report reads every result (and case) back from the store: free
        // the run's models and its plan first.
        drop((pool, baselines, suite, embeddings, plan));
        let write = || async {
            let files = Files::create(&config.report_files)?;
            crate::report::write(&store, &run.id, &Regate::default(), files).await
        };
        let report = match live {
            Some(live) => match live.write(&store).await {
                Ok(report) => report,
                Err(e) => {
                    tracing::warn!(run = %run.id, "the report is folded again: {e}");
                    write().await?
                }
            },
            None => write().await?,
        };
        let (outcome, error) = match outcome {
            Ok(r) => (Some(r), None),
            Err(e) => (None, Some(SessionError::Run(e))),
        };
        let end = RunEnd {
            run_id: run.id.clone(),
            status,
            finished_at,
            recorded: outcome.map_or(0, |o| o.finished),
            error: error.as_ref().map(ToString::to_string),
            gate: Some(report.gate.clone()),
        };
        sinks.emit(&Event::RunFinished(&end));
        Ok(Finished {
            run: store.run(&run.id).await?,
            outcome,
            error,
            report,
            notes,
        })
    }

    /// Stores the run and enqueues its executions for `gavel worker` processes
    /// (DESIGN.md §9); returns the run id. Executions that pair with one another
    /// (pairwise checks against another target) are claimed together.
    pub async fn enqueue(mut self) -> Result<String, SessionError> {
        self.store_run().await?;
        crate::distributed::enqueue(&self.store, &self.plan, &self.run.id).await?;
        Ok(self.run.id)
    }
}

/// `run ID · suite NAME · N executions (D already recorded)`.
impl std::fmt::Display for PreparedRun {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (planned, done) = self.planned();
        let (id, suite, s) = (&self.run.id, &self.suite.name, gavel_core::plural(planned));
        write!(
            f,
            "run {id} · suite {suite} · {planned} execution{s} ({done} already recorded)"
        )
    }
}

/// `host:port` of a URL (the URL itself when it does not parse).
fn authority(url: &str) -> String {
    match url::Url::parse(url) {
        Ok(u) => format!(
            "{}:{}",
            u.host_str().unwrap_or_default(),
            u.port_or_known_default().unwrap_or_default()
        ),
        Err(_) => url.to_owned(),
    }
}

/// What a plan executes with, besides its targets.
pub(crate) struct Execution<'a> {
    pub(crate) config: &'a RunConfig,
    pub(crate) suite: &'a Suite,
    pub(crate) judges: &'a models::RunJudges<'a>,
    pub(crate) baselines: &'a Baselines,
    pub(crate) embeddings: Option<&'a Embeddings>,
    /// The run's report folded as it is recorded, when it is.
    pub(crate) live: Option<&'a Live>,
}

/// Executes `plan`, recording every result in the store and sending events.
pub(crate) async fn execute_plan(
    plan: &Plan,
    targets: &PreparedTargets,
    run_id: &str,
    with: Execution<'_>,
    store: &Store,
    sinks: &Sinks,
    cancel: &CancellationToken,
) -> Result<RunReport, gavel_runner::RunnerError> {
    let on_start = |item: &PlannedExecution| {
        sinks.emit(&Event::ExecutionStarted(ExecutionRef {
            case_id: &item.case.id,
            target: &item.target,
            repeat_index: item.repeat_index,
        }))
    };
    let options = ExecuteOptions {
        embeddings: with.embeddings,
        concurrency: with.config.jobs.max(1),
        default_timeout: with.config.timeout,
        judges: with.judges,
        strict: with.config.models.strict,
        require_judges: with.config.gate.require_judges,
        max_cost: with.config.models.max_cost.or(with.suite.judge.max_cost),
        on_start: Some(&on_start),
        ..ExecuteOptions::new(&with.suite.judge, with.baselines)
    };
    let mut recorder = StoreSink::new(store, run_id, sinks).telling(with.live);
    gavel_runner::execute(
        plan,
        targets,
        run_id,
        &options,
        cancel,
        &mut [&mut recorder],
    )
    .await
}
