//! What a suite makes the machine that runs it do beyond sending text to the
//! agent: run programs, open databases, read files and environment variables,
//! export elsewhere, call models with its credentials. [`case`], [`target`],
//! [`settings`] and [`load::capabilities`](crate::load::capabilities) name each
//! such part with its field; a front door that runs suites written by others
//! (the web UI) refuses those the operator did not configure (docs/SECURITY.md).

use std::fmt;

use crate::agent_check::Oracle;
use crate::panel::{ConsensusSpec, DagSpec, ProceduralSpec, ReactiveSpec};
use crate::target::{HttpTarget, McpServer};
use crate::{Case, CheckSpec, JudgeSettings, SimulatedUser, TargetSpec};

/// One thing a part of a suite does on the machine that runs it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Capability {
    /// A `script` check runs a program.
    Script,
    /// A grounding oracle's `command` runs a program.
    OracleCommand,
    /// A `command` target runs its agent as a process.
    CommandTarget,
    /// An http target's `start` or `restart.command` runs a process.
    Process,
    /// An `mcp-agent` target's stdio server runs a process.
    McpStdio,
    /// A `workspace` target, a case's `workspace` block or a `command` check runs
    /// a coding agent or commands in a copy of a repository.
    Workspace,
    /// A `database` check or a grounding oracle's `sql` opens a database (a
    /// file path or a URL, with the environment's passwords).
    Database,
    /// Reads a file on the machine (datasets, recordings, prompt templates,
    /// embedding model folders).
    FileRead,
    /// Puts environment variables (`${VAR}`, e.g. keys) into what a target sends.
    Environment,
    /// Exports the run's traces to an OpenTelemetry endpoint.
    Telemetry,
    /// Calls this model with the machine's provider credentials.
    Model(String),
}

impl Capability {
    /// What it does, for people.
    pub fn describe(&self) -> String {
        match self {
            Capability::Script => "a `script` check runs a program on the server".into(),
            Capability::OracleCommand => {
                "a grounding oracle's `command` runs a program on the server".into()
            }
            Capability::CommandTarget => "a `command` target runs a program on the server".into(),
            Capability::Process => {
                "a target's `start`/`restart` command runs a program on the server".into()
            }
            Capability::McpStdio => "a stdio MCP server runs a program on the server".into(),
            Capability::Workspace => {
                "a workspace runs a coding agent or commands on the server".into()
            }
            Capability::Database => "a database query opens a database from the server".into(),
            Capability::FileRead => "reads a file on the server".into(),
            Capability::Environment => {
                "`${VAR}` sends the server's environment variables (its keys) to a target".into()
            }
            Capability::Telemetry => {
                "exports runs to an OpenTelemetry endpoint with the server's settings".into()
            }
            Capability::Model(id) => format!(
                "model `{}` would be called with the server's provider credentials",
                crate::secrets::mask_url(id)
            ),
        }
    }
}

/// A capability and the field that asks for it (`rounds[0].checks[1]`,
/// `targets.agent.start`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Finding {
    /// The field, as validation errors name fields.
    pub field: String,
    /// What it does.
    pub capability: Capability,
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.field, self.capability.describe())
    }
}

/// Collects findings under a field path.
struct Scan<'a> {
    out: &'a mut Vec<Finding>,
}

impl Scan<'_> {
    fn add(&mut self, field: impl Into<String>, capability: Capability) {
        self.out.push(Finding {
            field: field.into(),
            capability,
        });
    }

    fn model(&mut self, field: impl Into<String>, model: Option<&String>) {
        if let Some(m) = model.filter(|m| !m.trim().is_empty()) {
            self.add(field, Capability::Model(m.clone()));
        }
    }
}

fn at(path: &str, name: &str) -> String {
    if path.is_empty() {
        name.to_owned()
    } else {
        format!("{path}.{name}")
    }
}

/// Every capability a case asks for: its checks (and its rounds'), and its
/// simulated user's model.
pub fn case(case: &Case) -> Vec<Finding> {
    let mut out = Vec::new();
    let mut scan = Scan { out: &mut out };
    checks(&mut scan, "", &case.checks);
    for (r, round) in case.rounds.iter().enumerate() {
        checks(&mut scan, &format!("rounds[{r}]"), &round.checks);
    }
    if let Some(SimulatedUser { model, .. }) = &case.simulated_user {
        scan.model("simulated_user.model", model.as_ref());
    }
    if case.workspace.is_some() {
        scan.add("workspace", Capability::Workspace);
    }
    out
}

/// Every capability a list of checks at `path` asks for (`checks[i]` under it).
pub fn check_list(path: &str, list: &[CheckSpec]) -> Vec<Finding> {
    let mut out = Vec::new();
    checks(&mut Scan { out: &mut out }, path, list);
    out
}

