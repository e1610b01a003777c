//! Conversions of promptfoo configs written in promptfoo's documented format:
//! each converted suite loads with gavel's loader and compiles its checks.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};

use gavel_core::{CheckSpec, OneOrMany, Suite, TargetSpec};
use gavel_promptfoo::{Conversion, convert};

fn fixture(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(rel)
}

/// Converts, then loads and compiles the suite as `gavel validate` would.
fn converted(rel: &str) -> (Conversion, Suite) {
    let conv = convert(&[fixture(rel)]).unwrap_or_else(|e| panic!("{e}"));
    let suite = gavel_core::load::parse_suite_str(&conv.yaml, Path::new("suite.yaml"))
        .unwrap_or_else(|e| panic!("{e:?}\n{}", conv.yaml));
    for case in &suite.cases {
        gavel_checks::compile(case, &suite.judge)
            .unwrap_or_else(|e| panic!("{}: {e}\n{}", case.id, conv.yaml));
    }
    (conv, suite)
}

fn case<'a>(suite: &'a Suite, id: &str) -> &'a gavel_core::Case {
    suite.cases.iter().find(|c| c.id == id).unwrap_or_else(|| {
        panic!(
            "no case {id}: {:?}",
            suite.cases.iter().map(|c| &c.id).collect::<Vec<_>>()
        )
    })
}

#[test]
fn prompts_times_providers_make_cases_and_targets() {
    let (conv, suite) = converted("matrix/promptfooconfig.yaml");
    // 4 prompts (inline, two `---` parts of pair.txt, chat JSON) × 3 var sets.
    assert_eq!(suite.cases.len(), 12);
    assert_eq!(conv.cases, 12);
    let names: Vec<&str> = suite.targets.keys().map(String::as_str).collect();
    assert_eq!(
        names,
        [
            "agent",
            "claude",
            "claude#4",
            "local",
            "local#4",
            "openai:gpt-5-mini",
            "openai:gpt-5-mini#4"
        ]
    );
    let TargetSpec::Chat(claude) = &suite.targets["claude"] else {
        panic!()
    };
    assert_eq!(claude.model, "anthropic:claude-sonnet-4-5");
    assert_eq!(
        (claude.temperature, claude.max_tokens),
        (Some(0.2), Some(300))
    );
    let TargetSpec::Chat(local) = &suite.targets["local#4"] else {
        panic!()
    };
    assert_eq!(
        local.model,
        "openai-compatible:llama3@http://127.0.0.1:8080/v1"
    );
    assert_eq!(
        local.system.as_deref(),
        Some("You are a travel agent. The user is in {{ city }}.")
    );
    let TargetSpec::Http(agent) = &suite.targets["agent"] else {
        panic!()
    };
    assert_eq!(agent.response.output, "/reply/text");
    assert_eq!(agent.headers["Authorization"], "Bearer ${AGENT_TOKEN}");
    assert_eq!(
        agent.body,
        Some(serde_json::json!({"message": "{{ message }}", "city": "{{ context.city }}"}))
    );

    let inline = case(&suite, "capital-city-p1");
    assert_eq!(
        inline.rounds[0].input,
        "Answer briefly: What is the capital of France?"
    );
    assert_eq!(
        inline.targets,
        ["openai:gpt-5-mini", "claude", "local", "agent"]
    );
    let part = case(&suite, "capital-city-p2");
    assert_eq!(
        part.rounds[0].input,
        "You are a travel guide in Paris.\nQuestion: What is the capital of France?"
    );
    assert_eq!(
        case(&suite, "capital-city-p3").rounds[0].input,
        "Reply in one word: What is the capital of France?"
    );
    let chat = case(&suite, "capital-city-p4");
    assert_eq!(chat.rounds[0].input, "What is the capital of France?");
    assert_eq!(
        chat.targets,
        ["openai:gpt-5-mini#4", "claude#4", "local#4", "agent"]
    );
    assert_eq!(
        chat.context.as_ref().unwrap()["city"],
        "Paris",
        "the system prompt's vars"
    );
    assert!(chat.tags.contains(&"prompt-4".to_owned()));
    // Array vars expand: one case per value.
    assert_eq!(
        case(&suite, "structured-answer-1-p1").rounds[0].input,
        "Answer briefly: Give the capital of Spain as JSON"
    );
    assert_eq!(
        case(&suite, "structured-answer-2-p1").rounds[0].input,
        "Answer briefly: Give the capital of Italy as JSON"
    );
    assert!(
        !conv.yaml.contains("sk-not-a-real-key"),
        "keys are never copied"
    );
}

