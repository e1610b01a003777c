//! Private row types: what the tables hold, and their conversion to and from the
//! gavel-core types (which know nothing of sqlx).
//!
//! The Any driver carries only bool, integers, floats, text and blobs, so ids and
//! times are text, JSON is text, and unsigned counts are BIGINT. Reading never
//! panics: an unreadable value is [`StoreError::Corrupt`] naming the row and column.

use gavel_core::{Case, Evidence, RunRecord, TargetFailure, ToolCall, Turn, Usage, Verdict};
use serde::Serialize;
use serde::de::DeserializeOwned;
use sqlx::any::{AnyRow, AnyTypeInfo};
use sqlx::encode::IsNull;
use sqlx::error::BoxDynError;
use sqlx::{Any, Database, Encode, FromRow, Row, Type};

use crate::StoreError;

/// Serializes a value to JSON text for a column.
pub(crate) fn to_json<T: Serialize + ?Sized>(
    value: &T,
    what: impl FnOnce() -> String,
) -> Result<String, StoreError> {
    serde_json::to_string(value).map_err(|e| StoreError::invalid(what(), e))
}

/// Parses a JSON column.
pub(crate) fn from_json<T: DeserializeOwned>(
    text: &str,
    what: impl FnOnce() -> String,
) -> Result<T, StoreError> {
    serde_json::from_str(text).map_err(|e| StoreError::corrupt(what(), e))
}

/// A count or duration as BIGINT; values past `i64::MAX` cannot be stored.
pub(crate) fn to_i64<T: TryInto<i64> + Copy + std::fmt::Display>(
    value: T,
    what: impl FnOnce() -> String,
) -> Result<i64, StoreError> {
    value
        .try_into()
        .map_err(|_| StoreError::invalid(what(), format!("{value} is out of range")))
}

/// A BIGINT column back to its unsigned type.
pub(crate) fn from_i64<T: TryFrom<i64>>(
    value: i64,
    what: impl FnOnce() -> String,
) -> Result<T, StoreError> {
    T::try_from(value).map_err(|_| StoreError::corrupt(what(), format!("{value} is out of range")))
}

/// A status word back to its enum.
fn parse_word<T>(text: &str, what: impl FnOnce() -> String) -> Result<T, StoreError>
where
    T: std::str::FromStr,
    T::Err: std::fmt::Display,
{
    text.parse()
        .map_err(|e: T::Err| StoreError::corrupt(what(), e))
}

/// The columns of `runs` that [`RunRow`] reads, for `concat!` into static SQL.
macro_rules! run_columns {
    () => {
        "id, suite, status, started_at, finished_at, config_json, planned"
    };
}
pub(crate) use run_columns;

/// A row of `runs`.
pub(crate) struct RunRow {
    id: String,
    suite: String,
    status: String,
    started_at: String,
    finished_at: Option<String>,
    config_json: String,
    planned: Option<i64>,
}

impl RunRow {
    pub(crate) fn into_record(self) -> Result<RunRecord, StoreError> {
        let id = self.id;
        let planned = match self.planned {
            Some(n) => Some(from_i64(n, || format!("run {id} planned"))?),
            None => None,
        };
        Ok(RunRecord {
            status: parse_word(&self.status, || format!("run {id} status"))?,
            planned,
            config: from_json(&self.config_json, || format!("run {id} config_json"))?,
            suite: self.suite,
            started_at: self.started_at,
            finished_at: self.finished_at,
            id,
        })
    }
}

impl FromRow<'_, AnyRow> for RunRow {
    fn from_row(row: &AnyRow) -> Result<Self, sqlx::Error> {
        Ok(RunRow {
            id: row.try_get("id")?,
            suite: row.try_get("suite")?,
            status: row.try_get("status")?,
            started_at: row.try_get("started_at")?,
            finished_at: row.try_get("finished_at")?,
            config_json: row.try_get("config_json")?,
            planned: row.try_get("planned")?,
        })
    }
}

/// A row of `run_cases`.
pub(crate) struct CaseRow {
    seq: i64,
    source: String,
    case_json: String,
}

