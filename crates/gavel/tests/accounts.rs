//! `gavel serve` and `gavel users` as a team server's admin meets them: a wide
//! bind is refused before any address is announced; sign-in locks are listed
//! and lifted and API tokens listed and revoked from the command line; and 32
//! sign-ins at once keep the server's memory flat (password hashes take turns):
//! the test prints the peak RSS it saw.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, Stdio};
use std::time::Duration;

use gavel::store::{Role, SignInSubject, Store};

const PASSWORD: &str = "correct horse battery";

fn db(dir: &std::path::Path) -> String {
    format!("sqlite://{}", dir.join("gavel.db").display())
}

#[test]
fn a_wide_bind_is_refused_before_its_address_is_announced() {
    let dir = tempfile::tempdir().unwrap();
    let out = support::gavel_command(dir.path())
        .args(["serve", "--bind", "0.0.0.0:0", "--db", &db(dir.path())])
        .env_remove("GAVEL_WEB_TOKEN")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(stderr.contains("exposes the UI"), "{stderr}");
    assert!(!stderr.contains("gavel UI on"), "{stderr}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn users_unlock_lifts_locks_and_tokens_are_listed_and_revoked() {
    let dir = tempfile::tempdir().unwrap();
    let url = db(dir.path());
    let store = Store::open(&url).await.unwrap();
    store
        .create_user("vi", Role::Viewer, "$argon2id$x", "test")
        .await
        .unwrap();
    let lock = |_| Duration::from_secs(900);
    let vi = SignInSubject::Account("vi".into());
    let here = SignInSubject::Address("10.0.0.1".into());
    for subject in [&vi, &here] {
        store
            .record_sign_in_failure(subject, Duration::from_secs(3600), lock)
            .await
            .unwrap();
    }
    let id = store
        .create_api_token("vi", "ci", "hash", "test", Duration::from_secs(86_400))
        .await
        .unwrap();
    let gavel = |args: &[&str]| {
        let out = support::gavel_command(dir.path())
            .args(args)
            .args(["--db", &url])
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout).into_owned()
            + &String::from_utf8_lossy(&out.stderr);
        (out.status.code(), text)
    };
    let (code, listed) = gavel(&["users", "list"]);
    assert_eq!(code, Some(0), "{listed}");
    assert!(listed.contains("vi  viewer"), "{listed}");
    assert!(listed.contains("refused: account `vi`"), "{listed}");
    assert!(listed.contains("refused: address `10.0.0.1`"), "{listed}");
    assert_eq!(gavel(&["users", "unlock", "vi"]).0, Some(0));
    assert_eq!(
        gavel(&["users", "unlock", "--address", "10.0.0.1"]).0,
        Some(0)
    );
    assert!(store.blocked_sign_ins().await.unwrap().is_empty());

    let (code, tokens) = gavel(&["users", "tokens", "vi"]);
    assert_eq!(code, Some(0), "{tokens}");
    assert!(
        tokens.contains(&id) && tokens.contains("expires 20"),
        "{tokens}"
    );
    assert_eq!(gavel(&["users", "revoke", "vi", &id]).0, Some(0));
    assert!(store.api_tokens("vi").await.unwrap().is_empty());
    let (code, again) = gavel(&["users", "revoke", "vi", &id]);
    assert_eq!(code, Some(2), "{again}");
}

/// `gavel serve` on a free port, killed on drop.
struct Server {
    child: Child,
    base: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A figure (KiB) of `/proc/PID/status`: `VmRSS`, `VmHWM` (the peak).
fn memory_kib(pid: u32, field: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap()
}

#[test]
fn a_burst_of_sign_ins_keeps_the_memory_flat() {
    if !std::path::Path::new("/proc/self/status").exists() {
        eprintln!("note: no /proc here; skipping the memory figures");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let url = db(dir.path());
    let mut add = support::gavel_command(dir.path())
        .args(["users", "add", "ana", "--role", "admin", "--db", &url])
        .stdin(Stdio::piped())
        .spawn()
        .unwrap();
    writeln!(add.stdin.take().unwrap(), "{PASSWORD}").unwrap();
    assert!(add.wait().unwrap().success());
    let mut child = support::gavel_command(dir.path())
        .args(["serve", "--bind", "127.0.0.1:0", "--db", &url])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stderr.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let base = line
        .split_whitespace()
        .find(|w| w.starts_with("http://"))
        .unwrap_or_else(|| panic!("no address in {line:?}"))
        .to_owned();
    let server = Server { child, base };
    let pid = server.child.id();

    let client = reqwest::blocking::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let page = client
        .get(format!("{}/login", server.base))
        .send()
        .unwrap()
        .text()
        .unwrap();
    let at = page.find("name=\"_csrf\" value=\"").unwrap() + 20;
    let csrf = page[at..at + 64].to_owned();
    let before = memory_kib(pid, "VmRSS");

    let start = std::sync::Arc::new(std::sync::Barrier::new(32));
    let attempts: Vec<_> = (0..32)
        .map(|_| {
            let (client, start) = (client.clone(), start.clone());
            let (url, csrf) = (format!("{}/login", server.base), csrf.clone());
            std::thread::spawn(move || {
                start.wait();
                let form = format!(
                    "_csrf={csrf}&name=ana&password={}",
                    PASSWORD.replace(' ', "+")
                );
                client
                    .post(url)
                    .header("content-type", "application/x-www-form-urlencoded")
                    .body(form)
                    .send()
                    .unwrap()
                    .status()
                    .as_u16()
            })
        })
        .collect();
    let statuses: Vec<u16> = attempts.into_iter().map(|t| t.join().unwrap()).collect();
    let peak = memory_kib(pid, "VmHWM");
    let signed_in = statuses.iter().filter(|&&s| s == 303).count();
    let busy = statuses.iter().filter(|&&s| s == 503).count();
    println!(
        "32 concurrent sign-ins: {signed_in} signed in, {busy} told to retry (503); \
         RSS before {} MiB, peak {} MiB",
        before / 1024,
        peak / 1024
    );
    assert_eq!(signed_in + busy, 32, "{statuses:?}");
    assert!(signed_in >= 1, "{statuses:?}");
    // Unbounded, 32 hashes at once would add 32 × 19 MiB; in turns, a few.
    assert!(
        peak - before < 150 * 1024,
        "peak {peak} KiB from {before} KiB"
    );
}
