//! Evaluations as one flat, filterable list: every stored verdict, and every human
//! label of a stored execution, with the run, case and target it belongs to. What
//! `gavel mcp`'s `query_evaluations` reads.
//!
//! Filters are applied in SQL (portable: plain comparisons, `LIKE` and `CASE`);
//! only the per-verdict model is read with each engine's own JSON function. A tag
//! is matched in SQL as a substring of the stored JSON array, then exactly here.

use futures::TryStreamExt;
use gavel_core::{CheckKind, EvaluatorType, RunRecord, Status};
use sqlx::any::AnyRow;
use sqlx::{AssertSqlSafe, FromRow, Row};

use crate::rows::{RunRow, from_json, run_columns, to_i64};
use crate::{Engine, Store, StoreError};

/// The words of the check kinds (and their older words) whose verdicts come from
/// `evaluator`, quoted for an SQL `IN (…)` list; derived from
/// [`CheckKind::ALL`], so a new kind is listed by its declaration alone.
fn kind_words(evaluator: EvaluatorType) -> String {
    let words = CheckKind::ALL
        .into_iter()
        .filter(|k| k.evaluator() == evaluator)
        .flat_map(|k| std::iter::once(k.as_str()).chain(k.aliases().iter().copied()));
    let quoted: Vec<String> = words.map(|w| format!("'{w}'")).collect();
    if quoted.is_empty() {
        // `IN ()` is not SQL; no kind's word is empty.
        return "''".to_owned();
    }
    quoted.join(", ")
}

/// Which evaluations to read; every field set must match.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct EvaluationFilter {
    /// The run's suite name.
    pub suite: Option<String>,
    /// The run id (exact).
    pub run_id: Option<String>,
    /// The target (agent) name.
    pub target: Option<String>,
    /// The case id.
    pub case_id: Option<String>,
    /// A tag the case carries.
    pub tag: Option<String>,
    /// The check's display name (a human label's label set).
    pub check: Option<String>,
    /// The check kind (`contains`, `judge`, …; `label` for human labels).
    pub kind: Option<String>,
    /// The evaluator type.
    pub evaluator: Option<EvaluatorType>,
    /// The status word.
    pub status: Option<Status>,
    /// The model recorded in the verdict's evidence (judges, similarity):
    /// `provider:name@URL` exactly, or `provider:name` for that model at any URL.
    pub model: Option<String>,
    /// At or after this time (RFC 3339 UTC, the store's fixed-width form).
    pub since: Option<String>,
    /// Before this time (same form).
    pub until: Option<String>,
}

impl EvaluationFilter {
    /// Whether `evaluation` carries the filter's tag exactly (SQL matched it
    /// as a substring of the JSON array); true without a tag.
    fn has_tag_of(&self, evaluation: &Evaluation) -> bool {
        self.tag
            .as_ref()
            .is_none_or(|tag| evaluation.tags.contains(tag))
    }
}

/// One stored evaluation.
#[derive(Debug, Clone, PartialEq)]
pub struct Evaluation {
    /// The run.
    pub run_id: String,
    /// The run's suite.
    pub suite: String,
    /// The execution it grades.
    pub execution_id: String,
    /// The case id.
    pub case_id: String,
    /// The target (agent) name.
    pub target: String,
    /// The case's tags.
    pub tags: Vec<String>,
    /// The check's display name, or the label set of a human label.
    pub check: String,
    /// The check kind, or `label`.
    pub kind: String,
    /// Who evaluated.
    pub evaluator: EvaluatorType,
    /// The status; `None` for a human label that is not pass or fail (A, B, tie).
    pub status: Option<Status>,
    /// The score on 0..=1, when there is one.
    pub score: Option<f64>,
    /// The model that judged, when the verdict records one.
    pub model: Option<String>,
    /// When: the execution's start, or the label's time.
    pub at: String,
    /// The labeller of a human label.
    pub labeller: Option<String>,
}

