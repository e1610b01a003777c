//! Who may talk to the UI and how: loopback binds unless a token or accounts
//! exist, only this server's `Host` and, for changes, its `Origin`
//! ([`crate::hosts`]), an [`Actor`] with the role the request needs
//! ([`crate::auth`]), the CSRF token on every state-changing request from a
//! browser, and headers that keep pages from running anything but their own
//! scripts.

use std::sync::atomic::Ordering;

use axum::body::{Body, to_bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, Uri, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Redirect, Response};
use gavel_store::{Role, Store};
use tower_http::set_header::SetResponseHeaderLayer;

use crate::auth::{self, Actor, Proof};
use crate::{AppState, Config, WebError};

/// The header (htmx sends it on every request, from `hx-headers`) and the form
/// field that carry the CSRF token.
pub(crate) const CSRF_HEADER: &str = "x-csrf-token";
pub(crate) const CSRF_FIELD: &str = "_csrf";
/// The cookie `/login?token=…` sets: the shared bootstrap token.
pub(crate) const TOKEN_COOKIE: &str = "gavel_token";
/// The cookie of a signed-in session.
pub(crate) const SESSION_COOKIE: &str = "gavel_session";
/// The largest request body read: a form with a 1 MB prompt (3 MB encoded) fits
/// with room, so it reaches the handler's own checks.
pub(crate) const MAX_BODY: usize = 16 << 20;

/// Refuses to serve beyond this machine without a token or accounts.
pub(crate) async fn check_bind(config: &Config, store: &Store) -> Result<(), WebError> {
    if !config.bind.ip().is_loopback()
        && config.token.as_deref().is_none_or(str::is_empty)
        && !store.has_users().await?
    {
        return Err(WebError::Unprotected(config.bind));
    }
    Ok(())
}

/// Compares secrets in time independent of where they differ.
pub(crate) fn same_secret(a: &str, b: &str) -> bool {
    a.len() == b.len()
        && a.bytes()
            .zip(b.bytes())
            .fold(0u8, |acc, (x, y)| acc | (x ^ y))
            == 0
}

/// A cookie's value.
pub(crate) fn cookie(headers: &HeaderMap, name: &str) -> Option<String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .find_map(|c| {
            c.trim()
                .strip_prefix(name)
                .and_then(|rest| rest.strip_prefix('='))
                .map(str::to_owned)
        })
}

/// Host and origin checks, who is asking and whether their role allows it,
/// and CSRF protection, for every route.
pub(crate) async fn guard(State(state): State<AppState>, request: Request, next: Next) -> Response {
    if let Some(refused) = state
        .hosts
        .refuse(request.method(), request.uri(), request.headers())
    {
        return refused;
    }
    let actor = match identify(&state, request.headers()).await {
        Ok(actor) => actor,
        Err(refused) => return refused,
    };
    if let Some(needed) = auth::required_role(request.method(), request.uri().path()) {
        match &actor {
            None => return unauthenticated(request.method(), request.uri()),
            Some(actor) if actor.role < needed => return auth::forbidden(actor, needed),
            Some(_) => {}
        }
    }
    let mut request = request;
    let safe = matches!(
        *request.method(),
        Method::GET | Method::HEAD | Method::OPTIONS
    );
    if !safe && !actor.as_ref().is_some_and(Actor::by_bearer) {
        let expected = actor.as_ref().map_or(&*state.csrf, |a| a.csrf.as_str());
        request = match with_csrf(request, expected).await {
            Ok(request) => request,
            Err(refused) => return refused,
        };
    }
    match actor {
        Some(actor) => {
            request.extensions_mut().insert(actor.clone());
            auth::CURRENT.scope(actor, next.run(request)).await
        }
        None => next.run(request).await,
    }
}

