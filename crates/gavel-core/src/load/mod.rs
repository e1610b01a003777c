//! Loading suites: files and directories in, one resolved [`Suite`] out.
//!
//! Accepted: native YAML/JSON suites, a YAML/JSON list of cases or a single case
//! (seed 000's dicts), seed 002's `{"examples": [...]}` dataset, JSONL with one case
//! per line, and `datasets:` blocks that expand CSV/JSONL rows through a template.

mod dataset;
mod finite;
mod locate;
mod parse;

pub use locate::locate;

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::{Case, LoadError, Location, Round, Suite, SuiteDefaults, TargetSpec};
use parse::ParsedFile;

/// Extensions read when a directory is given.
const SUITE_EXTENSIONS: &[&str] = &["yaml", "yml", "json", "jsonl"];

/// One input of [`load`]: a file or directory, or a suite's text (from the
/// database or an API request) named by the path it would have.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SuiteSource {
    /// A suite file, or a directory of them.
    Path(PathBuf),
    /// A suite's text; the path's extension picks the format and relative paths
    /// in it resolve against the path's folder.
    Text {
        /// The document.
        text: String,
        /// The name it goes by in messages.
        path: PathBuf,
    },
}

/// Loads and resolves suites from files and directories.
///
/// Several files merge into one suite. A file that defines targets gives them to its
/// own cases; cases of files without targets run against every target defined
/// anywhere. All problems found are returned together.
pub fn load_paths(paths: &[PathBuf]) -> Result<Suite, Vec<LoadError>> {
    let sources: Vec<SuiteSource> = paths.iter().cloned().map(SuiteSource::Path).collect();
    load(&sources)
}

/// Loads and resolves suites from files, directories and texts, merged as
/// [`load_paths`] merges files.
pub fn load(sources: &[SuiteSource]) -> Result<Suite, Vec<LoadError>> {
    let mut parsed = Vec::new();
    let mut errors = Vec::new();
    for source in sources {
        match source {
            SuiteSource::Path(path) => match expand_path(path) {
                Ok(found) => {
                    for file in &found {
                        match read_file(file) {
                            Ok(p) => parsed.push(p),
                            Err(e) => errors.push(e),
                        }
                    }
                }
                Err(e) => errors.push(e),
            },
            SuiteSource::Text { text, path } => match parse_file(text, path) {
                Ok(p) => parsed.push(p),
                Err(e) => errors.push(e),
            },
        }
    }
    let suite = resolve(parsed, &mut errors);
    if errors.is_empty() {
        Ok(suite)
    } else {
        Err(errors)
    }
}

/// Parses one suite from text, as if read from `path` (its extension picks JSON,
/// JSONL or YAML; relative paths resolve against its folder).
pub fn parse_suite_str(text: &str, path: &Path) -> Result<Suite, Vec<LoadError>> {
    let mut errors = Vec::new();
    let file = match parse_file(text, path) {
        Ok(f) => f,
        Err(e) => return Err(vec![e]),
    };
    let suite = resolve(vec![file], &mut errors);
    if errors.is_empty() {
        Ok(suite)
    } else {
        Err(errors)
    }
}

struct FileParts {
    shown: String,
    dir: PathBuf,
    stem: String,
    parsed: ParsedFile,
}

fn expand_path(path: &Path) -> Result<Vec<PathBuf>, LoadError> {
    let shown = path.display().to_string();
    let meta = std::fs::metadata(path)
        .map_err(|e| LoadError::new(Location::file(&shown), e.to_string()))?;
    if !meta.is_dir() {
        return Ok(vec![path.to_owned()]);
    }
    let mut found = Vec::new();
    let mut stack = vec![path.to_owned()];
    while let Some(dir) = stack.pop() {
        let entries = std::fs::read_dir(&dir).map_err(|e| {
            LoadError::new(Location::file(dir.display().to_string()), e.to_string())
        })?;
        for entry in entries.flatten() {
            let p = entry.path();
            if p.is_dir() {
                stack.push(p);
            } else if p
                .extension()
                .and_then(|e| e.to_str())
                .is_some_and(|e| SUITE_EXTENSIONS.contains(&e))
            {
                found.push(p);
            }
        }
    }
    found.sort();
    if found.is_empty() {
        return Err(LoadError::new(
            Location::file(shown),
            "the directory holds no suite files (.yaml, .yml, .json, .jsonl)",
        ));
    }
    Ok(found)
}

fn read_file(path: &Path) -> Result<FileParts, LoadError> {
    let shown = path.display().to_string();
    let text = crate::bounds::read_text(path).map_err(|e| file_error(&shown, &e))?;
    parse_file(&text, path)
}