impl CaseRow {
    /// Its position in the snapshot.
    pub(crate) fn seq(&self) -> i64 {
        self.seq
    }

    pub(crate) fn into_case(self, run_id: &str) -> Result<Case, StoreError> {
        let mut case: Case = from_json(&self.case_json, || {
            format!("run {run_id} case #{} case_json", self.seq)
        })?;
        case.source = self.source;
        Ok(case)
    }
}

impl CaseRow {
    /// A row of `seq, source, case_json` from the direct SQLite connection.
    pub(crate) fn from_sqlite(row: &rusqlite::Row<'_>) -> rusqlite::Result<Self> {
        Ok(CaseRow {
            seq: row.get(0)?,
            source: row.get(1)?,
            case_json: row.get(2)?,
        })
    }
}

impl FromRow<'_, AnyRow> for CaseRow {
    fn from_row(row: &AnyRow) -> Result<Self, sqlx::Error> {
        Ok(CaseRow {
            seq: row.try_get("seq")?,
            source: row.try_get("source")?,
            case_json: row.try_get("case_json")?,
        })
    }
}

/// Reads a row type from its columns: by name from sqlx's Any rows, and by
/// position from the direct connection's rusqlite rows, whose statements select
/// the columns in the order of the fields (a name lookup there compares every
/// column name for every value read).
macro_rules! columns {
    ($row:ident { $($column:ident),* $(,)? }) => {
        impl FromRow<'_, AnyRow> for $row {
            fn from_row(row: &AnyRow) -> Result<Self, sqlx::Error> {
                Ok($row { $($column: row.try_get(stringify!($column))?,)* })
            }
        }

        impl $row {
            /// The columns, in the order `from_sqlite` reads them.
            #[cfg(test)]
            pub(crate) const COLUMNS: &[&str] = &[$(stringify!($column)),*];

            pub(crate) fn from_sqlite(row: &rusqlite::Row<'_>) -> rusqlite::Result<Self> {
                let mut index = 0;
                let mut next = || {
                    index += 1;
                    index - 1
                };
                // Struct fields are evaluated in the order written.
                Ok($row { $($column: row.get(next())?,)* })
            }
        }
    };
}

/// A row of `executions`, without its children.
pub(crate) struct ExecutionRow {
    pub(crate) id: String,
    pub(crate) seq: i64,
    pub(crate) case_id: String,
    pub(crate) case_name: String,
    pub(crate) target: String,
    pub(crate) repeat_index: i64,
    tags_json: String,
    status: String,
    score: Option<f64>,
    reason: Option<String>,
    started_at: String,
    duration_ms: i64,
    session_id: String,
}

impl ExecutionRow {
    /// The execution, with its transcript and verdicts, already assembled.
    pub(crate) fn into_execution(
        self,
        turns: Vec<Turn>,
        verdicts: Vec<Verdict>,
    ) -> Result<gavel_core::Execution, StoreError> {
        let id = self.id;
        Ok(gavel_core::Execution {
            repeat_index: from_i64(self.repeat_index, || format!("execution {id} repeat_index"))?,
            tags: from_json(&self.tags_json, || format!("execution {id} tags_json"))?,
            status: parse_word(&self.status, || format!("execution {id} status"))?,
            duration_ms: from_i64(self.duration_ms, || format!("execution {id} duration_ms"))?,
            case_id: self.case_id,
            case_name: self.case_name,
            target: self.target,
            score: self.score,
            transcript: gavel_core::Transcript {
                session_id: self.session_id,
                turns,
            },
            verdicts,
            reason: self.reason,
            started_at: self.started_at,
        })
    }
}

columns!(ExecutionRow {
    id,
    seq,
    case_id,
    case_name,
    target,
    repeat_index,
    tags_json,
    status,
    score,
    reason,
    started_at,
    duration_ms,
    session_id
});

