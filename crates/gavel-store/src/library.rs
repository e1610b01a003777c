//! Test cases kept in the store: suites as their source documents, every case
//! versioned (who changed what, when), and the case versions each run used.

use serde_json::{Map, Value};
use sqlx::AssertSqlSafe;

use crate::lifecycle::CaseChange;
use crate::rows::{from_i64, to_i64, to_json};
use crate::{Store, StoreError};

/// How a suite file was written, so that export writes it the same way.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DocShape {
    /// A mapping with `cases` (and targets, defaults, judge, …).
    Suite,
    /// Seed 002's dataset: a mapping with `examples` (and the dataset's metadata).
    Examples,
    /// A mapping with targets and no `cases` key (a targets file).
    Head,
    /// A bare list of cases.
    List,
    /// One case on its own.
    Case,
}

impl DocShape {
    fn as_str(self) -> &'static str {
        match self {
            DocShape::Suite => "suite",
            DocShape::Examples => "examples",
            DocShape::Head => "head",
            DocShape::List => "list",
            DocShape::Case => "case",
        }
    }

    fn parse(word: &str) -> Option<DocShape> {
        match word {
            "suite" => Some(DocShape::Suite),
            "examples" => Some(DocShape::Examples),
            "head" => Some(DocShape::Head),
            "list" => Some(DocShape::List),
            "case" => Some(DocShape::Case),
            _ => None,
        }
    }
}

/// A suite document split for storage: its shape, its top-level keys but `cases`,
/// and its cases as written.
#[derive(Debug, Clone, PartialEq)]
pub struct SuiteDoc {
    /// How the file was written.
    pub shape: DocShape,
    /// Every top-level key but `cases` (or `examples`; empty for the list and
    /// case shapes).
    pub head: Map<String, Value>,
    /// The cases, in order, each exactly as written.
    pub cases: Vec<Value>,
}

impl SuiteDoc {
    /// Splits a parsed suite document. `None` when it is not a mapping or a list.
    pub fn from_value(value: Value) -> Option<SuiteDoc> {
        match value {
            Value::Array(cases) => Some(SuiteDoc {
                shape: DocShape::List,
                head: Map::new(),
                cases,
            }),
            Value::Object(mut head) => match head.remove("cases") {
                Some(Value::Array(cases)) => Some(SuiteDoc {
                    shape: DocShape::Suite,
                    head,
                    cases,
                }),
                Some(_) => None,
                None if head.get("examples").is_some_and(Value::is_array) => {
                    let Some(Value::Array(cases)) = head.remove("examples") else {
                        return None;
                    };
                    Some(SuiteDoc {
                        shape: DocShape::Examples,
                        head,
                        cases,
                    })
                }
                None if head.contains_key("targets") => Some(SuiteDoc {
                    shape: DocShape::Head,
                    head,
                    cases: Vec::new(),
                }),
                None => Some(SuiteDoc {
                    shape: DocShape::Case,
                    head: Map::new(),
                    cases: vec![Value::Object(head)],
                }),
            },
            _ => None,
        }
    }

    /// The document again, as [`SuiteDoc::from_value`] found it.
    pub fn into_value(self) -> Value {
        match self.shape {
            DocShape::List => Value::Array(self.cases),
            DocShape::Case if self.cases.len() == 1 => {
                self.cases.into_iter().next().unwrap_or(Value::Null)
            }
            DocShape::Case => Value::Array(self.cases),
            DocShape::Head if self.cases.is_empty() => Value::Object(self.head),
            DocShape::Suite | DocShape::Head => {
                let mut head = self.head;
                head.insert("cases".to_owned(), Value::Array(self.cases));
                Value::Object(head)
            }
            DocShape::Examples => {
                let mut head = self.head;
                head.insert("examples".to_owned(), Value::Array(self.cases));
                Value::Object(head)
            }
        }
    }
}

/// The key a stored case is versioned under: its `id`, else its `name`, else its
/// position (`#3`).
pub fn case_key(case: &Value, position: usize) -> String {
    ["id", "name"]
        .iter()
        .find_map(|field| case.get(field).and_then(Value::as_str))
        .filter(|key| !key.is_empty())
        .map_or_else(|| format!("#{position}"), str::to_owned)
}

/// What an import changed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ImportSummary {
    /// Cases new to the suite.
    pub added: usize,
    /// Cases whose content or position changed: a new version each.
    pub changed: usize,
    /// Cases identical to their latest version.
    pub unchanged: usize,
    /// Cases of the stored suite missing from the document: marked deleted.
    pub removed: usize,
}

