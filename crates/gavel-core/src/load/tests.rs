//! The loader's id check: fingerprints, and the second read that places duplicates.

use super::*;

/// Loads `text` as `s.yaml` with `taken` already fingerprinted (as if another
/// id had the same fingerprint), returning every error.
fn errors_with_taken(text: &str, taken: &str) -> Vec<LoadError> {
    let sources = [SuiteSource::Text {
        text: text.to_owned(),
        path: "s.yaml".into(),
    }];
    let loading = open(&sources);
    let mut resolver = Resolver::new(&loading.suite);
    resolver.seen.insert(fingerprint(taken));
    let mut errors = Vec::new();
    walk(
        &loading.files,
        &mut errors,
        &mut |file, case, at, errors| {
            resolver.take(file, case, at, &loading.suite, errors, &mut |_| {});
        },
    );
    resolver.place_duplicates(&loading.files, &loading.suite, &mut errors);
    errors
}

#[test]
fn an_id_whose_fingerprint_was_seen_under_another_id_is_no_duplicate() {
    let text = "cases:\n  - {id: a, input: hi}\n  - {id: b, input: hi}\n";
    assert_eq!(errors_with_taken(text, "b"), []);
}

#[test]
fn a_real_duplicate_beside_a_fingerprint_collision_keeps_its_place() {
    let text =
        "cases:\n  - {id: b, input: hi}\n  - {id: a, input: hi}\n  - {id: a, input: again}\n";
    let shown: Vec<String> = errors_with_taken(text, "b")
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(
        shown,
        ["s.yaml:4: id: case `a`: duplicate case id `a` (first defined at s.yaml:3)"]
    );
}
