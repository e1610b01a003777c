//! [`Evidence`]: what a check recorded besides its status, score and reason.
//!
//! The parts other crates read are typed: the judge model and its calls, the
//! rejudge samples, and a kind's [`Reading`] (a pointwise judge's score on its
//! scale, a rubric's dimensions, a pairwise judge's orders, step scores, tool
//! verifications, a trajectory's length). Everything else a check records is its
//! own `detail`, which nobody outside the check reads by name.
//!
//! Serialised, the typed parts and the detail share one flat JSON object, the
//! shape stores, reports and exports have always held. [`Evidence::read`] turns
//! such an object back into typed parts by the verdict's kind; a part whose keys
//! do not have the expected shape stays in `detail`, untouched, so no stored
//! evidence is lost or refused.

use std::collections::BTreeMap;

use serde::de::DeserializeOwned;
use serde::de::value::MapDeserializer;
use serde::{Deserialize, Serialize, Serializer};
use serde_json::{Map, Value};

use crate::{Attempts, CheckKind, Scale, Status};

/// A verdict's evidence: typed parts other crates read, and the check's detail.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Evidence {
    /// The model that judged or embedded (judges, similarity, grounding).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The judge had no model or credentials, so it gave no judgement.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub judge_unavailable: bool,
    /// Why the judge was not called.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub short_circuit: Option<ShortCircuit>,
    /// What the judge model's calls took, when it was called.
    #[serde(flatten)]
    pub calls: Option<ModelCalls>,
    /// The transport tries of the model calls (retries, 429s), when any was sent;
    /// a panel's sums its members'.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub transport: Option<Attempts>,
    /// The kind's own reading, where other crates read it.
    #[serde(flatten)]
    pub reading: Option<Reading>,
    /// `rejudge: k`: the further judgements of the same output.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub rejudged: Vec<Rejudgement>,
    /// The check's own detail (matched text, criteria, raw answers…).
    #[serde(flatten)]
    pub detail: Map<String, Value>,
}

/// The kind-independent typed parts, as [`Evidence::read`] takes them.
#[derive(Default, Deserialize)]
#[cfg_attr(test, derive(Serialize))]
struct Common {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    model: Option<String>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    judge_unavailable: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    short_circuit: Option<ShortCircuit>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    transport: Option<Attempts>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    rejudged: Vec<Rejudgement>,
}

impl Evidence {
    /// Evidence with only the check's detail: a JSON object's entries (typed
    /// parts are not taken from it; see [`Evidence::read`]).
    pub fn detail(detail: Map<String, Value>) -> Self {
        Evidence {
            detail,
            ..Evidence::default()
        }
    }

    /// Reads evidence written as JSON by a verdict of `kind`: the typed parts
    /// that have their expected shape, the rest as detail. Null is empty
    /// evidence; a value that is not an object is kept whole as detail `value`.
    pub fn read(kind: CheckKind, json: Value) -> Self {
        let mut detail = match json {
            Value::Object(map) => map,
            Value::Null => Map::new(),
            other => Map::from_iter([("value".to_owned(), other)]),
        };
        let common: Common = take(&mut detail, COMMON).unwrap_or_default();
        let calls = take(&mut detail, CALLS);
        let reading = match kind {
            CheckKind::Judge => take(&mut detail, SCORE).map(Reading::Score),
            CheckKind::Rubric => take(&mut detail, RUBRIC).map(Reading::Rubric),
            CheckKind::Pairwise => take(&mut detail, PAIRWISE).map(Reading::Pairwise),
            CheckKind::StepScore => take(&mut detail, STEPS).map(Reading::Steps),
            CheckKind::ToolVerification => take(&mut detail, TOOLS).map(Reading::Tools),
            CheckKind::Trajectory => take(&mut detail, TRAJECTORY).map(Reading::Trajectory),
            CheckKind::SelectBest => take(&mut detail, SELECT_BEST).map(Reading::SelectBest),
            _ => None,
        };
        Evidence {
            model: common.model,
            judge_unavailable: common.judge_unavailable,
            short_circuit: common.short_circuit,
            calls,
            transport: common.transport,
            reading,
            rejudged: common.rejudged,
            detail,
        }
    }

