//! Runs started from the UI: executed in this process through the session, so
//! they store exactly what a CLI run stores. A suite that cannot run is refused
//! with the reason, kept as a failed run; runs whose targets listen on the same
//! fixed address take turns. A suite's `otel:` setting exports its runs.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use gavel_core::load::SuiteSource;
use gavel_core::{RunRecord, RunStatus};
use gavel_otel::OtelSink;
use gavel_runner::CancellationToken;
use gavel_session::trust::Allowed;
use gavel_session::{
    ModelOptions, NoteLevel, PreparedRun, RunConfig, Selection, SetCalibration, Sinks, Sources,
};
use gavel_store::Store;
use tokio_util::task::TaskTracker;

use crate::live::Live;
use crate::{RunRequest, WebError};

/// What every run started from the UI uses besides the stored suite.
#[derive(Debug, Clone, Default)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
pub struct RunDefaults {
    /// Suite files added to every run started from the UI (e.g. the targets file).
    #[cfg_attr(feature = "cli", arg(long = "with", value_name = "FILE"))]
    pub with: Vec<PathBuf>,
    /// Model choices (judge, cache).
    #[cfg_attr(feature = "cli", command(flatten))]
    pub models: ModelOptions,
}

/// Starts runs in this process.
#[derive(Clone)]
pub(crate) struct Runs {
    store: Store,
    defaults: Arc<RunDefaults>,
    /// A turn lock per fixed target address (a started target's `host:port`).
    ports: Arc<Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>>,
    /// Where runs' events go for the live page.
    live: Live,
    /// Cancelled when the server shuts down: every run's token is its child.
    stop: CancellationToken,
    /// The runs executing, waited for at shutdown.
    tasks: TaskTracker,
}

/// A run that could not start: the message, and the failed run that keeps it.
#[derive(Debug)]
pub(crate) struct Refused {
    /// Why, for people.
    pub(crate) message: String,
    /// The failed run recorded with the message.
    pub(crate) run_id: Option<String>,
}

impl Runs {
    pub(crate) fn new(store: Store, defaults: RunDefaults) -> Runs {
        Runs {
            store,
            defaults: Arc::new(defaults),
            ports: Arc::default(),
            live: Live::default(),
            stop: CancellationToken::new(),
            tasks: TaskTracker::new(),
        }
    }

    /// Where runs' events go for the live page.
    pub(crate) fn live(&self) -> Live {
        self.live.clone()
    }

    /// Cancelled when the server shuts down.
    pub(crate) fn stopping(&self) -> &CancellationToken {
        &self.stop
    }

    /// Shuts down: cancels every run and starts no new one.
    pub(crate) fn stop(&self) {
        self.stop.cancel();
        self.tasks.close();
    }

    /// Waits until every run has stopped (after [`Runs::stop`]).
    pub(crate) async fn stopped(&self) {
        self.tasks.close();
        self.tasks.wait().await;
    }

    /// The judge runs use unless one is chosen, as shown to people.
    pub(crate) fn default_judge(&self) -> Option<String> {
        self.judge().map(|j| gavel_store::mask_url(&j.to_string()))
    }

    /// The default judge model, when the server has one.
    pub(crate) fn judge(&self) -> Option<&gavel_models::ModelId> {
        self.defaults.models.judge.as_ref()
    }

    /// What suites and cases stored here may ask for: the models the
    /// operator's files and flags configure, and nothing that runs code or
    /// reads the server's files (docs/SECURITY.md).
    pub(crate) fn allowed(&self) -> Allowed {
        Allowed::operator(&self.defaults.with, self.judge())
    }

    /// Calibrating the judge runs of the stored suite `suite` grade with, on
    /// label set `set`: the operator's judge and files, nothing an editor chose.
    pub(crate) fn calibration(&self, set: &str, suite: &str) -> SetCalibration {
        SetCalibration {
            set: set.to_owned(),
            sources: self.sources(suite),
            models: self.defaults.models.clone(),
            allowed: self.allowed(),
        }
    }

    /// What a run of the stored suite `suite` loads: it, then the files every
    /// run adds.
    pub(crate) fn sources(&self, suite: &str) -> Sources {
        Sources {
            suites: self
                .defaults
                .with
                .iter()
                .cloned()
                .map(SuiteSource::Path)
                .collect(),
            stored: Some(suite.to_owned()),
        }
    }

