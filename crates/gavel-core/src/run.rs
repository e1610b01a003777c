//! A run: one execution of a set of cases, with its configuration snapshot.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Where a run stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RunStatus {
    /// Executions are still landing.
    Running,
    /// Every planned execution finished.
    Completed,
    /// Stopped early (Ctrl-C); the results so far are kept.
    Interrupted,
    /// Stopped scheduling new work when the spend reached `--max-cost`; what ran is kept.
    BudgetStopped,
    /// The harness itself failed before finishing.
    Failed,
}

impl RunStatus {
    /// The word as stored.
    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Running => "running",
            RunStatus::Completed => "completed",
            RunStatus::Interrupted => "interrupted",
            RunStatus::BudgetStopped => "budget-stopped",
            RunStatus::Failed => "failed",
        }
    }
}

/// A run status word no [`RunStatus`] answers to.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown run status `{0}`")]
pub struct UnknownRunStatus(pub String);

impl std::str::FromStr for RunStatus {
    type Err = UnknownRunStatus;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "running" => Ok(RunStatus::Running),
            "completed" => Ok(RunStatus::Completed),
            "interrupted" => Ok(RunStatus::Interrupted),
            "budget-stopped" => Ok(RunStatus::BudgetStopped),
            "failed" => Ok(RunStatus::Failed),
            other => Err(UnknownRunStatus(other.to_owned())),
        }
    }
}

/// A run's identity and configuration, as stored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunRecord {
    /// Run id (UUIDv7 text).
    pub id: String,
    /// The suite's name.
    pub suite: String,
    /// Where it stands.
    pub status: RunStatus,
    /// Start time, RFC 3339 UTC.
    pub started_at: String,
    /// End time, RFC 3339 UTC, once finished.
    pub finished_at: Option<String>,
    /// Configuration snapshot (files, filters, concurrency, targets) with no secrets.
    pub config: Value,
    /// Executions the run planned (cases × targets × repeats, variants included),
    /// set when the run is created; `None` for runs stored before it was recorded.
    /// Reports count `planned` − recorded executions as not run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub planned: Option<u64>,
}

impl RunRecord {
    /// Wall time from the start to the end, when both times are known.
    pub fn wall_ms(&self) -> Option<u64> {
        use chrono::DateTime;
        let start = DateTime::parse_from_rfc3339(&self.started_at).ok()?;
        let end = DateTime::parse_from_rfc3339(self.finished_at.as_deref()?).ok()?;
        u64::try_from((end - start).num_milliseconds()).ok()
    }
}
