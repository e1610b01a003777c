//! Building the suite's targets and starting the processes they need.

use std::collections::BTreeMap;
use std::sync::Arc;

use gavel_core::Suite;
use gavel_targets::{Started, Target};

use crate::{Plan, RunnerError};

/// The adapters of the targets a plan uses, with any processes started for them.
pub struct PreparedTargets {
    /// Adapters by target name.
    pub targets: BTreeMap<String, Arc<dyn Target>>,
    started: Vec<Started>,
}

impl PreparedTargets {
    /// Builds the adapters the plan needs and starts their processes, waiting until
    /// each is ready.
    pub async fn prepare(suite: &Suite, plan: &Plan) -> Result<PreparedTargets, RunnerError> {
        let mut prepared = PreparedTargets {
            targets: BTreeMap::new(),
            started: Vec::new(),
        };
        for item in &plan.items {
            if prepared.targets.contains_key(&item.target) {
                continue;
            }
            let spec =
                suite
                    .targets
                    .get(&item.target)
                    .ok_or_else(|| RunnerError::UnknownTarget {
                        case: item.case.id.clone(),
                        target: item.target.clone(),
                    })?;
            if let Some(start) = spec.start() {
                match gavel_targets::start(&item.target, start).await {
                    Ok(s) => prepared.started.push(s),
                    Err(e) => {
                        prepared.stop().await;
                        return Err(e.into());
                    }
                }
            }
            prepared.targets.insert(
                item.target.clone(),
                gavel_targets::build(&item.target, spec)?,
            );
        }
        Ok(prepared)
    }

    /// Uses ready-made adapters (in-process targets, tests).
    pub fn from_targets(targets: BTreeMap<String, Arc<dyn Target>>) -> PreparedTargets {
        PreparedTargets {
            targets,
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