/// `A added, C changed, U unchanged, R removed`.
impl std::fmt::Display for ImportSummary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let ImportSummary {
            added,
            changed,
            unchanged,
            removed,
        } = self;
        write!(
            f,
            "{added} added, {changed} changed, {unchanged} unchanged, {removed} removed"
        )
    }
}

/// One version of a stored case.
#[derive(Debug, Clone, PartialEq)]
pub struct CaseVersion {
    /// The suite's name.
    pub suite: String,
    /// The case's key ([`case_key`]).
    pub key: String,
    /// 1 for the first version, then counting up.
    pub version: u32,
    /// Its position in the suite.
    pub position: u32,
    /// The case as written; `None` when this version deleted it.
    pub case: Option<Value>,
    /// Who made the change.
    pub changed_by: String,
    /// When (RFC 3339 UTC).
    pub changed_at: String,
    /// Kept, but out of runs and exports.
    pub archived: bool,
    /// What the change was.
    pub change: CaseChange,
}

/// A stored suite, for listings.
#[derive(Debug, Clone, PartialEq)]
pub struct SuiteInfo {
    /// Its name.
    pub name: String,
    /// Live cases.
    pub cases: usize,
    /// Last change (RFC 3339 UTC).
    pub updated_at: String,
    /// Who made it.
    pub updated_by: String,
}

pub(crate) type VersionRow = (
    String,
    String,
    i64,
    i64,
    Option<String>,
    String,
    String,
    i64,
    Option<String>,
    Option<i64>,
);

/// The columns of a [`VersionRow`], from `case_versions v`.
macro_rules! version_columns {
    () => {
        "v.suite, v.case_key, v.version, v.position, v.case_json, v.changed_by, \
         v.changed_at, v.archived, v.change_kind, v.restored_from"
    };
}

/// The latest version of each case of suite `$1`.
macro_rules! latest_versions {
    () => {
        concat!(
            "SELECT ",
            $crate::library::version_columns!(),
            " FROM case_versions v \
     WHERE v.suite = $1 AND v.version = \
         (SELECT MAX(w.version) FROM case_versions w WHERE w.suite = v.suite AND w.case_key = v.case_key)"
        )
    };
}
pub(crate) use {latest_versions, version_columns};

const LATEST_VERSIONS: &str = latest_versions!();

impl Store {
    /// Stores a suite document under `name`, as `who`: a new version of every case
    /// that is new or changed (content or position), cases missing from the
    /// document marked deleted, the rest left alone. Case keys must be unique.
    pub async fn import_suite(
        &self,
        name: &str,
        doc: &SuiteDoc,
        who: &str,
    ) -> Result<ImportSummary, StoreError> {
        let mut keyed: Vec<(String, i64, String)> = Vec::with_capacity(doc.cases.len());
        for (position, case) in doc.cases.iter().enumerate() {
            let key = case_key(case, position);
            if keyed.iter().any(|(k, ..)| *k == key) {
                return Err(StoreError::invalid(
                    format!("suite `{name}`"),
                    format!("two cases share the key `{key}` (their id or name)"),
                ));
            }
            let json = to_json(case, || format!("case `{key}` of suite `{name}`"))?;
            keyed.push((
                key,
                to_i64(position, || format!("position of `{name}`"))?,
                json,
            ));
        }
        let head = to_json(&doc.head, || format!("suite `{name}`"))?;
        let now = gavel_core::now_rfc3339();
        let mut tx = self.begin_write().await?;
        sqlx::query(
            "INSERT INTO suites (name, shape, head_json, updated_at, updated_by) \
             VALUES ($1, $2, $3, $4, $5) \
             ON CONFLICT (name) DO UPDATE SET shape = excluded.shape, \
             head_json = excluded.head_json, updated_at = excluded.updated_at, \
             updated_by = excluded.updated_by",
        )
        .bind(name)
        .bind(doc.shape.as_str())
        .bind(head)
        .bind(now.as_str())
        .bind(who)
        .execute(&mut *tx)
        .await?;
        let latest: Vec<VersionRow> = sqlx::query_as(LATEST_VERSIONS)
            .bind(name)
            .fetch_all(&mut *tx)
            .await?;
        let mut summary = ImportSummary::default();
        let insert = "INSERT INTO case_versions \
             (suite, case_key, version, position, case_json, changed_by, changed_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7)";
        for (key, position, json) in &keyed {
            let previous = latest.iter().find(|row| row.1 == *key);
            let version = match previous {
                Some((_, _, _, old_position, Some(old), _, _, 0, ..))
                    if same_json(old, json) && old_position == position =>
                {
                    summary.unchanged += 1;
                    continue;
                }
                Some((_, _, version, _, Some(_), ..)) => {
                    summary.changed += 1;
                    version + 1
                }
                Some((_, _, version, ..)) => {
                    summary.added += 1;
                    version + 1
                }
                None => {
                    summary.added += 1;
                    1
                }
            };
            sqlx::query(insert)
                .bind(name)
                .bind(key.as_str())
                .bind(version)
                .bind(*position)
                .bind(json.as_str())
                .bind(who)
                .bind(now.as_str())
                .execute(&mut *tx)
                .await?;
        }
        // Archived cases are not exported: a document without them leaves them be.
        for (_, key, version, position, json, _, _, archived, ..) in &latest {
            if json.is_some() && *archived == 0 && !keyed.iter().any(|(k, ..)| k == key) {
                summary.removed += 1;
                sqlx::query(insert)
                    .bind(name)
                    .bind(key.as_str())
                    .bind(version + 1)
                    .bind(*position)
                    .bind(None::<String>)
                    .bind(who)
                    .bind(now.as_str())
                    .execute(&mut *tx)
                    .await?;
            }
        }
        tx.commit().await?;
        Ok(summary)
    }

