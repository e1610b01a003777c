//! The conversion: configs read, each test × prompt made a case (the prompt
//! rendered with the test's vars), providers made targets; or, for
//! `select-best` across prompts, each test one case over prompt × provider
//! targets (`matrix`).

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};

use gavel_core::{Case, CheckSpec, JudgeSettings, TargetSpec};
use serde_json::{Map, Value, json};

use crate::asserts::{self, AssertCtx, Mapped};
use crate::emit::{self, Doc};
use crate::files::file_ref;
use crate::matrix::{self, Planned};
use crate::merge::Test;
use crate::node::{Node, Val};
use crate::prompts::{self, Body, Prompt};
use crate::providers::{self, Provider, model_id};
use crate::render::render;
use crate::scripts::is_javascript;
use crate::testfiles::{self, TestSrc};
use crate::{Conversion, ImportError, Unmapped};

/// Cases one conversion makes at most.
const MAX_CASES: usize = 100_000;

#[derive(Default)]
struct Config {
    description: Option<String>,
    prompts: Vec<Prompt>,
    providers: Vec<Provider>,
    tests: Vec<TestSrc>,
    default_test: Option<TestSrc>,
    /// `assertionTemplates`, which an assertion names with `$ref`.
    templates: Option<Node>,
}

impl Config {
    fn read(
        &mut self,
        root: &Node,
        base: &Path,
        notes: &mut Vec<Unmapped>,
    ) -> Result<(), ImportError> {
        if !matches!(root.val, Val::Map(_)) {
            return Err(ImportError::shape(
                root,
                "config",
                "a promptfoo config is a mapping with `prompts`, `providers` and `tests`",
            ));
        }
        for (key, value) in root.entries() {
            match key.as_str() {
                "description" => {
                    if self.description.is_none() {
                        self.description = value.scalar_text();
                    }
                }
                "prompts" => self.prompts.extend(prompts::read(value, base, notes)?),
                "providers" | "targets" => {
                    self.providers.extend(providers::read(value, base, notes)?)
                }
                "tests" => testfiles::read(value, base, &mut self.tests, notes)?,
                "defaultTest" => {
                    let node = match value.as_str().and_then(file_ref) {
                        Some(reference) => testfiles::read_map(reference, base, value)?,
                        None => value.clone(),
                    };
                    self.default_test = Some(TestSrc {
                        node,
                        base: base.to_owned(),
                    });
                }
                "assertionTemplates" => self.templates = Some(value.clone()),
                _ => notes.push(Unmapped::new(format!("config key '{key}'"), value, "")),
            }
        }
        Ok(())
    }
}