    /// Prepares and stores the run, started by `who`, then executes it in the
    /// background; returns its id at once. A run that cannot start is refused
    /// with the reason.
    pub(crate) async fn start(
        &self,
        request: &RunRequest,
        who: &str,
    ) -> Result<String, StartError> {
        // The suite must exist: a clear 404 rather than a failed run.
        self.store.export_suite(&request.suite).await?;
        let allowed = self.allowed();
        let mut models = self.defaults.models.clone();
        if let Some(judge) = request
            .judge
            .as_deref()
            .map(str::trim)
            .filter(|j| !j.is_empty())
        {
            models.judge = Some(
                allowed
                    .check_model("judge", judge)
                    .map_err(|e| StartError::Web(WebError::BadRequest(e.to_string())))?,
            );
        }
        // What was stored, even before stored suites were checked, runs no
        // program and calls no model the operator did not configure.
        match allowed.check_stored(&self.store, &request.suite).await {
            Ok(()) => {}
            Err(e) if e.is_bad_input() => {
                return Err(StartError::Refused(
                    self.refuse(request, e.to_string(), who).await,
                ));
            }
            Err(e) => return Err(StartError::Web(WebError::Launch(e.to_string()))),
        }
        let defaults = RunConfig::new(Sources::default());
        let config = RunConfig {
            selection: Selection {
                tags: request.tags.clone(),
                targets: request.targets.clone(),
                repeat: request.repeat,
                ..Selection::default()
            },
            jobs: request.jobs.unwrap_or(defaults.jobs),
            models,
            ..RunConfig::new(self.sources(&request.suite))
        };
        let mut prepared = match PreparedRun::new(self.store.clone(), config).await {
            Ok(p) => p,
            Err(e) if e.is_bad_input() => {
                return Err(StartError::Refused(
                    self.refuse(request, e.to_string(), who).await,
                ));
            }
            Err(e) => return Err(StartError::Web(WebError::Launch(e.to_string()))),
        };
        // The suite's `otel:` setting exports the run, as `gavel run` does.
        let export = match gavel_otel::sink(
            &gavel_otel::Requested::default(),
            prepared.suite().otel.as_ref(),
        ) {
            Ok(export) => export,
            Err(e) if e.is_bad_input() => {
                return Err(StartError::Refused(
                    self.refuse(request, e.to_string(), who).await,
                ));
            }
            Err(e) => return Err(StartError::Web(WebError::Launch(e.to_string()))),
        };
        prepared
            .store_run()
            .await
            .map_err(|e| StartError::Web(WebError::Launch(e.to_string())))?;
        let id = prepared.run_id().to_owned();
        self.store.set_run_started_by(&id, who).await?;
        let turns: Vec<_> = {
            let mut ports = self.ports.lock().unwrap_or_else(|p| p.into_inner());
            let mut addresses = prepared.fixed_ports();
            addresses.sort();
            addresses.dedup();
            addresses
                .into_iter()
                .map(|a| ports.entry(a).or_default().clone())
                .collect()
        };
        let store = self.store.clone();
        let sinks = Sinks::new().with(self.live.sink(&id));
        let cancel = self.stop.child_token();
        self.tasks.spawn(async move {
            let mut held = Vec::with_capacity(turns.len());
            for turn in turns {
                tokio::select! {
                    lock = turn.lock_owned() => held.push(lock),
                    () = cancel.cancelled() => break,
                }
            }
            let run_id = prepared.run_id().to_owned();
            let sinks = OtelSink::added(export.as_ref(), sinks);
            let finished = prepared.execute(&sinks, &cancel).await;
            let export_failed = OtelSink::failure(export.as_ref()).await;
            let warnings = match &finished {
                Ok(f) => f
                    .notes
                    .iter()
                    .filter(|n| n.level == NoteLevel::Warning)
                    .map(|n| n.text.clone())
                    .collect(),
                Err(_) => Vec::new(),
            };
            // A failed export, for one: kept with the run, and in the server's log.
            for warning in warnings
                .into_iter()
                .chain(export_failed.map(|e| e.to_string()))
            {
                eprintln!("run {run_id}: warning: {warning}");
                let _ = store.warn_run(&run_id, &warning).await;
            }
            // The session marked the run failed; keep why.
            if let Err(e) = finished {
                let _ = store.fail_run(&run_id, &e.to_string()).await;
            }
            drop(held);
        });
        Ok(id)
    }

    /// Records a failed run holding `message`, so the runs list shows why.
    async fn refuse(&self, request: &RunRequest, message: String, who: &str) -> Refused {
        let now = gavel_core::now_rfc3339();
        let run = RunRecord {
            id: uuid::Uuid::now_v7().to_string(),
            suite: request.suite.clone(),
            status: RunStatus::Failed,
            started_at: now.clone(),
            finished_at: Some(now),
            config: serde_json::json!({ "tags": request.tags }),
            planned: None,
        };
        let stored = async {
            self.store.create_run(&run).await?;
            self.store.set_run_started_by(&run.id, who).await?;
            self.store.fail_run(&run.id, &message).await
        };
        Refused {
            run_id: stored.await.ok().map(|()| run.id),
            message,
        }
    }
}

/// Why a run did not start.
#[derive(Debug)]
pub(crate) enum StartError {
    /// The suite cannot run (bad input): 422 with the message.
    Refused(Refused),
    /// Anything else.
    Web(WebError),
}

impl From<gavel_store::StoreError> for StartError {
    fn from(e: gavel_store::StoreError) -> Self {
        StartError::Web(e.into())
    }
}