#[test]
fn every_mapped_assertion_becomes_its_check() {
    let (_, suite) = converted("matrix/promptfooconfig.yaml");
    let c = case(&suite, "capital-city-p1");
    let kinds: Vec<&str> = c.checks.iter().map(|c| c.kind().as_str()).collect();
    assert_eq!(
        kinds,
        [
            "latency", // defaultTest
            "equals",
            "regex",
            "contains",
            "regex",
            "icontains",
            "not-contains",
            "contains",
            "icontains",
            "contains-any",
            "regex",
            "icontains-any",
            "not-contains",
            "regex",
            "regex",
            "regex",
            "regex",
            "similar",
            "judge",
            "g-eval",
            "g-eval",
            "closed-qa",
            "factuality",
            "answer-relevance",
            "context-recall",
            "context-faithfulness",
            "script",
            "script",
            "cost",
            "select-best",
            "contains", // assert-set child
            "contains", // weighted: mapped, weight listed
        ]
    );
    assert_eq!(
        c.checks[1],
        CheckSpec::Equals {
            value: Some("Paris".into()),
            ignore_case: false,
            trim: false
        }
    );
    assert_eq!(
        c.checks[2],
        CheckSpec::Regex {
            pattern: r"\ALondon\z".into(),
            negate: true
        }
    );
    assert_eq!(
        c.checks[3],
        CheckSpec::Contains {
            value: OneOrMany::One("Paris".into())
        },
        "vars rendered"
    );
    assert_eq!(
        c.checks[9],
        CheckSpec::ContainsAny {
            value: OneOrMany::Many(vec!["Paris".into(), "Lutetia".into()])
        }
    );
    assert_eq!(
        c.checks[17],
        CheckSpec::Similar {
            value: Some(OneOrMany::One("The capital is Paris".into())),
            threshold: Some(0.6)
        }
    );
    let CheckSpec::GEval(g) = &c.checks[19] else {
        panic!("{:?}", c.checks[19])
    };
    assert_eq!(
        (g.criteria.as_deref(), g.threshold, g.model.as_deref()),
        (Some("Is concise"), Some(0.7), None)
    );
    let CheckSpec::Factuality(f) = &c.checks[22] else {
        panic!("{:?}", c.checks[22])
    };
    assert_eq!(
        f.reference,
        Some("Paris is the capital of France".into()),
        "the value is the reference"
    );
    assert_eq!(
        c.retrieved_context,
        Some("Paris has been the capital of France since 987.".into()),
        "vars.context is the RAG metrics' retrieved context"
    );
    assert_eq!(c.checks[28], CheckSpec::Cost { max_usd: 0.01 });
    assert_eq!(
        c.checks[29],
        CheckSpec::SelectBest {
            criteria: Some("Most accurate".into()),
            among: Default::default(),
            model: None
        },
        "select-best compares the case's targets"
    );
    let CheckSpec::Script(js) = &c.checks[26] else {
        panic!("{:?}", c.checks[26])
    };
    assert_eq!(js.command[0], "node");
    assert_eq!(
        js.command[3..],
        ["inline", "output.length < 100", "", "output.trim()"],
        "how, code, no threshold, then the test's transform"
    );
    let CheckSpec::Script(py) = &c.checks[27] else {
        panic!("{:?}", c.checks[27])
    };
    assert_eq!(py.command[..2], ["python3", "-c"]);
    assert!(py.command[4].ends_with("check.py"), "{:?}", py.command);
    assert_eq!(
        suite.judge.model.as_deref(),
        Some("openai:gpt-5-mini"),
        "defaultTest.options.provider"
    );
    assert_eq!(c.threshold, Some(0.8));
    assert_eq!(
        c.tags,
        ["accuracy", "quality", "prompt-1"],
        "metric names become tags"
    );
    let json = case(&suite, "structured-answer-1-p1");
    let kinds: Vec<&str> = json.checks.iter().map(|c| c.kind().as_str()).collect();
    assert_eq!(kinds, ["latency", "is-json", "json-schema"]);
}