/// One page of evaluations.
#[derive(Debug, Clone, PartialEq)]
pub struct EvaluationPage {
    /// The evaluations, in listing order.
    pub evaluations: Vec<Evaluation>,
    /// Rows read: `page.limit` unless the listing ended.
    pub scanned: u64,
    /// Whether rows remain after these: the next page is not empty.
    pub more: bool,
}

/// A page of a listing: skip `offset` rows, return at most `limit`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Page {
    /// Rows to skip.
    pub offset: u64,
    /// Rows to return at most.
    pub limit: u64,
}

/// The listing's columns, in the order [`Evaluation::from_row`] reads them.
const COLUMNS: &str = "run_id, suite, execution_id, case_id, target, tags_json, check_name, \
                       kind, evaluator, status, score, model, at, seq, labeller";

impl Store {
    /// The evaluations matching `filter`, newest first (then by execution and
    /// check), one page of them. The page counts rows read before the exact tag
    /// match, so the next page starts at `page.offset + scanned`.
    pub async fn evaluations(
        &self,
        filter: &EvaluationFilter,
        page: Page,
    ) -> Result<EvaluationPage, StoreError> {
        let (sql, params) = select(self.engine, filter);
        let sql = format!(
            "{sql} ORDER BY at DESC, execution_id, seq, check_name, labeller_key \
             LIMIT ${} OFFSET ${}",
            params.len() + 1,
            params.len() + 2
        );
        // Built from constants only: every value is a bound parameter.
        let mut query = sqlx::query(AssertSqlSafe(sql));
        for param in &params {
            query = query.bind(param.as_str());
        }
        // One row past the page tells whether another page follows.
        let mut rows = query
            .bind(count(page.limit.saturating_add(1), "limit")?)
            .bind(count(page.offset, "offset")?)
            .fetch_all(&self.pool)
            .await?;
        let more = rows.len() as u64 > page.limit;
        rows.truncate(usize::try_from(page.limit).unwrap_or(usize::MAX));
        let mut out = Vec::with_capacity(rows.len());
        for row in &rows {
            let evaluation = Evaluation::from_row(row)?;
            if filter.has_tag_of(&evaluation) {
                out.push(evaluation);
            }
        }
        Ok(EvaluationPage {
            evaluations: out,
            scanned: rows.len() as u64,
            more,
        })
    }

    /// Every evaluation matching `filter`, in no set order, handed to `each`
    /// as it is read, from at most `max` rows: an aggregation over many holds
    /// one at a time. Returns the rows read (before the exact tag match).
    pub async fn each_evaluation(
        &self,
        filter: &EvaluationFilter,
        max: u64,
        mut each: impl FnMut(Evaluation) + Send,
    ) -> Result<u64, StoreError> {
        let (sql, params) = select(self.engine, filter);
        let sql = format!("{sql} LIMIT ${}", params.len() + 1);
        // Built from constants only: every value is a bound parameter.
        let mut query = sqlx::query(AssertSqlSafe(sql));
        for param in &params {
            query = query.bind(param.as_str());
        }
        let mut rows = query.bind(count(max, "limit")?).fetch(&self.pool);
        let mut scanned = 0;
        while let Some(row) = rows.try_next().await? {
            scanned += 1;
            let evaluation = Evaluation::from_row(&row)?;
            if filter.has_tag_of(&evaluation) {
                each(evaluation);
            }
        }
        Ok(scanned)
    }

    /// One page of runs, most recently started first, of suite `suite` when given.
    pub async fn run_page(
        &self,
        suite: Option<&str>,
        page: Page,
    ) -> Result<Vec<RunRecord>, StoreError> {
        let rows: Vec<RunRow> = sqlx::query_as(concat!(
            "SELECT ",
            run_columns!(),
            " FROM runs WHERE ($1 = '' OR suite = $1) \
             ORDER BY started_at DESC, id DESC LIMIT $2 OFFSET $3"
        ))
        .bind(suite.unwrap_or(""))
        .bind(count(page.limit, "limit")?)
        .bind(count(page.offset, "offset")?)
        .fetch_all(&self.pool)
        .await?;
        rows.into_iter().map(RunRow::into_record).collect()
    }
}

