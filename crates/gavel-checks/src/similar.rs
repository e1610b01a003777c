//! `similar`: the answer's sentence embedding against the expected answer's (or
//! the best of several acceptable answers), by cosine similarity.

use gavel_core::CheckKind;
use gavel_core::{OneOrMany, Status, Turn, Verdict};
use gavel_embed::{EmbedError, cosine};
use serde_json::{Value, json};

use futures::future::BoxFuture;

use crate::check::{AwaitedCheck, Input};
use crate::error::FieldError;
use crate::expected::Expected;
use crate::finding::{Finding, VerdictHead, with_model};
use crate::names::{quoted_list, short};
use crate::runtime::{Embeddings, JudgeRuntime};

/// The pass threshold when a check gives none (seed 004's SBERT gate).
pub const DEFAULT_SIMILARITY_THRESHOLD: f64 = 0.4;

/// The skip reason of `similar` checks when the runtime has no embedder.
const NO_EMBEDDER: &str = "no embedder configured for similar checks";

/// A compiled `similar` check.
pub(crate) struct SimilarCheck {
    answers: Vec<String>,
    threshold: f64,
}

impl SimilarCheck {
    /// The kind of `similar` verdicts.
    pub(crate) const KIND: CheckKind = CheckKind::Similar;

    /// Compiles a `similar` spec: the acceptable answers (`value`, else the
    /// expected output) and the threshold.
    pub(crate) fn compile(
        value: Option<&OneOrMany>,
        threshold: Option<f64>,
        expected: &Expected<'_>,
    ) -> Result<Self, FieldError> {
        let answers = match (value, expected.output) {
            (Some(value), _) => value.as_slice().to_vec(),
            (None, Some(Value::String(s))) => vec![s.clone()],
            (None, Some(Value::Array(items))) => items
                .iter()
                .map(|item| match item {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                })
                .collect(),
            (None, Some(other)) => vec![other.to_string()],
            (None, None) => {
                return Err(FieldError::new(
                    "value",
                    "similar needs a `value`, or an `expected_output` on the round or the case",
                ));
            }
        };
        if answers.is_empty() {
            return Err(FieldError::new(
                "value",
                "give at least one acceptable answer",
            ));
        }
        let threshold = threshold.unwrap_or(DEFAULT_SIMILARITY_THRESHOLD);
        if !(-1.0..=1.0).contains(&threshold) {
            return Err(FieldError::new(
                "threshold",
                format!("a cosine similarity threshold lies between -1 and 1, got {threshold}"),
            ));
        }
        Ok(SimilarCheck { answers, threshold })
    }

    /// Embeds the answer with the acceptable answers and compares; the best match
    /// counts, its similarity the score. No embedder or a missing model →
    /// `skipped`; an embedder failure → `error`.
    async fn evaluate(&self, answer: &Turn, embeddings: Option<&Embeddings>) -> Finding {
        let embedder = match embeddings {
            Some(Embeddings::Ready(embedder)) => embedder,
            Some(Embeddings::Unavailable(e)) => return failed(e, "the embedder"),
            None => return skipped(NO_EMBEDDER.to_owned()),
        };
        let mut texts = Vec::with_capacity(self.answers.len() + 1);
        texts.push(answer.output.clone());
        texts.extend(self.answers.iter().cloned());
        let vectors = match embedder.embed(&texts).await {
            Ok(vectors) => vectors,
            Err(e) => return failed(&e, embedder.model()),
        };
        let Some((output, references)) = vectors.split_first() else {
            return failed(
                &EmbedError::Inference("no vectors".into()),
                embedder.model(),
            );
        };
        let scores: Vec<f64> = references.iter().map(|r| cosine(output, r)).collect();
        let (best, similarity) =
            scores
                .iter()
                .copied()
                .enumerate()
                .fold(
                    (0, f64::NEG_INFINITY),
                    |acc, (i, s)| if s > acc.1 { (i, s) } else { acc },
                );
        let evidence = json!({
            "similarity": similarity,
            "threshold": self.threshold,
            "best_match": self.answers[best],
            "scores": scores,
        });
        let evidence = with_model(evidence, embedder.model());
        let against = format!("{:?}", short(&self.answers[best]));
        let finding = if similarity >= self.threshold {
            Finding::pass(
                format!(
                    "similarity {similarity:.3} ≥ {:.3} to {against}",
                    self.threshold
                ),
                evidence,
            )
        } else {
            let of = if self.answers.len() > 1 {
                format!(" (best of {})", self.answers.len())
            } else {
                String::new()
            };
            Finding::fail(
                format!(
                    "similarity {similarity:.3} < {:.3} to {against}{of}",
                    self.threshold
                ),
                evidence,
            )
        };
        finding.scored(similarity, self.threshold)
    }
}

fn skipped(reason: String) -> Finding {
    Finding {
        score: None,
        status: Status::Skipped,
        reason,
        evidence: Value::Null,
    }
}

/// A missing model skips; any other failure is an infrastructure error.
fn failed(e: &EmbedError, model: &str) -> Finding {
    if e.is_missing() {
        return skipped(e.to_string());
    }
    Finding {
        score: None,
        status: Status::Error,
        reason: format!("embedding with {model}: {e}"),
        evidence: with_model(json!({}), model),
    }
}