#[test]
fn unmapped_items_name_file_and_line_and_stay_as_comments() {
    let (conv, _) = converted("matrix/promptfooconfig.yaml");
    let config = fixture("matrix/promptfooconfig.yaml").display().to_string();
    let expected = [
        ("provider config 'apiKey'", 19),
        ("provider 'exec:python agent.py'", 30),
        ("options.transform", 39),
        ("select-best across prompts", 103),
        ("assert type 'levenshtein'", 105),
        ("assert type 'contains-json'", 108),
        ("assert type 'webhook'", 113),
        ("assert type 'assert-set' with a threshold", 115),
        ("assert weight", 122),
        ("assert field 'transform' of 'contains'", 123),
        ("assert type 'frobnicate'", 133),
    ];
    for (what, line) in expected {
        let at = format!("{config}:{line}");
        let found = conv.unmapped.iter().find(|u| u.what == what);
        assert_eq!(
            found.map(|u| u.at.as_str()),
            Some(at.as_str()),
            "{what}: {:#?}",
            conv.unmapped
        );
        let comment = format!("# gavel import: unmapped {what} at {at}");
        assert!(conv.yaml.contains(&comment), "{comment}\n{}", conv.yaml);
    }
    let system = conv
        .unmapped
        .iter()
        .find(|u| u.what == "system message for target 'agent'")
        .unwrap();
    assert!(system.at.ends_with("prompts/chat.json:1"), "{}", system.at);
    assert_eq!(
        conv.unmapped.len(),
        expected.len() + 1,
        "each listed once: {:#?}",
        conv.unmapped
    );
}

#[test]
fn vars_files_csv_json_yaml_and_globs() {
    let (conv, suite) = converted("data/promptfooconfig.yaml");
    let ids: Vec<&str> = suite.cases.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(
        ids,
        [
            "arithmetic",
            "promptfooconfig-2",
            "promptfooconfig-3", // CSV rows
            "promptfooconfig-4", // JSON file
            "from-glob-a",
            "from-glob-b",       // YAML glob
            "promptfooconfig-7", // vars from a YAML file
            "promptfooconfig-8", // a var from a text file
        ]
    );
    let row = case(&suite, "promptfooconfig-2");
    assert_eq!(row.rounds[0].input, "Q: Spell \"cat\"");
    assert_eq!(
        row.checks,
        [CheckSpec::Icontains {
            value: OneOrMany::One("CAT".into())
        }]
    );
    let kinds: Vec<&str> = case(&suite, "promptfooconfig-3")
        .checks
        .iter()
        .map(|c| c.kind().as_str())
        .collect();
    assert_eq!(
        kinds,
        ["equals", "judge"],
        "plain __expected is equals; grade: is a judge"
    );
    assert_eq!(
        case(&suite, "promptfooconfig-7").checks,
        [CheckSpec::Icontains {
            value: OneOrMany::One("Everest".into())
        }]
    );
    assert_eq!(
        case(&suite, "promptfooconfig-8").rounds[0].input,
        "Q: What is the longest river?\n"
    );
    let at = |what: &str| {
        conv.unmapped
            .iter()
            .find(|u| u.what == what)
            .map(|u| u.at.clone())
            .unwrap_or_default()
    };
    let kinds: Vec<&str> = case(&suite, "arithmetic")
        .checks
        .iter()
        .map(|c| c.kind().as_str())
        .collect();
    assert_eq!(
        kinds,
        ["contains", "script"],
        "a CSV `javascript:` runs as a script"
    );
    assert!(at("assert type 'moderation'").ends_with("data/more.json:4"));
    assert!(at("assert type 'perplexity'").ends_with("data/tests/b.yaml:5"));
    let TargetSpec::Chat(t) = &suite.targets["openai:chat:mock"] else {
        panic!()
    };
    assert_eq!(t.model, "openai-compatible:mock@http://127.0.0.1:9/v1");
}