    /// Records a kind's reading: typed when it is the reading of `kind`, the
    /// verdict's, else as detail fields, as [`Evidence::read`] would leave them
    /// (a judge run as a node of a panel of another kind).
    pub fn set_reading(&mut self, kind: CheckKind, reading: Reading) {
        let typed = matches!(
            (kind, &reading),
            (CheckKind::Judge, Reading::Score(_))
                | (CheckKind::Rubric, Reading::Rubric(_))
                | (CheckKind::Pairwise, Reading::Pairwise(_))
                | (CheckKind::StepScore, Reading::Steps(_))
                | (CheckKind::ToolVerification, Reading::Tools(_))
                | (CheckKind::Trajectory, Reading::Trajectory(_))
                | (CheckKind::SelectBest, Reading::SelectBest(_))
        );
        if typed {
            self.reading = Some(reading);
        } else if let Ok(Value::Object(fields)) = serde_json::to_value(&reading) {
            self.detail.extend(fields);
        }
    }

    /// The evidence as the JSON object it is serialised as.
    pub fn to_json(&self) -> Value {
        serde_json::to_value(self).unwrap_or_default()
    }

    /// Whether nothing was recorded.
    pub fn is_empty(&self) -> bool {
        *self == Evidence::default()
    }

    /// A pointwise judge's score on its scale.
    pub fn score(&self) -> Option<&JudgeScore> {
        match &self.reading {
            Some(Reading::Score(s)) => Some(s),
            _ => None,
        }
    }

    /// A rubric's dimensions and suggestions.
    pub fn rubric(&self) -> Option<&RubricReading> {
        match &self.reading {
            Some(Reading::Rubric(r)) => Some(r),
            _ => None,
        }
    }

    /// A pairwise judge's two orders.
    pub fn pairwise(&self) -> Option<&PairwiseReading> {
        match &self.reading {
            Some(Reading::Pairwise(p)) => Some(p),
            _ => None,
        }
    }

    /// A step-score judge's scored steps (empty for other kinds).
    pub fn steps(&self) -> &[StepScore] {
        match &self.reading {
            Some(Reading::Steps(s)) => &s.steps,
            _ => &[],
        }
    }

    /// A tool-verification check's graded calls.
    pub fn tools(&self) -> Option<&ToolVerifications> {
        match &self.reading {
            Some(Reading::Tools(t)) => Some(t),
            _ => None,
        }
    }

    /// A select-best judge's reading: where this answer was shown.
    pub fn select_best(&self) -> Option<&SelectBestReading> {
        match &self.reading {
            Some(Reading::SelectBest(s)) => Some(s),
            _ => None,
        }
    }

    /// A trajectory check's length.
    pub fn trajectory_length(&self) -> Option<usize> {
        match &self.reading {
            Some(Reading::Trajectory(t)) => Some(t.trajectory_length),
            _ => None,
        }
    }
}

/// A part's keys, as it is serialised: each with whether the part leaves it
/// out when it is empty (`skip_serializing_if`: null, false, `[]` or `{}`).
type Keys = &'static [(&'static str, bool)];

const COMMON: Keys = &[
    ("model", true),
    ("judge_unavailable", true),
    ("short_circuit", true),
    ("transport", true),
    ("rejudged", true),
];
const CALLS: Keys = &[
    ("input_tokens", false),
    ("output_tokens", false),
    ("latency_ms", false),
    ("cached", false),
    ("attempts", false),
];
const SCORE: Keys = &[("scale", false), ("score", true)];
const RUBRIC: Keys = &[
    ("overall", true),
    ("dimensions", true),
    ("improvement_suggestions", true),
];
const PAIRWISE: Keys = &[("position_bias", false), ("orders", true)];
const STEPS: Keys = &[("steps", false)];
const TOOLS: Keys = &[("calls", false), ("called", true)];
const SELECT_BEST: Keys = &[("position", false)];
const TRAJECTORY: Keys = &[("trajectory_length", false)];

