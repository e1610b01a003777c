//! Tests of the `reactive` and `dag` panels.
#![allow(clippy::unwrap_used)]

use std::sync::Arc;

use gavel_core::Status;
use gavel_models::{ChatModel, ChatRequest, ChatResponse, ModelError};
use serde_json::json;

use super::tests::{Slow, prompt, scored};
use crate::judge::testing::{Models, Scripted, reply};
use crate::testing::{case, compile, compile_err, transcript, turn};

/// A choice answer.
fn answer(answer: serde_json::Value) -> Result<ChatResponse, ModelError> {
    reply(&json!({"reasoning": "because", "answer": answer}).to_string())
}

fn is_choice(r: &ChatRequest) -> bool {
    r.schema.as_ref().is_some_and(|s| s.name == "choice")
}

const REACTIVE: &str = "input: q\nchecks:\n  - type: reactive\n    specialists:\n      - {name: accuracy, criteria: Names the right house}\n      - {name: safety, criteria: Reveals no private data, when: Personal data is involved}\n      - {name: format, criteria: Is a bulleted list}\n";

#[tokio::test]
async fn reactive_routes_to_specialists_dives_deep_on_disagreement_and_synthesises() {
    let model = Scripted::with(|r| {
        let p = prompt(r);
        if is_choice(r) {
            answer(json!(["accuracy", "safety"]))
        } else if p.contains("Findings of the specialists") {
            scored(0.9, "good overall")
        } else if p.contains("Why this deep dive") {
            scored(0.8, "the data shown is public")
        } else if p.contains("Reveals no private data") {
            scored(0.2, "shows an address")
        } else {
            scored(1.0, "right house")
        }
    });
    let models = Models::new(model.clone());
    let plan = compile(&case(REACTIVE)).unwrap();
    let v = plan
        .run(&transcript(vec![turn(0, "Beach House")]), &models.runtime())
        .await
        .remove(0);
    assert_eq!(
        (v.kind.as_str(), v.status),
        ("reactive", Status::Pass),
        "{v:#?}"
    );
    assert_eq!(v.score, Some(0.9));
    assert_eq!(
        v.evidence.to_json()["routed_to"],
        json!(["accuracy", "safety"])
    );
    assert_eq!(v.evidence.to_json()["deep_dive"], true);
    let steps = v.evidence.detail["steps"].as_array().unwrap();
    let kinds: Vec<&str> = steps.iter().map(|s| s["step"].as_str().unwrap()).collect();
    assert_eq!(
        kinds,
        [
            "router",
            "specialist",
            "specialist",
            "deep_dive",
            "synthesis"
        ],
        "{v:#?}"
    );
    assert_eq!(steps[0]["answer"], json!(["accuracy", "safety"]));
    assert_eq!(steps[2]["name"], "safety");
    assert!(
        steps[3]["because"][0]
            .as_str()
            .unwrap()
            .contains("disagree")
    );
    let requests = model.requests();
    assert_eq!(requests.len(), 5, "format was never asked");
    assert!(prompt(&requests[0]).contains("safety: Personal data is involved"));
    assert!(prompt(&requests[4]).contains("- deep dive: pass (score 0.80)"));
    assert!(
        (v.cost_usd.unwrap() - 0.005).abs() < 1e-9,
        "{:?}",
        v.cost_usd
    );

    // Specialists that agree, far from their thresholds: no deep dive.
    let calm = Scripted::with(|r| {
        if is_choice(r) {
            answer(json!(["format"]))
        } else {
            scored(1.0, "fine")
        }
    });
    let models = Models::new(calm.clone());
    let v = plan
        .run(&transcript(vec![turn(0, "Beach House")]), &models.runtime())
        .await
        .remove(0);
    assert_eq!(v.status, Status::Pass, "{v:#?}");
    assert_eq!(v.evidence.to_json()["deep_dive"], false);
    assert_eq!(calm.requests().len(), 3, "router, format, synthesis");

    // `always` adds a specialist the router did not pick.
    let always = compile(&case(&REACTIVE.replace(
        "    specialists:",
        "    always: [accuracy]\n    specialists:",
    )))
    .unwrap();
    let models = Models::new(calm.clone());
    let v = always
        .run(&transcript(vec![turn(0, "Beach House")]), &models.runtime())
        .await
        .remove(0);
    assert_eq!(
        v.evidence.to_json()["routed_to"],
        json!(["accuracy", "format"]),
        "{v:#?}"
    );

    // A specialist next to its threshold is unsure: the deep dive runs.
    let unsure = Scripted::with(|r| {
        if is_choice(r) {
            answer(json!(["format"]))
        } else if prompt(r).contains("Why this deep dive") {
            scored(0.0, "not a list")
        } else if prompt(r).contains("Findings of the specialists") {
            scored(0.1, "not a list")
        } else {
            scored(0.75, "almost")
        }
    });
    let models = Models::new(unsure.clone());
    let v = plan
        .run(&transcript(vec![turn(0, "Beach House")]), &models.runtime())
        .await
        .remove(0);
    assert_eq!(v.status, Status::Fail, "{v:#?}");
    assert!(v.reason.contains("`format` is unsure"), "{}", v.reason);
}

