//! The JSON API under `/api/`: everything the pages do, and the OpenAPI document
//! that describes it. The pages call the helpers here, so both see the same data.

use std::collections::BTreeMap;

use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use gavel_report::trend::Trend;
use gavel_store::{CaseVersion, Label};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::auth::Actor;
use crate::runs::StartError;
use crate::{AppState, RunRequest, WebError};

/// How many of the latest runs the trends cover.
const TREND_RUNS: u32 = 100;

pub(crate) fn routes() -> Router<AppState> {
    Router::new()
        .route("/openapi.json", get(openapi))
        .route("/runs", get(list_runs).post(start_run))
        .route("/runs/{id}", get(run))
        .route("/runs/{id}/progress", get(run_progress))
        .route("/runs/{id}/labels", get(list_labels).post(add_label))
        .route("/compare", get(compare))
        .route("/trends", get(trends))
        .route("/suites", get(list_suites))
        .route("/suites/{suite}/cases", get(list_cases).post(create_case))
        .route("/suites/{suite}/cases/{key}", get(case).put(update_case))
        .merge(crate::review::api_routes())
}

type ApiResult<T> = Result<Json<T>, WebError>;

/// Starts a run in this process as `who`; returns its id once it is stored.
pub(crate) async fn launch(
    state: &AppState,
    request: &RunRequest,
    who: &str,
) -> Result<String, StartError> {
    state.runs.start(request, who).await
}

impl IntoResponse for StartError {
    fn into_response(self) -> Response {
        match self {
            StartError::Refused(refused) => (
                StatusCode::UNPROCESSABLE_ENTITY,
                Json(json!({ "error": refused.message, "run": refused.run_id })),
            )
                .into_response(),
            StartError::Web(e) => e.into_response(),
        }
    }
}

/// How far a run is.
#[derive(Debug, Serialize)]
pub(crate) struct Progress {
    /// The run's status word, `None` while it is being created.
    pub(crate) status: Option<String>,
    /// Executions recorded so far.
    pub(crate) recorded: usize,
    /// Of which passed.
    pub(crate) passed: usize,
}

pub(crate) async fn progress(state: &AppState, id: &str) -> Result<Progress, WebError> {
    let run = match state.store.run(id).await {
        Ok(run) => run,
        Err(gavel_store::StoreError::NotFound(_)) => {
            return Ok(Progress {
                status: None,
                recorded: 0,
                passed: 0,
            });
        }
        Err(e) => return Err(e.into()),
    };
    let keys = state.store.recorded_keys(&run.id).await?;
    Ok(Progress {
        status: Some(run.status.as_str().to_owned()),
        recorded: keys.len(),
        passed: keys
            .iter()
            .filter(|(_, s)| *s == gavel_core::Status::Pass)
            .count(),
    })
}

/// One execution of two runs side by side.
#[derive(Debug, Serialize)]
pub(crate) struct CompareRow {
    case_id: String,
    target: String,
    repeat_index: u32,
    a_status: Option<String>,
    b_status: Option<String>,
    a_score: Option<f64>,
    b_score: Option<f64>,
    /// `regression` (passed in a, not in b), `fix`, `same`, `added` or `removed`.
    change: &'static str,
}

pub(crate) async fn comparison(
    state: &AppState,
    a: &str,
    b: &str,
) -> Result<Vec<CompareRow>, WebError> {
    let (run_a, run_b) = (state.store.run(a).await?, state.store.run(b).await?);
    let a = state.store.executions(&run_a.id).await?;
    let b = state.store.executions(&run_b.id).await?;
    let key = gavel_core::Execution::key;
    let mut rows: Vec<CompareRow> = a
        .iter()
        .map(|ea| {
            let eb = b.iter().find(|eb| key(eb) == key(ea));
            let pass = |e: &gavel_core::Execution| e.status == gavel_core::Status::Pass;
            CompareRow {
                case_id: ea.case_id.clone(),
                target: ea.target.clone(),
                repeat_index: ea.repeat_index,
                a_status: Some(ea.status.to_string()),
                b_status: eb.map(|e| e.status.to_string()),
                a_score: ea.score,
                b_score: eb.and_then(|e| e.score),
                change: match eb {
                    None => "removed",
                    Some(eb) if pass(ea) && !pass(eb) => "regression",
                    Some(eb) if !pass(ea) && pass(eb) => "fix",
                    Some(_) => "same",
                },
            }
        })
        .collect();
    rows.extend(
        b.iter()
            .filter(|eb| !a.iter().any(|ea| key(ea) == key(eb)))
            .map(|eb| CompareRow {
                case_id: eb.case_id.clone(),
                target: eb.target.clone(),
                repeat_index: eb.repeat_index,
                a_status: None,
                b_status: Some(eb.status.to_string()),
                a_score: None,
                b_score: eb.score,
                change: "added",
            }),
    );
    Ok(rows)
}

