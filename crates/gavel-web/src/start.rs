//! Starting a run from the runs page: the form, the chosen suite's targets to
//! pick from, and what its judge would cost, estimated from the plan before
//! anything runs.

use std::collections::BTreeMap;

use axum::body::Bytes;
use axum::extract::{RawQuery, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect, Response};
use gavel_models::{ModelId, TokenUsage};
use gavel_runner::PlanOptions;
use minijinja::context;
use serde::{Deserialize, Serialize};

use crate::auth::Actor;
use crate::pages::{path_segment, runs_page};
use crate::runs::{Refused, StartError};
use crate::view::{render, ser};
use crate::{AppState, RunRequest, WebError, api, builder};

/// Prompt tokens a judge call typically sends (criteria, the conversation, the
/// answer format): the estimate's assumption.
const TYPICAL_INPUT_TOKENS: u64 = 1_500;
/// Tokens a judge typically answers with (reasoning and a score).
const TYPICAL_OUTPUT_TOKENS: u64 = 300;

/// The start-a-run form (`targets[]` once per ticked target).
#[derive(Debug, Default, Deserialize, Serialize)]
#[serde(default)]
pub(crate) struct StartForm {
    pub(crate) suite: String,
    tags: String,
    targets: Vec<String>,
    judge: String,
    repeat: String,
    jobs: String,
}

impl StartForm {
    /// The form with `suite` chosen.
    pub(crate) fn of(suite: String) -> StartForm {
        StartForm {
            suite,
            ..StartForm::default()
        }
    }

    /// The chosen judge, when one is typed.
    fn judge(&self) -> Option<&str> {
        Some(self.judge.trim()).filter(|j| !j.is_empty())
    }
}

/// The start form from a query string or form body.
fn start_form(text: &[u8]) -> Result<StartForm, WebError> {
    serde_qs::Config::new(2, false)
        .deserialize_bytes(text)
        .map_err(|e| WebError::BadRequest(format!("the run form: {e}")))
}

/// A run before it starts: the suite's targets and the judge's estimated cost.
#[derive(Debug, Default, Serialize)]
pub(crate) struct Preview {
    /// The suite's targets, and whether each is ticked.
    targets: Vec<(String, bool)>,
    /// Executions the run would plan.
    executions: usize,
    /// Judge calls those executions make (a judged check each).
    judge_calls: usize,
    /// The judge model, as shown to people.
    judge: Option<String>,
    /// Dollars per million tokens in and out, when the judge's price is known.
    price: Option<(f64, f64)>,
    /// The estimate in dollars, when the price is known.
    cost_usd: Option<f64>,
    typical_input: u64,
    typical_output: u64,
    /// Why there is no estimate.
    problem: Option<String>,
}

/// The preview of a run of `form.suite` with the form's choices. Chosen
/// targets the suite does not have are dropped (the suite changed).
pub(crate) async fn preview(state: &AppState, form: &StartForm) -> Preview {
    let mut preview = Preview {
        typical_input: TYPICAL_INPUT_TOKENS,
        typical_output: TYPICAL_OUTPUT_TOKENS,
        ..Preview::default()
    };
    if form.suite.is_empty() {
        return preview;
    }
    let suite =
        match gavel_session::load_suite(&state.store, &state.runs.sources(&form.suite)).await {
            Ok(suite) => suite,
            Err(e) => {
                preview.problem = Some(e.to_string());
                return preview;
            }
        };
    preview.targets = suite
        .targets
        .keys()
        .map(|t| (t.clone(), form.targets.contains(t)))
        .collect();
    let repeat = count(&form.repeat, gavel_core::bounds::MAX_REPEAT)
        .ok()
        .flatten();
    let options = PlanOptions {
        tags: builder::names(&form.tags),
        targets: preview
            .targets
            .iter()
            .filter(|(_, ticked)| *ticked)
            .map(|(t, _)| t.clone())
            .collect(),
        // A chosen repeat count multiplies a plan of one repeat (not expanded:
        // a preview stays small).
        repeat: repeat.map(|_| 1),
        ..PlanOptions::default()
    };
    let plan = match gavel_runner::plan(&suite, &options) {
        Ok(plan) => plan,
        Err(e) => {
            preview.problem = Some(e.to_string());
            return preview;
        }
    };
    let times = repeat.map_or(1, |n| n as usize);
    preview.executions = plan.executions * times;
    preview.judge_calls = times * plan.judge_calls();
    let model = judge_model(state, form, &suite);
    let model = match model {
        Ok(Some(model)) => model,
        Ok(None) => return preview,
        Err(problem) => {
            preview.problem = Some(problem);
            return preview;
        }
    };
    preview.judge = Some(gavel_store::mask_url(&model.to_string()));
    if let Some(price) = gavel_models::price_for(&model, &suite.judge.prices) {
        let calls = preview.judge_calls as u64;
        let usage = TokenUsage {
            input_tokens: calls * TYPICAL_INPUT_TOKENS,
            output_tokens: calls * TYPICAL_OUTPUT_TOKENS,
        };
        preview.price = Some((price.input_per_mtok, price.output_per_mtok));
        preview.cost_usd = Some(gavel_models::layers::cost_usd(usage, price));
    }
    preview
}