#[tokio::test]
async fn a_reactive_panel_whose_router_fails_is_an_error_with_the_router_record() {
    let model = Scripted::with(|r| {
        if is_choice(r) {
            answer(json!(["nobody"]))
        } else {
            scored(1.0, "fine")
        }
    });
    let models = Models::new(model.clone());
    let v = compile(&case(REACTIVE))
        .unwrap()
        .run(&transcript(vec![turn(0, "Beach House")]), &models.runtime())
        .await
        .remove(0);
    assert_eq!(v.status, Status::Error, "{v:#?}");
    assert!(
        v.reason.starts_with("no verdict from the router"),
        "{}",
        v.reason
    );
    assert_eq!(v.evidence.to_json()["steps"][0]["evidence"]["attempts"], 3);
    assert_eq!(model.requests().len(), 3, "only the router was asked");
}

const DAG: &str = "input: q
checks:
  - type: dag
    nodes:
      - {name: summary, task: List the houses the answer names., next: names-house}
      - {name: names-house, binary: Does the answer name a house?, yes: quality, no: missing}
      - name: quality
        choose: How complete is the answer?
        options: {complete: grade, partial: {to: grade, weight: 0.5}, wrong: bad}
      - {name: grade, score: Names the right house, branches: [{min: 0.8, next: good}, {next: bad}]}
      - {name: good, verdict: pass}
      - {name: bad, verdict: fail}
      - {name: missing, verdict: fail, value: 0.1}
";

/// Answers the dag's questions: `names` for the binary node, `grade` for the
/// choose node.
fn dag_model(names: &'static str, grade: &'static str) -> Arc<Scripted> {
    Scripted::with(move |r| {
        let p = prompt(r);
        if p.contains("List the houses") {
            answer(json!("Beach House"))
        } else if p.contains("Does the answer name") {
            answer(json!(names))
        } else if p.contains("How complete") {
            answer(json!(grade))
        } else {
            scored(0.9, "right house")
        }
    })
}

#[tokio::test]
async fn a_dag_walks_its_graph_and_stores_the_path() {
    let plan = compile(&case(DAG)).unwrap();
    let model = dag_model("yes", "partial");
    let models = Models::new(model.clone());
    let v = plan
        .run(&transcript(vec![turn(0, "Beach House")]), &models.runtime())
        .await
        .remove(0);
    assert_eq!((v.kind.as_str(), v.status), ("dag", Status::Pass), "{v:#?}");
    assert_eq!(
        v.evidence.to_json()["nodes"],
        json!(["summary", "names-house", "quality", "grade", "good"])
    );
    assert_eq!(v.score, Some(0.5), "the partial edge weighs 0.5");
    let path = v.evidence.detail["path"].as_array().unwrap();
    assert_eq!(path[1]["answer"], json!(["yes"]));
    assert_eq!(path[2]["weight"], 0.5);
    assert_eq!(path[3]["score"], 0.9);
    let requests = model.requests();
    assert_eq!(requests.len(), 4);
    assert!(
        prompt(&requests[1]).contains("- summary: Beach House"),
        "later nodes see the task's text: {}",
        prompt(&requests[1])
    );
    assert!(prompt(&requests[3]).contains("- quality: partial"));
    assert!(
        prompt(&requests[2]).contains("- complete\\n- partial\\n- wrong"),
        "options by name: {}",
        prompt(&requests[2])
    );

    let models = Models::new(dag_model("no", "complete"));
    let v = plan
        .run(&transcript(vec![turn(0, "nothing")]), &models.runtime())
        .await
        .remove(0);
    assert_eq!(v.status, Status::Fail, "{v:#?}");
    assert_eq!(
        v.evidence.to_json()["nodes"],
        json!(["summary", "names-house", "missing"])
    );
    assert_eq!(v.score, Some(0.1));

    let models = Models::new(dag_model("yes", "wrong"));
    let v = plan
        .run(&transcript(vec![turn(0, "Beach House")]), &models.runtime())
        .await
        .remove(0);
    assert_eq!(v.evidence.to_json()["leaf"], "bad", "{v:#?}");
}