/// Converts parsed configs, each with the folder its paths resolve against.
pub(crate) fn build(configs: &[(Node, PathBuf)]) -> Result<Conversion, ImportError> {
    let mut global = Vec::new();
    let mut cfg = Config::default();
    for (root, base) in configs {
        cfg.read(root, base, &mut global)?;
    }
    let Some((first, first_base)) = configs.first() else {
        return Err(ImportError::Syntax {
            at: String::new(),
            message: "no config given".into(),
        });
    };
    if cfg.prompts.is_empty() {
        global.push(Unmapped::new(
            "prompts",
            first,
            "the config has no prompt gavel can send, so no cases were made",
        ));
    }
    if cfg.tests.is_empty() {
        // promptfoo runs every prompt once when there are no tests.
        let node = Node::synthetic(Val::Map(Vec::new()), &first.file, first.line);
        cfg.tests.push(TestSrc {
            node,
            base: first_base.clone(),
        });
    }
    let judge = suite_judge(cfg.default_test.as_ref(), &mut global);
    let mut names = HashSet::new();
    let named: Vec<Named<'_>> = cfg
        .providers
        .iter()
        .map(|p| (unique(&p.name, &mut names), p))
        .collect();
    let (mut tests, mut total) = (Vec::new(), 0);
    for src in &cfg.tests {
        let mut notes = Vec::new();
        let test = Test::new(cfg.default_test.as_ref(), src, &mut notes)?;
        let sets = test.var_sets(MAX_CASES, &src.node)?;
        // Each var set makes a case at least.
        total += sets.len();
        if total > MAX_CASES {
            return Err(ImportError::TooMany {
                at: src.node.at(),
                limit: MAX_CASES,
            });
        }
        tests.push(Planned {
            node: &src.node,
            test,
            sets,
            notes,
        });
    }
    let matrix = matrix::plan(
        &named,
        &cfg.prompts,
        &tests,
        cfg.templates.as_ref(),
        &mut global,
    );
    let (targets, columns): (_, Vec<Column<'_>>) = match matrix {
        Some(m) => (m.targets, vec![(None, Some(m.names))]),
        None => {
            let routes = Routes::new(&named, &cfg.prompts, &mut global);
            let prompts = cfg.prompts.iter().map(Some);
            (routes.targets, prompts.zip(routes.per_prompt).collect())
        }
    };
    let stem = Path::new(&*first.file).file_stem().map_or_else(
        || "promptfoo".to_owned(),
        |s| s.to_string_lossy().into_owned(),
    );
    let mut ids = HashSet::new();
    let mut cases = Vec::new();
    for (ti, planned) in tests.iter().enumerate() {
        let sets = &planned.sets;
        if cases.len() + sets.len() * columns.len() > MAX_CASES {
            return Err(ImportError::TooMany {
                at: planned.node.at(),
                limit: MAX_CASES,
            });
        }
        for (vi, vars) in sets.iter().enumerate() {
            for (pi, (prompt, route)) in columns.iter().enumerate() {
                let Some(route) = route else {
                    continue;
                };
                let sends = prompt.map_or(Sends::Own(planned.node), Sends::Prompt);
                let mut notes = planned.notes.clone();
                let name = Naming {
                    stem: &stem,
                    test: ti,
                    set: (vi, sets.len()),
                    prompt: (pi, columns.len()),
                };
                let case = one_case(
                    &planned.test,
                    cfg.templates.as_ref(),
                    vars,
                    sends,
                    route,
                    &judge,
                    &name,
                    &mut ids,
                    &mut notes,
                )?;
                cases.extend(case.map(|c| (c, notes)));
            }
        }
    }
    let doc = Doc {
        name: stem,
        description: cfg.description,
        sources: configs.iter().map(|(n, _)| n.file.to_string()).collect(),
        judge,
        targets,
        header: global,
        cases,
    };
    emit::emit(doc)
}

/// The suite judge: `defaultTest.options.provider`.
fn suite_judge(default: Option<&TestSrc>, notes: &mut Vec<Unmapped>) -> JudgeSettings {
    let mut judge = JudgeSettings::default();
    if let Some(provider) = default
        .and_then(|d| d.node.get("options"))
        .and_then(|o| o.get("provider"))
    {
        let id = provider
            .as_str()
            .or_else(|| provider.get("id").and_then(Node::as_str));
        judge.model = id.and_then(|id| model_id(id, provider.get("config")));
        if judge.model.is_none() {
            notes.push(Unmapped::new("grading provider", provider, ""));
        }
    }
    judge
}

/// One case of each test and var set: the prompt it sends (`None`: each target
/// its own) and its targets (`None`: no provider runs that prompt).
type Column<'a> = (Option<&'a Prompt>, Option<Vec<String>>);

/// A provider with its target's name (unique in the suite).
pub(crate) type Named<'a> = (String, &'a Provider);

/// Whether provider `p` runs `prompt`: a provider with `prompts:` runs only the
/// prompts it names.
pub(crate) fn runs(p: &Provider, prompt: &Prompt) -> bool {
    p.prompts.is_empty() || p.prompts.contains(&prompt.label)
}

/// Targets, and which of them each prompt's cases run against.
struct Routes {
    targets: BTreeMap<String, TargetSpec>,
    /// Per prompt: the target names (empty: every target); `None` when no
    /// provider runs it (each names other prompts).
    per_prompt: Vec<Option<Vec<String>>>,
}

