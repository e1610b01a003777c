//! G-Eval's probability-weighted score (Liu et al., 2023): with the log
//! probabilities of the score token's alternatives, the score is
//! Σ p(s)·s over the allowed scores 1-5, the probabilities renormalised over them.

use std::sync::LazyLock;

use gavel_models::TokenLogprob;
use regex::Regex;

/// Where the score's digit stands in a G-Eval answer.
static SCORE: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r#""score"\s*:\s*([1-5])\b"#).ok());

/// A score weighted by the probabilities of the score tokens.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Weighted {
    /// Σ p(s)·s, on 1-5.
    pub(crate) score: f64,
    /// p(s) for each score s the provider listed, renormalised, as `"s": p`.
    pub(crate) probabilities: std::collections::BTreeMap<String, f64>,
}

/// The weighted score of answer `text` from its tokens' log probabilities;
/// `None` when there are none, they do not spell the answer, or the score's
/// token is not a digit of its own.
pub(crate) fn weighted_score(text: &str, tokens: &[TokenLogprob]) -> Option<Weighted> {
    if tokens.is_empty() {
        return None;
    }
    let digit = SCORE.as_ref()?.captures(text)?.get(1)?.start();
    // The token covering the digit, found by the tokens' offsets in the answer.
    let mut at = 0;
    let mut found = None;
    for token in tokens {
        let end = at + token.token.len();
        if text.get(at..end)? != token.token {
            return None;
        }
        if (at..end).contains(&digit) {
            found = Some(token);
            break;
        }
        at = end;
    }
    let token = found?;
    if token.token.trim().len() != 1 {
        return None;
    }
    let alternatives: Vec<(&str, f64)> = if token.top.is_empty() {
        vec![(token.token.as_str(), token.logprob)]
    } else {
        token
            .top
            .iter()
            .map(|t| (t.token.as_str(), t.logprob))
            .collect()
    };
    let mut probabilities = std::collections::BTreeMap::new();
    for (text, logprob) in alternatives {
        let text = text.trim();
        if matches!(text, "1" | "2" | "3" | "4" | "5") && logprob.is_finite() {
            *probabilities.entry(text.to_owned()).or_insert(0.0) += logprob.exp();
        }
    }
    let total: f64 = probabilities.values().sum();
    if total <= 0.0 || !total.is_finite() {
        return None;
    }
    let mut score = 0.0;
    for (s, p) in probabilities.iter_mut() {
        *p /= total;
        score += *p * s.parse::<f64>().ok()?;
    }
    Some(Weighted {
        score,
        probabilities,
    })
}

#[cfg(test)]
mod tests {
    use gavel_models::TopLogprob;

    use super::*;

    fn token(text: &str, top: &[(&str, f64)]) -> TokenLogprob {
        TokenLogprob {
            token: text.to_owned(),
            logprob: top.first().map_or(0.0, |t| t.1),
            top: top
                .iter()
                .map(|(t, p)| TopLogprob {
                    token: (*t).to_owned(),
                    logprob: p.ln(),
                })
                .collect(),
        }
    }

    #[test]
    fn weighs_the_score_tokens_and_renormalises() {
        let text = r#"{"score": 4}"#;
        let tokens = [
            token(r#"{"score": "#, &[]),
            token("4", &[("4", 0.6), ("5", 0.2), ("3", 0.1), ("x", 0.1)]),
            token("}", &[]),
        ];
        let w = weighted_score(text, &tokens).unwrap();
        // p renormalised over 3, 4, 5: 1/9, 6/9, 2/9.
        assert!(
            (w.score - (3.0 + 24.0 + 10.0) / 9.0).abs() < 1e-9,
            "{}",
            w.score
        );
        assert!((w.probabilities["4"] - 6.0 / 9.0).abs() < 1e-9);
        assert!(!w.probabilities.contains_key("x"));
    }

    #[test]
    fn no_usable_tokens_give_none() {
        let text = r#"{"score": 4}"#;
        assert_eq!(weighted_score(text, &[]), None);
        // Tokens that do not spell the answer.
        assert_eq!(weighted_score(text, &[token("nope", &[])]), None);
        // The digit shares its token with other text.
        let merged = [token(r#"{"score": 4}"#, &[])];
        assert_eq!(weighted_score(text, &merged), None);
        // No score token among the alternatives.
        let other = [
            token(r#"{"score": "#, &[]),
            token("4", &[("x", 1.0)]),
            token("}", &[]),
        ];
        assert_eq!(weighted_score(text, &other), None);
    }
}