#[tokio::test]
async fn reactive_and_dag_panels_past_their_timeout_keep_what_was_done() {
    let slow: Arc<dyn ChatModel> = Arc::new(Slow("openai:slow".parse().unwrap()));
    let models =
        move |_: Option<&str>| -> Result<Arc<dyn ChatModel>, ModelError> { Ok(slow.clone()) };
    for (suite, key) in [(REACTIVE, "steps"), (DAG, "path")] {
        let v = compile(&case(&format!("{suite}    timeout_ms: 50\n")))
            .unwrap()
            .run(
                &transcript(vec![turn(0, "Beach House")]),
                &crate::JudgeRuntime::new(&models),
            )
            .await
            .remove(0);
        assert_eq!(v.status, Status::Error, "{v:#?}");
        assert!(v.reason.contains("timed out after 50 ms"), "{}", v.reason);
        assert_eq!(v.evidence.to_json()["timed_out"], true);
        assert!(v.evidence.to_json()[key].is_array(), "{v:#?}");
    }
}

#[test]
fn reactive_and_dag_errors_name_the_node_or_field() {
    let r = |specialists: &str| {
        compile_err(&format!(
            "input: q\nchecks:\n  - type: reactive\n    specialists: {specialists}\n"
        ))
    };
    let e = r("[]");
    assert!(
        e.contains("checks[0].specialists: a reactive panel needs at least one"),
        "{e}"
    );
    let e = r("[{name: a, criteria: x}, {name: a, criteria: y}]");
    assert!(
        e.contains("checks[0].specialists[1].name: specialist name `a` is used twice"),
        "{e}"
    );
    let e = compile_err(
        "input: q\nchecks:\n  - type: reactive\n    always: [safety]\n    specialists: [{name: a, criteria: x}]\n",
    );
    assert!(
        e.contains("checks[0].always[0]: `safety` is not a specialist (specialists: a)"),
        "{e}"
    );
    let e = r("[{name: a, criteria: x, model: nope}]");
    assert!(e.contains("checks[0].specialists[0].model"), "{e}");
    let e = compile_err(
        "input: q\nchecks:\n  - type: reactive\n    max_spread: 2\n    specialists: [{name: a, criteria: x}]\n",
    );
    assert!(
        e.contains("checks[0].max_spread: max_spread 2 must be between 0 and 1"),
        "{e}"
    );

    let d = |nodes: &str| {
        compile_err(&format!(
            "input: q\nchecks:\n  - type: dag\n    nodes:\n{nodes}"
        ))
    };
    let e = d("      - {name: a, binary: q, yes: b, no: c}\n      - {name: b, verdict: pass}\n");
    assert!(
        e.contains(
            "checks[0].nodes[0].no: node `a` leads to `c`, which is not a node (nodes: a, b)"
        ),
        "{e}"
    );
    let e = d(
        "      - {name: a, binary: q, yes: b, no: c}\n      - {name: b, task: t, next: a}\n      - {name: c, verdict: fail}\n",
    );
    assert!(
        e.contains("checks[0].nodes[1]: node `b` closes a cycle: a → b → a"),
        "{e}"
    );
    let e = d("      - {name: a, verdict: pass}\n      - {name: b, verdict: fail}\n");
    assert!(
        e.contains("checks[0].nodes[1]: node `b` cannot be reached from the start `a`"),
        "{e}"
    );
    let e = d("      - {name: a, task: t, verdict: pass}\n");
    assert!(
        e.contains("checks[0].nodes[0]: node `a` needs exactly one of"),
        "{e}"
    );
    let e = d("      - {name: a, verdict: pass, yes: b}\n");
    assert!(
        e.contains("checks[0].nodes[0].yes: node `a` is a `verdict` node, which takes no `yes`"),
        "{e}"
    );
    let e = d("      - {name: a, verdict: error}\n");
    assert!(e.contains("checks[0].nodes[0].verdict"), "{e}");
    let e = d(
        "      - {name: a, score: s, branches: [{min: 0.5, next: b}, {min: 0.2, next: b}]}\n      - {name: b, verdict: pass}\n",
    );
    assert!(
        e.contains("checks[0].nodes[0].branches[1].min: node `a`: the last branch"),
        "{e}"
    );
    let e = d(
        "      - {name: a, choose: q, options: {x: {to: b, weight: 1.5}, y: b}}\n      - {name: b, verdict: pass}\n",
    );
    assert!(e.contains("checks[0].nodes[0].options.x.weight"), "{e}");
    let e = compile_err(
        "input: q\nchecks:\n  - type: dag\n    max_depth: 2\n    nodes:\n      - {name: a, task: t, next: b}\n      - {name: b, task: t, next: c}\n      - {name: c, verdict: pass}\n",
    );
    assert!(
        e.contains(
            "checks[0].max_depth: the longest path from `a` has 3 nodes, more than max_depth 2"
        ),
        "{e}"
    );
}