/// A page bound as BIGINT.
fn count(n: u64, what: &str) -> Result<i64, StoreError> {
    to_i64(n, || format!("page {what}"))
}

/// The filtered union of verdicts and human labels, and its parameters.
fn select(engine: Engine, filter: &EvaluationFilter) -> (String, Vec<String>) {
    // The serialised `Evidence::model`.
    let model = match engine {
        Engine::Sqlite => "json_extract(v.evidence_json, '$.model')",
        Engine::Postgres => "(v.evidence_json::jsonb ->> 'model')",
    };
    let union = format!(
        "SELECT r.id AS run_id, r.suite, e.id AS execution_id, e.case_id, e.target, e.tags_json, \
             v.check_name, v.kind, \
             CASE WHEN v.kind IN ({llm}) THEN 'llm' WHEN v.kind IN ({classifier}) THEN 'classifier' \
                  ELSE 'rule' END AS evaluator, \
             v.status, v.score, {model} AS model, e.started_at AS at, v.seq, \
             NULL AS labeller, '' AS labeller_key \
         FROM verdicts v JOIN executions e ON e.id = v.execution_id JOIN runs r ON r.id = e.run_id \
         UNION ALL \
         SELECT r.id, r.suite, e.id, e.case_id, e.target, e.tags_json, l.label_set, 'label', \
             'human', CASE WHEN l.label IN ('pass', 'fail') THEN l.label ELSE NULL END, \
             l.score, NULL, l.created_at, -1, l.labeller, l.labeller \
         FROM labels l JOIN executions e ON e.run_id = l.run_id AND e.case_id = l.case_id \
             AND e.target = l.target AND e.repeat_index = l.repeat_index \
             JOIN runs r ON r.id = e.run_id",
        llm = kind_words(EvaluatorType::Llm),
        classifier = kind_words(EvaluatorType::Classifier),
    );
    let mut params: Vec<String> = Vec::new();
    let mut conditions: Vec<String> = Vec::new();
    // `condition` with each `?` numbered, in turn, for one of `values`.
    let mut add = |condition: &str, values: &[String]| {
        let mut numbered = String::new();
        let mut rest = condition;
        for value in values {
            let (head, tail) = rest.split_once('?').unwrap_or((rest, ""));
            params.push(value.clone());
            numbered.push_str(head);
            numbered.push_str(&format!("${}", params.len()));
            rest = tail;
        }
        numbered.push_str(rest);
        conditions.push(numbered);
    };
    let equal = [
        ("suite", &filter.suite),
        ("run_id", &filter.run_id),
        ("target", &filter.target),
        ("case_id", &filter.case_id),
        ("check_name", &filter.check),
        ("kind", &filter.kind),
    ];
    for (column, value) in equal {
        if let Some(value) = value {
            add(&format!("{column} = ?"), std::slice::from_ref(value));
        }
    }
    if let Some(model) = &filter.model {
        if model.contains('@') {
            add("model = ?", std::slice::from_ref(model));
        } else {
            // `provider:name` also matches `provider:name@URL`; substr, not
            // LIKE: case-sensitive on both engines.
            let with_url = format!("{model}@");
            add(
                "(model = ? OR substr(model, 1, length(?)) = ?)",
                &[model.clone(), with_url.clone(), with_url],
            );
        }
    }
    if let Some(evaluator) = filter.evaluator {
        add("evaluator = ?", &[evaluator.as_str().to_owned()]);
    }
    if let Some(status) = filter.status {
        add("status = ?", &[status.as_str().to_owned()]);
    }
    if let Some(since) = &filter.since {
        add("at >= ?", std::slice::from_ref(since));
    }
    if let Some(until) = &filter.until {
        add("at < ?", std::slice::from_ref(until));
    }
    if let Some(tag) = &filter.tag {
        // The tag as it appears in the JSON array.
        let json = serde_json::Value::String(tag.clone()).to_string();
        add(
            "tags_json LIKE ? ESCAPE '\\'",
            &[format!("%{}%", like_escaped(&json))],
        );
    }
    let mut sql = format!("SELECT {COLUMNS}, labeller_key FROM ({union}) q");
    if !conditions.is_empty() {
        sql.push_str(" WHERE ");
        sql.push_str(&conditions.join(" AND "));
    }
    (sql, params)
}

