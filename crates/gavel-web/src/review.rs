//! The review queue (`/runs/{id}/review`): a run's executions, or pairs of
//! them, to label one at a time from the keyboard, most informative first (the
//! store orders and pages them); the labellers' agreement; and calibrating the
//! judge the suite's runs grade with on the run's label set. Labels are kept in
//! the label set named after the run's suite, so `gavel calibrate --labels
//! SUITE` reads them too.
//!
//! A pair is shown in an order drawn per labeller and item from a hash of both,
//! never said on the page; the label is stored in the true order. After every
//! few pairs a labeller sees one again in the other order, which records their
//! position consistency.

use std::collections::BTreeMap;

use axum::Form;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{Html, IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use gavel_core::RunRecord;
use gavel_store::{Label, PairLabel, PairSide, Pairing, Review};
use minijinja::context;
use serde::{Deserialize, Serialize};

use crate::auth::{Actor, sha256_hex};
use crate::pages::path_segment;
use crate::view::{render, ser};
use crate::{AppState, WebError};

mod agreement;
mod api;
mod item;

pub(crate) use api::routes as api_routes;

pub(crate) use agreement::Agreement;

/// Items a queue page lists after the one being labelled.
const NEXT_UP: usize = 5;

pub(crate) fn routes() -> axum::Router<AppState> {
    axum::Router::new()
        .route("/runs/{id}/review", get(queue_page).post(label))
        .route("/runs/{id}/review/calibrate", post(calibrate))
}

/// Which queue: single or pairwise, paired how, from where.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
pub(crate) struct QueueQuery {
    /// `single` (the default) or `pairwise`.
    #[serde(default)]
    pub(crate) mode: String,
    /// Pairwise: the run to pair with (empty: the run's targets with each other).
    #[serde(default)]
    pub(crate) against: String,
    /// Items passed over at the head of the queue.
    #[serde(default)]
    pub(crate) skip: usize,
    /// Stored calibration runs to show, comma-separated.
    #[serde(default)]
    pub(crate) calibration: String,
    /// The API: items per page.
    #[serde(default)]
    pub(crate) limit: Option<usize>,
}

impl QueueQuery {
    pub(crate) fn pairwise(&self) -> bool {
        self.mode == "pairwise"
    }

    /// The queue's own address, `skip` items in.
    fn url(&self, run: &str, skip: usize) -> String {
        format!(
            "/runs/{}/review?mode={}&against={}&skip={skip}",
            path_segment(run),
            path_segment(&self.mode),
            path_segment(&self.against)
        )
    }

    /// What pairs are made of; an unknown `against` run is a bad request.
    pub(crate) async fn pairing(&self, state: &AppState) -> Result<Pairing, WebError> {
        match self.against.trim() {
            "" => Ok(Pairing::Targets),
            id => Ok(Pairing::Run(state.store.run(id).await?.id)),
        }
    }
}

/// Whether `labeller` is shown B first for the pair `item`: a hash of both, so
/// the order is the same on every visit and differs between labellers.
pub(crate) fn swapped_for(labeller: &str, item: &str) -> bool {
    let hash = sha256_hex(&format!("{labeller}\n{item}"));
    u8::from_str_radix(&hash[..2], 16).is_ok_and(|b| b & 1 == 1)
}

/// `GET /runs/{id}/review`.
async fn queue_page(
    State(state): State<AppState>,
    actor: Actor,
    Path(id): Path<String>,
    Query(q): Query<QueueQuery>,
) -> Response {
    let run = match state.store.run(&id).await {
        Ok(run) => run,
        Err(e) => return WebError::from(e).into_response(),
    };
    page(&state, &actor, &run, &q, &Typed::default(), StatusCode::OK)
        .await
        .into_response()
}

/// What was typed into the label form, kept when it is refused.
#[derive(Debug, Clone, Default, Serialize)]
struct Typed {
    score: String,
    note: String,
    errors: BTreeMap<&'static str, String>,
}

async fn page(
    state: &AppState,
    actor: &Actor,
    run: &RunRecord,
    q: &QueueQuery,
    typed: &Typed,
    status: StatusCode,
) -> Result<(StatusCode, Html<String>), WebError> {
    let review = Review {
        run_id: run.id.clone(),
        labeller: actor.name.clone(),
        skip: q.skip,
        limit: 1 + NEXT_UP,
    };
    let shown = item::Shown::of(state, &review, q).await?;
    let agreement = Agreement::of(state, &run.id).await?;
    let calibration = state.runs.calibration(&agreement.set, &run.suite);
    let plan = calibration
        .plan(&state.store)
        .await
        .map_err(|e| e.to_string());
    let ids: Vec<&str> = q.calibration.split(',').filter(|s| !s.is_empty()).collect();
    let results = if ids.is_empty() {
        Vec::new()
    } else {
        calibration
            .held(&state.store, &ids)
            .await
            .map_err(|e| WebError::BadRequest(e.to_string()))?
    };
    let html = render(
        state,
        "review.html",
        context! {
            run => ser(run),
            q => ser(q),
            item => ser(&shown),
            skip_url => q.url(&run.id, q.skip + 1),
            agreement => ser(&agreement),
            plan => ser(&plan),
            results => ser(&results),
            typed => ser(typed),
        },
    )?;
    Ok((status, html))
}

/// The label form, single or pairwise (and the queue it came from: `serde`'s
/// `flatten` would read `skip` as text).
#[derive(Debug, Deserialize)]
struct LabelForm {
    #[serde(default)]
    mode: String,
    #[serde(default)]
    against: String,
    #[serde(default)]
    skip: usize,
    case_id: String,
    target: String,
    repeat_index: u32,
    /// Single: `pass` or `fail`.
    #[serde(default)]
    label: String,
    #[serde(default)]
    score: String,
    #[serde(default)]
    note: String,
    /// Pairwise: the other execution.
    #[serde(default)]
    pair_run: String,
    #[serde(default)]
    pair_target: String,
    #[serde(default)]
    pair_repeat_index: Option<u32>,
    /// Pairwise: `left`, `right` or `tie`, as shown.
    #[serde(default)]
    choice: String,
    /// Pairwise: whether this was the pair shown again in the other order.
    #[serde(default)]
    recheck: String,
}

/// `POST /runs/{id}/review`: one label, then the queue's next item; a bad
/// field gets its message by the form, what was typed kept.
async fn label(
    State(state): State<AppState>,
    actor: Actor,
    Path(id): Path<String>,
    Form(form): Form<LabelForm>,
) -> Response {
    let run = match state.store.run(&id).await {
        Ok(run) => run,
        Err(e) => return WebError::from(e).into_response(),
    };
    let q = QueueQuery {
        mode: form.mode.clone(),
        against: form.against.clone(),
        skip: form.skip,
        ..QueueQuery::default()
    };
    let note = Some(form.note.trim().to_owned()).filter(|n| !n.is_empty());
    let mut errors = BTreeMap::new();
    let stored = if q.pairwise() {
        pair_label(&state, &actor, &run, &form, note, &mut errors).await
    } else {
        single_label(&state, &actor, &run, &form, note, &mut errors).await
    };
    if let Err(e) = stored {
        return e.into_response();
    }
    if errors.is_empty() {
        return Redirect::to(&q.url(&run.id, q.skip)).into_response();
    }
    let typed = Typed {
        score: form.score,
        note: form.note,
        errors,
    };
    let status = StatusCode::UNPROCESSABLE_ENTITY;
    page(&state, &actor, &run, &q, &typed, status)
        .await
        .into_response()
}

async fn single_label(
    state: &AppState,
    actor: &Actor,
    run: &RunRecord,
    form: &LabelForm,
    note: Option<String>,
    errors: &mut BTreeMap<&'static str, String>,
) -> Result<(), WebError> {
    if !matches!(form.label.as_str(), "pass" | "fail") {
        errors.insert(
            "label",
            format!("`{}` is neither `pass` nor `fail`", form.label),
        );
    }
    let score = match form.score.trim() {
        "" => None,
        s => match s.parse::<f64>() {
            Ok(v) if (0.0..=1.0).contains(&v) => Some(v),
            _ => {
                errors.insert("score", format!("`{s}` is not a number from 0 to 1"));
                None
            }
        },
    };
    if !errors.is_empty() {
        return Ok(());
    }
    let label = Label {
        run_id: run.id.clone(),
        case_id: form.case_id.clone(),
        target: form.target.clone(),
        repeat_index: form.repeat_index,
        label: form.label.clone(),
        score,
        who: actor.name.clone(),
        note,
        created_at: String::new(),
    };
    Ok(state.store.add_label(&label).await?)
}

async fn pair_label(
    state: &AppState,
    actor: &Actor,
    run: &RunRecord,
    form: &LabelForm,
    note: Option<String>,
    errors: &mut BTreeMap<&'static str, String>,
) -> Result<(), WebError> {
    let Some(pair_repeat) = form.pair_repeat_index else {
        return Err(WebError::BadRequest(
            "pair_repeat_index: a pairwise label needs the other execution".into(),
        ));
    };
    let mut label = PairLabel {
        run_id: run.id.clone(),
        case_id: form.case_id.clone(),
        target: form.target.clone(),
        repeat_index: form.repeat_index,
        pair: PairSide {
            run_id: state.store.run(&form.pair_run).await?.id,
            target: form.pair_target.clone(),
            repeat_index: pair_repeat,
        },
        label: String::new(),
        who: actor.name.clone(),
        note,
        shown_swapped: false,
        recheck: None,
        created_at: String::new(),
    };
    let recheck = form.recheck == "1";
    label.shown_swapped = if recheck {
        let item = label.item_id();
        let first = state
            .store
            .run_pair_labels(&run.id)
            .await?
            .into_iter()
            .find(|l| l.who == actor.name && l.item_id() == item);
        let Some(first) = first else {
            return Err(WebError::BadRequest(format!(
                "recheck: `{}` has not labelled this pair yet",
                actor.name
            )));
        };
        !first.shown_swapped
    } else {
        swapped_for(&actor.name, &label.item_id())
    };
    let truth = match (form.choice.as_str(), label.shown_swapped) {
        ("tie", _) => "tie",
        ("left", false) | ("right", true) => "A",
        ("left", true) | ("right", false) => "B",
        (other, _) => {
            errors.insert(
                "choice",
                format!("`{other}` is not `left`, `right` or `tie`"),
            );
            return Ok(());
        }
    };
    if recheck {
        label.recheck = Some(truth.to_owned());
        state.store.recheck_pair_label(&label).await?;
    } else {
        label.label = truth.to_owned();
        state.store.add_pair_label(&label).await?;
    }
    Ok(())
}

/// `POST /runs/{id}/review/calibrate`: calibrates the judge the suite's runs
/// grade with (the operator's) on the run's label set, answers in the model
/// cache reused, and shows the stored result held to the suite's bar; a
/// refusal (no judge, a set without labels) is shown on the page.
async fn calibrate(
    State(state): State<AppState>,
    actor: Actor,
    Path(id): Path<String>,
    Form(q): Form<QueueQuery>,
) -> Response {
    let run = match state.store.run(&id).await {
        Ok(run) => run,
        Err(e) => return WebError::from(e).into_response(),
    };
    let message = match calibrated(&state, &run).await {
        Ok(done) => {
            let ids: Vec<&str> = done.iter().map(|d| d.run.id.as_str()).collect();
            let url = format!(
                "{}&calibration={}#calibration",
                q.url(&run.id, q.skip),
                ids.join(",")
            );
            return Redirect::to(&url).into_response();
        }
        Err(Calibrating::Refused(message)) => message,
        Err(Calibrating::Failed(e)) => return e.into_response(),
    };
    let typed = Typed {
        errors: BTreeMap::from([("calibrate", message)]),
        ..Typed::default()
    };
    page(
        &state,
        &actor,
        &run,
        &q,
        &typed,
        StatusCode::UNPROCESSABLE_ENTITY,
    )
    .await
    .into_response()
}

/// Why calibrating from the queue made nothing.
pub(crate) enum Calibrating {
    /// Bad input (no judge, no labels, a refused suite): the message.
    Refused(String),
    /// The server failed.
    Failed(WebError),
}

/// Calibrates the judge of `run`'s suite on its label set. The judging runs on
/// a blocking thread of its own: its future is not `Send`.
pub(crate) async fn calibrated(
    state: &AppState,
    run: &RunRecord,
) -> Result<Vec<gavel_session::SetCalibrated>, Calibrating> {
    let set = state
        .store
        .label_set_of(&run.id)
        .await
        .map_err(|e| Calibrating::Failed(e.into()))?;
    let calibration = state.runs.calibration(&set, &run.suite);
    let store = state.store.clone();
    let handle = tokio::runtime::Handle::current();
    let done = tokio::task::spawn_blocking(move || handle.block_on(calibration.run(&store)))
        .await
        .map_err(|e| Calibrating::Failed(WebError::Internal(format!("calibrating: {e}"))))?;
    done.map_err(|e| match e.is_bad_input() {
        true => Calibrating::Refused(e.to_string()),
        false => Calibrating::Failed(WebError::Launch(e.to_string())),
    })
}
