//! The HTML pages. Each reads through the same store calls as the JSON API.

use std::collections::HashMap;

use axum::Form;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{Html, IntoResponse, Redirect, Response};
use gavel_core::RunStatus;
use gavel_store::{Label, StoreError};
use minijinja::context;
use serde::Deserialize;

use crate::auth::Actor;
use crate::forms::CaseForm;
use crate::runs::{Refused, StartError};
use crate::view::{render, ser};
use crate::{AppState, RunRequest, WebError, api};

type Page = Result<Html<String>, WebError>;

/// `GET /` and `GET /runs`: recent runs, and a form to start one.
pub(crate) async fn runs(State(state): State<AppState>) -> Page {
    let runs = state.store.runs(200).await?;
    let suites = state.store.suites().await?;
    let suites: Vec<String> = suites.into_iter().map(|s| s.name).collect();
    render(
        &state,
        "runs.html",
        context! { runs => ser(&runs), suites => suites },
    )
}

#[derive(Deserialize)]
pub(crate) struct StartForm {
    suite: String,
    #[serde(default)]
    tags: String,
}

/// `POST /runs`: starts a run of a stored suite (optionally only some tags).
pub(crate) async fn start_run(
    State(state): State<AppState>,
    actor: Actor,
    Form(form): Form<StartForm>,
) -> Result<Redirect, WebError> {
    let request = RunRequest {
        suite: form.suite,
        tags: form
            .tags
            .split(',')
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .map(str::to_owned)
            .collect(),
    };
    // A refused run is kept as a failed run whose page says why.
    let id = match api::launch(&state, &request, &actor.name).await {
        Ok(id) => id,
        Err(StartError::Refused(Refused {
            run_id: Some(id), ..
        })) => id,
        Err(StartError::Refused(refused)) => return Err(WebError::Launch(refused.message)),
        Err(StartError::Web(e)) => return Err(e),
    };
    Ok(Redirect::to(&format!("/runs/{}", path_segment(&id))))
}

/// `GET /runs/{id}`: every case, every round, every verdict, with labels.
pub(crate) async fn run_detail(State(state): State<AppState>, Path(id): Path<String>) -> Response {
    match state.store.run(&id).await {
        Ok(run) => {
            let page = async {
                let executions = state.store.executions(&run.id).await?;
                let labels = state.store.run_labels(&run.id).await?;
                let versions = state.store.run_case_versions(&run.id).await?;
                let error = state.store.run_error(&run.id).await?;
                let started_by = state.store.run_started_by(&run.id).await?;
                let labelled: HashMap<String, Vec<&Label>> =
                    labels.iter().fold(HashMap::new(), |mut map, l| {
                        map.entry(format!("{}/{}/{}", l.case_id, l.target, l.repeat_index))
                            .or_default()
                            .push(l);
                        map
                    });
                render(
                    &state,
                    "run.html",
                    context! {
                        run => ser(&run),
                        error => error,
                        started_by => started_by,
                        running => run.status == RunStatus::Running,
                        executions => ser(&executions),
                        labels => ser(&labelled),
                        versions => ser(&versions),
                    },
                )
            };
            page.await.into_response()
        }
        // Just launched: the run's process has not recorded it yet.
        Err(StoreError::NotFound(_)) => render(
            &state,
            "run.html",
            context! { pending => id, running => true },
        )
        .into_response(),
        Err(e) => WebError::from(e).into_response(),
    }
}

