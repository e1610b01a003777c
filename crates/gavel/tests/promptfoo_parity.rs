//! promptfoo parity, measured against promptfoo itself: every config of the
//! corpus in crates/gavel-promptfoo/tests/fixtures/parity (real configs from
//! promptfoo's examples, providers pointed at one local fake) is run by promptfoo
//! (npm, installed by scripts/setup) and, converted by `gavel import promptfoo`,
//! by gavel, both against the same deterministic fake provider. Their per-test
//! verdicts are compared: the test prints the agreement and every difference,
//! and fails under its floor or on a difference docs/PROMPTFOO.md does not list.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

#[path = "promptfoo_parity/fake.rs"]
mod fake;
mod support;

use support::{gavel_command, workspace};

/// The least share of verdicts that must agree: the figure reached (522 of 525,
/// 99.4%), kept from slipping; every difference left is listed in
/// docs/PROMPTFOO.md's known differences.
const MIN_AGREEMENT: f64 = 0.994;
/// Configs run at once (each tool runs its own tests 4 at a time).
const PARALLEL: usize = 3;
/// The API key both tools send the fake (never a real one).
const KEY: &str = "sk-parity-fake";

/// One verdict: pass, fail, error or skipped (gavel's words).
type Verdict = String;

/// A provider's name as both tools report it: promptfoo reports
/// `openai:chat:MODEL` as `openai:MODEL`.
fn provider_name(name: &str) -> String {
    name.replacen("openai:chat:", "openai:", 1)
}

/// A promptfoo row's place: test index, prompt index, provider name.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Row {
    test: u64,
    prompt: u64,
    provider: String,
}

/// What one config gave each tool.
struct Measured {
    name: String,
    promptfoo: BTreeMap<Row, Verdict>,
    /// gavel's verdicts by (case id, target as named in the suite).
    gavel: BTreeMap<(String, String), Verdict>,
    /// The converted suite's case ids, in order.
    cases: Vec<String>,
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn corpus() -> Vec<PathBuf> {
    let root = workspace().join("crates/gavel-promptfoo/tests/fixtures/parity");
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("promptfooconfig.yaml").is_file())
        .collect();
    dirs.sort();
    dirs
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// Neither tool inherits credentials or endpoints; both get the fake's.
fn provider_env(cmd: &mut Command, base: &str) {
    for var in [
        "OPENAI_API_KEY",
        "OPENAI_BASE_URL",
        "OPENAI_API_HOST",
        "OPENAI_API_BASE_URL",
        "ANTHROPIC_API_KEY",
        "GEMINI_API_KEY",
        "GOOGLE_API_KEY",
        "AZURE_OPENAI_API_KEY",
    ] {
        cmd.env_remove(var);
    }
    cmd.env("OPENAI_API_KEY", KEY).env("OPENAI_BASE_URL", base);
}

fn promptfoo(bin: &Path, dir: &Path, base: &str) -> BTreeMap<Row, Verdict> {
    let mut cmd = Command::new("node");
    cmd.arg(bin)
        .args(["eval", "-c", "promptfooconfig.yaml", "-o", "promptfoo.json"])
        .args(["--no-cache", "--no-table", "--no-progress-bar"])
        .args(["--max-concurrency", "4"])
        .current_dir(dir);
    provider_env(&mut cmd, base);
    // promptfoo must not phone home: no telemetry, update check, sharing or
    // remote generation; its database and cache stay in the temp dir.
    cmd.env("PROMPTFOO_DISABLE_TELEMETRY", "1")
        .env("PROMPTFOO_DISABLE_UPDATE", "1")
        .env("PROMPTFOO_DISABLE_SHARING", "1")
        .env("PROMPTFOO_DISABLE_REMOTE_GENERATION", "true")
        .env("PROMPTFOO_DISABLE_REDTEAM_REMOTE_GENERATION", "true")
        .env("PROMPTFOO_CACHE_ENABLED", "false")
        .env("PROMPTFOO_CONFIG_DIR", dir.join(".promptfoo-home"))
        .env("PROMPTFOO_SELF_HOSTED", "1")
        .env("CI", "1");
    let out = cmd.output().unwrap();
    let report = dir.join("promptfoo.json");
    assert!(
        report.is_file(),
        "promptfoo wrote no results for {}:\n{}\n{}",
        dir.display(),
        text(&out.stdout),
        text(&out.stderr)
    );
    let json: Value = serde_json::from_str(&std::fs::read_to_string(report).unwrap()).unwrap();
    // `promptIdx` numbers the columns (prompt × provider); a column's prompt is
    // the index of its label among the labels in order of appearance.
    let mut labels: Vec<String> = Vec::new();
    let prompt_of: Vec<u64> = json["results"]["prompts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let label = c["label"]
                .as_str()
                .or(c["raw"].as_str())
                .unwrap_or_default();
            let i = labels.iter().position(|l| l == label).unwrap_or_else(|| {
                labels.push(label.to_owned());
                labels.len() - 1
            });
            i as u64
        })
        .collect();
    json["results"]["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let provider = match r["provider"]["label"].as_str() {
                Some(label) if !label.is_empty() => label.to_owned(),
                _ => provider_name(r["provider"]["id"].as_str().unwrap_or_default()),
            };
            let verdict = if r["success"] == true {
                "pass"
            } else if r["failureReason"] == 2 {
                "error"
            } else {
                "fail"
            };
            let row = Row {
                test: r["testIdx"].as_u64().unwrap(),
                prompt: prompt_of[r["promptIdx"].as_u64().unwrap() as usize],
                provider,
            };
            (row, verdict.to_owned())
        })
        .collect()
}

