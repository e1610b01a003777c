//! Who is asking, and whether they may: every request is matched to an
//! [`Actor`] (a signed-in session, a user's API token, the shared bootstrap
//! token, or the local open mode), then checked against the role its method
//! and path need ([`required_role`]). Handlers take the [`Actor`] as an
//! extractor to record who made a change.
//!
//! The model, in one place:
//! - No accounts and no token on a loopback bind: open mode, everyone on this
//!   machine acts as the admin `local` (the UI says so).
//! - Once an account exists (`gavel users add NAME --role admin`), everything but
//!   `/login`, `/logout` and `/assets/` needs a signed-in session or a token.
//! - The shared token (`--token`) is a read-only bootstrap: it acts as a viewer.
//! - Reading needs `viewer`; every state-changing request needs `editor`, and
//!   `/users` (pages and API) needs `admin`. Signing in and out are the only
//!   state-changing requests a viewer (or nobody) may make.

use std::future::Future;

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use axum::http::{Method, StatusCode};
use axum::response::{IntoResponse, Response};
use gavel_store::{Role, User};
use sha2::{Digest, Sha256};

/// The name open mode records changes under.
pub(crate) const LOCAL_USER: &str = "local";
/// The name the shared bootstrap token acts under.
pub(crate) const TOKEN_USER: &str = "token";

/// How a request proved who it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Proof {
    /// Loopback, no accounts, no token.
    Open,
    /// A browser session (the hash of its cookie).
    Session(String),
    /// A user's API token.
    ApiToken,
    /// The shared bootstrap token (header or `/login?token=` cookie).
    SharedToken { bearer: bool },
}

/// The signed-in user of a request. An extractor: a handler that takes it runs
/// only for requests the guard let through, so it always has one.
#[derive(Debug, Clone)]
pub(crate) struct Actor {
    /// Recorded with every change it makes.
    pub(crate) name: String,
    /// What it may do.
    pub(crate) role: Role,
    /// How it signed in.
    pub(crate) proof: Proof,
    /// The CSRF token its forms carry.
    pub(crate) csrf: String,
}

impl Actor {
    /// The actor of an account, proved by `proof`, with the CSRF token of `key`.
    pub(crate) fn of(user: User, proof: Proof, key: &str) -> Actor {
        let csrf = match &proof {
            Proof::Session(id_hash) => sha256_hex(&format!("{key}:{id_hash}")),
            _ => key.to_owned(),
        };
        Actor {
            name: user.name,
            role: user.role,
            proof,
            csrf,
        }
    }

    /// An actor that is no account (open mode, the shared token).
    pub(crate) fn unnamed(name: &str, role: Role, proof: Proof, key: &str) -> Actor {
        Actor {
            name: name.to_owned(),
            role,
            proof,
            csrf: key.to_owned(),
        }
    }

    /// Whether the request came with a bearer token: no browser sends one on its
    /// own, so it needs no CSRF token.
    pub(crate) fn by_bearer(&self) -> bool {
        matches!(
            self.proof,
            Proof::ApiToken | Proof::SharedToken { bearer: true }
        )
    }
}

impl<S: Send + Sync> FromRequestParts<S> for Actor {
    type Rejection = Response;

    fn from_request_parts(
        parts: &mut Parts,
        _state: &S,
    ) -> impl Future<Output = Result<Self, Self::Rejection>> + Send {
        let actor = parts.extensions.get::<Actor>().cloned();
        async move {
            actor
                .ok_or_else(|| (StatusCode::UNAUTHORIZED, "sign in first (/login)").into_response())
        }
    }
}

tokio::task_local! {
    /// The actor of the request being answered, for templates (the page header
    /// and the CSRF token of forms).
    pub(crate) static CURRENT: Actor;
}

/// The role a request needs; `None` for the public ones (sign-in, sign-out,
/// assets). Every state-changing method needs at least `editor`.
pub(crate) fn required_role(method: &Method, path: &str) -> Option<Role> {
    let under = |prefix: &str| {
        path == prefix
            || path
                .strip_prefix(prefix)
                .is_some_and(|rest| rest.starts_with('/'))
    };
    if path.starts_with("/assets/") || path == "/login" || path == "/logout" {
        return None;
    }
    if under("/users") || under("/api/users") {
        return Some(Role::Admin);
    }
    if matches!(*method, Method::GET | Method::HEAD | Method::OPTIONS) {
        Some(Role::Viewer)
    } else {
        Some(Role::Editor)
    }
}

/// The refusal of an actor whose role is short of `needed`.
pub(crate) fn forbidden(actor: &Actor, needed: Role) -> Response {
    let message = format!(
        "`{}` is a {}: this needs the {needed} role (ask an admin)",
        actor.name, actor.role
    );
    (StatusCode::FORBIDDEN, message).into_response()
}

/// Hex SHA-256 of a text: how session cookies and API tokens are stored.
pub(crate) fn sha256_hex(text: &str) -> String {
    hex::encode(Sha256::digest(text.as_bytes()))
}

/// `bytes` random bytes from the OS, as hex.
pub(crate) fn random_hex(bytes: usize) -> Result<String, getrandom::Error> {
    let mut buf = vec![0u8; bytes];
    getrandom::fill(&mut buf)?;
    Ok(hex::encode(buf))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_write_needs_an_editor_and_users_an_admin() {
        assert_eq!(required_role(&Method::GET, "/runs"), Some(Role::Viewer));
        assert_eq!(required_role(&Method::POST, "/runs"), Some(Role::Editor));
        assert_eq!(
            required_role(&Method::DELETE, "/api/anything/new"),
            Some(Role::Editor)
        );
        assert_eq!(required_role(&Method::GET, "/users"), Some(Role::Admin));
        assert_eq!(
            required_role(&Method::PUT, "/api/users/ana"),
            Some(Role::Admin)
        );
        assert_eq!(
            required_role(&Method::GET, "/usersx"),
            Some(Role::Viewer),
            "a prefix is a whole segment"
        );
        assert_eq!(required_role(&Method::POST, "/login"), None);
        assert_eq!(required_role(&Method::POST, "/logout"), None);
        assert_eq!(required_role(&Method::GET, "/assets/gavel.css"), None);
    }
}