/// A row of `turns`, without its tool calls.
pub(crate) struct TurnRow {
    pub(crate) execution_id: String,
    pub(crate) seq: i64,
    round: i64,
    input: String,
    output: String,
    response_json: Option<String>,
    latency_ms: i64,
    usage_json: Option<String>,
    failure_json: Option<String>,
    conversation_json: Option<String>,
}

/// A turn's place in its conversation (and gavel's own model calls around it,
/// which agents answered and called its tools, the tool calls' ids, and what a
/// coding agent left in its workspace), as stored in
/// `turns.conversation_json`: `None` for a plain turn.
pub(crate) fn conversation_json(turn: &Turn) -> Option<serde_json::Value> {
    let tool_agents: Vec<Option<&str>> =
        turn.tool_calls.iter().map(|c| c.agent.as_deref()).collect();
    let has_tool_agents = tool_agents.iter().any(Option::is_some);
    let tool_ids: Vec<Option<&str>> = turn.tool_calls.iter().map(|c| c.id.as_deref()).collect();
    let has_tool_ids = tool_ids.iter().any(Option::is_some);
    if !turn.followup
        && turn.branch.is_none()
        && turn.stream.is_none()
        && turn.harness_usage.is_none()
        && turn.attempts.is_none()
        && turn.agent.is_none()
        && turn.workspace.is_none()
        && !has_tool_agents
        && !has_tool_ids
        && turn.model_calls.is_empty()
    {
        return None;
    }
    Some(serde_json::json!({
        "followup": turn.followup,
        "branch": turn.branch,
        "stream": turn.stream,
        "harness_usage": turn.harness_usage,
        "attempts": turn.attempts,
        "agent": turn.agent,
        "tool_agents": if has_tool_agents { serde_json::json!(tool_agents) } else { serde_json::Value::Null },
        "tool_ids": if has_tool_ids { serde_json::json!(tool_ids) } else { serde_json::Value::Null },
        "model_calls": turn.model_calls,
        "workspace": turn.workspace,
    }))
}

/// The stored form of [`conversation_json`].
#[derive(Default, serde::Deserialize)]
struct Conversation {
    #[serde(default)]
    followup: bool,
    #[serde(default)]
    branch: Option<String>,
    #[serde(default)]
    stream: Option<gavel_core::StreamStats>,
    #[serde(default)]
    harness_usage: Option<Usage>,
    #[serde(default)]
    attempts: Option<gavel_core::Attempts>,
    #[serde(default)]
    agent: Option<String>,
    /// The agent of each tool call of the turn, in order.
    #[serde(default)]
    tool_agents: Option<Vec<Option<String>>>,
    /// The id of each tool call of the turn, in order.
    #[serde(default)]
    tool_ids: Option<Vec<Option<String>>>,
    #[serde(default)]
    model_calls: Vec<gavel_core::ModelCall>,
    #[serde(default)]
    workspace: Option<Box<gavel_core::workspace::WorkspaceState>>,
}

impl TurnRow {
    pub(crate) fn into_turn(self, mut tool_calls: Vec<ToolCall>) -> Result<Turn, StoreError> {
        let at = format!("execution {} turn #{}", self.execution_id, self.seq);
        let conversation = self
            .conversation_json
            .map(|j| from_json::<Conversation>(&j, || format!("{at} conversation_json")))
            .transpose()?;
        let c = conversation.unwrap_or_default();
        for (call, agent) in tool_calls.iter_mut().zip(c.tool_agents.unwrap_or_default()) {
            call.agent = agent;
        }
        for (call, id) in tool_calls.iter_mut().zip(c.tool_ids.unwrap_or_default()) {
            call.id = id;
        }
        Ok(Turn {
            followup: c.followup,
            branch: c.branch,
            stream: c.stream,
            harness_usage: c.harness_usage,
            model_calls: c.model_calls,
            attempts: c.attempts,
            agent: c.agent,
            workspace: c.workspace,
            round: from_i64(self.round, || format!("{at} round"))?,
            input: self.input,
            output: self.output,
            response: self
                .response_json
                .map(|j| from_json(&j, || format!("{at} response_json")))
                .transpose()?,
            tool_calls,
            latency_ms: from_i64(self.latency_ms, || format!("{at} latency_ms"))?,
            usage: self
                .usage_json
                .map(|j| from_json::<Usage>(&j, || format!("{at} usage_json")))
                .transpose()?,
            failure: self
                .failure_json
                .map(|j| from_json::<TargetFailure>(&j, || format!("{at} failure_json")))
                .transpose()?,
        })
    }
}

