//! Loading conversation cases: branches, follow-up settings, simulated users.
#![allow(clippy::unwrap_used)]

use std::path::Path;

use gavel_core::load::parse_suite_str;

fn errors(yaml: &str) -> Vec<String> {
    parse_suite_str(yaml, Path::new("t.yaml"))
        .unwrap_err()
        .iter()
        .map(ToString::to_string)
        .collect()
}

#[test]
fn branches_follow_the_parent_rounds() {
    let yaml = "cases:\n  - id: b\n    followups: [The cabin]\n    max_followups: 1\n    rounds:\n      - input: p\n      - {input: x, branch: a}\n      - {input: y, branch: b}\n      - {input: z, branch: a}\n";
    let suite = parse_suite_str(yaml, Path::new("t.yaml")).unwrap();
    let case = &suite.cases[0];
    assert_eq!(case.branches(), ["a", "b"]);
    assert_eq!((case.followup_limit(), case.followups.len()), (1, 1));

    let e = errors("cases:\n  - id: b\n    rounds:\n      - {input: x, branch: a}\n");
    assert!(
        e[0].contains("rounds[0].branch") && e[0].contains("first round cannot be branched"),
        "{e:?}"
    );
    let e = errors(
        "cases:\n  - id: b\n    rounds:\n      - input: p\n      - {input: x, branch: a}\n      - input: q\n",
    );
    assert!(
        e[0].contains("rounds[2]") && e[0].contains("cannot follow branched rounds"),
        "{e:?}"
    );
    let e = errors(
        "cases:\n  - id: b\n    rounds:\n      - input: p\n      - {input: x, branch: ' '}\n",
    );
    assert!(e[0].contains("branch name cannot be empty"), "{e:?}");
}

#[test]
fn a_simulated_user_replaces_the_rounds() {
    let yaml = "cases:\n  - id: s\n    simulated_user: {persona: Busy host, goal: Occupancy of the cabin, max_turns: 3}\n";
    let suite = parse_suite_str(yaml, Path::new("t.yaml")).unwrap();
    let user = suite.cases[0].simulated_user.as_ref().unwrap();
    assert_eq!(
        (user.goal.as_str(), user.max_turns),
        ("Occupancy of the cabin", Some(3))
    );
    assert!(suite.cases[0].rounds.is_empty());
    let e = errors("cases:\n  - id: s\n    input: hi\n    simulated_user: {persona: p, goal: g}\n");
    assert!(
        e[0].contains("simulated_user") && e[0].contains("no `input` or `rounds`"),
        "{e:?}"
    );
}

#[test]
fn replayed_cases_need_no_input_and_each_conversation_needs_replay_targets() {
    let yaml = "targets:\n  logs: {type: replay, file: logs.jsonl}\n  live: {type: command, command: [agent]}\ncases:\n  - id: c-1\n    targets: [logs]\n  - id: all\n    targets: [logs]\n    each_conversation: true\n";
    let suite = parse_suite_str(yaml, Path::new("dir/t.yaml")).unwrap();
    assert_eq!(suite.cases[0].rounds.len(), 1);
    assert!(suite.cases[1].each_conversation);
    let gavel_core::TargetSpec::Replay(logs) = &suite.targets["logs"] else {
        panic!("{:?}", suite.targets["logs"]);
    };
    assert!(
        logs.file.as_deref().unwrap().ends_with("dir/logs.jsonl"),
        "relative to the suite: {logs:?}"
    );

    let e = errors(&yaml.replace(
        "targets: [logs]\n    each",
        "targets: [logs, live]\n    each",
    ));
    assert!(
        e[0].contains("each_conversation") && e[0].contains("`replay` target"),
        "{e:?}"
    );
    let e = errors(&yaml.replace(
        "  - id: c-1\n    targets: [logs]",
        "  - id: c-1\n    targets: [live]",
    ));
    assert!(e[0].contains("a case needs `input`"), "{e:?}");
}

#[test]
fn the_suite_otel_setting_is_true_or_the_flags_settings() {
    let on = parse_suite_str("otel: true\ncases: []\n", Path::new("t.yaml")).unwrap();
    let s = on.otel.unwrap();
    assert!(s.span_events && s.logs && !s.redact && s.protocol.is_none());
    let off = parse_suite_str("otel: false\ncases: []\n", Path::new("t.yaml")).unwrap();
    assert!(off.otel.is_none());
    let with = parse_suite_str(
        "otel: {endpoint: 'http://127.0.0.1:4318', protocol: grpc, redact: true, logs: false}\ncases: []\n",
        Path::new("t.yaml"),
    )
    .unwrap()
    .otel
    .unwrap();
    assert_eq!(with.protocol, Some(gavel_core::otel::Protocol::Grpc));
    assert!(with.redact && !with.logs && with.span_events);
    assert_eq!(with.endpoint.as_deref(), Some("http://127.0.0.1:4318"));
    assert!(parse_suite_str("otel: {protocol: smoke}\ncases: []\n", Path::new("t.yaml")).is_err());
}
