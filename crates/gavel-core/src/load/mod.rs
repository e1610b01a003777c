//! Loading suites: files and directories in, one resolved [`Suite`] out.
//!
//! Accepted: native YAML/JSON suites, a YAML/JSON list of cases or a single case
//! (seed 000's dicts), seed 002's `{"examples": [...]}` dataset, JSONL with one case
//! per line, and `datasets:` blocks that expand CSV/JSONL rows through a template.

mod dataset;
mod explain;
mod finite;
mod locate;
mod parse;
#[cfg(test)]
mod tests;

pub use locate::locate;

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::capability::{self, Capability, Finding};
use crate::{Case, LoadError, Location, Round, Suite, SuiteDefaults, TargetSpec};
use parse::{Header, Shape};

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
    open(sources).collect()
}

/// Parses one suite from text, as if read from `path` (its extension picks JSON,
/// JSONL or YAML; relative paths resolve against its folder).
pub fn parse_suite_str(text: &str, path: &Path) -> Result<Suite, Vec<LoadError>> {
    load(&[SuiteSource::Text {
        text: text.to_owned(),
        path: path.to_owned(),
    }])
}

/// Every capability one suite text asks for ([`crate::capability`]): its
/// targets, judge settings, default checks, datasets, export, and each case
/// (fields under `cases[i]`, in document order). Nothing else is read and no
/// case is resolved: the check a front door makes before it runs a suite
/// others wrote.
pub fn capabilities(text: &str, path: &Path) -> Result<Vec<Finding>, LoadError> {
    let parts = parse_file(text, path, Text::Given(text))?;
    let header = &parts.header;
    let mut found: Vec<Finding> = header
        .targets
        .iter()
        .flat_map(|(name, spec)| capability::target(name, spec))
        .collect();
    found.extend(capability::settings(&header.judge));
    found.extend(capability::check_list("defaults", &header.defaults.checks));
    found.extend((0..header.datasets.len()).map(|i| Finding {
        field: format!("datasets[{i}].file"),
        capability: Capability::FileRead,
    }));
    if let Some(crate::otel::OtelSetting::With(otel)) = &header.otel
        && otel.endpoint.is_some()
    {
        found.push(Finding {
            field: "otel.endpoint".into(),
            capability: Capability::Telemetry,
        });
    }
    let mut index = 0;
    parse::cases(
        without_bom(text),
        &parts.shown,
        parts.shape,
        &mut |case, _| {
            found.extend(capability::case(&case).into_iter().map(|f| Finding {
                field: format!("cases[{index}].{}", f.field),
                ..f
            }));
            index += 1;
        },
    )?;
    Ok(found)
}

/// Reads every file's settings: the first of two passes, which [`Loading::cases`]
/// completes. Problems found here are returned by [`Loading::cases`], together
/// with those its cases have.
pub fn open(sources: &[SuiteSource]) -> Loading<'_> {
    let mut files = Vec::new();
    let mut errors = Vec::new();
    for source in sources {
        match source {
            SuiteSource::Path(path) => match expand_path(path) {
                Ok(found) => {
                    for file in found {
                        match read_file(file) {
                            Ok(p) => files.push(p),
                            Err(e) => errors.push(e),
                        }
                    }
                }
                Err(e) => errors.push(e),
            },
            SuiteSource::Text { text, path } => match parse_file(text, path, Text::Given(text)) {
                Ok(p) => files.push(p),
                Err(e) => errors.push(e),
            },
        }
    }
    let suite = settings(&files, &mut errors);
    Loading {
        suite,
        files,
        errors,
    }
}

/// Suites whose settings are read ([`open`]) and whose cases are not yet.
pub struct Loading<'a> {
    suite: Suite,
    files: Vec<FileParts<'a>>,
    errors: Vec<LoadError>,
}

impl Loading<'_> {
    /// The suite's name, files, targets and judge settings, before any case is read.
    pub fn suite(&self) -> &Suite {
        &self.suite
    }

    /// Reads the cases as [`Loading::cases`] does and keeps them: the whole suite.
    pub fn collect(self) -> Result<Suite, Vec<LoadError>> {
        let mut cases = Vec::new();
        let mut suite = self.cases(|case| cases.push(case))?;
        suite.cases = cases;
        Ok(suite)
    }

    /// Reads the cases, file by file and one at a time, resolves each (defaults,
    /// targets, ids, rounds) and hands it to `each`: a suite of any size is never
    /// held whole here. Returns the suite without its cases, or every problem
    /// found; `each` may have seen cases of a suite that is then refused.
    pub fn cases(self, mut each: impl FnMut(Case)) -> Result<Suite, Vec<LoadError>> {
        let Loading {
            mut suite,
            files,
            mut errors,
        } = self;
        let mut resolver = Resolver::new(&suite);
        walk(&files, &mut errors, &mut |file, case, at, errors| {
            resolver.take(file, case, at, &suite, errors, &mut each);
        });
        resolver.place_duplicates(&files, &suite, &mut errors);
        resolver.finish(&mut suite, &mut errors);
        if errors.is_empty() {
            Ok(suite)
        } else {
            Err(errors)
        }
    }
}