/// Takes the part `T`, whose keys are `keys`, out of `detail`: when it records
/// something and its keys that are there deserialise as `T`, those it records are
/// removed (an empty one the part leaves out stays, as the part would not write it).
fn take<T: DeserializeOwned>(detail: &mut Map<String, Value>, keys: Keys) -> Option<T> {
    let recorded = |detail: &Map<String, Value>, &(key, omitted_empty): &(&str, bool)| {
        detail
            .get(key)
            .is_some_and(|v| !(omitted_empty && empty(v)))
    };
    if !keys.iter().any(|k| recorded(detail, k)) {
        return None;
    }
    let present = keys
        .iter()
        .filter_map(|&(key, _)| detail.get_key_value(key))
        .map(|(k, v)| (k.as_str(), v));
    let part = T::deserialize(MapDeserializer::<_, serde_json::Error>::new(present)).ok()?;
    for k in keys {
        if recorded(detail, k) {
            detail.shift_remove(k.0);
        }
    }
    Some(part)
}

/// Null, false, `[]` or `{}`: what a part's `skip_serializing_if` leaves out.
fn empty(value: &Value) -> bool {
    match value {
        Value::Null | Value::Bool(false) => true,
        Value::Array(a) => a.is_empty(),
        Value::Object(o) => o.is_empty(),
        _ => false,
    }
}

/// Why a judge was not called.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ShortCircuit {
    /// The output equals the expected output.
    ExactMatch,
    /// The two compared answers are identical.
    Identical,
}

/// What one judge's model calls took.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModelCalls {
    /// Prompt tokens over the calls.
    pub input_tokens: u64,
    /// Answer tokens over the calls.
    pub output_tokens: u64,
    /// Time spent in the calls.
    pub latency_ms: u64,
    /// Every call was served from the cache.
    #[serde(default)]
    pub cached: bool,
    /// Answers asked for: the first and each re-ask of an unusable answer.
    #[serde(default)]
    pub attempts: u32,
}

/// One further judgement of `rejudge: k`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Rejudgement {
    /// Its status.
    pub status: Status,
    /// Its score, 0..=1.
    pub score: Option<f64>,
    /// What it cost.
    pub cost_usd: Option<f64>,
    /// Whether it was served from the cache (`None`: no call was made).
    pub cached: Option<bool>,
}

/// A kind's typed reading. Serialised as its fields, flat in the evidence.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Reading {
    /// A pointwise `judge`.
    Score(JudgeScore),
    /// A `rubric`.
    Rubric(RubricReading),
    /// A `pairwise` judge.
    Pairwise(PairwiseReading),
    /// A `step-score` judge.
    Steps(StepScores),
    /// A `tool-verification` check.
    Tools(ToolVerifications),
    /// A `trajectory` check.
    Trajectory(TrajectoryReading),
    /// A `select-best` judge.
    SelectBest(SelectBestReading),
}

/// A pointwise judge's scale and its score on it.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
pub struct JudgeScore {
    /// The scale the judge scored on.
    pub scale: Scale,
    /// The score on that scale, when the judge gave one.
    #[serde(default)]
    pub score: Option<f64>,
}

impl Serialize for JudgeScore {
    /// Scores on integral scales are written whole (`4`, not `4.0`).
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut s = serializer.serialize_struct("JudgeScore", 2)?;
        s.serialize_field("scale", &self.scale)?;
        match self.score {
            Some(score) if self.scale.integral() => s.serialize_field("score", &Whole(score))?,
            Some(score) => s.serialize_field("score", &score)?,
            None => s.skip_field("score")?,
        }
        s.end()
    }
}

/// A score written whole when it is (`4`, not `4.0`), as judges answer it.
struct Whole(f64);

impl Serialize for Whole {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        if self.0.fract() == 0.0 && self.0.abs() < 1e15 {
            serializer.serialize_i64(self.0 as i64)
        } else {
            serializer.serialize_f64(self.0)
        }
    }
}

fn whole<S: Serializer>(score: &f64, serializer: S) -> Result<S::Ok, S::Error> {
    Whole(*score).serialize(serializer)
}