/// The converted `javascript` (inline) and `python` (`file://`) assertions run
/// through their adapters and grade the answer.
#[tokio::test]
async fn javascript_and_python_assertions_run_as_scripts() {
    let (_, suite) = converted("matrix/promptfooconfig.yaml");
    let mut c = case(&suite, "capital-city-p1").clone();
    c.checks.retain(|k| matches!(k, CheckSpec::Script(_)));
    assert_eq!(c.checks.len(), 2);
    let plan = gavel_checks::compile(&c, &suite.judge).unwrap();
    let rt = gavel_checks::JudgeRuntime::new(&gavel_checks::NoJudgeModels);
    let answer = |output: &str| gavel_core::Transcript {
        session_id: "s".into(),
        turns: vec![gavel_core::Turn {
            output: output.into(),
            ..Default::default()
        }],
    };
    let statuses = |vs: Vec<gavel_core::Verdict>| -> Vec<(gavel_core::Status, String)> {
        vs.into_iter()
            .filter(|v| v.kind.as_str() == "script")
            .map(|v| (v.status, v.reason))
            .collect()
    };
    use gavel_core::Status::{Fail, Pass};
    let got = statuses(plan.run(&answer("Paris"), &rt).await);
    assert_eq!(got[0].0, Pass, "{got:?}");
    assert_eq!(got[1], (Pass, "names Paris".to_owned()), "{got:?}");
    let long = "Paris ".repeat(30);
    let got = statuses(plan.run(&answer(&long), &rt).await);
    assert_eq!(got[0].0, Fail, "output.length < 100: {got:?}");
    let got = statuses(plan.run(&answer("Rome"), &rt).await);
    assert_eq!(got[1].0, Fail, "{got:?}");
}

#[test]
fn chat_prompts_become_rounds_and_tests_are_optional() {
    let config = r#"prompts:
  - '[{"role": "user", "content": "Hi {{ name }}"}, {"role": "assistant", "content": "Hello"}, {"role": "user", "content": "Bye"}]'
providers: [openai:gpt-5-mini]
defaultTest:
  vars: {name: Ana}
  assert:
    - type: icontains
      value: bye
"#;
    let conv = gavel_promptfoo::convert_str(config, Path::new("cfg.yaml")).unwrap();
    let suite = gavel_core::load::parse_suite_str(&conv.yaml, Path::new("s.yaml")).unwrap();
    assert_eq!(suite.cases.len(), 1, "no tests: each prompt runs once");
    let c = &suite.cases[0];
    let inputs: Vec<&serde_json::Value> = c.rounds.iter().map(|r| &r.input).collect();
    assert_eq!(inputs, ["Hi Ana", "Bye"]);
    assert_eq!(conv.unmapped.len(), 1);
    assert_eq!(
        (conv.unmapped[0].what.as_str(), conv.unmapped[0].at.as_str()),
        ("assistant message", "cfg.yaml:2")
    );
}

#[test]
fn bad_configs_are_errors_with_file_and_line() {
    let missing = gavel_promptfoo::convert_str(
        "prompts: [hi]\ntests:\n  - file://nope.csv\n",
        Path::new("c.yaml"),
    );
    let e = missing.unwrap_err().to_string();
    assert!(e.starts_with("c.yaml:3: cannot read nope.csv"), "{e}");
    let syntax = gavel_promptfoo::convert_str("prompts: [hi\n", Path::new("c.yaml")).unwrap_err();
    assert!(syntax.to_string().starts_with("c.yaml:"), "{syntax}");
    let shape = gavel_promptfoo::convert_str("prompts:\n  - 3\n", Path::new("c.yaml")).unwrap_err();
    assert_eq!(
        shape.to_string(),
        "c.yaml:2: prompts[0]: expected a prompt text, `file://` path or `{raw|id, label}` object"
    );
    let many = "prompts: [x]\ntests:\n  - vars:\n      a: [1,2,3,4,5,6,7,8,9,10]\n      b: [1,2,3,4,5,6,7,8,9,10]\n      c: [1,2,3,4,5,6,7,8,9,10]\n      d: [1,2,3,4,5,6,7,8,9,10]\n      e: [1,2,3,4,5,6,7,8,9,10]\n      f: [1,2,3,4,5,6,7,8,9,10]\n";
    let e = gavel_promptfoo::convert_str(many, Path::new("c.yaml")).unwrap_err();
    assert_eq!(
        e.to_string(),
        "c.yaml:3: the tests expand to more than 100000 cases"
    );
}

