//! The review queue under `/api/`: a queue page in the true order (the API
//! caller states labels in it), pairwise labels, the labellers' agreement, and
//! calibrating the operator's judge on the run's label set.

use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::routing::{get, post};
use axum::{Json, Router};
use gavel_store::{PairItem, PairLabel, PairSide, Review, ReviewItem, ReviewPage};
use serde::{Deserialize, Serialize};

use super::{Agreement, Calibrating, QueueQuery};
use crate::auth::Actor;
use crate::{AppState, WebError};

/// The most items an API queue page holds.
const MAX_PAGE: usize = 100;

pub(crate) fn routes() -> Router<AppState> {
    Router::new()
        .route("/runs/{id}/review", get(queue))
        .route("/runs/{id}/pair-labels", get(list_pairs).post(add_pair))
        .route("/runs/{id}/agreement", get(agreement))
        .route("/runs/{id}/calibrate", post(calibrate))
}

type ApiResult<T> = Result<Json<T>, WebError>;

/// A queue page: single executions or pairs.
#[derive(Serialize)]
#[serde(untagged)]
enum Queue {
    Single(ReviewPage<ReviewItem>),
    Pairs(ReviewPage<PairItem>),
}

async fn queue(
    State(state): State<AppState>,
    actor: Actor,
    Path(id): Path<String>,
    Query(q): Query<QueueQuery>,
) -> ApiResult<Queue> {
    let run = state.store.run(&id).await?;
    let limit = q.limit.unwrap_or(20);
    if !(1..=MAX_PAGE).contains(&limit) {
        return Err(WebError::BadRequest(format!(
            "limit: {limit} is not from 1 to {MAX_PAGE}"
        )));
    }
    let review = Review {
        run_id: run.id,
        labeller: actor.name,
        skip: q.skip,
        limit,
    };
    Ok(Json(if q.pairwise() {
        let pairing = q.pairing(&state).await?;
        Queue::Pairs(state.store.pair_queue(&review, &pairing).await?)
    } else {
        Queue::Single(state.store.review_queue(&review).await?)
    }))
}

async fn list_pairs(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> ApiResult<Vec<PairLabel>> {
    let run = state.store.run(&id).await?;
    Ok(Json(state.store.run_pair_labels(&run.id).await?))
}

/// A pairwise label in the true order: A is the run's execution.
#[derive(Deserialize)]
struct PairBody {
    case_id: String,
    target: String,
    repeat_index: u32,
    pair: PairSide,
    label: String,
    #[serde(default)]
    note: Option<String>,
}

async fn add_pair(
    State(state): State<AppState>,
    actor: Actor,
    Path(id): Path<String>,
    Json(body): Json<PairBody>,
) -> Result<StatusCode, WebError> {
    let run = state.store.run(&id).await?;
    let pair_run = state.store.run(&body.pair.run_id).await?.id;
    state
        .store
        .add_pair_label(&PairLabel {
            run_id: run.id,
            case_id: body.case_id,
            target: body.target,
            repeat_index: body.repeat_index,
            pair: PairSide {
                run_id: pair_run,
                ..body.pair
            },
            label: body.label,
            who: actor.name,
            note: body.note,
            shown_swapped: false,
            recheck: None,
            created_at: String::new(),
        })
        .await?;
    Ok(StatusCode::CREATED)
}

async fn agreement(State(state): State<AppState>, Path(id): Path<String>) -> ApiResult<Agreement> {
    let run = state.store.run(&id).await?;
    Ok(Json(Agreement::of(&state, &run.id).await?))
}

async fn calibrate(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> ApiResult<Vec<gavel_session::SetCalibrated>> {
    let run = state.store.run(&id).await?;
    match super::calibrated(&state, &run).await {
        Ok(done) => Ok(Json(done)),
        Err(Calibrating::Refused(message)) => Err(WebError::BadRequest(message)),
        Err(Calibrating::Failed(e)) => Err(e),
    }
}