/// A rubric's overall score, dimensions and suggestions.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RubricReading {
    /// The weighted overall score on 1–5.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub overall: Option<f64>,
    /// Each dimension scored, by name.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub dimensions: BTreeMap<String, RubricDimension>,
    /// The judge's suggestions for a better answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub improvement_suggestions: Option<String>,
}

/// One rubric dimension's score.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RubricDimension {
    /// The score on 1–5.
    #[serde(serialize_with = "whole")]
    pub score: f64,
    /// Why.
    pub reasoning: String,
    /// Its weight in the overall score.
    pub weight: f64,
}

/// A pairwise judge's reading: whether the two orders disagreed, and each order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PairwiseReading {
    /// The two orders favoured different answers.
    pub position_bias: bool,
    /// Each order asked (none when the judge was not called).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub orders: Vec<PairwiseOrder>,
}

/// One order of a pairwise comparison.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PairwiseOrder {
    /// Which answer was shown in position A.
    pub a: Favoured,
    /// The position the judge favoured: `A`, `B` or `tie`.
    pub favoured_position: String,
    /// The answer the judge favoured.
    pub favoured: Favoured,
    /// The judge's reasoning.
    pub reasoning: String,
}

/// An answer of a pairwise comparison.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Favoured {
    /// The judged output.
    Output,
    /// The answer it was compared with.
    Other,
    /// Neither: a tie.
    #[serde(rename = "tie")]
    Neither,
}

/// A step-score judge's steps.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct StepScores {
    /// Each step, in order.
    pub steps: Vec<StepScore>,
}

/// One scored step of a transcript.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepScore {
    /// The step number (1-based).
    pub step: usize,
    /// The round of its turn.
    pub round: usize,
    /// The tool call the step is, when it is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// The score, 0..=1 (`None`: the judge could not score it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub score: Option<f64>,
    /// The judge's explanation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub explanation: Option<String>,
    /// Why the step got no score.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure: Option<String>,
    /// The rest the judge recorded (weight, attempts, raw answer).
    #[serde(flatten)]
    pub detail: Map<String, Value>,
}

/// A tool-verification check's graded calls.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ToolVerifications {
    /// Each expected call, graded.
    pub calls: Vec<ToolCallGrade>,
    /// The names of the tools called, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub called: Vec<String>,
}

/// One expected tool call, graded.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCallGrade {
    /// The tool expected.
    pub expected: String,
    /// The index into `called` of the matching call (`None`: none matched).
    pub call_index: Option<usize>,
    /// The right tool was called.
    pub tool_correct: bool,
    /// Its arguments were right.
    pub args_correct: bool,
    /// Its result was right, when the check looked at results.
    #[serde(default)]
    pub result_correct: Option<bool>,
    /// The call's score, 0..=1.
    pub score: f64,
    /// What was wrong with its arguments and result.
    #[serde(default)]
    pub problems: Vec<String>,
    /// The rest the check recorded (weight, order).
    #[serde(flatten)]
    pub detail: Map<String, Value>,
}

/// A select-best judge's reading of one answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct SelectBestReading {
    /// Where this answer was shown to the judge (1-based; 0 when not shown).
    pub position: usize,
}

