//! database: SQL against the agent's own database, the session id bound to `$1`:
//! the conversation was persisted, has at least N messages, holds given rows.
//!
//! A database that cannot be opened or queried is an `error` (infrastructure),
//! never a `fail`.

use gavel_core::CheckKind;
use gavel_core::agent_check::{DatabaseSpec, RowExpectation};
use gavel_core::{Status, Verdict};
use serde_json::{Map, Value, json};

use futures::future::BoxFuture;

use crate::check::{AwaitedCheck, Input};
use crate::error::FieldError;
use crate::finding::{Finding, VerdictHead};
use crate::json::values_equal;
use crate::names::short;
use crate::runtime::JudgeRuntime;
use crate::sql::Database;

/// Rows kept in the evidence.
const EVIDENCE_ROWS: usize = 20;

/// A compiled database check.
pub(crate) struct DatabaseCheck {
    db: Database,
    query: String,
    min_rows: usize,
    max_rows: Option<usize>,
    rows: Vec<RowExpectation>,
}

impl DatabaseCheck {
    /// Resolves the database and validates the row bounds.
    pub(crate) fn compile(spec: &DatabaseSpec) -> Result<Self, FieldError> {
        let db = Database::parse(&spec.database).map_err(|e| FieldError::new("database", e))?;
        if spec.query.trim().is_empty() {
            return Err(FieldError::new("query", "give the SQL query"));
        }
        let min_rows = spec.min_rows.unwrap_or(1);
        if spec.max_rows.is_some_and(|max| max < min_rows) {
            return Err(FieldError::new(
                "max_rows",
                format!("is below min_rows ({min_rows})"),
            ));
        }
        Ok(DatabaseCheck {
            db,
            query: spec.query.clone(),
            min_rows,
            max_rows: spec.max_rows,
            rows: spec.rows.clone(),
        })
    }

    /// Runs the query for the session and checks the rows.
    async fn evaluate(&self, session_id: &str) -> Finding {
        let rows = match self.db.rows(&self.query, session_id).await {
            Ok(rows) => rows,
            Err(why) => {
                return Finding {
                    score: None,
                    status: Status::Error,
                    reason: why,
                    evidence: json!({ "database": self.db.shown(), "session_id": session_id }),
                };
            }
        };
        let mut problems = Vec::new();
        if rows.len() < self.min_rows {
            problems.push(format!(
                "{} rows for session `{session_id}`, expected at least {}",
                rows.len(),
                self.min_rows
            ));
        }
        if let Some(max) = self.max_rows.filter(|max| rows.len() > *max) {
            problems.push(format!("{} rows, expected at most {max}", rows.len()));
        }
        let absent: Vec<&RowExpectation> = self
            .rows
            .iter()
            .filter(|e| !rows.iter().any(|r| matches(r, e)))
            .collect();
        for e in &absent {
            problems.push(format!("no row with {}", json!(e)));
        }
        let evidence = json!({
            "database": self.db.shown(),
            "session_id": session_id,
            "row_count": rows.len(),
            "rows": rows.iter().take(EVIDENCE_ROWS).collect::<Vec<_>>(),
            "absent": absent,
        });
        if problems.is_empty() {
            Finding::pass(
                format!("{} rows for session `{session_id}`", rows.len()),
                evidence,
            )
        } else {
            Finding::fail(problems.join("; "), evidence)
        }
    }
}

impl AwaitedCheck for DatabaseCheck {
    fn kind(&self) -> CheckKind {
        CheckKind::Database
    }

    fn judges(&self) -> Vec<crate::JudgeUse> {
        Vec::new()
    }

    fn grade<'a>(
        &'a self,
        head: VerdictHead<'a>,
        input: &'a Input<'a>,
        _rt: &'a JudgeRuntime<'a>,
    ) -> BoxFuture<'a, Verdict> {
        Box::pin(async move {
            self.evaluate(&input.transcript.session_id)
                .await
                .verdict(head)
        })
    }

    /// Display name, e.g. `database "SELECT … = $1" >= 2 rows`.
    fn name(&self) -> String {
        let mut name = format!(
            "database {:?} >= {} rows",
            short(&self.query),
            self.min_rows
        );
        if let Some(max) = self.max_rows {
            name.push_str(&format!(" <= {max}"));
        }
        name
    }
}

