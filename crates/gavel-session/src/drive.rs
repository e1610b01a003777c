//! One process drives a run at a time: a lease on the run in the store, renewed
//! while it executes, so two `--resume`s of one run cannot both run its cases.

use std::time::Duration;

use gavel_store::Store;

use crate::SessionError;

/// How long the lease lasts without renewal (a process that died frees the run
/// after this); renewed every third of it.
const LEASE: Duration = Duration::from_secs(30);

/// This process's hold on a run.
pub(crate) struct Driver {
    name: String,
}

impl Driver {
    /// Takes the run, or says who holds it.
    pub(crate) async fn take(store: &Store, run_id: &str) -> Result<Driver, SessionError> {
        let name = format!(
            "{} pid {} (since {})",
            host(),
            std::process::id(),
            gavel_core::now_rfc3339()
        );
        let mut held = store.drive_run(run_id, &name, LEASE, None).await?;
        if let Some(holder) = held.as_deref().filter(|h| gone(h)) {
            held = store.drive_run(run_id, &name, LEASE, Some(holder)).await?;
        }
        match held {
            None => Ok(Driver { name }),
            Some(holder) => Err(SessionError::config(
                "--resume",
                format!(
                    "run {run_id} is being run by process {holder}; wait for it to end (or for its lease to expire {}s after it died)",
                    LEASE.as_secs()
                ),
            )),
        }
    }

    /// Renews the lease until it is lost (another process took the run after
    /// this one stalled past the lease) or the store fails; then says why.
    pub(crate) async fn keep(&self, store: &Store, run_id: &str) -> SessionError {
        loop {
            tokio::time::sleep(LEASE / 3).await;
            match store.drive_run(run_id, &self.name, LEASE, None).await {
                Ok(None) => {}
                Ok(Some(holder)) => {
                    return SessionError::config(
                        "run",
                        format!("run {run_id} was taken over by {holder}"),
                    );
                }
                Err(e) => return SessionError::Store(e),
            }
        }
    }

    /// Frees the run.
    pub(crate) async fn release(&self, store: &Store, run_id: &str) -> Result<(), SessionError> {
        Ok(store.release_run(run_id, &self.name).await?)
    }
}

/// This machine's name, as drivers are named.
fn host() -> String {
    std::env::var("HOSTNAME")
        .ok()
        .or_else(|| std::fs::read_to_string("/etc/hostname").ok())
        .map(|h| h.trim().to_owned())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "gavel".to_owned())
}

/// Whether a holder named by [`Driver::take`] was a process of this machine
/// that is gone (killed, crashed): its run can be taken at once instead of
/// after its lease. Only where `/proc` tells.
fn gone(holder: &str) -> bool {
    let Some(rest) = holder.strip_prefix(&format!("{} pid ", host())) else {
        return false;
    };
    let pid = rest.split_whitespace().next().unwrap_or_default();
    std::path::Path::new("/proc/self").exists()
        && !pid.is_empty()
        && !std::path::Path::new(&format!("/proc/{pid}")).exists()
}