/// A stored case for listings.
#[derive(Debug, Serialize)]
pub(crate) struct CaseRow {
    key: String,
    version: u32,
    changed_by: String,
    changed_at: String,
    tags: Vec<String>,
    case: Value,
}

pub(crate) async fn cases(
    state: &AppState,
    suite: &str,
    tag: &str,
) -> Result<Vec<CaseRow>, WebError> {
    // A suite that does not exist is an error, not an empty list.
    state.store.export_suite(suite).await?;
    let versions = state.store.latest_cases(suite).await?;
    Ok(versions
        .into_iter()
        .filter_map(|v| {
            let case = v.case?;
            let tags: Vec<String> = case
                .get("tags")
                .and_then(Value::as_array)
                .map(|t| {
                    t.iter()
                        .filter_map(Value::as_str)
                        .map(str::to_owned)
                        .collect()
                })
                .unwrap_or_default();
            (tag.is_empty() || tags.iter().any(|t| t == tag)).then_some(CaseRow {
                key: v.key,
                version: v.version,
                changed_by: v.changed_by,
                changed_at: v.changed_at,
                tags,
                case,
            })
        })
        .collect())
}

/// A case's versions as JSON rows.
pub(crate) fn history_rows(history: &[CaseVersion]) -> Vec<Value> {
    history
        .iter()
        .map(|v| {
            json!({
                "version": v.version,
                "changed_by": v.changed_by,
                "changed_at": v.changed_at,
                "deleted": v.case.is_none(),
                "case": v.case,
            })
        })
        .collect()
}

/// Why a case was not saved.
pub(crate) enum SaveError {
    /// Fields are wrong: each case field (`rounds[0].checks[1].pattern`,
    /// `id`, or `case`) with its message.
    Fields(BTreeMap<String, String>),
    /// The store failed.
    Web(WebError),
}

impl From<gavel_store::StoreError> for SaveError {
    fn from(e: gavel_store::StoreError) -> Self {
        SaveError::Web(e.into())
    }
}

/// The one rule for the id of a case saved through the UI or the API: required,
/// letters, digits, `-`, `_` and `.` only.
pub(crate) fn check_case_id(id: &str) -> Result<(), &'static str> {
    if id.is_empty() {
        Err("an id is required")
    } else if !id
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
    {
        Err("use letters, digits, `-`, `_` and `.` only")
    } else {
        Ok(())
    }
}

/// Checks a case with the same compile as `gavel validate` and its id with
/// [`check_case_id`], and saves it as a new version by `author`, replacing the
/// case keyed `key`; returns the version. Nothing is stored when the case is
/// refused.
pub(crate) async fn save_case(
    state: &AppState,
    suite: &str,
    key: Option<&str>,
    case: Value,
    author: &str,
) -> Result<u32, SaveError> {
    let refuse = |field: &str, message: String| {
        SaveError::Fields(BTreeMap::from([(field.to_owned(), message)]))
    };
    if let Err(e) = gavel_session::validate_case(&case, &state.runs.allowed()) {
        return Err(match e {
            gavel_session::SessionError::Config { field, message } => {
                let message = format!("{field}: {message}");
                refuse(&field, message)
            }
            gavel_session::SessionError::NotAllowed(found) => SaveError::Fields(
                found
                    .into_iter()
                    .map(|f| (f.field.clone(), gavel_session::trust::refusal(&f)))
                    .collect(),
            ),
            other => refuse("case", other.to_string()),
        });
    }
    let id = case.get("id").and_then(Value::as_str).unwrap_or_default();
    if let Err(why) = check_case_id(id) {
        return Err(refuse("id", format!("id: {why}")));
    }
    if key != Some(id) {
        let taken = match state.store.latest_cases(suite).await {
            Ok(cases) => cases.iter().any(|v| v.key == id && v.case.is_some()),
            Err(gavel_store::StoreError::NotFound(_)) => false,
            Err(e) => return Err(e.into()),
        };
        if taken {
            return Err(refuse(
                "id",
                format!("suite `{suite}` already has a case `{id}`: choose another id"),
            ));
        }
    }
    if let Some(key) = key {
        // Editing a case that is not there is a 404, not a new case.
        let history = state.store.case_history(suite, key).await?;
        if history.last().and_then(|v| v.case.as_ref()).is_none() {
            return Err(SaveError::Web(WebError::Store(
                gavel_store::StoreError::NotFound(format!("case `{key}` of suite `{suite}`")),
            )));
        }
    }
    let author = match author.trim() {
        "" => "web",
        a => a,
    };
    Ok(state.store.save_case(suite, key, case, author).await?)
}