#[test]
fn devices_and_fifos_are_refused_by_name_without_reading() {
    let e = convert(&[PathBuf::from("/dev/zero")])
        .unwrap_err()
        .to_string();
    assert_eq!(
        e,
        "/dev/zero: cannot read /dev/zero: not a regular file: it is a device, FIFO or socket"
    );
    // A FIFO would block the open until a writer came: it is refused before.
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("promptfooconfig.yaml");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    let e = convert(std::slice::from_ref(&fifo))
        .unwrap_err()
        .to_string();
    assert!(e.contains(": not a regular file"), "{e}");
    assert!(e.contains(&fifo.display().to_string()), "{e}");
}

#[test]
fn parity_corpus_chat_loops_filters_and_prompt_routes() {
    // `{% for %}` over `_conversation` in a chat prompt file: parsed once its
    // control flow is rendered, the system message a template per target.
    let (_, suite) = converted("parity/multiple-turn-conversation/promptfooconfig.yaml");
    assert_eq!(suite.cases.len(), 7);
    assert_eq!(suite.cases[0].rounds[0].input, "Who founded Facebook?");
    let TargetSpec::Chat(chat) = &suite.targets["openai:gpt-4.1-mini#1"] else {
        panic!("{:?}", suite.targets.keys())
    };
    assert_eq!(chat.system.as_deref(), Some("{{ system_message }}"));

    // promptfoo's `load` filter renders (it left the whole prompt unrendered).
    let (conv, suite) = converted("parity/simple-csv/promptfooconfig.yaml");
    let input = suite.cases[0].rounds[0].input.as_str().unwrap();
    assert!(input.contains("- Tone: formal\n- Length: brief"), "{input}");
    assert!(
        !conv.unmapped.iter().any(|u| u.what == "prompt template"),
        "{:?}",
        conv.unmapped
    );

    // A provider's `prompts:` keeps it to the prompts it names.
    let (_, suite) = converted("parity/config-prompts-per-model/promptfooconfig.yaml");
    assert_eq!(suite.cases.len(), 32);
    assert!(suite.cases[0].targets.is_empty() || suite.cases[0].targets.len() == 2);
    assert_eq!(suite.cases[1].targets, ["openai:chat:gpt-5.4-mini"]);
}

#[test]
fn weights_thresholds_and_messages_prompts_follow_promptfoo() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("system.txt"), "Be brief about {{ topic }}.").unwrap();
    let config = r#"prompts:
  - label: chat
    messages:
      - role: system
        content: file://system.txt
      - role: user
        content: 'Tell me about {{ topic }}'
providers: [openai:gpt-5-mini]
tests:
  - vars: {topic: tea}
    threshold: 0
    assert:
      - type: contains
        value: tea
      - type: icontains
        value: never
        weight: 0
      - type: javascript
        value: output.length;
        weight: 3
"#;
    let path = dir.path().join("promptfooconfig.yaml");
    std::fs::write(&path, config).unwrap();
    let conv = convert(&[path]).unwrap_or_else(|e| panic!("{e}"));
    let suite = gavel_core::load::parse_suite_str(&conv.yaml, Path::new("s.yaml")).unwrap();
    let c = &suite.cases[0];
    assert_eq!(c.rounds[0].input, "Tell me about tea");
    let TargetSpec::Chat(chat) = &suite.targets["openai:gpt-5-mini#1"] else {
        panic!("{:?}", suite.targets.keys())
    };
    assert_eq!(chat.system.as_deref(), Some("Be brief about {{ topic }}."));
    // Threshold 0 is none in promptfoo; weight 0 never gates (left out, noted);
    // other weights need no note when every assertion must pass.
    assert_eq!(c.threshold, None);
    assert_eq!(c.checks.len(), 2, "{:?}", c.checks);
    let notes: Vec<&str> = conv.unmapped.iter().map(|u| u.what.as_str()).collect();
    assert_eq!(notes, ["assert type 'icontains' with weight 0"]);
}