fn checks(scan: &mut Scan<'_>, path: &str, list: &[CheckSpec]) {
    for (i, c) in list.iter().enumerate() {
        check(scan, &at(path, &format!("checks[{i}]")), c);
    }
}

/// One check at `field`. Every kind is named: a new kind must say what it does.
fn check(scan: &mut Scan<'_>, field: &str, spec: &CheckSpec) {
    let model = |name: &str| at(field, name);
    match spec {
        CheckSpec::Script(_) => scan.add(field, Capability::Script),
        CheckSpec::Command(c) if c.run.is_some() => scan.add(field, Capability::Workspace),
        CheckSpec::Database(_) => scan.add(field, Capability::Database),
        CheckSpec::Grounding(g) => {
            match &g.oracle {
                Oracle::Value(_) => {}
                Oracle::Sql { .. } => scan.add(at(field, "oracle"), Capability::Database),
                Oracle::Command(_) => scan.add(at(field, "oracle"), Capability::OracleCommand),
            }
            scan.model(model("model"), g.model.as_ref());
        }
        CheckSpec::BranchIsolation { model: m, .. }
        | CheckSpec::Judge { model: m, .. }
        | CheckSpec::Rubric { model: m, .. }
        | CheckSpec::Pairwise { model: m, .. }
        | CheckSpec::SelectBest { model: m, .. } => scan.model(model("model"), m.as_ref()),
        CheckSpec::StepScore(s) => scan.model(model("model"), s.model.as_ref()),
        CheckSpec::GEval(s)
        | CheckSpec::Factuality(s)
        | CheckSpec::ClosedQa(s)
        | CheckSpec::AnswerRelevance(s)
        | CheckSpec::ContextRecall(s)
        | CheckSpec::ContextRelevance(s)
        | CheckSpec::ContextFaithfulness(s)
        | CheckSpec::Summarization(s)
        | CheckSpec::TaskCompletion(s)
        | CheckSpec::ConversationCompleteness(s)
        | CheckSpec::TurnRelevancy(s)
        | CheckSpec::ContextRetention(s)
        | CheckSpec::RoleAdherence(s) => scan.model(model("model"), s.model.as_ref()),
        CheckSpec::Procedural(p) => procedural(scan, field, p),
        CheckSpec::Consensus(c) => consensus(scan, field, c),
        CheckSpec::Reactive(r) => reactive(scan, field, r),
        CheckSpec::Dag(d) => dag(scan, field, d),
        CheckSpec::Equals { .. }
        | CheckSpec::Contains { .. }
        | CheckSpec::Icontains { .. }
        | CheckSpec::ContainsAny { .. }
        | CheckSpec::IcontainsAny { .. }
        | CheckSpec::NotContains { .. }
        | CheckSpec::Regex { .. }
        | CheckSpec::IsJson { .. }
        | CheckSpec::JsonSchema { .. }
        | CheckSpec::RequiredKeys { .. }
        | CheckSpec::NumericFields { .. }
        | CheckSpec::ToolsCalled { .. }
        | CheckSpec::ToolVerification(_)
        | CheckSpec::Trajectory(_)
        | CheckSpec::Latency { .. }
        | CheckSpec::Cost { .. }
        | CheckSpec::Stream { .. }
        | CheckSpec::Similar { .. }
        | CheckSpec::ArgumentValidity(_)
        | CheckSpec::HandoffCorrectness(_)
        | CheckSpec::CollaborationEfficiency(_)
        | CheckSpec::File(_)
        | CheckSpec::Diff(_)
        | CheckSpec::Command(_) => {}
    }
}

fn procedural(scan: &mut Scan<'_>, field: &str, p: &ProceduralSpec) {
    for (i, stage) in p.stages.iter().enumerate() {
        let stage_field = at(field, &format!("stages[{i}]"));
        if let Some(c) = &stage.check {
            check(scan, &at(&stage_field, "check"), c);
        }
        scan.model(at(&stage_field, "model"), stage.model.as_ref());
    }
}

fn consensus(scan: &mut Scan<'_>, field: &str, c: &ConsensusSpec) {
    for (i, judge) in c.judges.iter().enumerate() {
        scan.model(
            at(field, &format!("judges[{i}].model")),
            judge.model.as_ref(),
        );
    }
}

fn reactive(scan: &mut Scan<'_>, field: &str, r: &ReactiveSpec) {
    for (i, s) in r.specialists.iter().enumerate() {
        scan.model(
            at(field, &format!("specialists[{i}].model")),
            s.model.as_ref(),
        );
    }
    scan.model(at(field, "router_model"), r.router_model.as_ref());
    if let Some(deep) = &r.deep_dive {
        scan.model(at(field, "deep_dive.model"), deep.model.as_ref());
    }
    scan.model(at(field, "model"), r.model.as_ref());
}