/// A trajectory check's reading.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct TrajectoryReading {
    /// Steps in the agent's trajectory.
    pub trajectory_length: usize,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn round_trip(kind: CheckKind, json: Value) -> Evidence {
        let evidence = Evidence::read(kind, json.clone());
        assert_eq!(serde_json::to_value(&evidence).unwrap(), json);
        evidence
    }

    #[test]
    fn judge_evidence_reads_typed_and_writes_the_same_json() {
        let e = round_trip(
            CheckKind::Judge,
            json!({
                "criteria": "polite", "scale": "1-5", "score": 4, "model": "openai:m",
                "input_tokens": 10, "output_tokens": 2, "latency_ms": 7, "cached": false,
                "attempts": 1, "transport": {"attempts": 2, "retries": 1, "rate_limited": 1, "malformed": 0},
                "raw": "{}",
            }),
        );
        assert_eq!(e.score().unwrap().scale, Scale::OneToFive);
        assert_eq!(e.score().unwrap().score, Some(4.0));
        assert_eq!(e.model.as_deref(), Some("openai:m"));
        let calls = e.calls.unwrap();
        assert_eq!((calls.input_tokens, e.transport.unwrap().retries), (10, 1));
        assert_eq!(e.detail.keys().collect::<Vec<_>>(), ["criteria", "raw"]);
    }

    #[test]
    fn a_part_of_another_shape_stays_in_the_detail() {
        let e = round_trip(CheckKind::Judge, json!({"scale": "1-7", "score": 3}));
        assert!(e.score().is_none());
        assert_eq!(e.detail.len(), 2);
        // A procedural panel's steps are not step scores.
        let e = round_trip(
            CheckKind::Procedural,
            json!({"steps": [{"name": "a", "status": "pass"}]}),
        );
        assert!(e.steps().is_empty());
        let e = round_trip(CheckKind::StepScore, json!({"steps": [{"name": "a"}]}));
        assert!(e.reading.is_none());
    }

    #[test]
    fn kind_readings_round_trip() {
        let rubric = round_trip(
            CheckKind::Rubric,
            json!({"overall": 3.5, "dimensions": {"accuracy": {"score": 4, "reasoning": "r", "weight": 1.0}},
                   "improvement_suggestions": "more", "judge_unavailable": true}),
        );
        assert_eq!(rubric.rubric().unwrap().dimensions["accuracy"].score, 4.0);
        assert!(rubric.judge_unavailable);
        let pairwise = round_trip(
            CheckKind::Pairwise,
            json!({"outcome": "tie", "position_bias": true, "short_circuit": "identical",
                   "orders": [{"a": "output", "favoured_position": "A", "favoured": "output", "reasoning": "r"},
                              {"a": "other", "favoured_position": "tie", "favoured": "tie", "reasoning": "s"}]}),
        );
        let p = pairwise.pairwise().unwrap();
        assert!(p.position_bias);
        assert_eq!(p.orders[1].favoured, Favoured::Neither);
        assert_eq!(pairwise.short_circuit, Some(ShortCircuit::Identical));
        let steps = round_trip(
            CheckKind::StepScore,
            json!({"steps": [{"step": 1, "round": 0, "tool": "get", "score": 0.5, "explanation": "e", "weight": 1.0}]}),
        );
        assert_eq!(steps.steps()[0].tool.as_deref(), Some("get"));
        let tools = round_trip(
            CheckKind::ToolVerification,
            json!({"score": 0.5, "calls": [{"expected": "get", "call_index": 0, "tool_correct": true,
                   "args_correct": false, "result_correct": null, "score": 0.5, "problems": ["x"], "weight": 1.0}],
                   "called": ["get"]}),
        );
        assert_eq!(tools.tools().unwrap().calls[0].call_index, Some(0));
        let trajectory = round_trip(CheckKind::Trajectory, json!({"trajectory_length": 3}));
        assert_eq!(trajectory.trajectory_length(), Some(3));
        let rejudged = round_trip(
            CheckKind::Judge,
            json!({"rejudged": [{"status": "pass", "score": 1.0, "cost_usd": null, "cached": true}]}),
        );
        assert_eq!(rejudged.rejudged[0].status, Status::Pass);
    }

    #[test]
    fn each_part_takes_the_keys_it_writes() {
        fn keys(part: impl Serialize) -> Vec<String> {
            match serde_json::to_value(part).unwrap() {
                Value::Object(fields) => fields.keys().cloned().collect(),
                other => panic!("{other}"),
            }
        }
        // Everything recorded: every key; nothing: those never left out.
        fn check(table: Keys, full: impl Serialize, bare: impl Serialize) {
            let all: Vec<_> = table.iter().map(|k| k.0).collect();
            let kept: Vec<_> = table.iter().filter(|k| !k.1).map(|k| k.0).collect();
            assert_eq!(keys(full), all);
            assert_eq!(keys(bare), kept);
        }
        let rejudged = Rejudgement {
            status: Status::Pass,
            score: None,
            cost_usd: None,
            cached: None,
        };
        let full = Common {
            model: Some("m".into()),
            judge_unavailable: true,
            short_circuit: Some(ShortCircuit::Identical),
            transport: Some(Attempts::default()),
            rejudged: vec![rejudged],
        };
        check(COMMON, full, Common::default());
        check(CALLS, ModelCalls::default(), ModelCalls::default());
        let scale = Scale::OneToFive;
        let score = |score| JudgeScore { scale, score };
        check(SCORE, score(Some(4.0)), score(None));
        let dimension = RubricDimension {
            score: 4.0,
            reasoning: "r".into(),
            weight: 1.0,
        };
        let rubric = RubricReading {
            overall: Some(4.0),
            dimensions: BTreeMap::from([("a".into(), dimension)]),
            improvement_suggestions: Some("s".into()),
        };
        check(RUBRIC, rubric, RubricReading::default());
        let order = PairwiseOrder {
            a: Favoured::Output,
            favoured_position: "A".into(),
            favoured: Favoured::Output,
            reasoning: "r".into(),
        };
        let pairwise = |orders| PairwiseReading {
            position_bias: false,
            orders,
        };
        check(PAIRWISE, pairwise(vec![order]), pairwise(vec![]));
        check(STEPS, StepScores::default(), StepScores::default());
        let tools = ToolVerifications {
            calls: vec![],
            called: vec!["get".into()],
        };
        check(TOOLS, tools, ToolVerifications::default());
        let select = SelectBestReading { position: 1 };
        check(SELECT_BEST, select, select);
        let trajectory = TrajectoryReading {
            trajectory_length: 1,
        };
        check(TRAJECTORY, trajectory, trajectory);
    }

    #[test]
    fn empty_keys_a_part_leaves_out_stay_in_the_detail() {
        let e = round_trip(
            CheckKind::Judge,
            json!({"model": null, "judge_unavailable": false, "cached": false, "scale": "0-10", "score": null}),
        );
        assert_eq!(e.model, None);
        assert_eq!(e.score().unwrap().score, None);
        // ModelCalls has no `input_tokens`: it is not read, `cached` stays too.
        assert_eq!(e.calls, None);
        assert_eq!(
            e.detail.keys().collect::<Vec<_>>(),
            ["model", "judge_unavailable", "cached", "score"]
        );
        let e = round_trip(CheckKind::Pairwise, json!({"position_bias": false}));
        assert!(!e.pairwise().unwrap().position_bias);
        assert!(e.detail.is_empty());
    }

    #[test]
    fn a_reading_set_is_what_reading_the_same_json_gives() {
        // Built typed, and as the JSON object a check wrote before.
        let build = |kind| {
            let mut e = Evidence::default();
            e.detail.insert("criteria".into(), json!("polite"));
            let scale = Scale::OneToFive;
            e.set_reading(kind, Reading::Score(JudgeScore { scale, score: None }));
            e.detail.insert("status".into(), json!("ok"));
            let score = Some(4.0);
            e.set_reading(kind, Reading::Score(JudgeScore { scale, score }));
            e
        };
        let written = json!({"criteria": "polite", "scale": "1-5", "status": "ok", "score": 4});
        for kind in [CheckKind::Judge, CheckKind::Dag] {
            let (built, read) = (build(kind), Evidence::read(kind, written.clone()));
            assert_eq!(built, read);
            assert_eq!(
                serde_json::to_string(&built).unwrap(),
                serde_json::to_string(&read).unwrap()
            );
        }
        assert!(build(CheckKind::Judge).score().is_some());
        assert_eq!(
            build(CheckKind::Dag).detail,
            written.as_object().cloned().unwrap()
        );
    }

    #[test]
    fn null_is_empty_and_other_values_are_kept() {
        assert!(Evidence::read(CheckKind::Contains, Value::Null).is_empty());
        let e = Evidence::read(CheckKind::Contains, json!("raw text"));
        assert_eq!(
            serde_json::to_value(&e).unwrap(),
            json!({"value": "raw text"})
        );
    }
}
