//! promptfoo `prompts`: inline text, chat JSON, `file://` text split on `---`,
//! chat message files (JSON, JSONL, YAML), globs, bare paths to files that
//! exist, and `{id|raw, label}` entries.

use std::path::Path;
use std::rc::Rc;

use crate::files::{extension, file_ref, is_code, resolve};
use crate::node::{Node, Val, read_text};
use crate::render::control_flow;
use crate::{ImportError, Unmapped};

/// One prompt: a template over a test's vars.
#[derive(Debug, Clone)]
pub(crate) struct Prompt {
    /// The label (given, else the file name or the text's start).
    pub(crate) label: String,
    pub(crate) body: Body,
    /// Where it was written.
    pub(crate) node: Node,
}

/// Plain text, or chat messages.
#[derive(Debug, Clone)]
pub(crate) enum Body {
    Text(String),
    Chat(Vec<Message>),
}

/// One chat message of a prompt.
#[derive(Debug, Clone)]
pub(crate) struct Message {
    pub(crate) role: String,
    pub(crate) content: String,
    pub(crate) node: Node,
}

/// Reads the `prompts` value.
pub(crate) fn read(
    prompts: &Node,
    base: &Path,
    notes: &mut Vec<Unmapped>,
) -> Result<Vec<Prompt>, ImportError> {
    let mut out = Vec::new();
    match &prompts.val {
        Val::Map(entries) => {
            // The legacy form: `{path-or-text: label}`.
            for (key, label) in entries {
                entry(
                    key,
                    label.as_str().map(str::to_owned),
                    label,
                    base,
                    notes,
                    &mut out,
                )?;
            }
        }
        _ => {
            for (i, item) in prompts.items().into_iter().enumerate() {
                match &item.val {
                    Val::Str(s) => entry(s, None, item, base, notes, &mut out)?,
                    Val::Map(_) if item.get("messages").is_some() => {
                        out.extend(messages(item, i, base, notes)?);
                    }
                    Val::Map(_) => {
                        let label = item.get("label").and_then(Node::scalar_text);
                        let text = item
                            .get("raw")
                            .or_else(|| item.get("id"))
                            .and_then(Node::as_str)
                            .ok_or_else(|| {
                                ImportError::shape(
                                    item,
                                    format!("prompts[{i}]"),
                                    "a prompt object needs `raw` or `id` text",
                                )
                            })?;
                        for (key, value) in item.entries() {
                            if !matches!(key.as_str(), "raw" | "id" | "label") {
                                notes.push(Unmapped::new(
                                    format!("prompt field '{key}'"),
                                    value,
                                    "gavel prompts are text or chat messages",
                                ));
                            }
                        }
                        entry(text, label, item, base, notes, &mut out)?;
                    }
                    _ => {
                        return Err(ImportError::shape(
                            item,
                            format!("prompts[{i}]"),
                            "expected a prompt text, `file://` path or `{raw|id, label}` object",
                        ));
                    }
                }
            }
        }
    }
    Ok(out)
}

fn entry(
    text: &str,
    label: Option<String>,
    node: &Node,
    base: &Path,
    notes: &mut Vec<Unmapped>,
    out: &mut Vec<Prompt>,
) -> Result<(), ImportError> {
    let Some(reference) = file_ref(text).or_else(|| bare_path(text, base)) else {
        let body = inline_chat(text, node).unwrap_or_else(|| Body::Text(text.to_owned()));
        out.push(Prompt {
            label: label.unwrap_or_else(|| short(text)),
            body,
            node: node.clone(),
        });
        return Ok(());
    };
    if is_code(reference) {
        notes.push(Unmapped::new(
            format!("prompt function '{text}'"),
            node,
            "gavel runs no prompt code; render its prompts to a text file",
        ));
        return Ok(());
    }
    for path in resolve(reference, base, node)? {
        let shown = path.display().to_string();
        let content = read_text(&path, &node.at())?;
        let name = path
            .file_name()
            .map_or_else(|| shown.clone(), |n| n.to_string_lossy().into_owned());
        let label = label.clone().unwrap_or(name);
        let file: Rc<str> = Rc::from(shown.as_str());
        match extension(&path).as_str() {
            "json" | "yaml" | "yml" => {
                let root = match chat_template(&content, &shown) {
                    Some(root) => root,
                    None => Node::parse(&content, &shown)?,
                };
                match chat(&root) {
                    Some(messages) => out.push(Prompt {
                        label,
                        body: Body::Chat(messages),
                        node: root,
                    }),
                    None => out.push(Prompt {
                        label,
                        body: Body::Text(content.clone()),
                        node: Node::synthetic(Val::Null, &file, 1),
                    }),
                }
            }
            "jsonl" => {
                for (i, line) in content.lines().enumerate() {
                    if line.trim().is_empty() {
                        continue;
                    }
                    let at = Node::synthetic(Val::Null, &file, i as u64 + 1);
                    let messages = inline_chat(line, &at).ok_or_else(|| {
                        ImportError::shape(
                            &at,
                            "prompt",
                            "each JSONL line must be a chat message list",
                        )
                    })?;
                    out.push(Prompt {
                        label: format!("{label}:{}", i + 1),
                        body: messages,
                        node: at,
                    });
                }
            }
            _ => {
                let parts = split_segments(&content);
                let many = parts.len() > 1;
                for (n, (line, part)) in parts.into_iter().enumerate() {
                    out.push(Prompt {
                        label: if many {
                            format!("{label}:{}", n + 1)
                        } else {
                            label.clone()
                        },
                        body: Body::Text(part),
                        node: Node::synthetic(Val::Null, &file, line),
                    });
                }
            }
        }
    }
    Ok(())
}