fn dag(scan: &mut Scan<'_>, field: &str, d: &DagSpec) {
    for (i, node) in d.nodes.iter().enumerate() {
        scan.model(at(field, &format!("nodes[{i}].model")), node.model.as_ref());
    }
}

/// Every capability target `name` asks for (fields under `targets.NAME`).
pub fn target(name: &str, spec: &TargetSpec) -> Vec<Finding> {
    let mut out = Vec::new();
    let mut scan = Scan { out: &mut out };
    let field = format!("targets.{name}");
    match spec {
        TargetSpec::Command(_) => scan.add(field, Capability::CommandTarget),
        TargetSpec::Workspace(_) => scan.add(field, Capability::Workspace),
        TargetSpec::Http(h) => http(&mut scan, &field, h),
        TargetSpec::Chat(c) => scan.model(at(&field, "model"), Some(&c.model)),
        TargetSpec::McpAgent(m) => {
            scan.model(at(&field, "model"), Some(&m.model));
            for (i, server) in m.servers.iter().enumerate() {
                let server_field = at(&field, &format!("servers[{i}]"));
                match server {
                    McpServer::Stdio { .. } => scan.add(server_field, Capability::McpStdio),
                    McpServer::StreamableHttp { url } | McpServer::Sse { url } => {
                        if reads_env(url) {
                            scan.add(at(&server_field, "url"), Capability::Environment);
                        }
                    }
                }
            }
        }
        TargetSpec::Replay(r) => {
            if r.file.is_some() {
                scan.add(at(&field, "file"), Capability::FileRead);
            }
        }
    }
    out
}

fn http(scan: &mut Scan<'_>, field: &str, h: &HttpTarget) {
    if h.start.is_some() {
        scan.add(at(field, "start"), Capability::Process);
    }
    if let Some(restart) = &h.restart {
        if restart.command.is_some() {
            scan.add(at(field, "restart.command"), Capability::Process);
        }
        if restart.url.as_deref().is_some_and(reads_env) {
            scan.add(at(field, "restart.url"), Capability::Environment);
        }
    }
    if reads_env(&h.url) {
        scan.add(at(field, "url"), Capability::Environment);
    }
    for (name, value) in &h.headers {
        if reads_env(value) {
            scan.add(
                at(field, &format!("headers.{name}")),
                Capability::Environment,
            );
        }
    }
    if h.fork.as_ref().is_some_and(|f| reads_env(&f.url)) {
        scan.add(at(field, "fork.url"), Capability::Environment);
    }
}

/// Whether an "expanded" string reads the environment.
fn reads_env(text: &str) -> bool {
    text.contains("${")
}