impl IntoResponse for SaveError {
    fn into_response(self) -> Response {
        match self {
            SaveError::Fields(errors) => (
                StatusCode::UNPROCESSABLE_ENTITY,
                Json(json!({ "error": "invalid fields", "fields": errors })),
            )
                .into_response(),
            SaveError::Web(e) => e.into_response(),
        }
    }
}

// ---------------------------------------------------------------- handlers

async fn list_runs(State(state): State<AppState>) -> ApiResult<Vec<gavel_core::RunRecord>> {
    Ok(Json(state.store.runs(200).await?))
}

async fn start_run(
    State(state): State<AppState>,
    actor: Actor,
    Json(request): Json<RunRequest>,
) -> Result<(StatusCode, Json<Value>), StartError> {
    let id = launch(&state, &request, &actor.name).await?;
    Ok((StatusCode::ACCEPTED, Json(json!({ "id": id }))))
}

/// Executions a page of `/api/runs/{id}` holds unless `limit` says otherwise.
const RUN_PAGE_DEFAULT: usize = 100;
/// The most executions one page of `/api/runs/{id}` holds.
const RUN_PAGE_MAX: usize = 500;

/// `/api/runs/{id}`'s page: where it starts, how long, and its filter.
#[derive(Deserialize)]
struct RunPageQuery {
    /// Executions recorded after this sequence number (a page's `page.next`).
    after: Option<i64>,
    /// At most this many executions, 1 to [`RUN_PAGE_MAX`].
    limit: Option<usize>,
    /// Comma-separated statuses shown (`pass`, `fail`, `error`, `skipped`); none: all.
    #[serde(default)]
    status: String,
    /// Text the case id or name contains, ignoring case.
    #[serde(default)]
    q: String,
}

impl RunPageQuery {
    /// The store's page this asks for; a bad field is named.
    fn browse(&self) -> Result<gavel_store::Browse, WebError> {
        let limit = self.limit.unwrap_or(RUN_PAGE_DEFAULT);
        if !(1..=RUN_PAGE_MAX).contains(&limit) {
            return Err(WebError::BadRequest(format!(
                "limit: {limit} is out of range: give 1 to {RUN_PAGE_MAX}"
            )));
        }
        let statuses = self
            .status
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(|s| {
                use gavel_core::Status;
                [Status::Pass, Status::Fail, Status::Error, Status::Skipped]
                    .into_iter()
                    .find(|status| status.as_str() == s)
                    .ok_or_else(|| {
                        WebError::BadRequest(format!(
                            "status: `{s}` is not a status: use pass, fail, error or skipped"
                        ))
                    })
            })
            .collect::<Result<_, _>>()?;
        Ok(gavel_store::Browse {
            statuses,
            search: self.q.clone(),
            after: self.after,
            limit,
        })
    }
}

/// `GET /api/runs/{id}?after=SEQ&limit=N&status=fail,error&q=TEXT`: the run,
/// its gate and counts, and one page of its executions in recording order
/// (with the snapshot cases they ran), read by key as the run page reads
/// them, so a page costs the same in a run of any size; `page.next` is the
/// `after` of the next page (null on the last).
async fn run(
    State(state): State<AppState>,
    Path(id): Path<String>,
    Query(q): Query<RunPageQuery>,
) -> ApiResult<Value> {
    let browse = q.browse()?;
    let run = state.store.run(&id).await?;
    let page = state.store.browse(&run.id, &browse).await?;
    let mut case_ids: Vec<&str> = page.executions.iter().map(|e| e.case_id.as_str()).collect();
    case_ids.sort_unstable();
    case_ids.dedup();
    let versions = state
        .store
        .run_case_versions(&run.id, Some(&case_ids))
        .await?;
    let mut cases = Vec::with_capacity(case_ids.len());
    for case_id in case_ids {
        match state.store.saved_case(&run.id, case_id).await {
            Ok(case) => cases.push(case),
            // An execution whose case is not in the snapshot.
            Err(gavel_store::StoreError::NotFound(_)) => {}
            Err(e) => return Err(e.into()),
        }
    }
    let error = state.store.run_error(&run.id).await?;
    let warnings = state.store.run_warnings(&run.id).await?;
    let started_by = state.store.run_started_by(&run.id).await?;
    let summary = crate::summary::summarize(&state.store, &run).await?;
    Ok(Json(json!({
        "run": run,
        "gate": {
            "verdict": summary.gate,
            "pass_rate": summary.pass_rate,
            "min_pass_rate": summary.min_pass_rate,
            "failures": summary.gate_failures,
        },
        "counts": {
            "total": summary.total,
            "passed": summary.passed,
            "failed": summary.failed,
            "errors": summary.errors,
            "skipped": summary.skipped,
        },
        "error": error,
        "warnings": warnings,
        "started_by": started_by,
        "cases": cases,
        "case_versions": versions
            .iter()
            .map(|(suite, key, version)| json!({"suite": suite, "case": key, "version": version}))
            .collect::<Vec<_>>(),
        "executions": page.executions,
        "page": {
            "limit": browse.limit,
            "matching": page.matching,
            "next": page.next,
        },
    })))
}

