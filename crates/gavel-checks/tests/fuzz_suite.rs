//! Fuzzing the suite loader and the run-time check compile with mutations of the
//! shipped example suites (and the seeds' formats): byte flips, truncations,
//! hostile numbers (`.inf`, `nan`, `1e300`, `4294967295`) and deep nesting.
//! Neither may panic; every error names its file (and its case for compile
//! errors). Failures shrink and persist under `proptest-regressions/`.
#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use gavel_core::load::parse_suite_str;
use gavel_core::{LoadError, bounds};
use proptest::prelude::*;
use proptest::test_runner::FileFailurePersistence;

/// Seed 000's dicts, one per line: the JSONL format.
const JSONL_SEED: &str = r#"{"name": "Listings", "prompt": "What are my listings?", "judge_prompt": "Lists the listings", "judge_threshold": 0.7, "expected_tools": ["get_listings"]}
{"id": "rev", "input": "Revenue?", "repeat": 2, "timeout_s": 30, "checks": [{"type": "contains", "value": "$"}]}
"#;

/// Values a tester types to break bounds.
const HOSTILE: &[&str] = &[
    ".inf",
    "-.inf",
    ".nan",
    "nan",
    "NaN",
    "inf",
    "1e300",
    "1e400",
    "-1e300",
    "4294967295",
    "18446744073709551616",
    "-1",
    "0",
    "0.0",
    "\u{feff}",
    "\u{0}",
    "\"",
    "'",
    "{",
    "[",
    ":",
    "- ",
    "&a ",
    "*a",
    "!!float ",
    "<<: ",
];

/// Fields that hold durations, counts and costs.
const BOUNDED_KEYS: &[&str] = &[
    "timeout_s",
    "timeout_ms",
    "max_ms",
    "repeat",
    "rejudge",
    "threshold",
    "judge_threshold",
    "max_cost",
    "concurrency",
    "max_first_token_ms",
];

/// (path the text pretends to come from, text) for every example suite.
fn seeds() -> &'static [(PathBuf, String)] {
    static SEEDS: OnceLock<Vec<(PathBuf, String)>> = OnceLock::new();
    SEEDS.get_or_init(|| {
        let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
        let mut found = vec![(examples.join("seeds/cases.jsonl"), JSONL_SEED.to_owned())];
        let mut dirs = vec![examples];
        while let Some(dir) = dirs.pop() {
            for entry in std::fs::read_dir(&dir).unwrap().flatten() {
                let path = entry.path();
                let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
                if path.is_dir() {
                    dirs.push(path);
                } else if ["yaml", "yml", "json", "jsonl"].contains(&ext)
                    && !path.components().any(|c| c.as_os_str() == "node_modules")
                {
                    let text = std::fs::read_to_string(&path).unwrap();
                    found.push((path, text));
                }
            }
        }
        found.sort();
        assert!(found.len() > 5, "the example suites are missing");
        found
    })
}

