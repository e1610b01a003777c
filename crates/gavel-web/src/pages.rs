//! The HTML pages. Each reads through the same store calls as the JSON API.

use std::collections::{BTreeMap, HashMap};

use axum::body::Bytes;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{Html, IntoResponse, Redirect, Response};
use gavel_core::RunStatus;
use gavel_store::{Browse, Label, StoreError};
use minijinja::context;
use serde::Deserialize;

use crate::auth::Actor;
use crate::builder::{self, CaseForm, FieldErrors};
use crate::start::{self, StartForm};
use crate::view::{render, ser};
use crate::{AppState, WebError, api, lifecycle, summary};

type Page = Result<Html<String>, WebError>;

/// How many runs the runs list sums up.
const LISTED_RUNS: u32 = 100;

#[derive(Deserialize)]
pub(crate) struct SuiteQuery {
    #[serde(default)]
    suite: String,
}

/// `GET /` and `GET /runs?suite=NAME`: recent runs with their results, and a
/// form to start one (of `suite`, else the first suite).
pub(crate) async fn runs(State(state): State<AppState>, Query(q): Query<SuiteQuery>) -> Page {
    runs_page(&state, &StartForm::of(q.suite), &BTreeMap::new()).await
}

/// The runs page with the start form as given, and a message by each bad field.
pub(crate) async fn runs_page(
    state: &AppState,
    form: &StartForm,
    errors: &BTreeMap<&str, String>,
) -> Page {
    let mut summaries = Vec::new();
    for run in state.store.runs(LISTED_RUNS).await? {
        summaries.push(summary::summarize(&state.store, &run).await?);
    }
    let suites: Vec<String> = state
        .store
        .suites()
        .await?
        .into_iter()
        .map(|s| s.name)
        .collect();
    let chosen = match suites.iter().find(|s| **s == form.suite) {
        Some(_) => None,
        None => suites.first().cloned().map(StartForm::of),
    };
    let form = chosen.as_ref().unwrap_or(form);
    let preview = start::preview(state, form).await;
    let mut judges: Vec<String> = summaries.iter().filter_map(|s| s.judge.clone()).collect();
    judges.sort();
    judges.dedup();
    render(
        state,
        "runs.html",
        context! {
            runs => ser(&summaries), suites => suites, judges => judges,
            form => ser(form), errors => ser(errors), p => ser(&preview),
            default_judge => state.runs.default_judge(),
        },
    )
}

/// Executions a run page lists at a time.
const RUN_PAGE: usize = 50;

/// A run page's filter: which statuses, text in the case id or name, and
/// where the page starts.
#[derive(Deserialize)]
pub(crate) struct ShowQuery {
    #[serde(default)]
    show: String,
    #[serde(default)]
    q: String,
    after: Option<i64>,
}

impl ShowQuery {
    /// The store's page for this filter.
    fn browse(&self) -> Browse {
        use gavel_core::Status;
        let statuses = match self.show.as_str() {
            "problems" => vec![Status::Fail, Status::Error, Status::Skipped],
            "fail" => vec![Status::Fail],
            "error" => vec![Status::Error],
            "skipped" => vec![Status::Skipped],
            _ => Vec::new(),
        };
        Browse {
            statuses,
            search: self.q.clone(),
            after: self.after,
            limit: RUN_PAGE,
        }
    }
}

