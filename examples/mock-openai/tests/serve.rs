//! The real binary: it answers the OpenAI wire format and counts requests.
#![allow(clippy::unwrap_used)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};

fn post(addr: &str, path: &str, body: &str) -> String {
    let mut s = TcpStream::connect(addr).unwrap();
    write!(s, "POST {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}", body.len()).unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    out
}

#[test]
fn answers_plain_and_structured_requests_and_counts_them() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_mock-openai"))
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let addr = line.trim().rsplit("http://").next().unwrap().to_owned();

    let plain = post(
        &addr,
        "/v1/chat/completions",
        r#"{"model":"m","messages":[{"role":"user","content":"hello"}]}"#,
    );
    assert!(plain.starts_with("HTTP/1.1 200"), "{plain}");
    assert!(
        plain.contains(r#""content":"You said: hello (m)""#),
        "{plain}"
    );
    assert!(plain.contains(r#""prompt_tokens":1"#), "{plain}");

    let schema = r#"{"model":"m","messages":[{"role":"user","content":"judge"}],"response_format":{"type":"json_schema","json_schema":{"name":"v","strict":true,"schema":{"type":"object","properties":{"winner":{"type":"string","enum":["A","B","tie"]}}}}}}"#;
    let structured = post(&addr, "/v1/chat/completions", schema);
    assert!(structured.contains(r#"{\"winner\":\"A\"}"#), "{structured}");

    // A `…logprobs…` model asked for log probabilities: the score digit is a token
    // of its own, with its alternatives.
    let scored = r#"{"model":"judge-logprobs","logprobs":true,"top_logprobs":5,"messages":[{"role":"user","content":"judge"}],"response_format":{"type":"json_schema","json_schema":{"name":"v","strict":true,"schema":{"type":"object","properties":{"score":{"type":"integer","minimum":1,"maximum":5}},"required":["score"]}}}}"#;
    let scored = post(&addr, "/v1/chat/completions", scored);
    assert!(scored.contains(r#"{\"score\":5}"#), "{scored}");
    assert!(
        scored.contains(r#"{"token":"5","logprob":-0.3566"#)
            && scored.contains(r#""top_logprobs":[{"token":"5""#),
        "{scored}"
    );
    assert!(scored.contains(r#"{"token":"3","logprob":"#), "{scored}");

    let bad = post(&addr, "/v1/chat/completions", "not json");
    assert!(bad.starts_with("HTTP/1.1 400"), "{bad}");

    let mut s = TcpStream::connect(&addr).unwrap();
    write!(
        s,
        "GET /stats HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut stats = String::new();
    s.read_to_string(&mut stats).unwrap();
    assert!(stats.ends_with(r#"{"requests":3}"#), "{stats}");
    child.kill().unwrap();
    child.wait().unwrap();
}