/// One edit of a seed text; positions are taken modulo the text's length.
#[derive(Debug, Clone)]
enum Mutation {
    FlipByte(usize, u8),
    Truncate(usize),
    Insert(usize, &'static str),
    /// A hostile value in place of the value after the n-th `: `.
    Value(usize, &'static str),
    /// A hostile value for the n-th bounded field (`timeout_s: 30` → `timeout_s: .inf`).
    Field(usize, &'static str),
    /// `depth` nested flow lists or maps at a position.
    Nest(usize, usize, bool),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    let hostile = proptest::sample::select(HOSTILE);
    prop_oneof![
        (any::<usize>(), any::<u8>()).prop_map(|(p, b)| Mutation::FlipByte(p, b)),
        any::<usize>().prop_map(Mutation::Truncate),
        (any::<usize>(), hostile.clone()).prop_map(|(p, s)| Mutation::Insert(p, s)),
        (any::<usize>(), hostile.clone()).prop_map(|(p, s)| Mutation::Value(p, s)),
        (any::<usize>(), hostile).prop_map(|(p, s)| Mutation::Field(p, s)),
        (any::<usize>(), 1usize..400, any::<bool>()).prop_map(|(p, d, m)| Mutation::Nest(p, d, m)),
    ]
}

fn apply(text: &mut Vec<u8>, m: &Mutation) {
    let at = |p: usize, len: usize| if len == 0 { 0 } else { p % (len + 1) };
    match m {
        Mutation::FlipByte(p, b) if !text.is_empty() => {
            let i = p % text.len();
            text[i] ^= b;
        }
        Mutation::FlipByte(..) => {}
        Mutation::Truncate(p) => text.truncate(at(*p, text.len())),
        Mutation::Insert(p, s) => {
            let i = at(*p, text.len());
            text.splice(i..i, s.bytes());
        }
        Mutation::Value(n, s) => replace_value(text, *n, s, |_| true),
        Mutation::Field(n, s) => replace_value(text, *n, s, |before| {
            let key = before.trim_end_matches(['"', '\'']);
            BOUNDED_KEYS.iter().any(|k| key.ends_with(k))
        }),
        Mutation::Nest(p, depth, map) => {
            let (open, close) = if *map { ("{a: ", "}") } else { ("[", "]") };
            let nested = format!("{}1{}", open.repeat(*depth), close.repeat(*depth));
            let i = at(*p, text.len());
            text.splice(i..i, nested.bytes());
        }
    }
}

/// Replaces the value after the `n`-th `: ` whose text before it passes `key`.
fn replace_value(text: &mut Vec<u8>, n: usize, value: &str, key: impl Fn(&str) -> bool) {
    let colons: Vec<usize> = text
        .windows(2)
        .enumerate()
        .filter(|(i, w)| {
            *w == b": " && key(&String::from_utf8_lossy(&text[i.saturating_sub(24)..*i]))
        })
        .map(|(i, _)| i + 2)
        .collect();
    if colons.is_empty() {
        return;
    }
    let start = colons[n % colons.len()];
    let end = text[start..]
        .iter()
        .position(|b| matches!(b, b'\n' | b',' | b'}'))
        .map_or(text.len(), |e| start + e);
    text.splice(start..end, value.bytes());
}

/// Every load error names the file it is about; syntax errors name a line.
fn assert_located(errors: &[LoadError], shown: &str) {
    assert!(!errors.is_empty());
    for e in errors {
        assert!(!e.message.trim().is_empty(), "empty message: {e:?}");
        assert!(
            e.location.file.starts_with(shown)
                || e.location.file.ends_with(".csv")
                || e.location.file.ends_with(".jsonl"),
            "error not located in {shown}: {e}"
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 384,
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct(
            "proptest-regressions/fuzz_suite.txt",
        ))),
        ..ProptestConfig::default()
    })]

    #[test]
    fn mutated_suites_load_and_compile_without_panics(
        seed in any::<prop::sample::Index>(),
        mutations in prop::collection::vec(mutation(), 1..5),
    ) {
        let (path, text) = &seeds()[seed.index(seeds().len())];
        let mut bytes = text.clone().into_bytes();
        for m in &mutations {
            apply(&mut bytes, m);
        }
        let text = String::from_utf8_lossy(&bytes);
        let shown = path.display().to_string();
        match parse_suite_str(&text, path) {
            Err(errors) => assert_located(&errors, &shown),
            Ok(suite) => {
                // What loads is bounded: every duration converts, the plan is capped.
                prop_assert!(bounds::planned_executions(&suite, None) <= bounds::MAX_EXECUTIONS);
                let judge_timeout = suite.judge.timeout_s;
                for t in suite.cases.iter().map(|c| c.timeout_s).chain([judge_timeout]).flatten() {
                    prop_assert!(bounds::seconds(t).is_ok(), "timeout_s {} loaded", t);
                }
                for case in &suite.cases {
                    prop_assert!(case.repeat_count() <= bounds::MAX_REPEAT);
                    if let Err(e) = gavel_checks::compile(case, &suite.judge) {
                        let shown = e.to_string();
                        prop_assert!(!shown.trim().is_empty());
                        if let gavel_checks::CheckError::Invalid { source_loc, case_id, .. } = &e {
                            prop_assert!(!source_loc.is_empty(), "{}", shown);
                            prop_assert_eq!(case_id, &case.id);
                        }
                    }
                }
            }
        }
    }
}

/// The seeds as shipped load (each example folder as one suite, its targets
/// file included) and compile, so the mutations start from valid suites.
#[test]
fn every_seed_loads_and_compiles_unmutated() {
    let mut dirs: Vec<&Path> = seeds().iter().filter_map(|(p, _)| p.parent()).collect();
    dirs.dedup();
    for dir in dirs {
        if !dir.exists() {
            continue;
        }
        let suite = gavel_core::load::load_paths(&[dir.to_path_buf()])
            .unwrap_or_else(|e| panic!("{}: {e:?}", dir.display()));
        for case in &suite.cases {
            gavel_checks::compile(case, &suite.judge)
                .unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        }
    }
    let jsonl = parse_suite_str(JSONL_SEED, "cases.jsonl".as_ref()).unwrap();
    assert_eq!(jsonl.cases.len(), 2);
}