async fn run_progress(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> ApiResult<Progress> {
    Ok(Json(progress(&state, &id).await?))
}

async fn list_labels(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> ApiResult<Vec<Label>> {
    Ok(Json(state.store.run_labels(&id).await?))
}

#[derive(Deserialize)]
struct LabelBody {
    case_id: String,
    target: String,
    repeat_index: u32,
    label: String,
    score: Option<f64>,
    note: Option<String>,
}

async fn add_label(
    State(state): State<AppState>,
    actor: Actor,
    Path(id): Path<String>,
    Json(body): Json<LabelBody>,
) -> Result<StatusCode, WebError> {
    state
        .store
        .add_label(&Label {
            run_id: id,
            case_id: body.case_id,
            target: body.target,
            repeat_index: body.repeat_index,
            label: body.label,
            score: body.score,
            who: actor.name,
            note: body.note,
            created_at: String::new(),
        })
        .await?;
    Ok(StatusCode::CREATED)
}

#[derive(Deserialize)]
struct CompareQuery {
    a: String,
    b: String,
}

async fn compare(
    State(state): State<AppState>,
    Query(q): Query<CompareQuery>,
) -> ApiResult<Vec<CompareRow>> {
    Ok(Json(comparison(&state, &q.a, &q.b).await?))
}

/// Pass rate and mean score per suite, tag, target and judge model over the latest
/// runs.
async fn trends(State(state): State<AppState>) -> ApiResult<Trend> {
    let trend = gavel_session::history::trend(&state.store, TREND_RUNS).await?;
    Ok(Json(trend))
}

async fn list_suites(State(state): State<AppState>) -> ApiResult<Vec<Value>> {
    let suites = state.store.suites().await?;
    Ok(Json(
        suites
            .into_iter()
            .map(|s| json!({"name": s.name, "cases": s.cases, "updated_at": s.updated_at, "updated_by": s.updated_by}))
            .collect(),
    ))
}

#[derive(Deserialize)]
struct TagQuery {
    #[serde(default)]
    tag: String,
}

async fn list_cases(
    State(state): State<AppState>,
    Path(suite): Path<String>,
    Query(q): Query<TagQuery>,
) -> ApiResult<Vec<CaseRow>> {
    Ok(Json(cases(&state, &suite, &q.tag).await?))
}

async fn case(
    State(state): State<AppState>,
    Path((suite, key)): Path<(String, String)>,
) -> ApiResult<Vec<Value>> {
    let history = state.store.case_history(&suite, &key).await?;
    if history.is_empty() {
        return Err(
            gavel_store::StoreError::NotFound(format!("case `{key}` of suite `{suite}`")).into(),
        );
    }
    Ok(Json(history_rows(&history)))
}

/// A case to save: the case as in a suite file (the signed-in user saves it).
#[derive(Deserialize)]
struct CaseBody {
    case: Value,
}

async fn create_case(
    State(state): State<AppState>,
    actor: Actor,
    Path(suite): Path<String>,
    Json(body): Json<CaseBody>,
) -> Response {
    match save_case(&state, &suite, None, body.case, &actor.name).await {
        Ok(version) => (StatusCode::CREATED, Json(json!({ "version": version }))).into_response(),
        Err(e) => e.into_response(),
    }
}

async fn update_case(
    State(state): State<AppState>,
    actor: Actor,
    Path((suite, key)): Path<(String, String)>,
    Json(body): Json<CaseBody>,
) -> Response {
    match save_case(&state, &suite, Some(&key), body.case, &actor.name).await {
        Ok(version) => Json(json!({ "version": version })).into_response(),
        Err(e) => e.into_response(),
    }
}

/// `GET /api/openapi.json`: the API described, by hand, as OpenAPI 3.1.
async fn openapi() -> impl IntoResponse {
    (
        [(axum::http::header::CONTENT_TYPE, "application/json")],
        include_str!("openapi.json"),
    )
}
