//! The agent: plans an answer with the policy, runs the tools, persists the exchange.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use crate::api::{ChatRequest, ChatResponse};
use crate::bugs::{Bug, Bugs};
use crate::data::{Db, Listing};
use crate::policy::{self, Action, Intent};
use crate::reply;
use crate::tools::Tools;

/// Why a request could not be answered (HTTP 500).
#[derive(Debug)]
pub(crate) enum AgentError {
    /// The `crash-on-revenue` bug fired.
    Crash,
    /// The database failed.
    Db(sqlx::Error),
}

impl From<sqlx::Error> for AgentError {
    fn from(e: sqlx::Error) -> Self {
        Self::Db(e)
    }
}

impl std::fmt::Display for AgentError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Crash => f.write_str("injected crash-on-revenue bug"),
            Self::Db(e) => write!(f, "database error: {e}"),
        }
    }
}

/// The property-management assistant.
#[derive(Debug, Clone)]
pub(crate) struct Agent {
    db: Db,
    bugs: Bugs,
    memory: Arc<Mutex<Memory>>,
}

/// What one running instance keeps in memory; a restart drops it.
#[derive(Debug, Default)]
struct Memory {
    /// Sessions this instance has answered (the `lose-on-restart` bug trusts only these).
    seen: HashSet<String>,
    /// Forked session → the parent it shares (the `leak-branches` bug).
    aliases: HashMap<String, String>,
}

impl Agent {
    /// An agent over `db` with the given injected bugs.
    pub(crate) fn new(db: Db, bugs: Bugs) -> Self {
        Self {
            db,
            bugs,
            memory: Arc::default(),
        }
    }

    fn memory(&self) -> MutexGuard<'_, Memory> {
        self.memory.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Whether `bug` is injected.
    pub(crate) fn has(&self, bug: Bug) -> bool {
        self.bugs.has(bug)
    }

    /// Drops the in-memory state, as a restart does; conversations stay in the database.
    pub(crate) fn restart(&self) {
        let mut memory = self.memory();
        memory.seen.clear();
    }

    /// Forks `parent` into a new session `child` holding a copy of its conversation
    /// (with `leak-branches`: sharing it). `false` when the parent is unknown or the
    /// child exists.
    pub(crate) async fn fork(&self, parent: &str, child: &str) -> Result<bool, AgentError> {
        if self.bugs.has(Bug::LeakBranches) {
            let parent = self.resolve(parent);
            if self.db.messages(&parent).await?.is_none() {
                return Ok(false);
            }
            let mut memory = self.memory();
            memory.aliases.insert(child.to_owned(), parent);
            memory.seen.insert(child.to_owned());
            return Ok(true);
        }
        let forked = self.db.fork_session(&self.resolve(parent), child).await?;
        if forked {
            self.memory().seen.insert(child.to_owned());
        }
        Ok(forked)
    }

    /// The session a request's id stands for (itself unless aliased).
    fn resolve(&self, session_id: &str) -> String {
        let memory = self.memory();
        memory
            .aliases
            .get(session_id)
            .cloned()
            .unwrap_or_else(|| session_id.to_owned())
    }

    /// The database (for the messages endpoint).
    pub(crate) fn db(&self) -> &Db {
        &self.db
    }

