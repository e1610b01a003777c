//! The gavel web UI (`gavel serve`): suites and their versioned cases, runs started
//! and watched live, transcripts with every verdict, run comparison, trends and
//! labelling, all server-rendered over the store, plus the same under `/api/` as
//! JSON. Templates, htmx and uPlot are embedded: the binary serves everything.
//!
//! Security: loopback binds only unless an auth token is set; a request's `Host`
//! must be this server's (DNS rebinding) and a state-changing request's `Origin`
//! this same host; every state-changing request carries the CSRF token; everything from agents and models is escaped
//! (minijinja autoescapes every `.html` template).

mod api;
mod assets;
mod builder;
mod error;
mod hosts;
mod live;
mod pages;
mod runs;
mod security;
mod summary;
mod view;

use std::net::SocketAddr;
use std::sync::Arc;

use axum::Router;
use axum::routing::{get, post};
use gavel_store::Store;

pub use error::WebError;
pub use runs::RunDefaults;

/// What the UI asks for when a person starts a run.
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize)]
pub struct RunRequest {
    /// The stored suite to run.
    pub suite: String,
    /// Only cases with one of these tags (empty: all).
    #[serde(default)]
    pub tags: Vec<String>,
    /// Only these targets (empty: every case's targets).
    #[serde(default)]
    pub targets: Vec<String>,
    /// The judge model id (default: the server's, then the suite's).
    #[serde(default)]
    pub judge: Option<String>,
    /// Every case this many times (default: each case's `repeat`).
    #[serde(default)]
    pub repeat: Option<u32>,
    /// Executions at once (default: the session's).
    #[serde(default)]
    pub jobs: Option<usize>,
}

/// How to serve.
#[derive(Clone)]
pub struct Config {
    /// Where to listen.
    pub bind: SocketAddr,
    /// The auth token requests must carry (required for a non-loopback bind).
    pub token: Option<String>,
    /// Host names (`name` or `name:port`; `*` for any) the UI answers to besides
    /// its bind address (and, on loopback, `localhost`, `127.0.0.1`, `[::1]`).
    pub allowed_hosts: Vec<String>,
    /// What runs started from the UI use besides the stored suite.
    pub runs: RunDefaults,
}

/// Shared by every handler.
#[derive(Clone)]
pub(crate) struct AppState {
    store: Store,
    runs: runs::Runs,
    live: live::Live,
    csrf: Arc<str>,
    token: Option<Arc<str>>,
    hosts: Arc<hosts::HostPolicy>,
    templates: Arc<minijinja::Environment<'static>>,
}

/// The application: every page, the API and the assets, behind the security layers.
pub fn app(store: Store, config: &Config) -> Result<Router, WebError> {
    let live = live::Live::default();
    let state = AppState {
        runs: runs::Runs::new(store.clone(), config.runs.clone(), live.clone()),
        live,
        store,
        csrf: security::random_token().into(),
        token: config.token.as_deref().map(Arc::from),
        hosts: Arc::new(hosts::HostPolicy::new(config.bind, &config.allowed_hosts)),
        templates: Arc::new(view::templates()?),
    };
    let mut router = Router::new()
        .route("/", get(pages::runs))
        .route("/runs", get(pages::runs).post(pages::start_run))
        .route("/runs/{id}", get(pages::run_detail))
        .route("/runs/{id}/progress", get(pages::run_progress))
        .route("/runs/{id}/events", get(live::events))
        .route("/runs/{id}/labels", post(pages::add_label))
        .route("/compare", get(pages::compare))
        .route("/compare/case", get(pages::compare_case))
        .route("/trends", get(pages::trends))
        .route("/suites", get(pages::suites))
        .route("/suites/{suite}", get(pages::suite))
        .route(
            "/suites/{suite}/cases/new",
            get(pages::new_case).post(pages::save_case),
        )
        .route(
            "/suites/{suite}/cases/{key}",
            get(pages::edit_case).post(pages::save_case),
        )
        .route("/try-check", post(pages::try_check))
        .route("/login", get(security::login))
        .route("/assets/{file}", get(assets::asset))
        .nest("/api", api::routes())
        .layer(axum::extract::DefaultBodyLimit::max(
            security::MAX_FORM_BYTES,
        ))
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            security::guard,
        ))
        .with_state(state);
    for layer in security::headers() {
        router = router.layer(layer);
    }
    Ok(router)
}

/// Serves until the process ends. Refuses a non-loopback bind without a token.
pub async fn serve(store: Store, config: Config) -> Result<(), WebError> {
    security::check_bind(&config)?;
    let listener = tokio::net::TcpListener::bind(config.bind)
        .await
        .map_err(|e| WebError::Bind(config.bind, e))?;
    let router = app(store, &config)?;
    axum::serve(listener, router)
        .await
        .map_err(|e| WebError::Bind(config.bind, e))
}
