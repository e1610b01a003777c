//! A UI over a fresh SQLite store on a real socket, and a client that does not
//! follow redirects. Not every test binary uses every helper.
#![allow(dead_code)]

use std::net::SocketAddr;

use gavel_store::Store;
use gavel_web::{AccountPolicy, Config, RunDefaults};
use reqwest::StatusCode;
use reqwest::redirect::Policy;

/// A running UI.
pub(crate) struct Ui {
    pub(crate) base: String,
    pub(crate) client: reqwest::Client,
    pub(crate) store: Store,
    /// Holds the store and targets file.
    pub(crate) dir: tempfile::TempDir,
}

/// Runs started from the UI use this targets file by default: an agent `echo`
/// answering `ok`.
pub(crate) const ECHO_TARGETS: &str = "targets:\n  echo:\n    type: command\n    command: [sh, -c, 'while IFS= read -r line; do printf \"{\\\"output\\\": \\\"ok\\\"}\\n\"; done']\n";

/// Serves the UI (with `token`, if any) over a fresh store.
pub(crate) async fn start(token: Option<&str>) -> Ui {
    start_with(token, ECHO_TARGETS).await
}

/// Serves the UI over a fresh store, its runs using the targets file `targets_yaml`.
pub(crate) async fn start_with(token: Option<&str>, targets_yaml: &str) -> Ui {
    start_configured(token, targets_yaml, None, AccountPolicy::default()).await
}

/// Serves the UI as [`start_with`] does, its runs judged by `judge` unless
/// one is chosen (`gavel serve --judge`).
pub(crate) async fn start_judged(
    token: Option<&str>,
    targets_yaml: &str,
    judge: Option<gavel_models::ModelId>,
) -> Ui {
    start_configured(token, targets_yaml, judge, AccountPolicy::default()).await
}

/// Serves the UI over a fresh store with these sign-in limits and token lifetimes.
pub(crate) async fn start_with_policy(accounts: AccountPolicy) -> Ui {
    start_configured(None, ECHO_TARGETS, None, accounts).await
}

async fn start_configured(
    token: Option<&str>,
    targets_yaml: &str,
    judge: Option<gavel_models::ModelId>,
    accounts: AccountPolicy,
) -> Ui {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&format!("sqlite://{}", dir.path().join("g.db").display()))
        .await
        .unwrap();
    let targets = dir.path().join("targets.yaml");
    std::fs::write(&targets, targets_yaml).unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr: SocketAddr = listener.local_addr().unwrap();
    let config = Config {
        bind: addr,
        token: token.map(str::to_owned),
        secure_cookies: false,
        allowed_hosts: vec!["gavel.internal".into()],
        runs: RunDefaults {
            with: vec![targets],
            models: gavel_session::ModelOptions {
                judge,
                ..Default::default()
            },
        },
        accounts,
    };
    let app = gavel_web::app(store.clone(), &config).unwrap();
    let app = app.into_make_service_with_connect_info::<SocketAddr>();
    tokio::spawn(async move { axum::serve(listener, app).await });
    Ui {
        base: format!("http://{addr}"),
        client: reqwest::Client::builder()
            .redirect(Policy::none())
            .build()
            .unwrap(),
        store,
        dir,
    }
}

impl Ui {
    pub(crate) async fn get(&self, path: &str) -> (StatusCode, String) {
        let r = self
            .client
            .get(format!("{}{path}", self.base))
            .send()
            .await
            .unwrap();
        (r.status(), r.text().await.unwrap())
    }

    /// The CSRF token as every page shows it.
    #[allow(dead_code)] // not every test binary uses it
    pub(crate) async fn csrf(&self) -> String {
        let (_, page) = self.get("/runs").await;
        let at = page.find("name=\"_csrf\" value=\"").unwrap() + 20;
        page[at..at + 64].to_owned()
    }
}

/// A browser signed in through `/login`: its session cookie and CSRF token.
pub(crate) struct Browser {
    pub(crate) cookie: String,
    pub(crate) csrf: String,
}

/// The value of the first `name="_csrf"` field of a page.
fn first_csrf(page: &str) -> String {
    let at = page.find("name=\"_csrf\" value=\"").expect("a CSRF field") + 20;
    page[at..at + 64].to_owned()
}

impl Ui {
    /// Adds the account `name` with `role` and signs it in.
    pub(crate) async fn signed_in_as(&self, name: &str, role: gavel_store::Role) -> Browser {
        const PASSWORD: &str = "a long enough password";
        gavel_web::add_user(&self.store, name, role, PASSWORD, "test")
            .await
            .unwrap();
        self.signed_in(name, PASSWORD).await
    }

    /// Signs the account `name` in with `password`: its session cookie and
    /// the CSRF token of its pages.
    pub(crate) async fn signed_in(&self, name: &str, password: &str) -> Browser {
        let (_, page) = self.get("/login").await;
        let r = self
            .client
            .post(format!("{}/login", self.base))
            .form(&[
                ("_csrf", first_csrf(&page).as_str()),
                ("name", name),
                ("password", password),
            ])
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), StatusCode::SEE_OTHER, "{name} signs in");
        let set = r.headers()["set-cookie"].to_str().unwrap();
        let cookie = set.split(';').next().unwrap().to_owned();
        let (_, page) = self.get_as(&cookie, "/account").await;
        Browser {
            csrf: first_csrf(&page),
            cookie,
        }
    }

    /// `GET path` with a session cookie.
    pub(crate) async fn get_as(&self, cookie: &str, path: &str) -> (StatusCode, String) {
        let r = self
            .client
            .get(format!("{}{path}", self.base))
            .header("cookie", cookie)
            .send()
            .await
            .unwrap();
        (r.status(), r.text().await.unwrap())
    }
}