/// Whether a row has every expected column with an equal value.
fn matches(row: &Map<String, Value>, expected: &RowExpectation) -> bool {
    expected
        .iter()
        .all(|(k, v)| row.get(k).is_some_and(|got| values_equal(got, v)))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use gavel_core::{Status, Transcript};
    use sqlx::{AnyConnection, Connection};

    use crate::testing::{case, compile, compile_err, turn};
    use crate::{JudgeRuntime, NoJudgeModels};

    async fn agent_db(dir: &std::path::Path) -> String {
        let path = dir.join("agent.db");
        sqlx::any::install_default_drivers();
        let mut conn = AnyConnection::connect(&format!("sqlite://{}?mode=rwc", path.display()))
            .await
            .unwrap();
        for sql in [
            "CREATE TABLE messages (session_id TEXT, seq INTEGER, role TEXT, content TEXT)",
            "INSERT INTO messages VALUES ('s1', 1, 'user', 'hi'), ('s1', 2, 'assistant', 'hello'), ('s2', 1, 'user', 'x')",
        ] {
            sqlx::query(sql).execute(&mut conn).await.unwrap();
        }
        path.display().to_string()
    }

    async fn check(body: &str, session: &str) -> gavel_core::Verdict {
        let plan = compile(&case(body)).unwrap();
        let transcript = Transcript {
            session_id: session.into(),
            turns: vec![turn(0, "ok")],
        };
        plan.run(&transcript, &JudgeRuntime::new(&NoJudgeModels))
            .await
            .remove(0)
    }

    #[tokio::test]
    async fn rows_of_the_session_are_counted_and_matched() {
        let dir = tempfile::tempdir().unwrap();
        let db = agent_db(dir.path()).await;
        let body = format!(
            "input: q\nchecks:\n  - type: database\n    database: {db}\n    query: SELECT role, content FROM messages WHERE session_id = $1\n    min_rows: 2\n    rows: [{{role: assistant, content: hello}}]\n"
        );
        let v = check(&body, "s1").await;
        assert_eq!((v.status, v.round), (Status::Pass, None), "{}", v.reason);
        assert_eq!(v.reason, "2 rows for session `s1`");
        assert_eq!(v.evidence.to_json()["rows"][1]["content"], "hello");

        let v = check(&body, "s2").await;
        assert_eq!(v.status, Status::Fail);
        assert_eq!(
            v.reason,
            "1 rows for session `s2`, expected at least 2; no row with {\"content\":\"hello\",\"role\":\"assistant\"}"
        );
        let v = check(&body, "nobody").await;
        assert_eq!(v.status, Status::Fail);
    }

    #[tokio::test]
    async fn an_unreachable_database_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let body = format!(
            "input: q\nchecks: [{{type: database, database: '{}', query: 'SELECT 1'}}]\n",
            dir.path().join("missing.db").display()
        );
        let v = check(&body, "s").await;
        assert_eq!(v.status, Status::Error);
        assert!(v.reason.starts_with("cannot open"), "{}", v.reason);
        let db = agent_db(dir.path()).await;
        let body = format!(
            "input: q\nchecks: [{{type: database, database: '{db}', query: 'SELECT nope FROM x'}}]\n"
        );
        assert_eq!(check(&body, "s").await.status, Status::Error);
    }

    #[test]
    fn bounds_are_validated() {
        let e = compile_err(
            "input: q\nchecks: [{type: database, database: a.db, query: 'SELECT 1', min_rows: 3, max_rows: 1}]\n",
        );
        assert!(
            e.contains("checks[0].max_rows: is below min_rows (3)"),
            "{e}"
        );
        let e = compile_err(
            "input: q\nchecks: [{type: database, database: 'mysql://x', query: 'SELECT 1'}]\n",
        );
        assert!(e.contains("checks[0].database: unsupported"), "{e}");
    }
}