/// `text` with the `LIKE` wildcards (and the escape character `\`) escaped.
fn like_escaped(text: &str) -> String {
    text.replace('\\', "\\\\")
        .replace('%', "\\%")
        .replace('_', "\\_")
}

impl Evaluation {
    fn from_row(row: &AnyRow) -> Result<Evaluation, StoreError> {
        let raw = RawEvaluation::from_row(row)?;
        let what = |column: &str| format!("evaluation of execution {} {column}", raw.execution_id);
        let status = match raw.status.as_deref() {
            None => None,
            Some(word) => Some(
                word.parse::<Status>()
                    .map_err(|e| StoreError::corrupt(what("status"), e))?,
            ),
        };
        let evaluator = raw
            .evaluator
            .parse::<EvaluatorType>()
            .map_err(|e| StoreError::corrupt(what("evaluator"), e))?;
        Ok(Evaluation {
            tags: from_json(&raw.tags_json, || what("tags_json"))?,
            run_id: raw.run_id,
            suite: raw.suite,
            execution_id: raw.execution_id,
            case_id: raw.case_id,
            target: raw.target,
            check: raw.check_name,
            kind: raw.kind,
            evaluator,
            status,
            score: raw.score,
            model: raw.model,
            at: raw.at,
            labeller: raw.labeller,
        })
    }
}

/// A row of the listing as the database returns it.
struct RawEvaluation {
    run_id: String,
    suite: String,
    execution_id: String,
    case_id: String,
    target: String,
    tags_json: String,
    check_name: String,
    kind: String,
    evaluator: String,
    status: Option<String>,
    score: Option<f64>,
    model: Option<String>,
    at: String,
    labeller: Option<String>,
}

impl FromRow<'_, AnyRow> for RawEvaluation {
    fn from_row(row: &AnyRow) -> Result<Self, sqlx::Error> {
        Ok(RawEvaluation {
            run_id: row.try_get("run_id")?,
            suite: row.try_get("suite")?,
            execution_id: row.try_get("execution_id")?,
            case_id: row.try_get("case_id")?,
            target: row.try_get("target")?,
            tags_json: row.try_get("tags_json")?,
            check_name: row.try_get("check_name")?,
            kind: row.try_get("kind")?,
            evaluator: row.try_get("evaluator")?,
            status: row.try_get("status")?,
            score: row.try_get("score")?,
            model: row.try_get("model")?,
            at: row.try_get("at")?,
            labeller: row.try_get("labeller")?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kind_lists_follow_the_kinds_declaration() {
        let llm = kind_words(EvaluatorType::Llm);
        for word in ["'rubric'", "'consensus'", "'llm-judge'", "'role-adherence'"] {
            assert!(llm.contains(word), "{llm}");
        }
        assert!(!llm.contains("'contains'"), "{llm}");
        assert_eq!(kind_words(EvaluatorType::Classifier), "'similar'");
        assert_eq!(kind_words(EvaluatorType::Human), "''");
        let listed = llm.split(", ").count();
        let judged = CheckKind::ALL
            .iter()
            .filter(|k| k.evaluator() == EvaluatorType::Llm)
            .map(|k| 1 + k.aliases().len())
            .sum::<usize>();
        assert_eq!(listed, judged);
    }
}