/// The judge a run would use: the chosen one, the server's, the suite's; or
/// why it is not a model id.
fn judge_model(
    state: &AppState,
    form: &StartForm,
    suite: &gavel_core::Suite,
) -> Result<Option<ModelId>, String> {
    let (judge, whose) = match (form.judge(), state.runs.judge(), &suite.judge.model) {
        (Some(judge), ..) => (judge, "judge"),
        (None, Some(server), _) => return Ok(Some(server.clone())),
        (None, None, Some(judge)) => (judge.as_str(), "the suite's judge"),
        (None, None, None) => return Ok(None),
    };
    let model: ModelId = judge
        .parse()
        .map_err(|e| format!("{whose} `{judge}`: {e}"))?;
    if !state.runs.allowed().permits(&model) {
        let shown = gavel_store::mask_url(judge);
        return Err(format!(
            "{whose} `{shown}`: {}",
            gavel_session::trust::MODELS_ALLOWED
        ));
    }
    Ok(Some(model))
}

/// `GET /runs/preview?suite=…&judge=…`: the targets and estimate part of the
/// start form, for the form to swap in as choices change.
pub(crate) async fn preview_part(
    State(state): State<AppState>,
    RawQuery(query): RawQuery,
) -> Result<impl IntoResponse, WebError> {
    let form = start_form(query.unwrap_or_default().as_bytes())?;
    let preview = preview(&state, &form).await;
    render(
        &state,
        "start_preview.html",
        context! { p => ser(&preview), form => ser(&form) },
    )
}

/// A whole number in `1..=max`, or why not.
fn count<T: std::str::FromStr + PartialOrd + From<u8> + std::fmt::Display>(
    text: &str,
    max: T,
) -> Result<Option<T>, String> {
    match text.trim() {
        "" => Ok(None),
        t => match t.parse::<T>() {
            Ok(n) if n >= T::from(1) && n <= max => Ok(Some(n)),
            _ => Err(format!("`{t}` is not a whole number from 1 to {max}")),
        },
    }
}

/// `POST /runs`: starts a run of a stored suite with the chosen judge, targets,
/// tags, repeats and concurrency; a bad choice shows the form again, by the field.
pub(crate) async fn start_run(
    State(state): State<AppState>,
    actor: Actor,
    body: Bytes,
) -> Response {
    let form = match start_form(&body) {
        Ok(form) => form,
        Err(e) => return e.into_response(),
    };
    let mut errors = BTreeMap::new();
    let repeat = count(&form.repeat, gavel_core::bounds::MAX_REPEAT)
        .map_err(|e| errors.insert("repeat", e))
        .unwrap_or_default();
    let jobs = count(&form.jobs, gavel_core::bounds::MAX_JOBS)
        .map_err(|e| errors.insert("jobs", e))
        .unwrap_or_default();
    let request = RunRequest {
        suite: form.suite.clone(),
        tags: builder::names(&form.tags),
        targets: form.targets.clone(),
        judge: form.judge().map(str::to_owned),
        repeat,
        jobs,
    };
    let refused = |field, message| {
        let errors = BTreeMap::from([(field, message)]);
        let form = &form;
        let state = &state;
        async move {
            let page = runs_page(state, form, &errors).await;
            (StatusCode::UNPROCESSABLE_ENTITY, page).into_response()
        }
    };
    if let Some((field, message)) = errors.pop_first() {
        return refused(field, message).await;
    }
    // A refused run is kept as a failed run whose page says why.
    let id = match api::launch(&state, &request, &actor.name).await {
        Ok(id) => id,
        Err(StartError::Refused(Refused {
            run_id: Some(id), ..
        })) => id,
        Err(StartError::Refused(refused)) => {
            return WebError::Launch(refused.message).into_response();
        }
        Err(StartError::Web(WebError::BadRequest(message))) => {
            return refused("judge", message).await;
        }
        Err(StartError::Web(e)) => return e.into_response(),
    };
    Redirect::to(&format!("/runs/{}", path_segment(&id))).into_response()
}