/// Extensions that make promptfoo read a prompt text as a path.
const PATH_EXTENSIONS: [&str; 14] = [
    ".cjs", ".cts", ".j2", ".js", ".json", ".jsonl", ".md", ".mjs", ".mts", ".py", ".ts", ".txt",
    ".yml", ".yaml",
];

/// A prompt written as a path without `file://`, as promptfoo reads one: text
/// that looks like a path (promptfoo's `maybeFilePath`: a slash, backslash or
/// `*`, a known extension, or a dot 3 or 4 characters from the end; no line
/// break, no URL) and names a file under `base`, or a glob matching one
/// (promptfoo sends other text, and a glob matching nothing, as it is).
fn bare_path<'a>(text: &'a str, base: &Path) -> Option<&'a str> {
    if text.contains('\n') || text.contains("://") {
        return None;
    }
    let extension = text
        .rsplit(':')
        .take(2)
        .any(|t| PATH_EXTENSIONS.iter().any(|e| t.ends_with(e)));
    let dot = [2, 3]
        .iter()
        .any(|&n| text.chars().rev().nth(n) == Some('.'));
    if !(extension || dot || text.contains(['/', '\\', '*'])) {
        return None;
    }
    // Code may name its function: `prompts.py:make`.
    let path = match is_code(text) {
        true => text.split(':').next().unwrap_or(text),
        false => text,
    };
    let exists = if path.contains(['*', '?', '[']) {
        glob::glob(&base.join(path).display().to_string())
            .is_ok_and(|mut found| found.any(|p| p.is_ok_and(|p| p.is_file())))
    } else {
        base.join(path).is_file()
    };
    exists.then_some(text)
}

/// A `{label, messages: [{role, content}]}` prompt: chat messages, each content
/// inline or a `file://` text read whole.
fn messages(
    item: &Node,
    i: usize,
    base: &Path,
    notes: &mut Vec<Unmapped>,
) -> Result<Option<Prompt>, ImportError> {
    let field = || format!("prompts[{i}].messages");
    let mut out = Vec::new();
    for m in item.get("messages").map(Node::items).unwrap_or_default() {
        let (Some(role), Some(content)) = (
            m.get("role").and_then(Node::as_str),
            m.get("content").and_then(Node::scalar_text),
        ) else {
            return Err(ImportError::shape(
                m,
                field(),
                "each message needs a `role` and a text `content`",
            ));
        };
        let content = match file_ref(&content) {
            Some(reference) if is_code(reference) => {
                notes.push(Unmapped::new(
                    format!("prompt message content '{content}'"),
                    m,
                    "gavel runs no prompt code, so the prompt was left out",
                ));
                return Ok(None);
            }
            Some(reference) => {
                let mut text = String::new();
                for path in resolve(reference, base, m)? {
                    text.push_str(&read_text(&path, &m.at())?);
                }
                text
            }
            None => content,
        };
        out.push(Message {
            role: role.to_owned(),
            content,
            node: m.clone(),
        });
    }
    if out.is_empty() {
        return Err(ImportError::shape(item, field(), "no messages"));
    }
    let label = item
        .get("label")
        .and_then(Node::scalar_text)
        .unwrap_or_else(|| format!("messages {}", i + 1));
    Ok(Some(Prompt {
        label,
        body: Body::Chat(out),
        node: item.clone(),
    }))
}

/// A chat file built with `{% … %}` tags (a loop over promptfoo's
/// `_conversation`, the earlier turns of a multi-turn test, which a gavel case
/// does not carry: empty here) parsed once its control flow is rendered; its
/// `{{ … }}` stay templates, rendered per test. `None` when it has no tags or
/// does not parse so.
fn chat_template(content: &str, file: &str) -> Option<Node> {
    if !content.contains("{%") {
        return None;
    }
    let rendered = control_flow(content, &serde_json::json!({"_conversation": []})).ok()?;
    Node::parse(&rendered, file).ok()
}

/// Text split on lines that are exactly `---`: each part with its first line.
fn split_segments(content: &str) -> Vec<(u64, String)> {
    let mut parts = Vec::new();
    let mut start = 1;
    let mut current: Vec<&str> = Vec::new();
    for (i, line) in content.lines().enumerate() {
        if line.trim_end() == "---" {
            parts.push((start, current.join("\n")));
            current.clear();
            start = i as u64 + 2;
        } else {
            current.push(line);
        }
    }
    parts.push((start, current.join("\n")));
    parts
        .into_iter()
        .map(|(l, t)| (l, t.trim().to_owned()))
        .filter(|(_, t)| !t.is_empty())
        .collect()
}

/// Inline text that is a JSON list of `{role, content}` messages.
fn inline_chat(text: &str, node: &Node) -> Option<Body> {
    if !text.trim_start().starts_with('[') {
        return None;
    }
    let parsed = Node::parse(text, &node.file).ok()?;
    // Lines inside an inline string count from the string's own line.
    let mut messages = chat(&parsed)?;
    for m in &mut messages {
        m.node.line = node.line + m.node.line.saturating_sub(1);
    }
    Some(Body::Chat(messages))
}

/// A list of `{role, content}` messages with text content.
fn chat(root: &Node) -> Option<Vec<Message>> {
    let Val::Seq(items) = &root.val else {
        return None;
    };
    items
        .iter()
        .map(|item| {
            Some(Message {
                role: item.get("role")?.as_str()?.to_owned(),
                content: item.get("content")?.scalar_text()?,
                node: item.clone(),
            })
        })
        .collect::<Option<Vec<_>>>()
        .filter(|m| !m.is_empty())
}

fn short(text: &str) -> String {
    let line = text.lines().next().unwrap_or_default().trim();
    let cut: String = line.chars().take(40).collect();
    if cut.len() < line.len() {
        format!("{cut}…")
    } else {
        cut
    }
}