impl Routes {
    /// A prompt with a system message gets its own copy of each chat target,
    /// with that system prompt (its vars come from the case context).
    fn new(named: &[Named<'_>], prompts: &[Prompt], notes: &mut Vec<Unmapped>) -> Routes {
        let systems: Vec<Option<String>> = prompts.iter().map(|p| system(p, notes)).collect();
        let filtered = named.iter().any(|(_, p)| !p.prompts.is_empty());
        let mut targets = BTreeMap::new();
        if systems.iter().all(Option::is_none) && !filtered {
            for (name, p) in named {
                targets.insert(name.clone(), p.spec.clone());
            }
            return Routes {
                targets,
                per_prompt: vec![Some(Vec::new()); prompts.len()],
            };
        }
        let mut per_prompt = Vec::new();
        for (k, (prompt, system)) in prompts.iter().zip(&systems).enumerate() {
            let mut route = Vec::new();
            for (name, p) in named.iter().filter(|(_, p)| runs(p, prompt)) {
                match (system, &p.spec) {
                    (Some(system), TargetSpec::Chat(chat)) => {
                        let mut chat = chat.clone();
                        chat.system = Some(system.clone());
                        let own = format!("{name}#{}", k + 1);
                        targets.insert(own.clone(), TargetSpec::Chat(chat));
                        route.push(own);
                    }
                    (system, spec) => {
                        if system.is_some() {
                            notes.push(Unmapped::new(
                                format!("system message for target '{name}'"),
                                &prompt.node,
                                "only chat targets take a system prompt",
                            ));
                        }
                        targets.insert(name.clone(), spec.clone());
                        route.push(name.clone());
                    }
                }
            }
            per_prompt.push((!route.is_empty()).then_some(route));
        }
        Routes {
            targets,
            per_prompt,
        }
    }
}

/// A chat prompt's system messages (joined), noting assistant messages.
pub(crate) fn system(prompt: &Prompt, notes: &mut Vec<Unmapped>) -> Option<String> {
    let Body::Chat(messages) = &prompt.body else {
        return None;
    };
    let mut system = Vec::new();
    for m in messages {
        match m.role.as_str() {
            "system" | "developer" => system.push(m.content.clone()),
            "user" => {}
            role => notes.push(Unmapped::new(
                format!("{role} message"),
                &m.node,
                "gavel sends the user messages as rounds; the target writes its own answers",
            )),
        }
    }
    (!system.is_empty()).then(|| system.join("\n\n"))
}

fn unique(name: &str, taken: &mut HashSet<String>) -> String {
    let mut candidate = name.to_owned();
    let mut n = 1;
    while !taken.insert(candidate.clone()) {
        n += 1;
        candidate = format!("{name}-{n}");
    }
    candidate
}

/// Where a case sits in the test × var set × prompt matrix.
struct Naming<'a> {
    stem: &'a str,
    test: usize,
    set: (usize, usize),
    prompt: (usize, usize),
}

impl Naming<'_> {
    fn id(&self, description: Option<&str>) -> String {
        let mut id = match description.map(slug).filter(|s| !s.is_empty()) {
            Some(s) => s,
            None => format!("{}-{}", self.stem, self.test + 1),
        };
        if self.set.1 > 1 {
            id.push_str(&format!("-{}", self.set.0 + 1));
        }
        if self.prompt.1 > 1 {
            id.push_str(&format!("-p{}", self.prompt.0 + 1));
        }
        id
    }
}

fn slug(s: &str) -> String {
    let s: String = s
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
        .take(12)
        .collect::<Vec<_>>()
        .join("-")
}