/// Every capability a suite's `judge:` settings ask for: models, template
/// files, an embedding model folder.
pub fn settings(judge: &JudgeSettings) -> Vec<Finding> {
    let mut out = Vec::new();
    let mut scan = Scan { out: &mut out };
    scan.model("judge.model", judge.model.as_ref());
    for name in judge.templates.keys() {
        scan.add(format!("judge.templates.{name}"), Capability::FileRead);
    }
    if let Some(embedder) = judge.embedder.as_deref().map(str::trim) {
        match embedder {
            "" | "all-MiniLM-L6-v2" => {}
            id if id.contains(':') => scan.add("judge.embedder", Capability::Model(id.into())),
            _ => scan.add("judge.embedder", Capability::FileRead),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one_case(yaml: &str) -> Case {
        let suite = crate::load::parse_suite_str(yaml, "c.yaml".as_ref()).unwrap();
        suite.cases.into_iter().next().unwrap()
    }

    fn fields(found: &[Finding]) -> Vec<(&str, &Capability)> {
        found
            .iter()
            .map(|f| (f.field.as_str(), &f.capability))
            .collect()
    }

    #[test]
    fn code_databases_and_models_are_named_by_field_even_inside_panels() {
        let c = one_case(
            r#"
id: c
rounds:
  - input: hi
    checks:
      - {type: contains, value: ok}
      - {type: script, command: [id]}
  - input: again
    checks:
      - type: grounding
        claim: {pointer: /n}
        oracle: {command: [echo, "1"]}
      - {type: database, database: agent.db, query: "select 1"}
checks:
  - {type: judge, criteria: polite, model: "openai-compatible:any@http://127.0.0.1:9/v1"}
  - type: procedural
    stages:
      - {name: code, check: {type: script, shell: "id > /tmp/x"}}
      - {name: judge, criteria: ok, model: "openai:gpt-4o"}
"#,
        );
        let found = case(&c);
        assert_eq!(
            fields(&found),
            vec![
                (
                    "checks[0].model",
                    &Capability::Model("openai-compatible:any@http://127.0.0.1:9/v1".into())
                ),
                ("checks[1].stages[0].check", &Capability::Script),
                (
                    "checks[1].stages[1].model",
                    &Capability::Model("openai:gpt-4o".into())
                ),
                ("rounds[0].checks[1]", &Capability::Script),
                ("rounds[1].checks[0].oracle", &Capability::OracleCommand),
                ("rounds[1].checks[1]", &Capability::Database),
            ]
        );
        assert!(
            found[3].to_string().contains("runs a program"),
            "{}",
            found[3]
        );
    }

    #[test]
    fn a_case_workspace_and_a_command_check_that_runs_are_named() {
        let c = one_case(
            "id: c\ninput: fix it\nworkspace: {commit: abc, setup: [make]}\nchecks:\n  - {type: command, run: make test}\n  - {type: command, name: tests}\n  - {type: file, path: a.py}\n  - {type: diff, max_files: 1}\n",
        );
        let found = case(&c);
        assert_eq!(
            fields(&found),
            [
                ("checks[0]", &Capability::Workspace),
                ("workspace", &Capability::Workspace),
            ]
        );
    }

    #[test]
    fn plain_checks_ask_for_nothing() {
        let c = one_case(
            "id: c\ninput: hi\nchecks:\n  - {type: regex, pattern: a}\n  - {type: judge, criteria: ok}\n",
        );
        assert!(case(&c).is_empty());
    }

    #[test]
    fn targets_that_run_processes_or_read_the_environment_are_named() {
        let suite = crate::load::parse_suite_str(
            r#"
targets:
  cmd: {type: command, command: [agent]}
  web:
    type: http
    url: "http://127.0.0.1:1/${PATH_PART}"
    headers: {Authorization: "Bearer ${OPENAI_API_KEY}", X-Plain: fixed}
    start: {command: [serve]}
  tools:
    type: mcp-agent
    model: "openai:gpt-4o"
    servers:
      - {transport: stdio, command: [server]}
      - {transport: streamable-http, url: "http://127.0.0.1:2/mcp"}
  plain: {type: http, url: "http://127.0.0.1:3/"}
  recorded: {type: replay, file: /var/log/agent.jsonl}
  coder: {type: workspace, fixture: /srv/repo, agent: [claude, -p]}
cases:
  - {id: a, input: hi}
"#,
            "s.yaml".as_ref(),
        )
        .unwrap();
        let found: Vec<Finding> = suite
            .targets
            .iter()
            .flat_map(|(name, spec)| target(name, spec))
            .collect();
        assert_eq!(
            fields(&found),
            vec![
                ("targets.cmd", &Capability::CommandTarget),
                ("targets.coder", &Capability::Workspace),
                ("targets.recorded.file", &Capability::FileRead),
                (
                    "targets.tools.model",
                    &Capability::Model("openai:gpt-4o".into())
                ),
                ("targets.tools.servers[0]", &Capability::McpStdio),
                ("targets.web.start", &Capability::Process),
                ("targets.web.url", &Capability::Environment),
                (
                    "targets.web.headers.Authorization",
                    &Capability::Environment
                ),
            ]
        );
    }

    #[test]
    fn a_suite_text_is_scanned_without_reading_its_datasets() {
        let text = r#"
targets:
  cmd: {type: command, command: [agent]}
judge: {model: "openai:gpt-4o"}
defaults:
  checks: [{type: script, command: [id]}]
datasets:
  - {file: /etc/passwd.csv, case: {input: "{{ x }}"}}
otel: {endpoint: "http://collector.example:4318"}
cases:
  - {id: a, input: hi}
  - {id: b, input: hi, checks: [{type: database, database: x.db, query: "select 1"}]}
"#;
        let found = crate::load::capabilities(text, "stored.yaml".as_ref()).unwrap();
        assert_eq!(
            fields(&found),
            vec![
                ("targets.cmd", &Capability::CommandTarget),
                ("judge.model", &Capability::Model("openai:gpt-4o".into())),
                ("defaults.checks[0]", &Capability::Script),
                ("datasets[0].file", &Capability::FileRead),
                ("otel.endpoint", &Capability::Telemetry),
                ("cases[1].checks[0]", &Capability::Database),
            ]
        );
        let bad = crate::load::capabilities("cases: [{id: a, checks: 3}]", "s.yaml".as_ref());
        assert!(bad.is_err());
    }

    #[test]
    fn judge_settings_name_models_templates_and_embedder_folders() {
        let judge = JudgeSettings {
            model: Some("anthropic:claude".into()),
            embedder: Some("/models/mini".into()),
            templates: [("judge".to_owned(), "judge.j2".to_owned())].into(),
            ..JudgeSettings::default()
        };
        assert_eq!(
            fields(&settings(&judge)),
            vec![
                ("judge.model", &Capability::Model("anthropic:claude".into())),
                ("judge.templates.judge", &Capability::FileRead),
                ("judge.embedder", &Capability::FileRead),
            ]
        );
    }
}
