//! A stored case's lifecycle in the UI and the API: its history (who changed
//! what), a diff between any two versions, restore of an old version (checked
//! by the same compile as `gavel validate`), archive and delete. Every change is
//! recorded under the signed-in [`Actor`].

use std::time::Duration;

use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::{delete, get, post};
use axum::{Form, Json, Router};
use gavel_store::{CaseVersion, StoreError};
use minijinja::context;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use similar::{ChangeTag, TextDiff};

use crate::auth::Actor;
use crate::pages::path_segment;
use crate::view::{render, ser};
use crate::{AppState, WebError};

/// How long a diff may search for the shortest edit before it settles for a
/// longer one: diffs of huge cases stay bounded.
const DIFF_TIMEOUT: Duration = Duration::from_secs(1);

/// The pages.
pub(crate) fn routes() -> Router<AppState> {
    Router::new()
        .route("/suites/{suite}/retired", get(retired))
        .route("/suites/{suite}/cases/{key}/history", get(history))
        .route("/suites/{suite}/cases/{key}/diff", get(diff_page))
        .route("/suites/{suite}/cases/{key}/delete", post(delete_form))
        .route("/suites/{suite}/cases/{key}/archive", post(archive_form))
        .route("/suites/{suite}/cases/{key}/restore", post(restore_form))
}

/// The API.
pub(crate) fn api_routes() -> Router<AppState> {
    Router::new()
        .route("/api/suites/{suite}/cases/{key}", delete(api_delete))
        .route("/api/suites/{suite}/cases/{key}/archive", post(api_archive))
        .route("/api/suites/{suite}/cases/{key}/restore", post(api_restore))
        .route("/api/suites/{suite}/cases/{key}/diff", get(api_diff))
}

/// One line of a diff.
#[derive(Debug, Serialize)]
pub(crate) struct DiffLine {
    /// `+` added, `-` removed, ` ` kept.
    sign: &'static str,
    text: String,
}

/// Two versions of a case, line by line (as YAML; a deletion is empty).
#[derive(Debug, Serialize)]
pub(crate) struct Diff {
    from: u32,
    to: u32,
    /// No line differs.
    same: bool,
    lines: Vec<DiffLine>,
}

fn yaml(version: &CaseVersion) -> String {
    version
        .case
        .as_ref()
        .map(|c| serde_saphyr::to_string(c).unwrap_or_else(|_| c.to_string()))
        .unwrap_or_default()
}

fn find(history: &[CaseVersion], version: u32) -> Result<&CaseVersion, WebError> {
    history
        .iter()
        .find(|v| v.version == version)
        .ok_or_else(|| WebError::BadRequest(format!("the case has no version {version}")))
}

#[derive(Deserialize)]
struct DiffQuery {
    from: Option<u32>,
    to: Option<u32>,
}

/// The diff of `from` and `to` (default: the version before the latest, and
/// the latest).
fn diff(history: &[CaseVersion], q: &DiffQuery) -> Result<Diff, WebError> {
    let latest = history.last().map_or(1, |v| v.version);
    let to = q.to.unwrap_or(latest);
    let from = q.from.unwrap_or(to.saturating_sub(1).max(1));
    let (old, new) = (yaml(find(history, from)?), yaml(find(history, to)?));
    let diff = TextDiff::configure()
        .timeout(DIFF_TIMEOUT)
        .diff_lines(&old, &new);
    let lines: Vec<DiffLine> = diff
        .iter_all_changes()
        .map(|change| DiffLine {
            sign: match change.tag() {
                ChangeTag::Insert => "+",
                ChangeTag::Delete => "-",
                ChangeTag::Equal => " ",
            },
            text: change.value().trim_end_matches('\n').to_owned(),
        })
        .collect();
    let same = lines.iter().all(|l| l.sign == " ");
    Ok(Diff {
        from,
        to,
        same,
        lines,
    })
}

async fn history_of(
    state: &AppState,
    suite: &str,
    key: &str,
) -> Result<Vec<CaseVersion>, WebError> {
    let history = state.store.case_history(suite, key).await?;
    if history.is_empty() {
        return Err(StoreError::NotFound(format!("case `{key}` of suite `{suite}`")).into());
    }
    Ok(history)
}

/// A version for the history table.
pub(crate) fn row(v: &CaseVersion) -> Value {
    json!({
        "key": v.key,
        "version": v.version,
        "changed_by": v.changed_by,
        "changed_at": v.changed_at,
        "change": v.change,
        "archived": v.archived,
        "deleted": v.case.is_none(),
    })
}

/// `GET /suites/{suite}/cases/{key}/history`: every version, newest first,
/// with who made it and what it changed; diff and restore each.
async fn history(
    State(state): State<AppState>,
    Path((suite, key)): Path<(String, String)>,
    Query(q): Query<Restored>,
) -> Result<Response, WebError> {
    let history = history_of(&state, &suite, &key).await?;
    let latest = history.last().map(row);
    let rows: Vec<Value> = history.iter().rev().map(row).collect();
    Ok(render(
        &state,
        "history.html",
        context! {
            suite => suite, key => key, versions => ser(&rows), latest => ser(&latest),
            restored => q.restored,
        },
    )?
    .into_response())
}

/// The version a restore just copied, to say so.
#[derive(Deserialize)]
struct Restored {
    restored: Option<u32>,
}