/// `GET /runs/{id}?show=problems|fail|error|skipped&q=TEXT&after=SEQ`: the
/// summary, then a page of the cases the filter shows (passing ones
/// collapsed), every round, every verdict, with labels; the filter and the
/// paging are the store's, so a page costs the same in a run of any size.
pub(crate) async fn run_detail(
    State(state): State<AppState>,
    Path(id): Path<String>,
    Query(q): Query<ShowQuery>,
) -> Response {
    // An unknown id is "not found": a run started here is stored before its id
    // is handed out.
    let run = match state.store.run(&id).await {
        Ok(run) => run,
        Err(e) => return WebError::from(e).into_response(),
    };
    let page = async {
        let page = state.store.browse(&run.id, &q.browse()).await?;
        let labels = state.store.run_labels(&run.id).await?;
        let mut cases: Vec<&str> = page.executions.iter().map(|e| e.case_id.as_str()).collect();
        cases.sort_unstable();
        cases.dedup();
        let versions = state.store.run_case_versions(&run.id, Some(&cases)).await?;
        let error = state.store.run_error(&run.id).await?;
        let warnings = state.store.run_warnings(&run.id).await?;
        let started_by = state.store.run_started_by(&run.id).await?;
        let labelled: HashMap<String, Vec<&Label>> =
            labels.iter().fold(HashMap::new(), |mut map, l| {
                map.entry(format!("{}/{}/{}", l.case_id, l.target, l.repeat_index))
                    .or_default()
                    .push(l);
                map
            });
        // Their turns after the first are written by the simulated user.
        // Each of the page's cases is read once, whatever its targets and repeats.
        let mut simulated: Vec<String> = Vec::new();
        for id in cases {
            if let Ok(case) = state.store.saved_case(&run.id, id).await
                && case.simulated_user.is_some()
            {
                simulated.push(case.id);
            }
        }
        let running = run.status == RunStatus::Running;
        let summary = summary::summarize(&state.store, &run).await?;
        render(
            &state,
            "run.html",
            context! {
                run => ser(&summary.run),
                s => ser(&summary),
                error => error,
                warnings => warnings,
                started_by => started_by,
                running => running,
                live_here => state.live.is_live(&run.id),
                show => q.show,
                search => q.q,
                paged => q.after.is_some(),
                next => page.next,
                page_size => RUN_PAGE,
                executions => ser(&page.executions),
                matching => page.matching,
                simulated => simulated,
                labels => ser(&labelled),
                versions => ser(&versions),
            },
        )
    };
    page.await.into_response()
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
pub(crate) struct CompareQuery {
    #[serde(default)]
    a: String,
    #[serde(default)]
    b: String,
}

/// `GET /compare?a=RUN&b=RUN`: run B against baseline A, regressions first; by
/// default the latest run against the one before it (of its suite, when there is one).
pub(crate) async fn compare(State(state): State<AppState>, Query(q): Query<CompareQuery>) -> Page {
    let runs = state.store.runs(LISTED_RUNS).await?;
    // B: the latest run; A: the one before it of the same suite, else of any.
    let b = match q.b.as_str() {
        "" => runs.first().map(|r| r.id.clone()).unwrap_or_default(),
        id => id.to_owned(),
    };
    let a = match q.a.as_str() {
        "" => {
            let suite = runs.iter().find(|r| r.id == b).map(|r| r.suite.as_str());
            let older = runs.iter().skip_while(|r| r.id != b).skip(1);
            let before = older.clone().find(|r| Some(r.suite.as_str()) == suite);
            before
                .or_else(|| runs.iter().find(|r| r.id != b))
                .map(|r| r.id.clone())
                .unwrap_or_default()
        }
        id => id.to_owned(),
    };
    let comparison = if a.is_empty() || b.is_empty() {
        None
    } else {
        let (run_a, run_b) = (state.store.run(&a).await?, state.store.run(&b).await?);
        Some(gavel_session::history::compare(&state.store, &run_a, &run_b).await?)
    };
    let mut choices: Vec<(String, String)> = Vec::with_capacity(runs.len());
    for run in runs {
        let s = summary::summarize(&state.store, &run).await?;
        choices.push((s.run.id.clone(), summary::choice(&s)));
    }
    render(
        &state,
        "compare.html",
        context! { runs => choices, a => a, b => b, c => ser(&comparison) },
    )
}

#[derive(Deserialize)]
pub(crate) struct PairQuery {
    a: String,
    b: String,
    case: String,
    target: String,
}

/// `GET /compare/case?a=RUN&b=RUN&case=ID&target=NAME`: one case's transcripts
/// and verdicts in both runs, side by side.
pub(crate) async fn compare_case(
    State(state): State<AppState>,
    Query(q): Query<PairQuery>,
) -> Page {
    let mut sides = Vec::new();
    for id in [&q.a, &q.b] {
        let run = state.store.run(id).await?;
        let executions: Vec<_> = state
            .store
            .executions(&run.id)
            .await?
            .into_iter()
            .filter(|e| e.case_id == q.case && e.target == q.target)
            .collect();
        sides.push(context! { run => ser(&run), executions => ser(&executions) });
    }
    render(
        &state,
        "compare_case.html",
        context! { case => q.case, target => q.target, sides => sides, a => q.a, b => q.b, simulated => Vec::<String>::new() },
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

/// `GET /suites/{suite}/cases/new`: an empty case builder.
pub(crate) async fn new_case(State(state): State<AppState>, Path(suite): Path<String>) -> Page {
    case_page(
        &state,
        &suite,
        None,
        &CaseForm::new(),
        &FieldErrors::new(),
        None,
    )
}

/// `GET /suites/{suite}/cases/{key}`: the case in the builder, and its version.
pub(crate) async fn edit_case(
    State(state): State<AppState>,
    Path((suite, key)): Path<(String, String)>,
) -> Page {
    let history = state.store.case_history(&suite, &key).await?;
    let (latest, case) = history
        .last()
        .and_then(|v| Some((v, v.case.as_ref()?)))
        .ok_or_else(|| StoreError::NotFound(format!("case `{key}` of suite `{suite}`")))?;
    let mut form = CaseForm::of(case);
    form.add = "contains".into();
    case_page(
        &state,
        &suite,
        Some(&key),
        &form,
        &FieldErrors::new(),
        Some(lifecycle::row(latest)),
    )
}

fn case_page(
    state: &AppState,
    suite: &str,
    key: Option<&str>,
    form: &CaseForm,
    errors: &FieldErrors,
    latest: Option<serde_json::Value>,
) -> Page {
    // What a viewer reads instead of the builder.
    let case_yaml = form
        .to_case()
        .ok()
        .and_then(|case| serde_saphyr::to_string(&case).ok())
        .unwrap_or_default();
    render(
        state,
        "case.html",
        context! {
            suite => suite, key => key, case_yaml => case_yaml,
            form => ser(form),
            errors => ser(errors),
            latest => ser(&latest),
            kinds => ser(builder::KINDS),
            scales => ser(builder::SCALES),
        },
    )
}

/// The builder's fields from a form body (`rounds[0][checks][1][value]=…`).
fn builder_form(body: &[u8]) -> Result<CaseForm, WebError> {
    serde_qs::Config::new(6, false)
        .deserialize_bytes(body)
        .map_err(|e| WebError::BadRequest(format!("the case form: {e}")))
}

/// `POST /suites/{suite}/cases/new` and `POST /suites/{suite}/cases/{key}`: a
/// builder action (the form again, changed), or a save: a new version, or the
/// form again as typed with a message by each bad field, nothing stored.
pub(crate) async fn save_case(
    State(state): State<AppState>,
    actor: Actor,
    Path(params): Path<HashMap<String, String>>,
    body: Bytes,
) -> Response {
    let suite = params.get("suite").cloned().unwrap_or_default();
    let key = params.get("key").cloned();
    let mut form = match builder_form(&body) {
        Ok(form) => form,
        Err(e) => return e.into_response(),
    };
    let mut errors = FieldErrors::new();
    let page = |form: &CaseForm, errors: &FieldErrors, status: StatusCode| {
        let page = case_page(&state, &suite, key.as_deref(), form, errors, None);
        (status, page).into_response()
    };
    if form.apply(&mut errors) {
        return page(&form, &errors, StatusCode::OK);
    }
    let case = match form.to_case() {
        Ok(case) => case,
        Err(errors) => return page(&form, &errors, StatusCode::UNPROCESSABLE_ENTITY),
    };
    match api::save_case(&state, &suite, key.as_deref(), case, &actor.name).await {
        Ok(_) => Redirect::to(&format!("/suites/{}", path_segment(&suite))).into_response(),
        Err(api::SaveError::Fields(fields)) => {
            let errors = fields
                .into_iter()
                .map(|(field, message)| (builder::error_key(&form, &field), message))
                .collect();
            page(&form, &errors, StatusCode::UNPROCESSABLE_ENTITY)
        }
        Err(api::SaveError::Web(e)) => e.into_response(),
    }
}

/// `POST /try-check`: one check of the builder (`at`: `R:J`, or `:J` for the
/// case's) tried on the sample answer; a line of HTML for the page.
pub(crate) async fn try_check(State(state): State<AppState>, body: Bytes) -> Page {
    #[derive(Deserialize)]
    struct At {
        #[serde(default)]
        at: String,
    }
    let form = builder_form(&body)?;
    let at: At = serde_qs::Config::new(6, false)
        .deserialize_bytes(&body)
        .map_err(|e| WebError::BadRequest(e.to_string()))?;
    let (status, text) = match form
        .check_at(&at.at)
        .map(|c| builder::try_check(c, &form.sample))
    {
        None => ("error", format!("no check at `{}`", at.at)),
        Some(builder::Tried::Verdict(status, reason)) => (status.as_str(), reason),
        Some(builder::Tried::Invalid(why)) => ("invalid", why),
    };
    render(
        &state,
        "tried.html",
        context! { status => status, text => text, sample => !form.sample.trim().is_empty() },
    )
}