/// What a case sends its targets.
#[derive(Clone, Copy)]
enum Sends<'a> {
    /// One prompt, rendered with the vars.
    Prompt(&'a Prompt),
    /// Each target its own prompt (the matrix): the case's input is the vars
    /// (`{}` without any), which no target sends; the test was written at the node.
    Own(&'a Node),
}

#[allow(clippy::too_many_arguments)]
fn one_case(
    test: &Test,
    templates: Option<&Node>,
    vars: &Map<String, Value>,
    sends: Sends<'_>,
    targets: &[String],
    judge: &JudgeSettings,
    naming: &Naming<'_>,
    ids: &mut HashSet<String>,
    notes: &mut Vec<Unmapped>,
) -> Result<Option<Case>, ImportError> {
    let ctx_vars = Value::Object(vars.clone());
    let (mut inputs, at, label) = match sends {
        Sends::Prompt(prompt) => {
            let Some(inputs) = prompt_inputs(test, prompt, &ctx_vars, notes) else {
                return Ok(None);
            };
            let inputs = inputs.into_iter().map(Value::String).collect();
            (inputs, &prompt.node, Some(&prompt.label))
        }
        Sends::Own(node) => (vec![ctx_vars.clone()], node, None),
    };
    let grader = test
        .grader
        .as_deref()
        .filter(|g| judge.model.as_deref() != Some(*g));
    let mut mapped = Mapped::default();
    for (node, base) in &test.asserts {
        // `$ref: '#/assertionTemplates/NAME'` stands for that template.
        let node = match node.get("$ref").and_then(Node::as_str) {
            Some(r) => match r
                .strip_prefix("#/assertionTemplates/")
                .and_then(|name| templates.and_then(|t| t.get(name)))
            {
                Some(template) => template,
                None => {
                    notes.push(Unmapped::new(
                        format!("assert $ref '{r}'"),
                        node,
                        "no such assertion template",
                    ));
                    continue;
                }
            },
            None => node,
        };
        let ctx = AssertCtx {
            vars: &ctx_vars,
            base,
            grader,
            transform: test.transform.as_ref().map(|(code, _)| code.as_str()),
            threshold: test.threshold,
            rubric: test.rubric.as_deref(),
        };
        asserts::map(node, &ctx, &mut mapped, notes);
    }
    if let Some((_, node)) = &test.transform
        && mapped
            .checks
            .iter()
            .any(|c| !matches!(c, CheckSpec::Script(s) if is_javascript(s)))
    {
        notes.push(Unmapped::new(
            "options.transform",
            node,
            "applied in javascript assertions only: gavel runs no transform code for its other checks, which see the raw answer",
        ));
    }
    if test.asserts.is_empty() {
        // promptfoo passes a test without assertions whenever the provider
        // answers; a gavel case without checks would be `skipped`.
        mapped.checks.push(CheckSpec::Regex {
            pattern: "(?s).*".into(),
            negate: false,
        });
    }
    let mut tags = mapped.tags;
    if naming.prompt.1 > 1 {
        tags.push(format!("prompt-{}", naming.prompt.0 + 1));
    }
    let id = unique(&naming.id(test.description.as_deref()), ids);
    let mut name = test.description.clone().unwrap_or_else(|| id.clone());
    if let (true, Some(label)) = (naming.prompt.1 > 1, label) {
        name = format!("{name} [{label}]");
    }
    let mut fields = Map::new();
    fields.insert("id".into(), Value::String(id));
    fields.insert("name".into(), Value::String(name));
    if inputs.len() == 1 {
        fields.insert("input".into(), inputs.remove(0));
    } else {
        let rounds: Vec<Value> = inputs.into_iter().map(|i| json!({"input": i})).collect();
        fields.insert("rounds".into(), Value::Array(rounds));
    }
    if !tags.is_empty() {
        fields.insert("tags".into(), json!(tags));
    }
    if !vars.is_empty() {
        fields.insert("context".into(), ctx_vars.clone());
    }
    let rag = mapped.checks.iter().any(|c| {
        matches!(
            c,
            CheckSpec::ContextRecall(_)
                | CheckSpec::ContextRelevance(_)
                | CheckSpec::ContextFaithfulness(_)
        )
    });
    if let (true, Some(context)) = (rag, vars.get("context")) {
        fields.insert("retrieved_context".into(), context.clone());
    }
    if let Some(t) = test.threshold {
        fields.insert("threshold".into(), json!(t));
    }
    // promptfoo sends each prompt once and grades the answer it gets: no
    // follow-up answers a clarifying question.
    fields.insert("max_followups".into(), json!(0));
    if !targets.is_empty() {
        fields.insert("targets".into(), json!(targets));
    }
    let mut case: Case =
        serde_json::from_value(Value::Object(fields)).map_err(|e| ImportError::Syntax {
            at: at.at(),
            message: format!("the converted case is not valid: {e}"),
        })?;
    case.checks = mapped.checks;
    Ok(Some(case))
}

/// A prompt's user messages rendered with the vars, the test's prefix and
/// suffix added; `None` (noted) when it has none.
fn prompt_inputs(
    test: &Test,
    prompt: &Prompt,
    vars: &Value,
    notes: &mut Vec<Unmapped>,
) -> Option<Vec<String>> {
    let mut rendered = |text: &str, node: &Node| match render(text, vars) {
        Ok(t) => t,
        Err(why) => {
            notes.push(Unmapped::new(
                "prompt template",
                node,
                format!("{why}; the text is kept as written"),
            ));
            text.to_owned()
        }
    };
    let mut inputs: Vec<String> = match &prompt.body {
        Body::Text(text) => vec![rendered(text, &prompt.node)],
        Body::Chat(messages) => messages
            .iter()
            .filter(|m| m.role == "user")
            .map(|m| rendered(&m.content, &m.node))
            .collect(),
    };
    let Some(first) = inputs.first_mut() else {
        notes.push(Unmapped::new(
            "prompt without a user message",
            &prompt.node,
            "a gavel case needs a user message",
        ));
        return None;
    };
    first.insert_str(0, &test.prefix);
    if let Some(last) = inputs.last_mut() {
        last.push_str(&test.suffix);
    }
    Some(inputs)
}