columns!(TurnRow {
    execution_id,
    seq,
    round,
    input,
    output,
    response_json,
    latency_ms,
    usage_json,
    failure_json,
    conversation_json
});

/// A row of `tool_calls`.
pub(crate) struct ToolCallRow {
    pub(crate) execution_id: String,
    pub(crate) turn_seq: i64,
    seq: i64,
    name: String,
    arguments_json: String,
    result_json: Option<String>,
}

impl ToolCallRow {
    pub(crate) fn into_tool_call(self) -> Result<ToolCall, StoreError> {
        let at = format!(
            "execution {} turn #{} tool call #{}",
            self.execution_id, self.turn_seq, self.seq
        );
        Ok(ToolCall {
            name: self.name,
            arguments: from_json(&self.arguments_json, || format!("{at} arguments_json"))?,
            result: self
                .result_json
                .map(|j| from_json(&j, || format!("{at} result_json")))
                .transpose()?,
            ..ToolCall::default()
        })
    }
}

columns!(ToolCallRow {
    execution_id,
    turn_seq,
    seq,
    name,
    arguments_json,
    result_json
});

/// A row of `verdicts`.
pub(crate) struct VerdictRow {
    pub(crate) execution_id: String,
    seq: i64,
    round: Option<i64>,
    check_name: String,
    kind: String,
    status: String,
    score: Option<f64>,
    threshold: Option<f64>,
    reason: String,
    evidence_json: Option<String>,
    cost_usd: Option<f64>,
}

impl VerdictRow {
    pub(crate) fn into_verdict(self) -> Result<Verdict, StoreError> {
        let at = format!("execution {} verdict #{}", self.execution_id, self.seq);
        let kind = parse_word(&self.kind, || format!("{at} kind"))?;
        let evidence = match self.evidence_json {
            Some(j) => from_json(&j, || format!("{at} evidence_json"))?,
            None => serde_json::Value::Null,
        };
        Ok(Verdict {
            round: self
                .round
                .map(|r| from_i64(r, || format!("{at} round")))
                .transpose()?,
            status: parse_word(&self.status, || format!("{at} status"))?,
            evidence: Evidence::read(kind, evidence),
            check: self.check_name,
            kind,
            score: self.score,
            threshold: self.threshold,
            reason: self.reason,
            cost_usd: self.cost_usd,
        })
    }
}

columns!(VerdictRow {
    execution_id,
    seq,
    round,
    check_name,
    kind,
    status,
    score,
    threshold,
    reason,
    evidence_json,
    cost_usd
});

/// An optional `f64` to bind. Works around sqlx 0.9's Any driver, whose
/// `AnyArguments::convert_into` swaps the two float kinds for NULLs (sqlx PR #4290,
/// superseded by #4359): a NULL `f64` goes to PostgreSQL as `float4`, the statement is
/// cached with that type, and a later non-NULL `float8` in the same place fails with
/// "incorrect binary data format". A NULL `f32` goes out as `float8`. Drop this once
/// sqlx is fixed (the story test binds NULL then non-NULL scores).
pub(crate) struct Float(pub(crate) Option<f64>);

impl Type<Any> for Float {
    fn type_info() -> AnyTypeInfo {
        <f64 as Type<Any>>::type_info()
    }
}

impl Encode<'_, Any> for Float {
    fn encode_by_ref(
        &self,
        buf: &mut <Any as Database>::ArgumentBuffer,
    ) -> Result<IsNull, BoxDynError> {
        match self.0 {
            Some(value) => <f64 as Encode<'_, Any>>::encode_by_ref(&value, buf),
            None => <Option<f32> as Encode<'_, Any>>::encode_by_ref(&None, buf),
        }
    }
}