    /// Saves one case of a stored suite as `who`: replaces the case keyed
    /// `replaces` (its edit) or appends it (a new case), creating the suite as a
    /// mapping with `cases` when it does not exist. Returns the case's new version.
    pub async fn save_case(
        &self,
        suite: &str,
        replaces: Option<&str>,
        case: Value,
        who: &str,
    ) -> Result<u32, StoreError> {
        let mut doc = match self.export_suite(suite).await {
            Ok(doc) => doc,
            Err(StoreError::NotFound(_)) => SuiteDoc {
                shape: DocShape::Suite,
                head: Map::new(),
                cases: Vec::new(),
            },
            Err(e) => return Err(e),
        };
        let key = case_key(&case, doc.cases.len());
        let at = replaces
            .and_then(|old| (0..doc.cases.len()).find(|&i| case_key(&doc.cases[i], i) == old));
        if doc
            .cases
            .iter()
            .enumerate()
            .any(|(i, c)| Some(i) != at && case_key(c, i) == key)
        {
            return Err(StoreError::invalid(
                format!("case `{key}`"),
                format!("suite `{suite}` already has a case `{key}`"),
            ));
        }
        // An archived case keeps its key: bring it back rather than write over it.
        if at.is_none()
            && self
                .archived_cases(suite)
                .await?
                .iter()
                .any(|v| v.key == key)
        {
            return Err(StoreError::invalid(
                format!("case `{key}`"),
                format!(
                    "suite `{suite}` has an archived case `{key}`: unarchive it, or pick another id"
                ),
            ));
        }
        match at {
            Some(i) => doc.cases[i] = case,
            None => doc.cases.push(case),
        }
        self.import_suite(suite, &doc, who).await?;
        let history = self.case_history(suite, &key).await?;
        Ok(history.last().map_or(1, |v| v.version))
    }

    /// A stored suite as a document: its head and the latest version of each live
    /// case, in position order.
    pub async fn export_suite(&self, name: &str) -> Result<SuiteDoc, StoreError> {
        let row: Option<(String, String)> =
            sqlx::query_as("SELECT shape, head_json FROM suites WHERE name = $1")
                .bind(name)
                .fetch_optional(&self.pool)
                .await?;
        let (shape, head) = row.ok_or_else(|| StoreError::NotFound(format!("suite `{name}`")))?;
        let what = || format!("suite `{name}`");
        let shape = DocShape::parse(&shape)
            .ok_or_else(|| StoreError::corrupt(what(), format!("unknown shape `{shape}`")))?;
        let head: Map<String, Value> =
            serde_json::from_str(&head).map_err(|e| StoreError::corrupt(what(), e))?;
        let cases = self
            .latest_cases(name)
            .await?
            .into_iter()
            .filter_map(|v| v.case)
            .collect();
        Ok(SuiteDoc { shape, head, cases })
    }

    /// The latest version of every live case of a suite (neither deleted nor
    /// archived), in position order.
    pub async fn latest_cases(&self, suite: &str) -> Result<Vec<CaseVersion>, StoreError> {
        let mut versions = self.latest_versions(suite).await?;
        versions.retain(|v| v.case.is_some() && !v.archived);
        Ok(versions)
    }

    /// The latest version of every case a suite ever had, live or not, in
    /// position order.
    pub(crate) async fn latest_versions(
        &self,
        suite: &str,
    ) -> Result<Vec<CaseVersion>, StoreError> {
        let rows: Vec<VersionRow> = sqlx::query_as(LATEST_VERSIONS)
            .bind(suite)
            .fetch_all(&self.pool)
            .await?;
        let mut versions = rows
            .into_iter()
            .map(version_of)
            .collect::<Result<Vec<_>, _>>()?;
        versions.sort_by(|a, b| a.position.cmp(&b.position).then(a.key.cmp(&b.key)));
        Ok(versions)
    }

