//! The Rust encoder against sentence-transformers' own vectors
//! (tests/fixtures/minilm_reference.json, written by make_fixtures.py).
#![allow(clippy::unwrap_used)]

mod support;

use serde::Deserialize;

#[derive(Deserialize)]
struct Fixture {
    max_seq_length: usize,
    cases: Vec<Case>,
}

#[derive(Deserialize)]
struct Case {
    text: String,
    tokens_untruncated: usize,
    vector: Vec<f32>,
}

fn fixture() -> Fixture {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/minilm_reference.json"
    );
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn embeddings_match_sentence_transformers_within_1e_4() {
    let Some(model) = support::minilm() else {
        return;
    };
    let fixture = fixture();
    assert!(
        fixture
            .cases
            .iter()
            .any(|c| c.tokens_untruncated > fixture.max_seq_length),
        "the fixtures must exercise truncation"
    );
    let texts: Vec<String> = fixture.cases.iter().map(|c| c.text.clone()).collect();
    let vectors = model.encode(&texts).unwrap();
    assert_eq!(vectors.len(), texts.len());
    let mut worst = (0f32, 0usize);
    for (i, (case, got)) in fixture.cases.iter().zip(&vectors).enumerate() {
        assert_eq!(got.len(), case.vector.len(), "case {i}: dimension");
        let diff = got
            .iter()
            .zip(&case.vector)
            .map(|(a, b)| (a - b).abs())
            .fold(0f32, f32::max);
        if diff > worst.0 {
            worst = (diff, i);
        }
    }
    println!("max abs difference {:.2e} (case {})", worst.0, worst.1);
    assert!(
        worst.0 <= 1e-4,
        "case {} {:?}: max abs difference {:e}",
        worst.1,
        fixture.cases[worst.1].text,
        worst.0
    );
}

#[test]
fn a_text_embeds_the_same_alone_or_in_any_batch() {
    let Some(model) = support::minilm() else {
        return;
    };
    let fixture = fixture();
    let texts: Vec<String> = fixture.cases.iter().map(|c| c.text.clone()).collect();
    let batched = model.encode(&texts).unwrap();
    for (text, expected) in texts.iter().zip(&batched).take(5) {
        let alone = model.encode(std::slice::from_ref(text)).unwrap();
        let diff = alone[0]
            .iter()
            .zip(expected)
            .map(|(a, b)| (a - b).abs())
            .fold(0f32, f32::max);
        assert!(diff < 1e-5, "{text:?}: {diff:e}");
    }
    assert!(model.encode(&[]).unwrap().is_empty());
}