/// What [`walk`] hands each case to: with its file, where it was found, and
/// the errors so far.
type EachCase<'a> = dyn FnMut(&mut FileCases<'_>, Case, String, &mut Vec<LoadError>) + 'a;

/// Reads each file's cases, then its datasets' rows, in order, handing each
/// case with where it was found to `each`; what cannot be read adds to `errors`.
fn walk(files: &[FileParts<'_>], errors: &mut Vec<LoadError>, each: &mut EachCase<'_>) {
    for f in files {
        let text = match f.text.read(&f.shown) {
            Ok(text) => text,
            Err(e) => {
                errors.push(e);
                continue;
            }
        };
        let own_targets: Vec<String> = f.header.targets.keys().cloned().collect();
        let mut file = FileCases {
            parts: f,
            own_targets: &own_targets,
            index: 0,
        };
        let read = parse::cases(without_bom(&text), &f.shown, f.shape, &mut |case, line| {
            let at = match line {
                Some(l) => format!("{}:{l}", f.shown),
                None => f.shown.clone(),
            };
            each(&mut file, case, at, errors);
        });
        if let Err(e) = read {
            errors.push(e);
            continue;
        }
        for ds in &f.header.datasets {
            let read = dataset::expand(ds, &f.dir, &f.shown, &mut |case, at| {
                each(&mut file, case, at, errors);
            });
            if let Err(e) = read {
                errors.push(e);
            }
        }
    }
}

/// One file: its settings, and where its text is read again for its cases.
struct FileParts<'a> {
    shown: String,
    dir: PathBuf,
    stem: String,
    shape: Shape,
    header: Header,
    text: Text<'a>,
}

/// Where a file's text comes from for the second pass.
enum Text<'a> {
    /// Given in memory.
    Given(&'a str),
    /// Read from disk again; `hash` is the text's as the first pass read it.
    File { path: PathBuf, hash: u64 },
}

impl Text<'_> {
    fn read(&self, shown: &str) -> Result<Cow<'_, str>, LoadError> {
        match self {
            Text::Given(text) => Ok(Cow::Borrowed(text)),
            Text::File { path, hash } => {
                let text = crate::bounds::read_text(path).map_err(|e| file_error(shown, &e))?;
                if fingerprint(&text) != *hash {
                    return Err(LoadError::new(
                        Location::file(shown),
                        "the file changed while it was being loaded: load it again",
                    ));
                }
                Ok(Cow::Owned(text))
            }
        }
    }
}

/// `text` without a leading UTF-8 byte order mark.
fn without_bom(text: &str) -> &str {
    text.strip_prefix('\u{feff}').unwrap_or(text)
}

/// A text's hash, to notice a file changed between the two passes.
fn fingerprint(text: &str) -> u64 {
    let mut hasher = std::hash::DefaultHasher::new();
    text.hash(&mut hasher);
    hasher.finish()
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

fn read_file(path: PathBuf) -> Result<FileParts<'static>, LoadError> {
    let shown = path.display().to_string();
    let text = crate::bounds::read_text(&path).map_err(|e| file_error(&shown, &e))?;
    let again = Text::File {
        hash: fingerprint(&text),
        path: path.clone(),
    };
    parse_file(&text, &path, again)
}

/// A file that could not be read, at the place of its bad bytes when known.
pub(crate) fn file_error(shown: &str, e: &crate::bounds::FileError) -> LoadError {
    let location = match e.position() {
        Some((line, column)) => Location::at(shown, line, column),
        None => Location::file(shown),
    };
    LoadError::new(location, e.to_string())
}

fn parse_file<'a>(text: &str, path: &Path, again: Text<'a>) -> Result<FileParts<'a>, LoadError> {
    let shown = path.display().to_string();
    let text = without_bom(text);
    let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("yaml");
    let (shape, header) = match ext {
        "jsonl" => (Shape::Lines, Header::default()),
        "json" => parse::header(text, &shown, true)?,
        "yaml" | "yml" => parse::header(text, &shown, false)?,
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
        shape,
        header,
        text: again,
    })
}