/// A file that could not be read, at the place of its bad bytes when known.
pub(crate) fn file_error(shown: &str, e: &crate::bounds::FileError) -> LoadError {
    let location = match e.position() {
        Some((line, column)) => Location::at(shown, line, column),
        None => Location::file(shown),
    };
    LoadError::new(location, e.to_string())
}

fn parse_file(text: &str, path: &Path) -> Result<FileParts, LoadError> {
    let shown = path.display().to_string();
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("yaml");
    let parsed = match ext {
        "jsonl" => parse::parse_jsonl(text, &shown)?,
        "json" => parse::parse_text(text, &shown, true)?,
        "yaml" | "yml" => parse::parse_text(text, &shown, false)?,
        "csv" => {
            return Err(LoadError::new(
                Location::file(&shown),
                "a CSV file holds data, not cases: use it from a suite's `datasets:` block with a case template",
            ));
        }
        other => {
            return Err(LoadError::new(
                Location::file(&shown),
                format!("unknown suite file type `.{other}`"),
            ));
        }
    };
    let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
    let stem = path
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("suite")
        .to_owned();
    Ok(FileParts {
        shown,
        dir,
        stem,
        parsed,
    })
}

/// Merges parsed files: targets, defaults, ids, rounds, datasets.
fn resolve(files: Vec<FileParts>, errors: &mut Vec<LoadError>) -> Suite {
    let mut suite = Suite {
        name: files
            .iter()
            .find_map(|f| f.parsed.name.clone())
            .or_else(|| files.first().map(|f| f.stem.clone()))
            .unwrap_or_default(),
        files: files.iter().map(|f| f.shown.clone()).collect(),
        ..Suite::default()
    };
    for f in &files {
        for (name, spec) in &f.parsed.targets {
            if suite.targets.contains_key(name) {
                errors.push(
                    LoadError::new(
                        Location::file(&f.shown),
                        format!("target `{name}` is defined twice"),
                    )
                    .field(format!("targets.{name}")),
                );
            }
            suite
                .targets
                .insert(name.clone(), absolutize(spec.clone(), &f.dir));
        }
    }
    for f in &files {
        let mut judge = f.parsed.judge.clone();
        for path in judge.templates.values_mut() {
            *path = f.dir.join(&*path).display().to_string();
        }
        suite.judge.fill_from(judge);
    }
    suite.otel = files
        .iter()
        .find_map(|f| f.parsed.otel.clone())
        .and_then(crate::otel::OtelSetting::settings);
    let all_targets: Vec<String> = suite.targets.keys().cloned().collect();
    let mut seen: HashMap<String, String> = HashMap::new();
    for f in files {
        let own_targets: Vec<String> = f.parsed.targets.keys().cloned().collect();
        let mut cases: Vec<(Case, String)> = f
            .parsed
            .cases
            .into_iter()
            .map(|(c, line)| {
                let at = match line {
                    Some(l) => format!("{}:{l}", f.shown),
                    None => f.shown.clone(),
                };
                (c, at)
            })
            .collect();
        for ds in &f.parsed.datasets {
            match dataset::expand(ds, &f.dir, &f.shown) {
                Ok(found) => cases.extend(found),
                Err(e) => errors.push(e),
            }
        }
        for (index, (mut case, at)) in cases.into_iter().enumerate() {
            case.source = at;
            apply_defaults(&mut case, &f.parsed.defaults);
            if case.targets.is_empty() {
                case.targets = if own_targets.is_empty() {
                    all_targets.clone()
                } else {
                    own_targets.clone()
                };
            }
            name_case(&mut case, &f.stem, index);
            let replayed = !case.targets.is_empty()
                && case
                    .targets
                    .iter()
                    .all(|t| matches!(suite.targets.get(t), Some(TargetSpec::Replay(_))));
            if let Err(e) =
                normalise_rounds(&mut case, replayed).and_then(|()| check_variants(&case))
            {
                errors.push(e);
                continue;
            }
            for t in &case.targets {
                if !suite.targets.contains_key(t) {
                    errors.push(
                        case_error(
                            &case,
                            format!("unknown target `{t}`{}", known(&all_targets)),
                        )
                        .field("targets"),
                    );
                }
            }
            if let Some(first) = seen.get(&case.id) {
                errors.push(
                    case_error(
                        &case,
                        format!("duplicate case id `{}` (first defined at {first})", case.id),
                    )
                    .field("id"),
                );
            } else {
                seen.insert(case.id.clone(), case.source.clone());
            }
            suite.cases.push(case);
        }
    }
    check_executions(&suite, errors);
    if suite.targets.is_empty() && !suite.cases.is_empty() {
        suite.warnings.push(
            "no target is defined: the cases can be validated but not run (add a `targets:` file)"
                .to_owned(),
        );
    }
    suite
}

