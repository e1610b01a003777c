//! Account pages and their API: your own account (`/account`: password, API
//! tokens) and, for admins, everyone's (`/users`: make accounts, change roles,
//! disable, reset passwords, issue tokens, lift sign-in locks). Who may do what
//! is the guard's ([`crate::auth::required_role`]); these handlers act as the
//! [`Actor`].

use std::net::SocketAddr;

use axum::extract::{ConnectInfo, Path, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::{delete, get, post, put};
use axum::{Extension, Form, Json, Router};
use gavel_store::{Role, SignInSubject, StoreError};
use minijinja::context;
use serde::Deserialize;
use serde_json::json;

use crate::accounts::{self, AccountError};
use crate::auth::{Actor, Proof};
use crate::pages::path_segment;
use crate::throttle::{self, Attempt};
use crate::view::{render, ser};
use crate::{AppState, WebError};

/// The pages.
pub(crate) fn routes() -> Router<AppState> {
    Router::new()
        .route("/account", get(account))
        .route("/account/password", post(change_password))
        .route("/account/tokens", post(add_own_token))
        .route("/account/tokens/{id}/revoke", post(revoke_own_token))
        .route("/users", get(users).post(add_user))
        .route("/users/{name}", post(update_user))
        .route("/users/{name}/password", post(reset_password))
        .route("/users/{name}/tokens", post(add_user_token))
        .route("/users/locks/unlock", post(unlock))
}

/// The API.
pub(crate) fn api_routes() -> Router<AppState> {
    Router::new()
        .route("/api/me", get(me))
        .route("/api/tokens", get(own_tokens).post(api_add_token))
        .route("/api/tokens/{id}", delete(api_revoke_token))
        .route("/api/users", get(api_users).post(api_add_user))
        .route("/api/users/{name}", put(api_update_user))
}

/// Whether the actor is an account (not open mode or the shared token).
fn has_account(actor: &Actor) -> bool {
    matches!(actor.proof, Proof::Session(_) | Proof::ApiToken)
}

fn no_account(actor: &Actor) -> WebError {
    WebError::BadRequest(format!(
        "`{}` is not an account: sign in with one (`gavel users add`) to have a password \
         and API tokens",
        actor.name
    ))
}

/// `GET /account`: who you are, your tokens, and (editors and admins) forms to
/// change your password and make tokens.
async fn account(State(state): State<AppState>, actor: Actor) -> Response {
    account_page(&state, &actor, None, None, StatusCode::OK).await
}

async fn account_page(
    state: &AppState,
    actor: &Actor,
    new_token: Option<&str>,
    error: Option<&str>,
    code: StatusCode,
) -> Response {
    let tokens = match has_account(actor) {
        true => match state.store.api_tokens(&actor.name).await {
            Ok(tokens) => tokens,
            Err(e) => return WebError::from(e).into_response(),
        },
        false => Vec::new(),
    };
    let page = render(
        state,
        "account.html",
        context! {
            has_account => has_account(actor),
            can_write => actor.role >= Role::Editor,
            tokens => ser(&tokens),
            new_token => new_token,
            token_days => state.policy.token_days,
            error => error,
        },
    );
    (code, page).into_response()
}

#[derive(Deserialize)]
struct PasswordForm {
    #[serde(default)]
    current: String,
    #[serde(default)]
    password: String,
}

/// `POST /account/password`: a new password for yourself (ends your sessions
/// and revokes your API tokens). The current password is checked within the
/// sign-in limits.
async fn change_password(
    State(state): State<AppState>,
    actor: Actor,
    peer: Option<Extension<ConnectInfo<SocketAddr>>>,
    headers: HeaderMap,
    Form(f): Form<PasswordForm>,
) -> Response {
    if !has_account(&actor) {
        return no_account(&actor).into_response();
    }
    let address = throttle::client_address(&state, peer.as_deref(), &headers);
    let changed = async {
        match throttle::sign_in(&state, &actor.name, &f.current, address).await? {
            Attempt::In(_) => {}
            Attempt::Wrong => {
                return Err(AccountError::Password(
                    "the current password is wrong".into(),
                ));
            }
            Attempt::Refused(refusal) => return Ok(Some(refusal)),
        }
        accounts::set_password(&state.store, &actor.name, &f.password).await?;
        Ok(None)
    };
    match changed.await {
        Ok(None) => Redirect::to("/login").into_response(),
        Ok(Some(refusal)) => {
            let code = StatusCode::TOO_MANY_REQUESTS;
            let page = account_page(&state, &actor, None, Some(&refusal.message), code).await;
            ([(header::RETRY_AFTER, refusal.retry_after)], page).into_response()
        }
        Err(e @ AccountError::Password(_)) => {
            let message = e.to_string();
            account_page(
                &state,
                &actor,
                None,
                Some(&message),
                StatusCode::UNPROCESSABLE_ENTITY,
            )
            .await
        }
        Err(e) => e.into_response(),
    }
}

#[derive(Deserialize)]
struct TokenForm {
    #[serde(default)]
    label: String,
}

/// `POST /account/tokens`: a new API token, shown once.
async fn add_own_token(
    State(state): State<AppState>,
    actor: Actor,
    Form(f): Form<TokenForm>,
) -> Response {
    if !has_account(&actor) {
        return no_account(&actor).into_response();
    }
    let ttl = state.policy.token_ttl();
    match accounts::new_api_token(&state.store, &actor.name, &f.label, &actor.name, ttl).await {
        Ok((_, token)) => account_page(&state, &actor, Some(&token), None, StatusCode::OK).await,
        Err(e) => e.into_response(),
    }
}

/// `POST /account/tokens/{id}/revoke`.
async fn revoke_own_token(
    State(state): State<AppState>,
    actor: Actor,
    Path(id): Path<String>,
) -> Result<Redirect, WebError> {
    state.store.revoke_api_token(&actor.name, &id).await?;
    Ok(Redirect::to("/account"))
}

/// `GET /users` (admins): every account and the forms to manage them.
async fn users(State(state): State<AppState>) -> Response {
    users_page(&state, None, None, StatusCode::OK).await
}

async fn users_page(
    state: &AppState,
    new_token: Option<(&str, &str)>,
    error: Option<&str>,
    code: StatusCode,
) -> Response {
    let listed = async {
        Ok::<_, StoreError>((
            state.store.users().await?,
            state.store.blocked_sign_ins().await?,
        ))
    };
    let (users, blocked) = match listed.await {
        Ok(listed) => listed,
        Err(e) => return WebError::from(e).into_response(),
    };
    let locks: Vec<_> = blocked
        .iter()
        .map(|b| {
            context! {
                kind => b.subject.kind(),
                subject => b.subject.subject(),
                failures => b.failures,
                locked => state.policy.locks(&b.subject, b.failures),
                until => gavel_core::rfc3339_of_ms(b.blocked_until_ms),
            }
        })
        .collect();
    let page = render(
        state,
        "users.html",
        context! {
            users => ser(&users),
            locks => locks,
            roles => Role::ALL.map(Role::as_str),
            new_token => new_token.map(|(user, token)| context! { user => user, token => token }),
            error => error,
        },
    );
    (code, page).into_response()
}

#[derive(Deserialize)]
struct NewUser {
    #[serde(default)]
    name: String,
    #[serde(default)]
    role: String,
    #[serde(default)]
    password: String,
}

impl NewUser {
    async fn add(&self, state: &AppState, by: &str) -> Result<(), AccountError> {
        let role: Role = self.role.parse().map_err(|e: String| StoreError::Invalid {
            what: "role".into(),
            message: e,
        })?;
        accounts::add_user(&state.store, self.name.trim(), role, &self.password, by).await
    }
}

/// The page again with the message of a refusal the admin can fix.
async fn users_refusal(state: &AppState, e: AccountError) -> Response {
    if !e.is_bad_input() {
        return e.into_response();
    }
    let message = e.to_string();
    users_page(
        state,
        None,
        Some(&message),
        StatusCode::UNPROCESSABLE_ENTITY,
    )
    .await
}

/// `POST /users`: a new account.
async fn add_user(State(state): State<AppState>, actor: Actor, Form(f): Form<NewUser>) -> Response {
    match f.add(&state, &actor.name).await {
        Ok(()) => Redirect::to("/users").into_response(),
        Err(e) => users_refusal(&state, e).await,
    }
}

#[derive(Deserialize)]
struct UserUpdate {
    role: String,
    #[serde(default)]
    disabled: Option<String>,
}

/// `POST /users/{name}`: a new role, or disable / enable.
async fn update_user(
    State(state): State<AppState>,
    Path(name): Path<String>,
    Form(f): Form<UserUpdate>,
) -> Response {
    let Ok(role) = f.role.parse::<Role>() else {
        return WebError::BadRequest(format!("`{}` is not a role", f.role)).into_response();
    };
    let disabled = f.disabled.is_some_and(|d| d == "true" || d == "on");
    match state.store.update_user(&name, role, disabled).await {
        Ok(()) => Redirect::to("/users").into_response(),
        Err(e) => users_refusal(&state, e.into()).await,
    }
}

#[derive(Deserialize)]
struct ResetForm {
    #[serde(default)]
    password: String,
}

/// `POST /users/{name}/password`: sets someone's password (ends their sessions
/// and revokes their API tokens).
async fn reset_password(
    State(state): State<AppState>,
    Path(name): Path<String>,
    Form(f): Form<ResetForm>,
) -> Response {
    match accounts::set_password(&state.store, &name, &f.password).await {
        Ok(()) => Redirect::to("/users").into_response(),
        Err(e) => users_refusal(&state, e).await,
    }
}

/// `POST /users/{name}/tokens`: an API token for someone (e.g. a viewer's CI
/// dashboard), shown once.
async fn add_user_token(
    State(state): State<AppState>,
    actor: Actor,
    Path(name): Path<String>,
    Form(f): Form<TokenForm>,
) -> Response {
    let ttl = state.policy.token_ttl();
    match accounts::new_api_token(&state.store, &name, &f.label, &actor.name, ttl).await {
        Ok((_, token)) => users_page(&state, Some((&name, &token)), None, StatusCode::OK).await,
        Err(e) => e.into_response(),
    }
}

#[derive(Deserialize)]
struct UnlockForm {
    #[serde(default)]
    kind: String,
    #[serde(default)]
    subject: String,
}

/// `POST /users/locks/unlock`: forgets the failed sign-ins of an account name
/// (`kind=account`) or a client address (`kind=address`), lifting its lock.
async fn unlock(
    State(state): State<AppState>,
    actor: Actor,
    Form(f): Form<UnlockForm>,
) -> Response {
    let subject = match f.kind.as_str() {
        "account" => SignInSubject::Account(f.subject),
        "address" => SignInSubject::Address(f.subject),
        other => {
            let message = format!("`{other}` is neither `account` nor `address`");
            return WebError::BadRequest(message).into_response();
        }
    };
    match state.store.clear_sign_in_failures(&subject).await {
        Ok(_) => {
            tracing::warn!("{subject}: sign-in lock lifted by `{}`", actor.name);
            Redirect::to("/users").into_response()
        }
        Err(e) => WebError::from(e).into_response(),
    }
}

// ---------------------------------------------------------------- API

/// `GET /api/me`.
async fn me(actor: Actor) -> Json<serde_json::Value> {
    Json(json!({ "name": actor.name, "role": actor.role }))
}

/// `GET /api/tokens`: your tokens (never their values).
async fn own_tokens(State(state): State<AppState>, actor: Actor) -> Response {
    match state.store.api_tokens(&actor.name).await {
        Ok(tokens) => Json(tokens).into_response(),
        Err(e) => WebError::from(e).into_response(),
    }
}

#[derive(Deserialize)]
struct TokenBody {
    #[serde(default)]
    label: String,
}

/// `POST /api/tokens`: a new token of yours: `{"id", "token"}`, shown once.
async fn api_add_token(
    State(state): State<AppState>,
    actor: Actor,
    Json(body): Json<TokenBody>,
) -> Response {
    if !has_account(&actor) {
        return no_account(&actor).into_response();
    }
    let ttl = state.policy.token_ttl();
    match accounts::new_api_token(&state.store, &actor.name, &body.label, &actor.name, ttl).await {
        Ok((id, token)) => (
            StatusCode::CREATED,
            Json(json!({ "id": id, "token": token })),
        )
            .into_response(),
        Err(e) => e.into_response(),
    }
}

/// `DELETE /api/tokens/{id}`.
async fn api_revoke_token(
    State(state): State<AppState>,
    actor: Actor,
    Path(id): Path<String>,
) -> Result<StatusCode, WebError> {
    state.store.revoke_api_token(&actor.name, &id).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// `GET /api/users` (admins).
async fn api_users(
    State(state): State<AppState>,
) -> Result<Json<Vec<gavel_store::User>>, WebError> {
    Ok(Json(state.store.users().await?))
}

/// `POST /api/users` (admins): `{"name", "role", "password"}`.
async fn api_add_user(
    State(state): State<AppState>,
    actor: Actor,
    Json(body): Json<NewUser>,
) -> Response {
    match body.add(&state, &actor.name).await {
        Ok(()) => {
            let location = format!("/api/users/{}", path_segment(body.name.trim()));
            (
                StatusCode::CREATED,
                Json(json!({ "name": body.name.trim(), "href": location })),
            )
                .into_response()
        }
        Err(e) => e.into_response(),
    }
}

#[derive(Deserialize)]
struct UserBody {
    role: String,
    #[serde(default)]
    disabled: bool,
}

/// `PUT /api/users/{name}` (admins): `{"role", "disabled"}`.
async fn api_update_user(
    State(state): State<AppState>,
    Path(name): Path<String>,
    Json(body): Json<UserBody>,
) -> Result<StatusCode, WebError> {
    let role = body.role.parse::<Role>().map_err(WebError::BadRequest)?;
    state.store.update_user(&name, role, body.disabled).await?;
    Ok(StatusCode::NO_CONTENT)
}
