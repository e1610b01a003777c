//! Signing in and out: `/login` (a name and password form, or the shared
//! bootstrap token as `?token=`), `/logout`. A session is a random cookie
//! (HttpOnly, SameSite=Lax, Secure behind TLS) whose SHA-256 the store keeps.
//! Passwords are checked within the sign-in limits ([`throttle`]); after
//! signing in, the browser goes back only to a path of this site.

use std::net::SocketAddr;
use std::time::Duration;

use axum::extract::{ConnectInfo, Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{AppendHeaders, IntoResponse, Redirect, Response};
use axum::{Extension, Form};
use minijinja::context;
use serde::Deserialize;

use crate::auth::{self, Actor, Proof};
use crate::security::{SESSION_COOKIE, TOKEN_COOKIE, same_secret};
use crate::throttle::{self, Attempt};
use crate::view::render;
use crate::{AppState, WebError};

/// How long a session lasts after signing in.
const SESSION_TTL: Duration = Duration::from_secs(7 * 24 * 3600);

#[derive(Deserialize)]
pub(crate) struct LoginQuery {
    #[serde(default)]
    token: Option<String>,
    #[serde(default)]
    next: String,
}

/// `GET /login`: the sign-in form; `?token=TOKEN` (the shared bootstrap token)
/// sets its cookie instead.
pub(crate) async fn login_page(
    State(state): State<AppState>,
    Query(q): Query<LoginQuery>,
) -> Response {
    match (&q.token, &state.token) {
        (Some(sent), Some(token)) if same_secret(sent, token) => {
            let cookie = format!("{TOKEN_COOKIE}={sent}; HttpOnly; SameSite=Strict; Path=/");
            match HeaderValue::from_str(&cookie) {
                Ok(cookie) => ([(header::SET_COOKIE, cookie)], Redirect::to("/")).into_response(),
                Err(_) => StatusCode::BAD_REQUEST.into_response(),
            }
        }
        (Some(_), _) => (StatusCode::UNAUTHORIZED, "wrong token").into_response(),
        (None, _) => form(&state, &q.next, "", None, StatusCode::OK),
    }
}

fn form(
    state: &AppState,
    next: &str,
    name: &str,
    error: Option<&str>,
    code: StatusCode,
) -> Response {
    let page = render(
        state,
        "login.html",
        context! { next => local_path(next), name => name, error => error },
    );
    (code, page).into_response()
}

/// `next` when it is a path of this site, else `/`: no open redirects. A path
/// starts with one `/` (not `//` or `/\`, which browsers read as another host),
/// is printable ASCII, and holds no backslash or control character, as sent
/// or percent-decoded (browsers drop tabs and newlines: `/\t/host` is `//host`).
pub(crate) fn local_path(next: &str) -> &str {
    let decoded: Vec<u8> = percent_encoding::percent_decode_str(next).collect();
    let local = next.bytes().all(|b| b.is_ascii_graphic())
        && next.starts_with('/')
        && [next.as_bytes(), &decoded[..]].iter().all(|path| {
            !path.starts_with(b"//")
                && !path.contains(&b'\\')
                && !path.iter().any(u8::is_ascii_control)
        });
    if local { next } else { "/" }
}

#[derive(Deserialize)]
pub(crate) struct LoginForm {
    #[serde(default)]
    name: String,
    #[serde(default)]
    password: String,
    #[serde(default)]
    next: String,
}

/// `POST /login`: checks the password, within the sign-in limits, and starts
/// a session. A blocked name or address gets 429 and `Retry-After`.
pub(crate) async fn login(
    State(state): State<AppState>,
    peer: Option<Extension<ConnectInfo<SocketAddr>>>,
    headers: HeaderMap,
    Form(f): Form<LoginForm>,
) -> Response {
    let name = f.name.trim();
    let address = throttle::client_address(&state, peer.as_deref(), &headers);
    let user = match throttle::sign_in(&state, name, &f.password, address).await {
        Ok(Attempt::In(user)) => user,
        Ok(Attempt::Wrong) => {
            let error = Some("wrong name or password");
            return form(&state, &f.next, name, error, StatusCode::UNAUTHORIZED);
        }
        Ok(Attempt::Refused(refusal)) => {
            let code = StatusCode::TOO_MANY_REQUESTS;
            let page = form(&state, &f.next, name, Some(&refusal.message), code);
            return ([(header::RETRY_AFTER, refusal.retry_after)], page).into_response();
        }
        Err(e) => return e.into_response(),
    };
    let started = async {
        let id = auth::random_hex(32).map_err(|e| WebError::Internal(e.to_string()))?;
        let id_hash = auth::sha256_hex(&id);
        state
            .store
            .create_session(&id_hash, &user.name, SESSION_TTL)
            .await?;
        Ok::<_, WebError>(id)
    };
    let id = match started.await {
        Ok(id) => id,
        Err(e) => return e.into_response(),
    };
    let max_age = SESSION_TTL.as_secs();
    let set = session_cookie(&state, &headers, &id, max_age);
    (
        [(header::SET_COOKIE, set)],
        Redirect::to(local_path(&f.next)),
    )
        .into_response()
}

/// `POST /logout`: ends the session and clears both cookies.
pub(crate) async fn logout(
    State(state): State<AppState>,
    headers: HeaderMap,
    actor: Option<Extension<Actor>>,
) -> Response {
    if let Some(Extension(Actor {
        proof: Proof::Session(id_hash),
        ..
    })) = &actor
        && let Err(e) = state.store.end_session(id_hash).await
    {
        return WebError::from(e).into_response();
    }
    let clear_token = HeaderValue::from_static("gavel_token=; HttpOnly; Path=/; Max-Age=0");
    (
        AppendHeaders([
            (header::SET_COOKIE, session_cookie(&state, &headers, "", 0)),
            (header::SET_COOKIE, clear_token),
        ]),
        Redirect::to("/login"),
    )
        .into_response()
}

/// The session cookie, `Secure` when served over TLS (`--secure-cookies`, or a
/// proxy's `X-Forwarded-Proto: https`).
fn session_cookie(state: &AppState, headers: &HeaderMap, value: &str, max_age: u64) -> HeaderValue {
    let tls = state.secure_cookies
        || headers
            .get("x-forwarded-proto")
            .and_then(|v| v.to_str().ok())
            .is_some_and(|p| p.eq_ignore_ascii_case("https"));
    let secure = if tls { "; Secure" } else { "" };
    let text = format!(
        "{SESSION_COOKIE}={value}; HttpOnly; SameSite=Lax; Path=/; Max-Age={max_age}{secure}"
    );
    // Hex and ASCII only: always a valid header value.
    HeaderValue::from_str(&text).unwrap_or_else(|_| HeaderValue::from_static(""))
}

#[cfg(test)]
mod tests {
    use super::local_path;

    #[test]
    fn only_paths_of_this_site_are_followed() {
        for here in ["/", "/runs/1?x=a%2Fb", "/suites/a%20b/cases/new"] {
            assert_eq!(local_path(here), here);
        }
        for away in [
            "",
            "runs",
            "//evil.example",
            "/\\evil.example",
            "/\t/evil.example",
            "/%09/evil.example",
            "/%2F/evil.example",
            "/%5Cevil.example",
            "/%0d%0aSet-Cookie:x",
            "/\r\nSet-Cookie:x",
            "/a b",
            "/é",
            "https://evil.example/",
        ] {
            assert_eq!(local_path(away), "/", "{away:?}");
        }
    }
}