/// The suite's settings merged from every file: name, files, targets, judge, gate, otel.
fn settings(files: &[FileParts<'_>], errors: &mut Vec<LoadError>) -> Suite {
    let mut suite = Suite {
        name: files
            .iter()
            .find_map(|f| f.header.name.clone())
            .or_else(|| files.first().map(|f| f.stem.clone()))
            .unwrap_or_default(),
        files: files.iter().map(|f| f.shown.clone()).collect(),
        ..Suite::default()
    };
    for f in files {
        for (name, spec) in &f.header.targets {
            if suite.targets.contains_key(name) {
                errors.push(
                    LoadError::new(
                        Location::file(&f.shown),
                        format!("target `{name}` is defined twice"),
                    )
                    .field(format!("targets.{name}")),
                );
            }
            for (field, text) in spec.expanded() {
                if let Err(e) = crate::template::check_env(text) {
                    errors.push(
                        LoadError::new(Location::file(&f.shown), e.to_string())
                            .field(format!("targets.{name}.{field}")),
                    );
                }
            }
            suite
                .targets
                .insert(name.clone(), absolutize(spec.clone(), &f.dir));
        }
    }
    for f in files {
        let mut judge = f.header.judge.clone();
        for path in judge.templates.values_mut() {
            *path = f.dir.join(&*path).display().to_string();
        }
        suite.judge.fill_from(judge);
    }
    for f in files {
        suite.gate.fill_from(&f.header.gate);
    }
    suite.otel = files
        .iter()
        .find_map(|f| f.header.otel.clone())
        .and_then(crate::otel::OtelSetting::settings);
    suite
}

/// The file whose cases are being resolved.
struct FileCases<'f> {
    parts: &'f FileParts<'f>,
    own_targets: &'f [String],
    /// Cases of the file taken so far (for generated ids).
    index: usize,
}

/// Resolves cases one at a time, keeping only what checks across cases need:
/// the ids seen and the executions planned.
struct Resolver {
    all_targets: Vec<String>,
    /// The [`fingerprint`] of each case id seen: 8 bytes a case, where the ids
    /// themselves would take a suite's worth of strings.
    seen: HashSet<u64>,
    /// Cases whose id's fingerprint was seen before, placed by
    /// [`Resolver::place_duplicates`].
    suspects: Vec<Suspect>,
    cases: usize,
    executions: u64,
    /// The case planning the most executions, and where it is.
    biggest: Option<(u64, Location)>,
}

/// A case whose id may repeat an earlier one's.
struct Suspect {
    id: String,
    /// The case's place among the resolved cases.
    ordinal: usize,
    /// Its duplicate-id error's index in the errors.
    error: usize,
}

impl Resolver {
    fn new(suite: &Suite) -> Resolver {
        Resolver {
            all_targets: suite.targets.keys().cloned().collect(),
            seen: HashSet::new(),
            suspects: Vec::new(),
            cases: 0,
            executions: 0,
            biggest: None,
        }
    }

    /// Applies the file's defaults and targets to `case` (found `at`) and
    /// checks its rounds.
    fn resolve(
        &self,
        file: &mut FileCases<'_>,
        mut case: Case,
        at: String,
        suite: &Suite,
    ) -> Result<Case, LoadError> {
        let index = file.index;
        file.index += 1;
        case.source = at;
        apply_defaults(&mut case, &file.parts.header.defaults);
        if let Some(fixture) = case.workspace.as_mut().and_then(|w| w.fixture.as_mut()) {
            *fixture = absolute(&file.parts.dir, fixture);
        }
        if case.targets.is_empty() {
            case.targets = if file.own_targets.is_empty() {
                self.all_targets.clone()
            } else {
                file.own_targets.to_vec()
            };
        }
        name_case(&mut case, &file.parts.stem, index);
        let replayed = !case.targets.is_empty()
            && case
                .targets
                .iter()
                .all(|t| matches!(suite.targets.get(t), Some(TargetSpec::Replay(_))));
        normalise_rounds(&mut case, replayed).and_then(|()| check_variants(&case))?;
        Ok(case)
    }