/// `GET /runs/{id}/progress`: the live counter htmx polls while the run goes on.
pub(crate) async fn run_progress(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Response {
    let progress = match api::progress(&state, &id).await {
        Ok(p) => p,
        Err(e) => return e.into_response(),
    };
    let finished = progress.status.as_deref().is_some_and(|s| s != "running");
    let page = render(
        &state,
        "progress.html",
        context! { id => id, p => ser(&progress), finished => finished },
    );
    match page {
        // htmx reloads the page once, to show the finished run in full.
        Ok(html) if finished => ([("HX-Refresh", "true")], html).into_response(),
        other => other.into_response(),
    }
}

#[derive(Deserialize)]
pub(crate) struct LabelForm {
    case_id: String,
    target: String,
    repeat_index: u32,
    label: String,
    #[serde(default)]
    score: String,
    #[serde(default)]
    note: String,
}

/// `POST /runs/{id}/labels`: a person's verdict on one execution.
pub(crate) async fn add_label(
    State(state): State<AppState>,
    actor: Actor,
    Path(id): Path<String>,
    Form(form): Form<LabelForm>,
) -> Result<Redirect, WebError> {
    let score = match form.score.trim() {
        "" => None,
        s => Some(
            s.parse::<f64>()
                .map_err(|_| WebError::BadRequest(format!("score `{s}` is not a number")))?,
        ),
    };
    let label = Label {
        run_id: id.clone(),
        case_id: form.case_id,
        target: form.target,
        repeat_index: form.repeat_index,
        label: form.label,
        score,
        who: actor.name,
        note: Some(form.note.trim().to_owned()).filter(|n| !n.is_empty()),
        created_at: String::new(),
    };
    state.store.add_label(&label).await?;
    Ok(Redirect::to(&format!("/runs/{}", path_segment(&id))))
}

#[derive(Deserialize)]
pub(crate) struct CompareQuery {
    #[serde(default)]
    a: String,
    #[serde(default)]
    b: String,
}

/// `GET /compare?a=RUN&b=RUN`: each execution's status and score in both runs.
pub(crate) async fn compare(State(state): State<AppState>, Query(q): Query<CompareQuery>) -> Page {
    let runs = state.store.runs(200).await?;
    let rows = if q.a.is_empty() || q.b.is_empty() {
        Vec::new()
    } else {
        api::comparison(&state, &q.a, &q.b).await?
    };
    render(
        &state,
        "compare.html",
        context! {
            runs => ser(&runs),
            a => q.a, b => q.b,
            rows => ser(&rows),
        },
    )
}

/// `GET /trends`: pass rate and mean score over time (drawn by trends.js).
pub(crate) async fn trends(State(state): State<AppState>) -> Page {
    render(&state, "trends.html", context! {})
}

#[derive(Deserialize)]
pub(crate) struct NewSuite {
    new: Option<String>,
}

/// `GET /suites`: the stored suites; `?new=NAME` opens the first case of a new one.
pub(crate) async fn suites(State(state): State<AppState>, Query(q): Query<NewSuite>) -> Response {
    match q.new.as_deref().map(str::trim).filter(|n| !n.is_empty()) {
        Some(name) => {
            Redirect::to(&format!("/suites/{}/cases/new", path_segment(name))).into_response()
        }
        None => suite_list(&state).await.into_response(),
    }
}

/// A path segment, percent-encoded.
pub(crate) fn path_segment(text: &str) -> String {
    text.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
                char::from(b).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

async fn suite_list(state: &AppState) -> Page {
    let suites = state.store.suites().await?;
    let suites: Vec<_> = suites
        .iter()
        .map(|s| {
            context! {
                name => s.name.clone(),
                cases => s.cases,
                updated_at => s.updated_at.clone(),
                updated_by => s.updated_by.clone(),
            }
        })
        .collect();
    render(state, "suites.html", context! { suites => suites })
}

#[derive(Deserialize)]
pub(crate) struct TagQuery {
    #[serde(default)]
    tag: String,
}

/// `GET /suites/{suite}?tag=…`: its cases, optionally only those with a tag.
pub(crate) async fn suite(
    State(state): State<AppState>,
    Path(suite): Path<String>,
    Query(q): Query<TagQuery>,
) -> Page {
    let cases = api::cases(&state, &suite, &q.tag).await?;
    render(
        &state,
        "suite.html",
        context! { suite => suite, tag => q.tag, cases => ser(&cases) },
    )
}

/// `GET /suites/{suite}/cases/new`: an empty case form.
pub(crate) async fn new_case(State(state): State<AppState>, Path(suite): Path<String>) -> Page {
    case_page(
        &state,
        &suite,
        None,
        &CaseForm::default(),
        &Default::default(),
        &[],
    )
}

/// `GET /suites/{suite}/cases/{key}`: the case's form and its history.
pub(crate) async fn edit_case(
    State(state): State<AppState>,
    Path((suite, key)): Path<(String, String)>,
) -> Page {
    let history = state.store.case_history(&suite, &key).await?;
    let current = history
        .last()
        .and_then(|v| v.case.clone())
        .ok_or_else(|| StoreError::NotFound(format!("case `{key}` of suite `{suite}`")))?;
    let history = api::history_rows(&history);
    case_page(
        &state,
        &suite,
        Some(&key),
        &CaseForm::of(&current),
        &Default::default(),
        &history,
    )
}

fn case_page(
    state: &AppState,
    suite: &str,
    key: Option<&str>,
    form: &CaseForm,
    errors: &crate::forms::FieldErrors,
    history: &[serde_json::Value],
) -> Page {
    render(
        state,
        "case.html",
        context! {
            suite => suite, key => key,
            form => ser(form),
            errors => ser(errors),
            history => ser(history),
        },
    )
}

/// `POST /suites/{suite}/cases/new` and `POST /suites/{suite}/cases/{key}`: saves
/// a new version, or shows the form again with an error by each bad field.
pub(crate) async fn save_case(
    State(state): State<AppState>,
    actor: Actor,
    Path(params): Path<HashMap<String, String>>,
    Form(form): Form<CaseForm>,
) -> Response {
    let suite = params.get("suite").cloned().unwrap_or_default();
    let key = params.get("key").cloned();
    match api::save_case(&state, &suite, key.as_deref(), form.clone(), &actor.name).await {
        Ok(_) => Redirect::to(&format!("/suites/{}", path_segment(&suite))).into_response(),
        Err(api::SaveError::Fields(errors)) => {
            let page = case_page(&state, &suite, key.as_deref(), &form, &errors, &[]);
            (StatusCode::UNPROCESSABLE_ENTITY, page).into_response()
        }
        Err(api::SaveError::Web(e)) => e.into_response(),
    }
}