fn gavel(dir: &Path, base: &str) -> (Vec<String>, BTreeMap<(String, String), Verdict>) {
    let run = |args: &[&str]| -> Output {
        let mut cmd = gavel_command(dir);
        provider_env(&mut cmd, base);
        cmd.args(args).output().unwrap()
    };
    let out = run(&[
        "import",
        "promptfoo",
        "promptfooconfig.yaml",
        "-o",
        "suite.yaml",
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "gavel import {}: {}",
        dir.display(),
        text(&out.stderr)
    );
    let suite: Value =
        serde_saphyr::from_str(&std::fs::read_to_string(dir.join("suite.yaml")).unwrap()).unwrap();
    let cases: Vec<String> = suite["cases"]
        .as_array()
        .map(|c| {
            c.iter()
                .map(|c| c["id"].as_str().unwrap().to_owned())
                .collect()
        })
        .unwrap_or_default();
    let db = format!("sqlite://{}", dir.join("gavel.db").display());
    let out = run(&[
        "run",
        "suite.yaml",
        "--db",
        &db,
        "--quiet",
        "--jobs",
        "4",
        "-o",
        "gavel.json",
    ]);
    let report = dir.join("gavel.json");
    assert!(
        report.is_file(),
        "gavel wrote no report for {} (exit {:?}):\n{}\n{}",
        dir.display(),
        out.status.code(),
        text(&out.stdout),
        text(&out.stderr)
    );
    let json: Value = serde_json::from_str(&std::fs::read_to_string(report).unwrap()).unwrap();
    let verdicts = json["detailed_results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                (
                    r["id"].as_str().unwrap().to_owned(),
                    r["target"].as_str().unwrap().to_owned(),
                ),
                r["status"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    (cases, verdicts)
}

fn measure(bin: &Path, fixture: &Path, scratch: &Path, base: &str) -> Measured {
    let name = fixture.file_name().unwrap().to_string_lossy().into_owned();
    let pf_dir = scratch.join("promptfoo").join(&name);
    let gv_dir = scratch.join("gavel").join(&name);
    copy_dir(fixture, &pf_dir);
    copy_dir(fixture, &gv_dir);
    let promptfoo = promptfoo(bin, &pf_dir, base);
    let (cases, gavel) = gavel(&gv_dir, base);
    Measured {
        name,
        promptfoo,
        gavel,
        cases,
    }
}

/// A gavel target's provider and prompt: prompt N's own copy of a target
/// (its system prompt or, prompts as targets, its user message) is named
/// `TARGET#N`.
fn provider_and_prompt(target: &str) -> (String, Option<u64>) {
    match target.rsplit_once('#') {
        Some((t, n)) if n.parse::<u64>().is_ok() => (provider_name(t), n.parse().ok()),
        _ => (provider_name(target), None),
    }
}

/// Where promptfoo's (test, prompt) pairs sit in gavel's suite, in order: a
/// case per pair, or one case per test whose targets are prompt × provider
/// (`TARGET#N` of several N): then a slot per prompt.
fn slots(m: &Measured) -> Vec<(&String, Option<u64>)> {
    let mut out = Vec::new();
    for case in &m.cases {
        let prompts: BTreeSet<u64> = m
            .gavel
            .keys()
            .filter(|(c, _)| c == case)
            .filter_map(|(_, t)| provider_and_prompt(t).1)
            .collect();
        if prompts.len() > 1 {
            out.extend(prompts.into_iter().map(|n| (case, Some(n))));
        } else {
            out.push((case, None));
        }
    }
    out
}

/// Each promptfoo row against gavel's verdict for the same case and target:
/// promptfoo's (test, prompt) pairs in order are the suite's [`slots`] in order.
/// Returns (rows compared, differences).
fn compare(m: &Measured) -> (usize, Vec<String>) {
    let pairs: BTreeSet<(u64, u64)> = m.promptfoo.keys().map(|r| (r.test, r.prompt)).collect();
    let slot_of: BTreeMap<(u64, u64), (&String, Option<u64>)> =
        pairs.into_iter().zip(slots(m)).collect();
    let mut differences = Vec::new();
    let mut seen = BTreeSet::new();
    for (row, theirs) in &m.promptfoo {
        let key = format!(
            "`{}` test {} prompt {} `{}`",
            m.name, row.test, row.prompt, row.provider
        );
        let ours = slot_of.get(&(row.test, row.prompt)).and_then(|&(case, n)| {
            let (k, ours) = m.gavel.iter().find(|((c, t), _)| {
                let (provider, prompt) = provider_and_prompt(t);
                c == case && provider == row.provider && (n.is_none() || prompt == n)
            })?;
            seen.insert(k.clone());
            Some(ours)
        });
        match ours {
            Some(ours) if ours == theirs => {}
            Some(ours) => differences.push(format!("{key}: promptfoo {theirs}, gavel {ours}")),
            None => differences.push(format!("{key}: promptfoo {theirs}, gavel has no verdict")),
        }
    }
    let mut rows = m.promptfoo.len();
    for ((case, target), ours) in &m.gavel {
        if !seen.contains(&(case.clone(), target.clone())) {
            rows += 1;
            differences.push(format!(
                "`{}` case `{case}` `{target}`: gavel {ours}, promptfoo ran no such test",
                m.name
            ));
        }
    }
    (rows, differences)
}

/// The known-differences section of docs/PROMPTFOO.md.
fn known_differences() -> String {
    let doc = std::fs::read_to_string(workspace().join("docs/PROMPTFOO.md")).unwrap();
    let start = doc
        .find("## Known differences")
        .expect("docs/PROMPTFOO.md has a `## Known differences` section");
    let rest = &doc[start + 3..];
    let end = rest.find("\n## ").map_or(rest.len(), |e| e);
    rest[..end].to_owned()
}

#[test]
fn promptfoo_and_gavel_agree_on_the_parity_corpus() {
    let bin = workspace().join(".gavel/npm/node_modules/promptfoo/dist/src/entrypoint.js");
    let node = Command::new("node").arg("--version").output();
    if !bin.is_file() || !node.is_ok_and(|o| o.status.success()) {
        return gavel_testkit::skip(
            gavel_testkit::Need::Promptfoo,
            format!(
                "promptfoo is not installed at {} or node is missing (run scripts/setup)",
                bin.display()
            ),
        );
    }
    let corpus = corpus();
    assert!(
        corpus.len() >= 30,
        "the corpus holds {} configs",
        corpus.len()
    );

    let rt = tokio::runtime::Runtime::new().unwrap();
    let server = rt.block_on(wiremock::MockServer::start());
    rt.block_on(
        wiremock::Mock::given(wiremock::matchers::method("POST"))
            .respond_with(fake::Fake)
            .mount(&server),
    );
    let base = format!("{}/v1", server.uri());
    let scratch = tempfile::tempdir().unwrap();

    let mut measured = Vec::new();
    let (bin, base, scratch) = (&bin, &base, scratch.path());
    for chunk in corpus.chunks(PARALLEL) {
        std::thread::scope(|s| {
            let handles: Vec<_> = chunk
                .iter()
                .map(|fixture| s.spawn(move || measure(bin, fixture, scratch, base)))
                .collect();
            for h in handles {
                measured.push(h.join().unwrap());
            }
        });
    }

    let known = known_differences();
    let (mut rows, mut differences) = (0, Vec::new());
    for m in &measured {
        let (n, d) = compare(m);
        rows += n;
        differences.extend(d);
    }
    let agreeing = rows - differences.len();
    let agreement = agreeing as f64 / rows.max(1) as f64;
    println!(
        "promptfoo parity: {agreeing} of {rows} verdicts agree ({:.1}%) over {} configs",
        agreement * 100.0,
        measured.len()
    );
    let mut unlisted = Vec::new();
    for d in &differences {
        let key = d.split(": ").next().unwrap_or(d);
        let listed = known.contains(key);
        println!("  {} {d}", if listed { "known" } else { "NEW  " });
        if !listed {
            unlisted.push(d.clone());
        }
    }
    assert!(
        agreement >= MIN_AGREEMENT,
        "agreement {:.1}% is under {:.1}%",
        agreement * 100.0,
        MIN_AGREEMENT * 100.0
    );
    assert!(
        unlisted.is_empty(),
        "differences not listed in docs/PROMPTFOO.md's known differences:\n{}",
        unlisted.join("\n")
    );
}
