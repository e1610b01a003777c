//! `gavel serve` stops gracefully on SIGTERM and SIGINT: it exits 0 and closes
//! the store, so a SQLite file is left without its `-wal` and `-shm`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::{Child, Stdio};

use support::{free_port, gavel_command};

/// Polls until `port` accepts a connection, or the server exited (its status).
fn wait_listening(port: u16, server: &mut Child) {
    loop {
        if TcpStream::connect(("127.0.0.1", port)).is_ok() {
            return;
        }
        if let Some(status) = server.try_wait().unwrap() {
            let mut err = String::new();
            server
                .stderr
                .take()
                .unwrap()
                .read_to_string(&mut err)
                .unwrap();
            panic!("gavel serve exited before listening ({status}): {err}");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// One GET of `/` answered: the server reads the store.
fn get_home(port: u16) -> String {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    write!(
        stream,
        "GET / HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    answer
}

#[test]
fn serve_stops_on_sigterm_and_sigint_and_leaves_no_wal() {
    for signal in [libc::SIGTERM, libc::SIGINT] {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("gavel.db");
        let port = free_port();
        let mut server = gavel_command(dir.path())
            .args(["serve", "--bind", &format!("127.0.0.1:{port}")])
            .args(["--db", &format!("sqlite://{}", db.display())])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        wait_listening(port, &mut server);
        assert!(get_home(port).starts_with("HTTP/1.1 200"));
        let wal = dir.path().join("gavel.db-wal");
        let shm = dir.path().join("gavel.db-shm");
        assert!(wal.exists(), "the store is open in WAL mode");
        // SAFETY: kill(2) with the pid of the child this test spawned.
        assert_eq!(unsafe { libc::kill(server.id() as i32, signal) }, 0);
        let status = server.wait().unwrap();
        let mut err = String::new();
        server
            .stderr
            .take()
            .unwrap()
            .read_to_string(&mut err)
            .unwrap();
        assert_eq!(status.code(), Some(0), "signal {signal}: {err}");
        assert!(err.contains("gavel UI stopped"), "{err}");
        assert!(db.exists());
        assert!(
            !wal.exists() && !shm.exists(),
            "signal {signal}: -wal or -shm left"
        );
    }
}