#[tokio::test]
async fn script_results_follow_promptfoos_rules() {
    let dir = tempfile::tempdir().unwrap();
    let config = r#"prompts: ['{{ q }}']
providers: [openai:gpt-5-mini]
tests:
  - vars: {q: hi, word: Paris}
    options:
      transform: JSON.parse(output)
    assert:
      - type: javascript
        value: Math.max(0, 1 - output.text.length / 10);
      - type: javascript
        value: "const t = output.text; t.includes('{{ word }}');"
      - type: javascript
        value: output.text.length / 100
        threshold: 0.2
      - type: javascript
        value: output.missing.field
  - vars: {q: again}
    assert:
      - type: python
        value: len(output) - 20
      - type: python
        value: len(output) - 2
"#;
    let path = dir.path().join("promptfooconfig.yaml");
    std::fs::write(&path, config).unwrap();
    let conv = convert(&[path]).unwrap_or_else(|e| panic!("{e}"));
    let suite = gavel_core::load::parse_suite_str(&conv.yaml, Path::new("s.yaml")).unwrap();
    let rt = gavel_checks::JudgeRuntime::new(&gavel_checks::NoJudgeModels);
    let answer = gavel_core::Transcript {
        session_id: "s".into(),
        turns: vec![gavel_core::Turn {
            output: r#"{"text": "Paris!"}"#.into(),
            ..Default::default()
        }],
    };
    let mut got = Vec::new();
    for case in &suite.cases {
        let plan = gavel_checks::compile(case, &suite.judge).unwrap();
        let statuses: Vec<gavel_core::Status> = plan
            .run(&answer, &rt)
            .await
            .into_iter()
            .map(|v| v.status)
            .collect();
        got.push(statuses);
    }
    use gavel_core::Status::{Fail, Pass};
    // After the test's transform: 0.4 > 0 passes; a statement list returns
    // its last expression; 0.06 is under the threshold; a throw fails (not an
    // error). Python numbers: 18 - 20 < 0 fails, 16 > 0 passes.
    assert_eq!(got, [vec![Pass, Pass, Fail, Fail], vec![Fail, Pass]]);
}

#[test]
fn select_best_across_prompts_makes_prompt_times_provider_targets_of_one_case() {
    let (conv, suite) = converted("parity/eval-select-best/promptfooconfig.yaml");
    let ids: Vec<&str> = suite.cases.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids, ["promptfooconfig-1", "promptfooconfig-2"]);
    let names: Vec<&str> = suite.targets.keys().map(String::as_str).collect();
    assert_eq!(
        names,
        ["openai:chat:gpt-5.4-mini#1", "openai:chat:gpt-5.4-mini#2"]
    );
    let user = |name: &str| match &suite.targets[name] {
        TargetSpec::Chat(chat) => (chat.model.clone(), chat.system.clone(), chat.user.clone()),
        other => panic!("{other:?}"),
    };
    assert_eq!(
        user("openai:chat:gpt-5.4-mini#1"),
        (
            "openai:gpt-5.4-mini".to_owned(),
            None,
            Some("Write a tweet about {{topic}}".to_owned())
        )
    );
    assert_eq!(
        user("openai:chat:gpt-5.4-mini#2").2.as_deref(),
        Some("Write a very concise, funny tweet about {{topic}}")
    );
    let c = &suite.cases[0];
    assert_eq!(c.targets, names);
    assert_eq!(c.context, Some(serde_json::json!({"topic": "bananas"})));
    assert_eq!(c.rounds[0].input, serde_json::json!({"topic": "bananas"}));
    assert!(c.tags.is_empty(), "{:?}", c.tags);
    assert!(
        matches!(&c.checks[..], [CheckSpec::SelectBest { criteria: Some(k), .. }] if k == "choose the funniest tweet"),
        "{:?}",
        c.checks
    );
    assert!(conv.unmapped.is_empty(), "{:?}", conv.unmapped);
}

