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
