//! The gavel web UI (`gavel serve`): suites and their versioned cases, runs started
//! and watched live, transcripts with every verdict, run comparison, trends and
//! labelling, all server-rendered over the store, plus the same under `/api/` as
//! JSON. Templates, htmx and uPlot are embedded: the binary serves everything.
//!
//! Security: loopback binds only unless an auth token is set or accounts exist;
//! a request's `Host` must be this server's (DNS rebinding) and a state-changing
//! request's `Origin` this same host; users sign in and act within their role
//! ([`auth`] has the model); every state-changing request from a browser carries
//! the CSRF token; everything from agents and models is escaped (minijinja
//! autoescapes every `.html` template). Failed sign-ins back off and lock
//! ([`throttle`]), API tokens expire ([`AccountPolicy`]), and a server failure
//! answers only an error id that the log carries with its details.

mod accounts;
mod api;
mod assets;
mod auth;
mod builder;
mod error;
mod hosts;
mod lifecycle;
mod live;
#[cfg(feature = "cli")]
mod new_account;
mod pages;
mod policy;
mod review;
mod runs;
mod security;
mod signin;
mod start;
mod summary;
mod throttle;
mod users;
mod view;

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::routing::{get, post};
use gavel_store::Store;

pub use accounts::{AccountError, MAX_PASSWORD, MIN_PASSWORD, add_user, check_password};
pub use error::WebError;
#[cfg(feature = "cli")]
pub use new_account::NewAccount;
pub use policy::AccountPolicy;
pub use runs::RunDefaults;
pub use throttle::address_key;

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

/// How to serve; with the `cli` feature, also `gavel serve`'s flags.
#[derive(Clone)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
pub struct Config {
    /// Address to listen on. Anything but loopback requires an account (`gavel users add`) or --token.
    #[cfg_attr(feature = "cli", arg(long, default_value = "127.0.0.1:7878"))]
    pub bind: SocketAddr,
    /// Shared read-only token (`Authorization: Bearer …`, or open /login?token=…):
    /// a viewer's access without an account, required for a non-loopback bind
    /// until an account exists.
    #[cfg_attr(
        feature = "cli",
        arg(long, env = "GAVEL_WEB_TOKEN", hide_env_values = true)
    )]
    pub token: Option<String>,
    /// Mark the session cookie Secure: the UI is served over HTTPS behind a proxy
    /// (a proxy's `X-Forwarded-Proto: https` does it per request, too).
    #[cfg_attr(feature = "cli", arg(long))]
    pub secure_cookies: bool,
    /// Also answer to this host name (`name`, `name:port`, or `*`): the UI refuses
    /// other Host headers (DNS rebinding). Loopback binds also answer to
    /// `localhost`, `127.0.0.1` and `[::1]`. Repeatable.
    #[cfg_attr(feature = "cli", arg(long = "allow-host", value_name = "HOST"))]
    pub allowed_hosts: Vec<String>,
    /// What runs started from the UI use besides the stored suite.
    #[cfg_attr(feature = "cli", command(flatten))]
    pub runs: RunDefaults,
    /// Sign-in limits and API token lifetimes.
    #[cfg_attr(feature = "cli", command(flatten))]
    pub accounts: AccountPolicy,
}

/// Shared by every handler.
#[derive(Clone)]
pub(crate) struct AppState {
    store: Store,
    runs: runs::Runs,
    live: live::Live,
    /// The server's secret: the CSRF token of requests without a session, and
    /// the key sessions' CSRF tokens derive from.
    csrf: Arc<str>,
    token: Option<Arc<str>>,
    /// No token and a loopback bind: open mode while no account exists.
    open: bool,
    /// Set once an account is known to exist.
    accounts: Arc<AtomicBool>,
    secure_cookies: bool,
    hosts: Arc<hosts::HostPolicy>,
    policy: Arc<AccountPolicy>,
    templates: Arc<minijinja::Environment<'static>>,
}

/// The application: every page, the API and the assets, behind the security layers.
pub fn app(store: Store, config: &Config) -> Result<Router, WebError> {
    let runs = runs::Runs::new(store.clone(), config.runs.clone());
    router(store, config, &runs)
}

/// [`app`] whose runs are `runs`: [`serve`] keeps them, to stop them at shutdown.
fn router(store: Store, config: &Config, runs: &runs::Runs) -> Result<Router, WebError> {
    let live = runs.live();
    let state = AppState {
        runs: runs.clone(),
        live,
        store,
        csrf: auth::random_hex(32)
            .map_err(|e| WebError::Internal(format!("no randomness from the OS: {e}")))?
            .into(),
        token: config.token.as_deref().map(Arc::from),
        open: config.token.is_none() && config.bind.ip().is_loopback(),
        accounts: Arc::default(),
        secure_cookies: config.secure_cookies,
        hosts: Arc::new(hosts::HostPolicy::new(config.bind, &config.allowed_hosts)),
        policy: Arc::new(config.accounts.clone()),
        templates: Arc::new(view::templates()?),
    };
    let mut router = Router::new()
        .route("/", get(pages::runs))
        .route("/runs", get(pages::runs).post(start::start_run))
        .route("/runs/preview", get(start::preview_part))
        .route("/runs/{id}", get(pages::run_detail))
        .route("/runs/{id}/progress", get(pages::run_progress))
        .route("/runs/{id}/events", get(live::events))
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
        .route("/login", get(signin::login_page).post(signin::login))
        .route("/logout", post(signin::logout))
        .route("/try-check", post(pages::try_check))
        .route("/assets/{file}", get(assets::asset))
        .merge(review::routes())
        .merge(users::routes())
        .merge(lifecycle::routes())
        .nest("/api", api::routes())
        .merge(users::api_routes())
        .merge(lifecycle::api_routes())
        .layer(DefaultBodyLimit::max(security::MAX_BODY))
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

/// Serves until `shutdown` completes, then stops gracefully: runs started here
/// are cancelled (each records how far it got, as an interrupted CLI run
/// does), live pages' event streams end, requests in flight are answered, and
/// this returns once every run has stopped, so the caller can close the store.
/// `ready` is told the address once it is listened on. Refuses a non-loopback
/// bind without a token or an account. API tokens made before tokens expired
/// get the configured lifetime from now.
pub async fn serve(
    store: Store,
    config: Config,
    ready: impl FnOnce(SocketAddr),
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), WebError> {
    security::check_bind(&config, &store).await?;
    let listener = tokio::net::TcpListener::bind(config.bind)
        .await
        .map_err(|e| WebError::Bind(config.bind, e))?;
    let bound = listener
        .local_addr()
        .map_err(|e| WebError::Bind(config.bind, e))?;
    let dated = store
        .date_undated_tokens(config.accounts.token_ttl())
        .await?;
    if dated > 0 {
        tracing::warn!(
            "{dated} API token{} made before tokens expired now expire in {} days",
            gavel_core::plural(usize::try_from(dated).unwrap_or(usize::MAX)),
            config.accounts.token_days
        );
    }
    // Port 0 picked a port: the Host check wants the real one.
    let config = Config {
        bind: bound,
        ..config
    };
    let runs = runs::Runs::new(store.clone(), config.runs.clone());
    let router = router(store, &config, &runs)?;
    let stopping = runs.clone();
    ready(bound);
    axum::serve(
        listener,
        router.into_make_service_with_connect_info::<SocketAddr>(),
    )
    .with_graceful_shutdown(async move {
        shutdown.await;
        stopping.stop();
    })
    .await
    .map_err(|e| WebError::Bind(config.bind, e))?;
    runs.stopped().await;
    Ok(())
}