#[test]
fn select_best_across_prompts_keeps_system_messages_and_falls_back_with_a_note() {
    // Chat prompts: the system message goes with the user template; a provider
    // running one prompt only makes that prompt's target alone.
    let config = r#"prompts:
  - '[{"role": "system", "content": "Be {{ tone }}."}, {"role": "user", "content": "About {{ topic }}"}]'
  - id: 'Short: {{ topic }}'
    label: short
providers:
  - openai:gpt-5-mini
  - id: anthropic:claude-sonnet-4-5
    label: claude
    prompts: [short]
tests:
  - vars: {topic: tea, tone: calm}
    assert:
      - type: contains
        value: tea
  - vars: {topic: cake, tone: warm}
    assert:
      - $ref: '#/assertionTemplates/best'
assertionTemplates:
  best: {type: select-best, value: the best}
"#;
    let conv = gavel_promptfoo::convert_str(config, Path::new("cfg.yaml")).unwrap();
    let suite = gavel_core::load::parse_suite_str(&conv.yaml, Path::new("s.yaml")).unwrap();
    assert_eq!(suite.cases.len(), 2, "one case per test");
    let names: Vec<&str> = suite.targets.keys().map(String::as_str).collect();
    assert_eq!(
        names,
        ["claude#2", "openai:gpt-5-mini#1", "openai:gpt-5-mini#2"]
    );
    let TargetSpec::Chat(first) = &suite.targets["openai:gpt-5-mini#1"] else {
        panic!()
    };
    assert_eq!(first.system.as_deref(), Some("Be {{ tone }}."));
    assert_eq!(first.user.as_deref(), Some("About {{ topic }}"));
    assert_eq!(
        suite.cases[1].targets,
        ["openai:gpt-5-mini#1", "openai:gpt-5-mini#2", "claude#2"]
    );
    assert_eq!(suite.cases[0].checks.len(), 1, "the contains check");

    // A prefix cannot be part of a target's template: per-prompt cases, noted.
    let prefixed = config.replace(
        "  - vars: {topic: cake, tone: warm}\n",
        "  - vars: {topic: cake, tone: warm}\n    options: {prefix: 'Note: '}\n",
    );
    let conv = gavel_promptfoo::convert_str(&prefixed, Path::new("cfg.yaml")).unwrap();
    let suite = gavel_core::load::parse_suite_str(&conv.yaml, Path::new("s.yaml")).unwrap();
    assert_eq!(suite.cases.len(), 4, "test × prompt");
    let note = conv
        .unmapped
        .iter()
        .find(|u| u.what == "select-best across prompts")
        .unwrap_or_else(|| panic!("{:?}", conv.unmapped));
    assert_eq!(note.at, "cfg.yaml:20");
    assert!(
        note.why.starts_with("a test has a prefix or suffix"),
        "{}",
        note.why
    );

    // A var a prompt names that a test lacks renders empty in promptfoo but is
    // an error in a target's template: per-prompt cases too.
    let missing = config.replace("{topic: cake, tone: warm}", "{tone: warm}");
    let conv = gavel_promptfoo::convert_str(&missing, Path::new("cfg.yaml")).unwrap();
    assert_eq!(conv.cases, 4);
    assert!(
        conv.unmapped
            .iter()
            .any(|u| u.what == "select-best across prompts")
    );
}

#[test]
fn bare_prompt_paths_are_read_as_promptfoo_reads_them() {
    // `{path: label}` without `file://`: promptfoo reads the files.
    let (_, suite) = converted("parity/mistral-llama-comparison/promptfooconfig.yaml");
    let inputs: Vec<&serde_json::Value> = suite.cases[..2]
        .iter()
        .map(|c| &c.rounds[0].input)
        .collect();
    assert_eq!(
        inputs,
        ["<s>[INST]hello world[/INST]", "[INST] hello world [/INST]"]
    );
    assert_eq!(suite.cases[1].name, "promptfooconfig-1-p2 [llama_prompt]");
    // promptfoo answers no clarifying question: follow-ups are off.
    assert!(suite.cases.iter().all(|c| c.max_followups == Some(0)));
    // Text that only looks like a path, naming no file, stays text.
    let config = "prompts: ['Answer yes/no: {{ q }}', 'notes.txt']\nproviders: [openai:gpt-5-mini]\ntests: [{vars: {q: tea?}}]\n";
    let conv = gavel_promptfoo::convert_str(config, Path::new("cfg.yaml")).unwrap();
    let suite = gavel_core::load::parse_suite_str(&conv.yaml, Path::new("s.yaml")).unwrap();
    let inputs: Vec<&serde_json::Value> = suite.cases.iter().map(|c| &c.rounds[0].input).collect();
    assert_eq!(inputs, ["Answer yes/no: tea?", "notes.txt"]);
}
