//! Building the suite's targets and starting the processes they need.

use std::collections::BTreeMap;
use std::sync::Arc;

use gavel_core::{Suite, TargetSpec};
use gavel_models::ModelSource;
use gavel_targets::{Started, Target, TargetError};

use crate::{Plan, RunnerError};

/// Builds the adapters `gavel_targets::build` cannot build alone (the
/// `mcp-agent`, which needs the store); `None` leaves the spec to it.
pub type ExtraTargets<'a> =
    &'a (dyn Fn(&str, &TargetSpec) -> Option<Result<Arc<dyn Target>, TargetError>> + Sync);

/// The adapters of the targets a plan uses, with any processes started for them.
pub struct PreparedTargets {
    /// Adapters by target name.
    pub targets: BTreeMap<String, Arc<dyn Target>>,
    /// Targets that cannot run here, with the reason (e.g. a `chat` target whose
    /// model has no credentials): their executions are skipped.
    pub unavailable: BTreeMap<String, String>,
    started: Vec<Started>,
}

impl PreparedTargets {
    /// Builds the adapters the plan needs and starts their processes, waiting until
    /// each is ready. On failure, whatever was started is stopped again.
    pub async fn prepare(
        suite: &Suite,
        plan: &Plan,
        models: &dyn ModelSource,
        extra: ExtraTargets<'_>,
    ) -> Result<PreparedTargets, RunnerError> {
        let mut prepared = PreparedTargets::from_targets(BTreeMap::new());
        if let Err(e) = prepared.fill(suite, plan, models, extra).await {
            prepared.stop().await;
            return Err(e);
        }
        Ok(prepared)
    }

    async fn fill(
        &mut self,
        suite: &Suite,
        plan: &Plan,
        models: &dyn ModelSource,
        extra: ExtraTargets<'_>,
    ) -> Result<(), RunnerError> {
        for name in plan.targets() {
            if self.targets.contains_key(name) || self.unavailable.contains_key(name) {
                continue;
            }
            let spec = suite
                .targets
                .get(name)
                .ok_or_else(|| RunnerError::UnknownTarget {
                    case: plan.first_case_of(name).unwrap_or_default().to_owned(),
                    target: name.to_owned(),
                })?;
            let built =
                extra(name, spec).unwrap_or_else(|| gavel_targets::build(name, spec, models));
            let adapter = match built {
                Ok(a) => a,
                Err(TargetError::Unavailable { reason, .. }) => {
                    self.unavailable.insert(name.to_owned(), reason);
                    continue;
                }
                Err(e) => return Err(e.into()),
            };
            if let Some(start) = spec.start() {
                self.started.push(gavel_targets::start(name, start).await?);
            }
            self.targets.insert(name.to_owned(), adapter);
        }
        Ok(())
    }

    /// Uses ready-made adapters (in-process targets, tests).
    pub fn from_targets(targets: BTreeMap<String, Arc<dyn Target>>) -> PreparedTargets {
        PreparedTargets {
            targets,
            unavailable: BTreeMap::new(),
            started: Vec::new(),
        }
    }

    /// Stops every process started for the run.
    pub async fn stop(self) {
        for s in self.started {
            s.stop().await;
        }
    }
}