    /// Every version of one case, oldest first: its history.
    pub async fn case_history(
        &self,
        suite: &str,
        key: &str,
    ) -> Result<Vec<CaseVersion>, StoreError> {
        let rows: Vec<VersionRow> = sqlx::query_as(concat!(
            "SELECT ",
            version_columns!(),
            " FROM case_versions v WHERE v.suite = $1 AND v.case_key = $2 ORDER BY v.version"
        ))
        .bind(suite)
        .bind(key)
        .fetch_all(&self.pool)
        .await?;
        rows.into_iter().map(version_of).collect()
    }

    /// The stored suites, by name.
    pub async fn suites(&self) -> Result<Vec<SuiteInfo>, StoreError> {
        let rows: Vec<(String, String, String)> =
            sqlx::query_as("SELECT name, updated_at, updated_by FROM suites ORDER BY name")
                .fetch_all(&self.pool)
                .await?;
        let mut out = Vec::with_capacity(rows.len());
        for (name, updated_at, updated_by) in rows {
            let cases = self.latest_cases(&name).await?.len();
            out.push(SuiteInfo {
                name,
                cases,
                updated_at,
                updated_by,
            });
        }
        Ok(out)
    }

    /// Records which version of each stored case a run used.
    pub async fn save_run_case_versions(
        &self,
        run_id: &str,
        versions: &[CaseVersion],
    ) -> Result<(), StoreError> {
        let mut tx = self.begin_write().await?;
        for v in versions {
            sqlx::query(
                "INSERT INTO run_case_versions (run_id, suite, case_key, version) \
                 VALUES ($1, $2, $3, $4) ON CONFLICT (run_id, suite, case_key) \
                 DO UPDATE SET version = excluded.version",
            )
            .bind(run_id)
            .bind(v.suite.as_str())
            .bind(v.key.as_str())
            .bind(i64::from(v.version))
            .execute(&mut *tx)
            .await
            .map_err(|e| crate::write::run_missing(e, run_id))?;
        }
        tx.commit().await?;
        Ok(())
    }

    /// The stored case versions a run used: (suite, case key, version), by key;
    /// with `keys`, only those of the cases with these keys (a page's cases).
    pub async fn run_case_versions(
        &self,
        run_id: &str,
        keys: Option<&[&str]>,
    ) -> Result<Vec<(String, String, u32)>, StoreError> {
        let only = match keys {
            Some([]) => return Ok(Vec::new()),
            Some(keys) => format!(
                " AND case_key IN ({})",
                crate::pages::placeholders(2, keys.len())
            ),
            None => String::new(),
        };
        let sql = format!(
            "SELECT suite, case_key, version FROM run_case_versions \
             WHERE run_id = $1{only} ORDER BY suite, case_key"
        );
        let mut query = sqlx::query_as(AssertSqlSafe(sql)).bind(run_id);
        for key in keys.unwrap_or_default() {
            query = query.bind(*key);
        }
        let rows: Vec<(String, String, i64)> = query.fetch_all(&self.pool).await?;
        rows.into_iter()
            .map(|(suite, key, version)| {
                let version = from_i64(version, || format!("version of `{key}`"))?;
                Ok((suite, key, version))
            })
            .collect()
    }
}

/// Two JSON texts holding the same value (key order included).
fn same_json(a: &str, b: &str) -> bool {
    a == b
        || serde_json::from_str::<Value>(a)
            .ok()
            .zip(serde_json::from_str::<Value>(b).ok())
            .is_some_and(|(a, b)| a == b)
}

pub(crate) fn version_of(row: VersionRow) -> Result<CaseVersion, StoreError> {
    let (suite, key, version, position, json, changed_by, changed_at, archived, kind, from) = row;
    let what = || format!("case `{key}` of suite `{suite}`");
    let case = json
        .map(|j| serde_json::from_str(&j).map_err(|e| StoreError::corrupt(what(), e)))
        .transpose()?;
    let from = from.map(|v| from_i64(v, what)).transpose()?;
    let change = CaseChange::of_row(kind.as_deref(), from, case.is_none())
        .ok_or_else(|| StoreError::corrupt(what(), format!("unknown change `{kind:?}`")))?;
    Ok(CaseVersion {
        archived: archived != 0,
        change,
        version: from_i64(version, what)?,
        position: from_i64(position, what)?,
        case,
        suite,
        key,
        changed_by,
        changed_at,
    })
}