/// `GET /suites/{suite}/cases/{key}/diff?from=N&to=M`.
async fn diff_page(
    State(state): State<AppState>,
    Path((suite, key)): Path<(String, String)>,
    Query(q): Query<DiffQuery>,
) -> Result<Response, WebError> {
    let history = history_of(&state, &suite, &key).await?;
    let diff = diff(&history, &q)?;
    let versions: Vec<Value> = history.iter().rev().map(row).collect();
    Ok(render(
        &state,
        "diff.html",
        context! {
            suite => suite, key => key, diff => ser(&diff), versions => ser(&versions),
            latest => ser(&history.last().map(row)),
        },
    )?
    .into_response())
}

/// `GET /suites/{suite}/retired`: archived and deleted cases, to bring back.
async fn retired(
    State(state): State<AppState>,
    Path(suite): Path<String>,
) -> Result<Response, WebError> {
    state.store.export_suite(&suite).await?;
    let archived: Vec<Value> = state
        .store
        .archived_cases(&suite)
        .await?
        .iter()
        .map(row)
        .collect();
    let deleted: Vec<Value> = state
        .store
        .deleted_cases(&suite)
        .await?
        .iter()
        .map(row)
        .collect();
    Ok(render(
        &state,
        "retired.html",
        context! { suite => suite, archived => ser(&archived), deleted => ser(&deleted) },
    )?
    .into_response())
}

/// Restores version `version` when it still compiles; the new version.
async fn restore(
    state: &AppState,
    suite: &str,
    key: &str,
    version: u32,
    who: &str,
) -> Result<u32, WebError> {
    let history = history_of(state, suite, key).await?;
    if let Some(case) = &find(&history, version)?.case
        && let Err(e) = gavel_session::validate_case(case, &state.runs.allowed())
    {
        let why = match e {
            gavel_session::SessionError::NotAllowed(_) => "may not be stored here",
            _ => "no longer compiles",
        };
        return Err(WebError::BadRequest(format!(
            "version {version} {why}: {e}"
        )));
    }
    Ok(state.store.restore_case(suite, key, version, who).await?)
}

fn to_history(suite: &str, key: &str) -> Redirect {
    Redirect::to(&format!(
        "/suites/{}/cases/{}/history",
        path_segment(suite),
        path_segment(key)
    ))
}

/// `POST …/delete`.
async fn delete_form(
    State(state): State<AppState>,
    actor: Actor,
    Path((suite, key)): Path<(String, String)>,
) -> Result<Redirect, WebError> {
    state.store.delete_case(&suite, &key, &actor.name).await?;
    Ok(to_history(&suite, &key))
}

#[derive(Deserialize)]
struct ArchiveForm {
    /// `true` to archive, `false` to bring back.
    archived: bool,
}

/// `POST …/archive` with `archived=true|false`.
async fn archive_form(
    State(state): State<AppState>,
    actor: Actor,
    Path((suite, key)): Path<(String, String)>,
    Form(f): Form<ArchiveForm>,
) -> Result<Redirect, WebError> {
    state
        .store
        .archive_case(&suite, &key, f.archived, &actor.name)
        .await?;
    Ok(to_history(&suite, &key))
}

#[derive(Deserialize)]
struct RestoreForm {
    version: u32,
}

/// `POST …/restore` with `version=N`.
async fn restore_form(
    State(state): State<AppState>,
    actor: Actor,
    Path((suite, key)): Path<(String, String)>,
    Form(f): Form<RestoreForm>,
) -> Result<Redirect, WebError> {
    restore(&state, &suite, &key, f.version, &actor.name).await?;
    Ok(Redirect::to(&format!(
        "/suites/{}/cases/{}/history?restored={}",
        path_segment(&suite),
        path_segment(&key),
        f.version
    )))
}

/// `DELETE /api/suites/{suite}/cases/{key}`: `{"version"}` of the deletion.
async fn api_delete(
    State(state): State<AppState>,
    actor: Actor,
    Path((suite, key)): Path<(String, String)>,
) -> Result<Json<Value>, WebError> {
    let version = state.store.delete_case(&suite, &key, &actor.name).await?;
    Ok(Json(json!({ "version": version })))
}

/// `POST /api/suites/{suite}/cases/{key}/archive` with `{"archived": bool}`.
async fn api_archive(
    State(state): State<AppState>,
    actor: Actor,
    Path((suite, key)): Path<(String, String)>,
    Json(body): Json<ArchiveForm>,
) -> Result<Json<Value>, WebError> {
    let version = state
        .store
        .archive_case(&suite, &key, body.archived, &actor.name)
        .await?;
    Ok(Json(json!({ "version": version })))
}

/// `POST /api/suites/{suite}/cases/{key}/restore` with `{"version": N}`.
async fn api_restore(
    State(state): State<AppState>,
    actor: Actor,
    Path((suite, key)): Path<(String, String)>,
    Json(body): Json<RestoreForm>,
) -> Result<(StatusCode, Json<Value>), WebError> {
    let version = restore(&state, &suite, &key, body.version, &actor.name).await?;
    Ok((StatusCode::CREATED, Json(json!({ "version": version }))))
}

/// `GET /api/suites/{suite}/cases/{key}/diff?from=N&to=M`.
async fn api_diff(
    State(state): State<AppState>,
    Path((suite, key)): Path<(String, String)>,
    Query(q): Query<DiffQuery>,
) -> Result<Json<Diff>, WebError> {
    let history = history_of(&state, &suite, &key).await?;
    Ok(Json(diff(&history, &q)?))
}
