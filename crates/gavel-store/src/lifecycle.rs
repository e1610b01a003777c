//! A stored case's lifecycle beyond saving: delete, archive, unarchive and
//! restore an old version. Each is a new version naming who made it, so the
//! history says who changed what.

use serde::Serialize;

use crate::library::{CaseVersion, VersionRow, latest_versions, version_of};
use crate::rows::to_i64;
use crate::{Store, StoreError};

/// What one version of a case changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum CaseChange {
    /// Written by an import or a save.
    Saved,
    /// Deleted (the version holds no case).
    Deleted,
    /// Archived: kept, but out of runs and exports.
    Archived,
    /// Brought back from the archive.
    Unarchived,
    /// A copy of an older version.
    Restored {
        /// The version copied.
        from: u32,
    },
}

impl CaseChange {
    /// The change a stored row records; `None` for an unknown word.
    pub(crate) fn of_row(kind: Option<&str>, from: Option<u32>, deleted: bool) -> Option<Self> {
        Some(match (kind, from) {
            (None, _) if deleted => CaseChange::Deleted,
            (None, _) => CaseChange::Saved,
            (Some("delete"), _) => CaseChange::Deleted,
            (Some("archive"), _) => CaseChange::Archived,
            (Some("unarchive"), _) => CaseChange::Unarchived,
            (Some("restore"), Some(from)) => CaseChange::Restored { from },
            _ => return None,
        })
    }

    fn word(self) -> Option<&'static str> {
        match self {
            CaseChange::Saved => None,
            CaseChange::Deleted => Some("delete"),
            CaseChange::Archived => Some("archive"),
            CaseChange::Unarchived => Some("unarchive"),
            CaseChange::Restored { .. } => Some("restore"),
        }
    }
}

impl Store {
    /// Deletes a live or archived case as `who`; returns the deleting version.
    pub async fn delete_case(&self, suite: &str, key: &str, who: &str) -> Result<u32, StoreError> {
        let latest = self.latest_version(suite, key).await?;
        if latest.case.is_none() {
            return Err(StoreError::invalid(
                format!("case `{key}`"),
                "it is deleted already",
            ));
        }
        self.add_version(&latest, None, false, CaseChange::Deleted, who)
            .await
    }

    /// Archives (`true`) or brings back (`false`) a case as `who`; returns the
    /// new version. A deleted case cannot be archived: restore it.
    pub async fn archive_case(
        &self,
        suite: &str,
        key: &str,
        archived: bool,
        who: &str,
    ) -> Result<u32, StoreError> {
        let latest = self.latest_version(suite, key).await?;
        let Some(case) = latest.case.clone() else {
            return Err(StoreError::invalid(
                format!("case `{key}`"),
                "it is deleted: restore a version instead",
            ));
        };
        if latest.archived == archived {
            let state = if archived { "archived" } else { "not archived" };
            return Err(StoreError::invalid(
                format!("case `{key}`"),
                format!("it is {state} already"),
            ));
        }
        let change = if archived {
            CaseChange::Archived
        } else {
            CaseChange::Unarchived
        };
        self.add_version(&latest, Some(&case), archived, change, who)
            .await
    }

    /// Makes version `version` of a case its newest again (live, not archived),
    /// as `who`; returns the new version. The caller checks that it still compiles.
    pub async fn restore_case(
        &self,
        suite: &str,
        key: &str,
        version: u32,
        who: &str,
    ) -> Result<u32, StoreError> {
        let history = self.case_history(suite, key).await?;
        let latest = history
            .last()
            .ok_or_else(|| StoreError::NotFound(format!("case `{key}` of suite `{suite}`")))?;
        let old = history
            .iter()
            .find(|v| v.version == version)
            .ok_or_else(|| {
                StoreError::NotFound(format!("version {version} of case `{key}` of `{suite}`"))
            })?;
        let Some(case) = old.case.as_ref() else {
            return Err(StoreError::invalid(
                format!("version {version} of case `{key}`"),
                "it is a deletion: pick a version that holds the case",
            ));
        };
        let change = CaseChange::Restored { from: version };
        self.add_version(latest, Some(case), false, change, who)
            .await
    }

    /// The latest version of every archived case of a suite, in position order.
    pub async fn archived_cases(&self, suite: &str) -> Result<Vec<CaseVersion>, StoreError> {
        let mut versions = self.latest_versions(suite).await?;
        versions.retain(|v| v.case.is_some() && v.archived);
        Ok(versions)
    }

    /// The latest version of every deleted case of a suite, in position order.
    pub async fn deleted_cases(&self, suite: &str) -> Result<Vec<CaseVersion>, StoreError> {
        let mut versions = self.latest_versions(suite).await?;
        versions.retain(|v| v.case.is_none());
        Ok(versions)
    }

    async fn latest_version(&self, suite: &str, key: &str) -> Result<CaseVersion, StoreError> {
        let rows: Vec<VersionRow> =
            sqlx::query_as(concat!(latest_versions!(), " AND v.case_key = $2"))
                .bind(suite)
                .bind(key)
                .fetch_all(&self.pool)
                .await?;
        rows.into_iter()
            .next()
            .map(version_of)
            .transpose()?
            .ok_or_else(|| StoreError::NotFound(format!("case `{key}` of suite `{suite}`")))
    }

    /// Writes the version after `latest`, at its position.
    async fn add_version(
        &self,
        latest: &CaseVersion,
        case: Option<&serde_json::Value>,
        archived: bool,
        change: CaseChange,
        who: &str,
    ) -> Result<u32, StoreError> {
        let what = || format!("case `{}` of suite `{}`", latest.key, latest.suite);
        let json = case.map(|c| crate::rows::to_json(c, what)).transpose()?;
        let version = latest.version + 1;
        let from = match change {
            CaseChange::Restored { from } => Some(i64::from(from)),
            _ => None,
        };
        let now = gavel_core::now_rfc3339();
        let mut tx = self.begin_write().await?;
        sqlx::query(
            "INSERT INTO case_versions (suite, case_key, version, position, case_json, \
             changed_by, changed_at, archived, change_kind, restored_from) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
        )
        .bind(latest.suite.as_str())
        .bind(latest.key.as_str())
        .bind(i64::from(version))
        .bind(to_i64(latest.position, what)?)
        .bind(json)
        .bind(who)
        .bind(now.as_str())
        .bind(i64::from(archived))
        .bind(change.word())
        .bind(from)
        .execute(&mut *tx)
        .await?;
        sqlx::query("UPDATE suites SET updated_at = $2, updated_by = $3 WHERE name = $1")
            .bind(latest.suite.as_str())
            .bind(now.as_str())
            .bind(who)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(version)
    }
}