    /// Answers one chat request and persists the exchange.
    pub(crate) async fn respond(&self, req: &ChatRequest) -> Result<ChatResponse, AgentError> {
        if self.bugs.has(Bug::Slow) {
            tokio::time::sleep(Duration::from_millis(1500)).await;
        }
        let listings = self.db.listings().await?;
        let session = self.resolve(&req.session_id);
        let mut tools = Tools::new(&self.db, !self.bugs.has(Bug::SkipTools)).with_bugs(
            self.bugs.has(Bug::WrongToolArgs),
            self.bugs.has(Bug::RedundantCalls),
        );
        let message = req.message.trim();
        let (mut text, error) = if message.is_empty() {
            (reply::EMPTY_PROMPT.to_owned(), Some("Empty prompt"))
        } else {
            let forgotten = self.bugs.has(Bug::ForgetContext)
                || (self.bugs.has(Bug::LoseOnRestart) && !self.memory().seen.contains(&session));
            let history = if forgotten {
                Vec::new()
            } else {
                self.db.messages(&session).await?.unwrap_or_default()
            };
            let reasked = self.bugs.has(Bug::IgnoreClarification)
                && history
                    .last()
                    .is_some_and(|m| policy::is_clarification(&m.content))
                && policy::parse(message).intent.is_none();
            let action = if reasked {
                Action::Clarify(Intent::Details)
            } else {
                policy::plan(message, &history, &listings)
            };
            match action {
                Action::OutOfDomain => (reply::OUT_OF_DOMAIN.to_owned(), Some("Out of domain")),
                action => (self.run(action, &mut tools, &listings).await?, None),
            }
        };
        let user_name = req
            .context
            .get("user_name")
            .and_then(|v| v.as_str())
            .map(str::trim);
        if let Some(name) = user_name.filter(|n| !n.is_empty()) {
            text = reply::greet(name, &text, &listings);
        }
        if !self.bugs.has(Bug::NoPersist) {
            self.db
                .append_exchange(&session, &req.message, &text)
                .await?;
        }
        self.memory().seen.insert(session);
        Ok(ChatResponse {
            session_id: req.session_id.clone(),
            reply: text,
            tool_calls: tools.into_calls(),
            error: error.map(str::to_owned),
        })
    }

    /// The revenue total the reply states (20% too high with `wrong-total`).
    fn stated(&self, total: i64) -> i64 {
        if self.bugs.has(Bug::WrongTotal) {
            total * 6 / 5
        } else {
            total
        }
    }

    /// Carries out `action` with the tools and returns the reply text.
    async fn run(
        &self,
        action: Action,
        tools: &mut Tools<'_>,
        listings: &[Listing],
    ) -> Result<String, AgentError> {
        if self.bugs.has(Bug::CrashOnRevenue)
            && matches!(
                action,
                Action::Revenue(..) | Action::Clarify(Intent::Revenue)
            )
        {
            return Err(AgentError::Crash);
        }
        Ok(match action {
            Action::OutOfDomain => reply::OUT_OF_DOMAIN.to_owned(),
            Action::Clarify(_) => reply::clarify(listings),
            Action::Listings => {
                let mut found = tools.get_listings().await?;
                if self.bugs.has(Bug::WrongCount) {
                    found.pop();
                }
                reply::listings(&found)
            }
            Action::Details(ids) | Action::Occupancy(ids) if ids.is_empty() => {
                reply::clarify(listings)
            }
            Action::Details(ids) => {
                let mut sentences = Vec::new();
                for id in ids {
                    if let Some(listing) = tools.get_listing_details(id).await? {
                        sentences.push(reply::details(&listing));
                    }
                }
                sentences.join(" ")
            }
            Action::Occupancy(ids) => {
                let mut found = Vec::new();
                for id in ids {
                    found.extend(tools.get_listing_details(id).await?);
                }
                reply::occupancy(&found)
            }
            Action::Bookings(ids) if ids.is_empty() => {
                reply::all_bookings(&tools.get_bookings(None).await?)
            }
            Action::Bookings(ids) => {
                let mut sentences = Vec::new();
                for listing in ids
                    .iter()
                    .filter_map(|id| listings.iter().find(|l| l.id == *id))
                {
                    let bookings = tools.get_bookings(Some(listing.id)).await?;
                    sentences.push(reply::listing_bookings(&listing.name, &bookings));
                }
                sentences.join(" ")
            }
            Action::Revenue(ids, month) if ids.is_empty() => {
                let data = tools.get_revenue_data(None, month.as_deref()).await?;
                reply::revenue(None, month.as_deref(), &data.rows, self.stated(data.total))
            }
            Action::Revenue(ids, month) => {
                let mut sentences = Vec::new();
                for listing in ids
                    .iter()
                    .filter_map(|id| listings.iter().find(|l| l.id == *id))
                {
                    let data = tools
                        .get_revenue_data(Some(listing.id), month.as_deref())
                        .await?;
                    let name = Some(listing.name.as_str());
                    sentences.push(reply::revenue(
                        name,
                        month.as_deref(),
                        &data.rows,
                        self.stated(data.total),
                    ));
                }
                sentences.join(" ")
            }
        })
    }
}

#[cfg(test)]
mod tests;
