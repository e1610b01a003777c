//! Helpers shared by the CLI integration tests.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Child, Command, Stdio};

use serde_json::Value;

/// `gavel` run in `dir` with no provider credentials, OpenAI base URL or store
/// URL inherited from the environment.
pub(crate) fn gavel_command(dir: &Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_gavel"));
    cmd.current_dir(dir);
    without_credentials(&mut cmd);
    cmd
}

/// `cmd` with no provider credentials, OpenAI base URL or store URL inherited.
pub(crate) fn without_credentials(cmd: &mut Command) -> &mut Command {
    for var in [
        "OPENAI_API_KEY",
        "ANTHROPIC_API_KEY",
        "GEMINI_API_KEY",
        "GOOGLE_API_KEY",
        "OPENAI_BASE_URL",
        "GAVEL_DATABASE_URL",
    ] {
        cmd.env_remove(var);
    }
    cmd
}

/// The mock server, killed on drop.
pub(crate) struct Mock {
    child: Child,
    /// The server's base URL, e.g. `http://127.0.0.1:PORT`.
    pub(crate) url: String,
}

impl Mock {
    /// Starts the `mock-openai` binary built beside `gavel`.
    pub(crate) fn start() -> Mock {
        Mock::start_with(&[])
    }

    /// Starts `mock-openai` with `args` (e.g. `--latency-ms 100`).
    pub(crate) fn start_with(args: &[&str]) -> Mock {
        let bin = Path::new(env!("CARGO_BIN_EXE_gavel")).with_file_name("mock-openai");
        assert!(
            bin.exists(),
            "{} is built by `cargo test --workspace`",
            bin.display()
        );
        let mut child = Command::new(bin)
            .args(args)
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let url = line.trim().rsplit(' ').next().unwrap().to_owned();
        Mock { child, url }
    }

    /// Requests the server has answered so far.
    pub(crate) fn requests(&self) -> u64 {
        self.get("/stats")["requests"].as_u64().unwrap()
    }

    /// When each completion request arrived, in microseconds since the server started.
    pub(crate) fn arrivals_us(&self) -> Vec<u64> {
        serde_json::from_value(self.get("/arrivals")["arrivals_us"].take()).unwrap()
    }

    fn get(&self, path: &str) -> Value {
        let addr = self.url.trim_start_matches("http://");
        let mut s = std::net::TcpStream::connect(addr).unwrap();
        write!(
            s,
            "GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
        )
        .unwrap();
        let mut out = String::new();
        s.read_to_string(&mut out).unwrap();
        serde_json::from_str(out.rsplit("\r\n\r\n").next().unwrap()).unwrap()
    }
}

impl Drop for Mock {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The workspace root.
pub(crate) fn workspace() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

/// The example agent's binary, built beside gavel's (built now if missing).
pub(crate) fn agent_bin() -> std::path::PathBuf {
    let bin = Path::new(env!("CARGO_BIN_EXE_gavel")).with_file_name("property-agent");
    if !bin.exists() {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let ok = Command::new(cargo)
            .args(["build", "-q", "-p", "property-agent"])
            .current_dir(workspace())
            .status()
            .unwrap();
        assert!(ok.success(), "building property-agent failed");
    }
    bin
}

/// `examples/EXAMPLE`'s targets file written into `dir`, the agent launched
/// from its binary rather than `cargo run`; the suite beside it is
/// `workspace()/examples/EXAMPLE/suite.yaml`. Runs set `PROPERTY_AGENT_PORT`
/// (and, for `conversations`, `PROPERTY_AGENT_REVIVAL_PORT` and `TMPDIR`).
pub(crate) fn example_targets(example: &str, dir: &Path) -> std::path::PathBuf {
    let examples = workspace().join("examples").join(example);
    let targets = std::fs::read_to_string(examples.join("targets.yaml"))
        .unwrap()
        .replace(
            "[cargo, run, --quiet, -p, property-agent, --,",
            &format!("[{:?},", agent_bin().display().to_string()),
        );
    assert!(!targets.contains("cargo"), "{targets}");
    let file = dir.join("targets.yaml");
    std::fs::write(&file, targets).unwrap();
    file
}

/// A TCP port free right now.
pub(crate) fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Runs `story` with the URL of a fresh PostgreSQL database on the server of
/// `GAVEL_TEST_DATABASE_URL`, dropped afterwards even when the story panics
/// (the panic is then raised here). Without the variable, says `what` is
/// skipped and returns; under CI that fails instead ([`gavel_testkit`]).
pub(crate) async fn on_fresh_postgres<F, Fut>(what: &str, story: F)
where
    F: FnOnce(String) -> Fut,
    Fut: std::future::Future<Output = ()> + Send + 'static,
{
    gavel_testkit::on_fresh_postgres(what, story).await;
}

/// `gavel mcp --db DB` over stdio in `dir`: initializes, then sends `request`
/// (a JSON-RPC request with `"id": 2`); the server's answer to it.
pub(crate) fn mcp_stdio(dir: &Path, db: &str, request: Value) -> Value {
    let mut server = gavel_command(dir)
        .args(["mcp", "--db", db])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = server.stdin.take().unwrap();
    for message in [
        serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "raw", "version": "0"}}}),
        serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        request,
    ] {
        writeln!(stdin, "{message}").unwrap();
    }
    let mut answer = None;
    for line in BufReader::new(server.stdout.take().unwrap()).lines() {
        let message: Value = serde_json::from_str(&line.unwrap()).unwrap();
        if message["id"] == 2 {
            answer = Some(message);
            break;
        }
    }
    drop(stdin);
    let _ = server.kill();
    let _ = server.wait();
    answer.expect("an answer to request 2")
}