/// The whole suite plans at most [`crate::bounds::MAX_EXECUTIONS`] executions.
fn check_executions(suite: &Suite, errors: &mut Vec<LoadError>) {
    let planned = crate::bounds::planned_executions(suite, None);
    if let Err(e) = crate::bounds::executions(planned) {
        let biggest = suite.cases.iter().max_by_key(|c| {
            u64::from(c.repeat_count()) * u64::from(c.input_count()) * c.targets.len() as u64
        });
        let location = match biggest {
            Some(case) => case_error(case, "plans the most executions".into()).location,
            None => Location::file(suite.files.join(", ")),
        };
        errors.push(LoadError::new(
            location,
            format!("{planned} executions planned; {}", e.allowed),
        ));
    }
}

fn known(names: &[String]) -> String {
    if names.is_empty() {
        " (no targets are defined)".to_owned()
    } else {
        format!(" (defined: {})", names.join(", "))
    }
}

fn case_error(case: &Case, message: String) -> LoadError {
    let (file, line) = match case.source.rsplit_once(':') {
        Some((f, l)) if l.parse::<u64>().is_ok() => (f.to_owned(), l.parse().ok()),
        _ => (case.source.clone(), None),
    };
    LoadError::new(
        Location {
            file,
            line,
            column: None,
        },
        format!("case `{}`: {message}", case.id),
    )
}

fn apply_defaults(case: &mut Case, d: &SuiteDefaults) {
    if case.targets.is_empty() {
        case.targets = d.targets.clone();
    }
    case.threshold = case.threshold.or(d.threshold);
    case.criteria_judge = case.criteria_judge.or(d.criteria_judge);
    case.repeat = case.repeat.or(d.repeat);
    case.rejudge = case.rejudge.or(d.rejudge);
    if !case.variants.is_empty() {
        case.min_mean = case.min_mean.or(d.min_mean);
        case.max_stddev = case.max_stddev.or(d.max_stddev);
    }
    case.timeout_s = case.timeout_s.or(d.timeout_s);
    for t in &d.tags {
        if !case.tags.contains(t) {
            case.tags.push(t.clone());
        }
    }
    case.checks.extend(d.checks.iter().cloned());
    if let Some(Value::Object(defaults)) = &d.context {
        let mut merged = defaults.clone();
        if let Some(Value::Object(own)) = case.context.take() {
            merged.extend(own);
        }
        case.context = Some(Value::Object(merged));
    }
}

fn name_case(case: &mut Case, stem: &str, index: usize) {
    if case.id.is_empty() {
        case.id = if case.name.is_empty() {
            format!("{stem}-{}", index + 1)
        } else {
            slug(&case.name)
        };
    }
    if case.name.is_empty() {
        case.name = case.id.clone();
    }
}