impl AwaitedCheck for SimilarCheck {
    /// `similar "Paris is the capital"`.
    fn name(&self) -> String {
        format!("similar {}", quoted_list(&self.answers))
    }

    fn kind(&self) -> CheckKind {
        Self::KIND
    }

    fn judges(&self) -> Vec<crate::JudgeUse> {
        Vec::new()
    }

    fn grade<'a>(
        &'a self,
        head: VerdictHead<'a>,
        input: &'a Input<'a>,
        rt: &'a JudgeRuntime<'a>,
    ) -> BoxFuture<'a, Verdict> {
        Box::pin(async move {
            self.evaluate(input.subject.answer, rt.embeddings)
                .await
                .verdict(head)
        })
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use std::sync::Arc;

    use gavel_core::Status;
    use gavel_embed::{Batcher, EmbedError, Embedder, NoCache};

    use super::Embeddings;
    use crate::JudgeRuntime;
    use crate::NoJudgeModels;
    use crate::testing::{case, compile, compile_err, transcript, turn};

    /// Embeds a text as counts of the letters a, b and c.
    #[derive(Debug)]
    struct Letters;

    #[async_trait::async_trait]
    impl Embedder for Letters {
        fn model(&self) -> &str {
            "letters"
        }

        async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError> {
            Ok(texts
                .iter()
                .map(|t| {
                    ['a', 'b', 'c']
                        .map(|l| t.matches(l).count() as f32)
                        .to_vec()
                })
                .collect())
        }
    }

    async fn verdict(
        body: &str,
        output: &str,
        embeddings: Option<&Embeddings>,
    ) -> gavel_core::Verdict {
        let plan = compile(&case(body)).unwrap();
        assert!(plan.uses_embeddings());
        let runtime = JudgeRuntime {
            embeddings,
            ..JudgeRuntime::new(&NoJudgeModels)
        };
        plan.run(&transcript(vec![turn(0, output)]), &runtime)
            .await
            .remove(0)
    }

    fn letters() -> Embeddings {
        Embeddings::Ready(Batcher::new(Arc::new(Letters), Arc::new(NoCache)))
    }

    #[tokio::test]
    async fn the_best_acceptable_answer_decides_and_both_figures_are_reported() {
        let embeddings = letters();
        let body =
            "input: q\nchecks:\n  - type: similar\n    threshold: 0.9\n    value: [ccc, aab]\n";
        let v = verdict(body, "aaab", Some(&embeddings)).await;
        assert_eq!(
            (v.status, v.kind.as_str()),
            (Status::Pass, "similar"),
            "{}",
            v.reason
        );
        assert_eq!(v.threshold, Some(0.9));
        assert!(v.score.unwrap() > 0.98);
        assert_eq!(v.evidence.to_json()["best_match"], "aab");
        assert!(v.reason.starts_with("similarity 0.9"), "{}", v.reason);
        assert!(v.reason.contains("≥ 0.900"), "{}", v.reason);

        let v = verdict(body, "bbb", Some(&embeddings)).await;
        assert_eq!(v.status, Status::Fail);
        assert!(
            v.reason.contains("< 0.900") && v.reason.contains("(best of 2)"),
            "{}",
            v.reason
        );
    }

    #[tokio::test]
    async fn expected_output_is_the_default_and_the_threshold_defaults_to_0_4() {
        let embeddings = letters();
        let v = verdict(
            "input: q\nexpected_output: ab\nchecks: [{type: similar}]\n",
            "a",
            Some(&embeddings),
        )
        .await;
        // cos((1,0,0), (1,1,0)) = 0.707
        assert_eq!((v.status, v.threshold), (Status::Pass, Some(0.4)));
        assert!((v.score.unwrap() - std::f64::consts::FRAC_1_SQRT_2).abs() < 1e-6);
    }

    #[tokio::test]
    async fn no_embedder_or_a_missing_model_skips_and_a_broken_one_errs() {
        let body = "input: q\nexpected_output: ab\nchecks: [{type: similar}]\n";
        let v = verdict(body, "a", None).await;
        assert_eq!(v.status, Status::Skipped);
        assert_eq!(v.reason, "no embedder configured for similar checks");

        let missing = Embeddings::Unavailable(EmbedError::Missing(
            "encoder model `x` is not installed".into(),
        ));
        let v = verdict(body, "a", Some(&missing)).await;
        assert_eq!(
            (v.status, v.reason.as_str()),
            (Status::Skipped, "encoder model `x` is not installed")
        );

        let broken = Embeddings::Unavailable(EmbedError::Inference("bad weights".into()));
        let v = verdict(body, "a", Some(&broken)).await;
        assert_eq!(v.status, Status::Error, "{}", v.reason);
        assert!(v.reason.contains("bad weights"), "{}", v.reason);
    }

    #[test]
    fn bad_specs_name_the_field() {
        assert!(
            compile_err("input: q\nchecks: [{type: similar}]\n")
                .contains("checks[0].value: similar needs a `value`, or an `expected_output`"),
        );
        assert!(
            compile_err("input: q\nchecks: [{type: similar, value: x, threshold: 2}]\n").contains(
                "checks[0].threshold: a cosine similarity threshold lies between -1 and 1"
            ),
        );
        assert!(
            compile_err("input: q\nchecks: [{type: similar, value: []}]\n")
                .contains("checks[0].value: give at least one")
        );
    }
}
