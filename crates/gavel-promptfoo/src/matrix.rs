//! Prompts as targets. promptfoo's `select-best` compares every prompt ×
//! provider output of a test at once, where a gavel case's `select-best`
//! compares its targets. So when a test has one and there are several prompts,
//! each test becomes one case and each (prompt, provider) a chat target named
//! `PROVIDER#N` for prompt N: the prompt's user message is its `user` template
//! (rendered per case over the `context`, the test's vars) and its system
//! messages its `system`. The whole config then takes this form, or none of it
//! does (with a note saying why).

use std::collections::BTreeMap;

use gavel_core::TargetSpec;
use serde_json::{Map, Value};

use crate::Unmapped;
use crate::cases::{Named, runs, system};
use crate::merge::Test;
use crate::node::Node;
use crate::prompts::{Body, Prompt};
use crate::render::renders_alike;

/// A test with its var sets and the notes taken reading it.
pub(crate) struct Planned<'a> {
    pub(crate) node: &'a Node,
    pub(crate) test: Test,
    pub(crate) sets: Vec<Map<String, Value>>,
    pub(crate) notes: Vec<Unmapped>,
}

/// The targets of the prompt × provider matrix; every case runs all of them.
pub(crate) struct Matrix {
    pub(crate) targets: BTreeMap<String, TargetSpec>,
    pub(crate) names: Vec<String>,
}

/// The matrix, when a test compares its outputs with `select-best`, prompts are
/// several and every (prompt, provider) can be a chat target sending the prompt
/// as it is rendered for each test; else `None` (with a note when a
/// `select-best` is left comparing each prompt's own targets).
pub(crate) fn plan(
    named: &[Named<'_>],
    prompts: &[Prompt],
    tests: &[Planned<'_>],
    templates: Option<&Node>,
    notes: &mut Vec<Unmapped>,
) -> Option<Matrix> {
    let run = prompts
        .iter()
        .filter(|prompt| named.iter().any(|(_, p)| runs(p, prompt)))
        .count();
    if run < 2 {
        return None;
    }
    let select = tests
        .iter()
        .flat_map(|t| &t.test.asserts)
        .find_map(|(node, _)| select_best(node, templates))?;
    match build(named, prompts, tests) {
        Ok((matrix, system_notes)) => {
            notes.extend(system_notes);
            Some(matrix)
        }
        Err(why) => {
            notes.push(Unmapped::new(
                "select-best across prompts",
                select,
                format!("{why}, so each prompt's case compares only its own targets (promptfoo compares every prompt × provider output of a test)"),
            ));
            None
        }
    }
}

fn build(
    named: &[Named<'_>],
    prompts: &[Prompt],
    tests: &[Planned<'_>],
) -> Result<(Matrix, Vec<Unmapped>), String> {
    let mut notes = Vec::new();
    let mut matrix = Matrix {
        targets: BTreeMap::new(),
        names: Vec::new(),
    };
    if tests
        .iter()
        .any(|t| !t.test.prefix.is_empty() || !t.test.suffix.is_empty())
    {
        return Err("a test has a prefix or suffix".into());
    }
    for (k, prompt) in prompts.iter().enumerate() {
        if !named.iter().any(|(_, p)| runs(p, prompt)) {
            continue;
        }
        let user = user_message(prompt)
            .ok_or_else(|| format!("prompt '{}' has not exactly one user message", prompt.label))?;
        if let Some(vars) = tests
            .iter()
            .flat_map(|t| &t.sets)
            .find(|vars| !renders_alike(user, vars))
        {
            return Err(format!(
                "prompt '{}' renders differently as a target's template (minijinja, undefined variables are errors) over the vars {}",
                prompt.label,
                Value::Object((*vars).clone())
            ));
        }
        let system = system(prompt, &mut notes);
        for (name, provider) in named.iter().filter(|(_, p)| runs(p, prompt)) {
            let TargetSpec::Chat(chat) = &provider.spec else {
                return Err(format!("target '{name}' is not a chat target"));
            };
            let mut chat = chat.clone();
            chat.system = system.clone();
            chat.user = Some(user.to_owned());
            let own = format!("{name}#{}", k + 1);
            matrix.targets.insert(own.clone(), TargetSpec::Chat(chat));
            matrix.names.push(own);
        }
    }
    Ok((matrix, notes))
}

/// The one user message of a prompt.
fn user_message(prompt: &Prompt) -> Option<&str> {
    match &prompt.body {
        Body::Text(text) => Some(text),
        Body::Chat(messages) => {
            let mut users = messages.iter().filter(|m| m.role == "user");
            let first = users.next()?;
            users.next().is_none().then_some(first.content.as_str())
        }
    }
}

/// The first `select-best` assertion in `node` (a `$ref` followed, an
/// `assert-set` searched).
fn select_best<'a>(node: &'a Node, templates: Option<&'a Node>) -> Option<&'a Node> {
    let node = node
        .get("$ref")
        .and_then(Node::as_str)
        .and_then(|r| r.strip_prefix("#/assertionTemplates/"))
        .and_then(|name| templates?.get(name))
        .unwrap_or(node);
    match node.get("type").and_then(Node::as_str) {
        Some("select-best") => Some(node),
        Some("assert-set") => node
            .get("assert")
            .map(Node::items)
            .unwrap_or_default()
            .into_iter()
            .find_map(|a| select_best(a, templates)),
        _ => None,
    }
}