fn slug(name: &str) -> String {
    let s: String = name
        .chars()
        .map(|c| {
            if c.is_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect();
    s.split('-')
        .filter(|p| !p.is_empty())
        .collect::<Vec<_>>()
        .join("-")
}

/// A case with `variants` has one round and a stddev ceiling; `min_mean` and
/// `max_stddev` belong to such cases and lie in 0-1.
fn check_variants(case: &Case) -> Result<(), LoadError> {
    let bounded = |v: Option<f64>, field: &str| match v {
        Some(x) if !(x.is_finite() && (0.0..=1.0).contains(&x)) => Err(case_error(
            case,
            format!("{field} {x} must be between 0 and 1 (scores are 0-1)"),
        )
        .field(field)),
        _ => Ok(()),
    };
    bounded(case.min_mean, "min_mean")?;
    bounded(case.max_stddev, "max_stddev")?;
    if case.variants.is_empty() {
        return match (case.min_mean, case.max_stddev) {
            (None, None) => Ok(()),
            _ => Err(case_error(
                case,
                "`min_mean` and `max_stddev` judge a case's `variants`; this case has none".into(),
            )
            .field("variants")),
        };
    }
    if case.rounds.len() != 1 || case.simulated_user.is_some() {
        return Err(case_error(
            case,
            "`variants` paraphrase a single `input`; this case has several rounds or a simulated user".into(),
        )
        .field("variants"));
    }
    if case.variants.iter().any(|v| v.trim().is_empty()) {
        return Err(case_error(case, "a variant is empty".into()).field("variants"));
    }
    if case.max_stddev.is_none() {
        return Err(case_error(
            case,
            "a case with `variants` needs `max_stddev` (on the case or in `defaults`): the spread its scores may have".into(),
        )
        .field("max_stddev"));
    }
    Ok(())
}

/// Turns `input` into a single round; rejects cases with both or neither,
/// except that a case only `replayed` from recordings may give neither (its
/// single round's input is then the recorded one).
fn normalise_rounds(case: &mut Case, replayed: bool) -> Result<(), LoadError> {
    if case.each_conversation && !replayed {
        return Err(case_error(
            case,
            "`each_conversation` grades recorded conversations: every target of the case must be a `replay` target".into(),
        )
        .field("each_conversation"));
    }
    if replayed && case.input.is_none() && case.rounds.is_empty() && case.simulated_user.is_none() {
        case.input = Some(Value::String(String::new()));
    }
    if case.simulated_user.is_some() && case.expect_clarification {
        return Err(case_error(
            case,
            "`expect_clarification` marks a fixed round; a simulated user's conversation has none"
                .into(),
        )
        .field("expect_clarification"));
    }
    if case.simulated_user.is_some() {
        return match case.input.is_some() || !case.rounds.is_empty() {
            true => Err(case_error(
                case,
                "a case with `simulated_user` has no `input` or `rounds`: the simulated user writes them".into(),
            )
            .field("simulated_user")),
            false => Ok(()),
        };
    }
    check_branches(case)?;
    if case.expect_clarification && !case.rounds.is_empty() {
        return Err(case_error(
            case,
            "`expect_clarification` on the case goes with a single `input`; with `rounds`, set it on the round that should be answered with a question".into(),
        )
        .field("expect_clarification"));
    }
    match (case.input.take(), case.rounds.is_empty()) {
        (Some(_), false) => Err(case_error(
            case,
            "give `input` (or `prompt`) or `rounds`, not both".into(),
        )
        .field("input")),
        (None, true) => Err(case_error(
            case,
            "a case needs `input` (or `prompt`) or `rounds`".into(),
        )
        .field("input")),
        (Some(input), true) => {
            case.rounds.push(Round {
                input,
                checks: Vec::new(),
                criteria: None,
                expected_output: None,
                expected_tools: Vec::new(),
                threshold: None,
                branch: None,
                expect_clarification: std::mem::take(&mut case.expect_clarification),
            });
            Ok(())
        }
        (None, false) => Ok(()),
    }
}

/// Branched rounds come after at least one parent round, and no parent round
/// follows a branched one.
fn check_branches(case: &Case) -> Result<(), LoadError> {
    let mut branched = false;
    for (i, round) in case.rounds.iter().enumerate() {
        match round.branch.as_deref().map(str::trim) {
            Some("") => {
                return Err(case_error(case, "a branch name cannot be empty".into())
                    .field(format!("rounds[{i}].branch")));
            }
            Some(_) if i == 0 => {
                return Err(case_error(
                    case,
                    "the first round cannot be branched: branches continue from the parent rounds before them".into(),
                )
                .field(format!("rounds[{i}].branch")));
            }
            Some(_) => branched = true,
            None if branched => {
                return Err(case_error(
                    case,
                    "an unbranched round cannot follow branched rounds: give it a `branch` or move it before them".into(),
                )
                .field(format!("rounds[{i}]")));
            }
            None => {}
        }
    }
    Ok(())
}

/// Makes a target's working directories absolute against the suite file's folder.
fn absolutize(mut spec: TargetSpec, dir: &Path) -> TargetSpec {
    let fix = |cwd: &mut Option<String>| {
        let joined = dir.join(cwd.as_deref().unwrap_or("."));
        *cwd = Some(
            std::path::absolute(&joined)
                .unwrap_or(joined)
                .display()
                .to_string(),
        );
    };
    match &mut spec {
        TargetSpec::Http(h) => {
            if let Some(start) = &mut h.start {
                fix(&mut start.cwd);
            }
        }
        TargetSpec::Command(c) => fix(&mut c.cwd),
        TargetSpec::Replay(r) => {
            if let Some(file) = &mut r.file {
                let joined = dir.join(&*file);
                *file = std::path::absolute(&joined)
                    .unwrap_or(joined)
                    .display()
                    .to_string();
            }
        }
        TargetSpec::Chat(_) | TargetSpec::McpAgent(_) => {}
    }
    spec
}

/// The JSON Schema of the native suite format, for editor completion.
pub fn suite_schema() -> Value {
    serde_json::to_value(schemars::schema_for!(parse::SuiteFile)).unwrap_or(Value::Null)
}
