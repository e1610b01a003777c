//! The scaffolded suite loads, runs against the targets it names, and never
//! overwrites a file unless told to.
#![allow(clippy::unwrap_used)]

use std::io::Cursor;

use gavel_core::TargetSpec;
use gavel_scaffold::{Agent, SUITE_FILE, Scaffold, ScaffoldError, ask};

fn loaded(s: &Scaffold) -> gavel_core::Suite {
    let dir = tempfile::tempdir().unwrap();
    let path = s.write(dir.path(), false).unwrap();
    assert_eq!(path, dir.path().join(SUITE_FILE));
    gavel_core::load::load_paths(&[path]).unwrap()
}

#[test]
fn http_scaffold_loads_with_its_target_and_cases() {
    let mut s = Scaffold::new(Agent::Http {
        url: "http://127.0.0.1:9/chat".into(),
    });
    s.output = "/reply".into();
    s.tool_calls = Some("/tool_calls".into());
    s.input = "Say \"hi\": \\ #not a comment".into();
    let suite = loaded(&s);
    let TargetSpec::Http(http) = &suite.targets["agent"] else {
        panic!("{:?}", suite.targets)
    };
    assert_eq!(http.url, "http://127.0.0.1:9/chat");
    assert_eq!(http.response.output, "/reply");
    assert_eq!(http.response.tool_calls.as_deref(), Some("/tool_calls"));
    let ids: Vec<_> = suite.cases.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids, ["answers", "remembers"]);
    let text = s.render();
    assert!(
        text.contains(r#"input: "Say \"hi\": \\ #not a comment""#),
        "{text}"
    );
}

#[test]
fn command_scaffold_keeps_arguments_apart() {
    let agent = Agent::command_line("python3 'my agent.py' --flag \"a b\"").unwrap();
    let suite = loaded(&Scaffold::new(agent));
    let TargetSpec::Command(cmd) = &suite.targets["agent"] else {
        panic!("{:?}", suite.targets)
    };
    assert_eq!(cmd.command, ["python3", "my agent.py", "--flag", "a b"]);
    assert!(matches!(
        Agent::command_line("python3 'unclosed"),
        Err(ScaffoldError::Input {
            field: "--command",
            ..
        })
    ));
}

#[test]
fn never_overwrites_without_force() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join(SUITE_FILE), "mine").unwrap();
    let s = Scaffold::new(Agent::Http {
        url: "http://127.0.0.1:9/chat".into(),
    });
    let err = s.write(dir.path(), false).unwrap_err();
    assert!(
        err.to_string().contains("already exists (use --force"),
        "{err}"
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join(SUITE_FILE)).unwrap(),
        "mine"
    );
    s.write(dir.path(), true).unwrap();
    assert!(
        std::fs::read_to_string(dir.path().join(SUITE_FILE))
            .unwrap()
            .contains("targets:")
    );
}

#[test]
fn bad_values_name_their_flag() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = Scaffold::new(Agent::Http {
        url: "localhost:8080".into(),
    });
    let err = s.write(dir.path(), false).unwrap_err().to_string();
    assert!(err.starts_with("--http: `localhost:8080`"), "{err}");
    s.agent = Agent::Http {
        url: "http://x/chat".into(),
    };
    s.output = "reply".into();
    let err = s.write(dir.path(), false).unwrap_err().to_string();
    assert!(
        err.starts_with("--output: `reply` is not a JSON pointer (try /reply)"),
        "{err}"
    );
    assert!(!dir.path().join(SUITE_FILE).exists());
}

#[test]
fn prompts_take_defaults_and_retry_bad_answers() {
    let answers =
        "ftp\ncommand\n./agent --stdio\nreply\n/reply\n/tool_calls\nWhat are my listings?\n\n";
    let mut out = Vec::new();
    let s = ask(&mut Cursor::new(answers), &mut out).unwrap();
    assert_eq!(
        s.agent,
        Agent::Command {
            argv: vec!["./agent".into(), "--stdio".into()]
        }
    );
    assert_eq!(s.output, "/reply");
    assert_eq!(s.tool_calls.as_deref(), Some("/tool_calls"));
    assert_eq!(s.input, "What are my listings?");
    assert_eq!(s.name, "my-agent");
    let shown = String::from_utf8(out).unwrap();
    assert!(
        shown.contains("Agent kind: http or command [http]: "),
        "{shown}"
    );
    assert!(shown.contains("`ftp` will not do; try again"), "{shown}");
    assert!(shown.contains("`reply` will not do"), "{shown}");
}

#[test]
fn prompts_stop_at_end_of_input() {
    let err = ask(&mut Cursor::new("http\n"), &mut Vec::new()).unwrap_err();
    assert!(err.to_string().contains("end of input"), "{err}");
}
