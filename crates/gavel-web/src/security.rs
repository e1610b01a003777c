//! Who may talk to the UI and how: loopback binds unless a token is set, only this
//! server's `Host` and, for changes, its `Origin` ([`crate::hosts`]), the token
//! on every request when it is, the CSRF token on every state-changing request,
//! and headers that keep pages from running anything but their own scripts.

use axum::body::{Body, to_bytes};
use axum::extract::{Query, Request, State};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Redirect, Response};
use tower_http::set_header::SetResponseHeaderLayer;

use crate::{AppState, Config, WebError};

/// The header (htmx sends it on every request, from `hx-headers`) and the form
/// field that carry the CSRF token.
pub(crate) const CSRF_HEADER: &str = "x-csrf-token";
pub(crate) const CSRF_FIELD: &str = "_csrf";
const TOKEN_COOKIE: &str = "gavel_token";
/// The largest body read: room for a case with several long prompts (each
/// prompt's own limit is the case builder's, with a message by the field).
pub(crate) const MAX_FORM_BYTES: usize = 8 << 20;

/// A fresh random token: two UUIDv7s, 148 random bits.
pub(crate) fn random_token() -> String {
    format!(
        "{}{}",
        uuid::Uuid::now_v7().simple(),
        uuid::Uuid::now_v7().simple()
    )
}

/// Refuses to serve beyond this machine without a token.
pub(crate) fn check_bind(config: &Config) -> Result<(), WebError> {
    if !config.bind.ip().is_loopback() && config.token.as_deref().is_none_or(str::is_empty) {
        return Err(WebError::Unprotected(config.bind));
    }
    Ok(())
}

/// Compares secrets in time independent of where they differ.
fn same_secret(a: &str, b: &str) -> bool {
    a.len() == b.len()
        && a.bytes()
            .zip(b.bytes())
            .fold(0u8, |acc, (x, y)| acc | (x ^ y))
            == 0
}

/// Host and origin checks, authentication (when a token is set) and CSRF
/// protection, for every route.
pub(crate) async fn guard(State(state): State<AppState>, request: Request, next: Next) -> Response {
    if let Some(refused) = state
        .hosts
        .refuse(request.method(), request.uri(), request.headers())
    {
        return refused;
    }
    let path = request.uri().path();
    let public = path.starts_with("/assets/") || path == "/login";
    let bearer = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "));
    if let Some(token) = &state.token
        && !public
    {
        let cookie = request
            .headers()
            .get_all(header::COOKIE)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(';'))
            .find_map(|c| {
                c.trim()
                    .strip_prefix(&format!("{TOKEN_COOKIE}="))
                    .map(str::to_owned)
            });
        let authed = bearer.is_some_and(|b| same_secret(b, token))
            || cookie.is_some_and(|c| same_secret(&c, token));
        if !authed {
            return (
                StatusCode::UNAUTHORIZED,
                "authentication required: send `Authorization: Bearer TOKEN` or open /login?token=TOKEN",
            )
                .into_response();
        }
    }
    if matches!(
        *request.method(),
        Method::GET | Method::HEAD | Method::OPTIONS
    ) {
        return next.run(request).await;
    }
    // A bearer token is never sent by a browser on its own: no CSRF to fear.
    let by_bearer = state
        .token
        .as_deref()
        .is_some_and(|t| bearer.is_some_and(|b| same_secret(b, t)));
    match with_csrf(request, &state.csrf).await {
        Ok(request) => next.run(request).await,
        Err(request) if by_bearer => next.run(request).await,
        Err(_) => (
            StatusCode::FORBIDDEN,
            "missing or wrong CSRF token: reload the page and try again",
        )
            .into_response(),
    }
}

/// The request back when it carries the CSRF token in its header or, for a
/// form, in its `_csrf` field; `Err` with the request when it does not.
async fn with_csrf(request: Request, csrf: &str) -> Result<Request, Request> {
    let header_ok = request
        .headers()
        .get(CSRF_HEADER)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| same_secret(v, csrf));
    if header_ok {
        return Ok(request);
    }
    let is_form = request
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/x-www-form-urlencoded"));
    if !is_form {
        return Err(request);
    }
    let (parts, body) = request.into_parts();
    let bytes = to_bytes(body, MAX_FORM_BYTES).await.unwrap_or_default();
    let ok = form_field(&bytes, CSRF_FIELD).is_some_and(|v| same_secret(&v, csrf));
    let request = Request::from_parts(parts, Body::from(bytes));
    if ok { Ok(request) } else { Err(request) }
}

/// One field of a URL-encoded form.
fn form_field(bytes: &[u8], name: &str) -> Option<String> {
    let pairs: Vec<(String, String)> = serde_urlencoded::from_bytes(bytes).ok()?;
    pairs.into_iter().find(|(k, _)| k == name).map(|(_, v)| v)
}

#[derive(serde::Deserialize)]
pub(crate) struct LoginQuery {
    token: String,
}

/// `GET /login?token=…`: sets the auth cookie and goes home.
pub(crate) async fn login(State(state): State<AppState>, Query(q): Query<LoginQuery>) -> Response {
    match &state.token {
        Some(token) if same_secret(&q.token, token) => {
            let cookie = format!(
                "{TOKEN_COOKIE}={}; HttpOnly; SameSite=Strict; Path=/",
                q.token
            );
            match HeaderValue::from_str(&cookie) {
                Ok(cookie) => ([(header::SET_COOKIE, cookie)], Redirect::to("/")).into_response(),
                Err(_) => StatusCode::BAD_REQUEST.into_response(),
            }
        }
        Some(_) => (StatusCode::UNAUTHORIZED, "wrong token").into_response(),
        None => Redirect::to("/").into_response(),
    }
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