    /// Resolves `case` (found `at`), checks it across the suite, and hands it
    /// on when its rounds are sound.
    fn take(
        &mut self,
        file: &mut FileCases<'_>,
        case: Case,
        at: String,
        suite: &Suite,
        errors: &mut Vec<LoadError>,
        each: &mut impl FnMut(Case),
    ) {
        let case = match self.resolve(file, case, at, suite) {
            Ok(case) => case,
            Err(e) => {
                errors.push(e);
                return;
            }
        };
        for t in &case.targets {
            if !suite.targets.contains_key(t) {
                errors.push(
                    case_error(
                        &case,
                        format!("unknown target `{t}`{}", known(&self.all_targets)),
                    )
                    .field("targets"),
                );
            }
        }
        if !self.seen.insert(fingerprint(&case.id)) {
            self.suspects.push(Suspect {
                id: case.id.clone(),
                ordinal: self.cases,
                error: errors.len(),
            });
            errors.push(case_error(&case, format!("duplicate case id `{}`", case.id)).field("id"));
        }
        let planned = crate::bounds::case_executions(&case, None);
        self.executions = self.executions.saturating_add(planned);
        if self
            .biggest
            .as_ref()
            .is_none_or(|(most, _)| planned > *most)
        {
            let location = case_error(&case, "plans the most executions".into()).location;
            self.biggest = Some((planned, location));
        }
        self.cases += 1;
        each(case);
    }

    /// Completes each suspect's error with where its id was first defined,
    /// found by reading the cases once more (only when there are suspects);
    /// a suspect whose id is new (another id with the same fingerprint) is
    /// no error.
    fn place_duplicates(
        &self,
        files: &[FileParts<'_>],
        suite: &Suite,
        errors: &mut Vec<LoadError>,
    ) {
        if self.suspects.is_empty() {
            return;
        }
        let mut first: HashMap<&str, Option<(usize, String)>> = self
            .suspects
            .iter()
            .map(|s| (s.id.as_str(), None))
            .collect();
        let mut ordinal = 0;
        let mut again = Vec::new();
        walk(files, &mut again, &mut |file, case, at, _| {
            let Ok(case) = self.resolve(file, case, at, suite) else {
                return;
            };
            if let Some(slot @ None) = first.get_mut(case.id.as_str()) {
                *slot = Some((ordinal, case.source));
            }
            ordinal += 1;
        });
        for s in self.suspects.iter().rev() {
            match first.get(s.id.as_str()) {
                Some(Some((at, source))) if *at < s.ordinal => {
                    let message = &mut errors[s.error].message;
                    message.push_str(&format!(" (first defined at {source})"));
                }
                _ => {
                    errors.remove(s.error);
                }
            }
        }
        // A file that changed since the first read says so.
        for e in again {
            if !errors.contains(&e) {
                errors.push(e);
            }
        }
    }

    /// The checks over the whole suite: at most [`crate::bounds::MAX_EXECUTIONS`]
    /// executions, and a warning when there are cases but no target.
    fn finish(self, suite: &mut Suite, errors: &mut Vec<LoadError>) {
        if let Err(e) = crate::bounds::executions(self.executions) {
            let location = match self.biggest {
                Some((_, location)) => location,
                None => Location::file(suite.files.join(", ")),
            };
            errors.push(LoadError::new(
                location,
                format!("{} executions planned; {}", self.executions, e.allowed),
            ));
        }
        if suite.targets.is_empty() && self.cases > 0 {
            suite.warnings.push(
                "no target is defined: the cases can be validated but not run (add a `targets:` file)"
                    .to_owned(),
            );
        }
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
    let fix = |cwd: &mut Option<String>| *cwd = Some(absolute(dir, cwd.as_deref().unwrap_or(".")));
    match &mut spec {
        TargetSpec::Http(h) => {
            if let Some(start) = &mut h.start {
                fix(&mut start.cwd);
            }
        }
        TargetSpec::Command(c) => fix(&mut c.cwd),
        TargetSpec::Replay(r) => {
            if let Some(file) = &mut r.file {
                *file = absolute(dir, file);
            }
        }
        TargetSpec::Workspace(w) => {
            w.fixture = absolute(dir, &w.fixture);
            for arg in &mut w.agent {
                if arg.starts_with("./") || arg.starts_with("../") {
                    *arg = absolute(dir, arg);
                }
            }
        }
        TargetSpec::Chat(_) | TargetSpec::McpAgent(_) => {}
    }
    spec
}

/// `path` made absolute against `dir`.
pub(crate) fn absolute(dir: &Path, path: &str) -> String {
    let joined = dir.join(path);
    std::path::absolute(&joined)
        .unwrap_or(joined)
        .display()
        .to_string()
}

/// The JSON Schema of the native suite format, for editor completion.
pub fn suite_schema() -> Value {
    serde_json::to_value(schemars::schema_for!(parse::SuiteFile)).unwrap_or(Value::Null)
}