/// The actor a request proves to be, `None` for nobody; `Err` with the answer
/// for a bearer token that is no one's, or a store failure.
async fn identify(state: &AppState, headers: &HeaderMap) -> Result<Option<Actor>, Response> {
    let key = &*state.csrf;
    let shared = |bearer| {
        Actor::unnamed(
            auth::TOKEN_USER,
            Role::Viewer,
            Proof::SharedToken { bearer },
            key,
        )
    };
    let bearer = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "));
    let failed = |e: gavel_store::StoreError| WebError::from(e).into_response();
    if let Some(bearer) = bearer {
        if state
            .token
            .as_deref()
            .is_some_and(|t| same_secret(bearer, t))
        {
            return Ok(Some(shared(true)));
        }
        return match state.store.token_user(&auth::sha256_hex(bearer)).await {
            Ok(Some(user)) => Ok(Some(Actor::of(user, Proof::ApiToken, key))),
            Ok(None) => Err((
                StatusCode::UNAUTHORIZED,
                "unknown or revoked API token (`Authorization: Bearer …`)",
            )
                .into_response()),
            Err(e) => Err(failed(e)),
        };
    }
    if let Some(session) = cookie(headers, SESSION_COOKIE) {
        let id_hash = auth::sha256_hex(&session);
        match state.store.session_user(&id_hash).await {
            Ok(Some(user)) => return Ok(Some(Actor::of(user, Proof::Session(id_hash), key))),
            Ok(None) => {} // expired or signed out: as if absent
            Err(e) => return Err(failed(e)),
        }
    }
    if let (Some(token), Some(sent)) = (&state.token, cookie(headers, TOKEN_COOKIE))
        && same_secret(&sent, token)
    {
        return Ok(Some(shared(false)));
    }
    if state.open && !accounts_exist(state).await.map_err(failed)? {
        let local = Actor::unnamed(auth::LOCAL_USER, Role::Admin, Proof::Open, key);
        return Ok(Some(local));
    }
    Ok(None)
}

/// Whether any account exists; once one does, it is not asked again (accounts
/// are disabled, never removed).
async fn accounts_exist(state: &AppState) -> Result<bool, gavel_store::StoreError> {
    if state.accounts.load(Ordering::Relaxed) {
        return Ok(true);
    }
    let exist = state.store.has_users().await?;
    state.accounts.store(exist, Ordering::Relaxed);
    Ok(exist)
}

/// Nobody signed in: pages go to the sign-in form, the API and changes get 401.
fn unauthenticated(method: &Method, uri: &Uri) -> Response {
    if *method == Method::GET && !uri.path().starts_with("/api/") {
        let here = uri.path_and_query().map_or("/", |p| p.as_str());
        let next: String = url_encode(here);
        return Redirect::to(&format!("/login?next={next}")).into_response();
    }
    (
        StatusCode::UNAUTHORIZED,
        "authentication required: sign in at /login, or send `Authorization: Bearer TOKEN` \
         (an API token from your account page)",
    )
        .into_response()
}

/// A query value, percent-encoded.
fn url_encode(text: &str) -> String {
    serde_urlencoded::to_string([("", text)])
        .map(|s| s.trim_start_matches('=').to_owned())
        .unwrap_or_default()
}

/// The request back when it carries the CSRF token in its header or, for a
/// form, in its `_csrf` field; the refusal when it does not. Bodies up to
/// [`MAX_BODY`] are read, so a large form reaches its handler's checks.
async fn with_csrf(request: Request, csrf: &str) -> Result<Request, Response> {
    let header_ok = request
        .headers()
        .get(CSRF_HEADER)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| same_secret(v, csrf));
    if header_ok {
        return Ok(request);
    }
    let refused = || {
        (
            StatusCode::FORBIDDEN,
            "missing or wrong CSRF token: reload the page and try again",
        )
            .into_response()
    };
    let is_form = request
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/x-www-form-urlencoded"));
    if !is_form {
        return Err(refused());
    }
    let (parts, body) = request.into_parts();
    let Ok(bytes) = to_bytes(body, MAX_BODY).await else {
        let message = format!("the request is larger than {} MiB", MAX_BODY >> 20);
        return Err((StatusCode::PAYLOAD_TOO_LARGE, message).into_response());
    };
    if form_field(&bytes, CSRF_FIELD).is_some_and(|v| same_secret(&v, csrf)) {
        Ok(Request::from_parts(parts, Body::from(bytes)))
    } else {
        Err(refused())
    }
}

/// One field of a URL-encoded form.
fn form_field(bytes: &[u8], name: &str) -> Option<String> {
    let pairs: Vec<(String, String)> = serde_urlencoded::from_bytes(bytes).ok()?;
    pairs.into_iter().find(|(k, _)| k == name).map(|(_, v)| v)
}

/// Headers on every answer: only the UI's own scripts run, no framing, no sniffing.
pub(crate) fn headers() -> [SetResponseHeaderLayer<HeaderValue>; 3] {
    [
        SetResponseHeaderLayer::if_not_present(
            header::CONTENT_SECURITY_POLICY,
            HeaderValue::from_static(
                "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; \
                 img-src 'self' data:; frame-ancestors 'none'; form-action 'self'",
            ),
        ),
        SetResponseHeaderLayer::if_not_present(
            header::X_CONTENT_TYPE_OPTIONS,
            HeaderValue::from_static("nosniff"),
        ),
        SetResponseHeaderLayer::if_not_present(
            header::X_FRAME_OPTIONS,
            HeaderValue::from_static("DENY"),
        ),
    ]
}
