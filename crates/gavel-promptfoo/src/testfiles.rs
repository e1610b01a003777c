//! promptfoo `tests`: inline tests, and test files (CSV, JSON, JSONL, YAML,
//! globs) read into the same node shape, each row or item at its own line.

use std::path::{Path, PathBuf};
use std::rc::Rc;

use regex::Regex;

use crate::files::{extension, file_ref, resolve};
use crate::node::{Node, Val, read_text};
use crate::{ImportError, Unmapped};

/// One test as written, with the folder its relative paths resolve against.
#[derive(Debug, Clone)]
pub(crate) struct TestSrc {
    pub(crate) node: Node,
    pub(crate) base: PathBuf,
}

/// Reads the `tests` value into `out`.
pub(crate) fn read(
    tests: &Node,
    base: &Path,
    out: &mut Vec<TestSrc>,
    notes: &mut Vec<Unmapped>,
) -> Result<(), ImportError> {
    for item in tests.items() {
        match &item.val {
            Val::Str(s) => {
                let reference = file_ref(s).unwrap_or(s);
                for path in resolve(reference, base, item)? {
                    let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
                    for node in read_file(&path, item, notes)? {
                        out.push(TestSrc {
                            node,
                            base: dir.clone(),
                        });
                    }
                }
            }
            Val::Map(_) => out.push(TestSrc {
                node: item.clone(),
                base: base.to_owned(),
            }),
            _ => {
                return Err(ImportError::shape(
                    item,
                    "tests",
                    "expected a test or a test file path",
                ));
            }
        }
    }
    Ok(())
}

/// Loads a mapping from a `file://` YAML or JSON file (`vars`, `defaultTest`).
pub(crate) fn read_map(reference: &str, base: &Path, node: &Node) -> Result<Node, ImportError> {
    let paths = resolve(reference, base, node)?;
    let mut entries = Vec::new();
    let mut first = None;
    for path in paths {
        let text = read_text(&path, &node.at())?;
        let root = Node::parse(&text, &path.display().to_string())?;
        if !matches!(root.val, Val::Map(_)) {
            return Err(ImportError::shape(&root, reference, "expected a mapping"));
        }
        entries.extend(root.entries().iter().cloned());
        first.get_or_insert(root);
    }
    let mut root = first.ok_or_else(|| ImportError::shape(node, reference, "no file"))?;
    root.val = Val::Map(entries);
    Ok(root)
}

fn read_file(path: &Path, at: &Node, notes: &mut Vec<Unmapped>) -> Result<Vec<Node>, ImportError> {
    let shown = path.display().to_string();
    let ext = extension(path);
    if !matches!(ext.as_str(), "csv" | "json" | "jsonl" | "yaml" | "yml") {
        notes.push(Unmapped::new(
            format!("test file '{shown}'"),
            at,
            "gavel reads tests from CSV, JSON, JSONL and YAML files",
        ));
        return Ok(Vec::new());
    }
    let text = read_text(path, &at.at())?;
    match ext.as_str() {
        "csv" => csv_tests(&text, &shown),
        "jsonl" => text
            .lines()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty())
            .map(|(i, line)| {
                let mut node = Node::parse(line, &shown)?;
                shift(&mut node, i as u64);
                Ok(node)
            })
            .collect(),
        _ => {
            let root = Node::parse(&text, &shown)?;
            Ok(root.items().into_iter().cloned().collect())
        }
    }
}

/// Moves a node parsed from one line of a file to that line.
fn shift(node: &mut Node, by: u64) {
    node.line += by;
    match &mut node.val {
        Val::Seq(items) => items.iter_mut().for_each(|i| shift(i, by)),
        Val::Map(entries) => entries.iter_mut().for_each(|(_, v)| shift(v, by)),
        _ => {}
    }
}

/// CSV rows as tests: columns are vars; `__expected…`, `__description`,
/// `__prefix`, `__suffix`, `__threshold` and `__metric` are promptfoo's specials.
fn csv_tests(text: &str, file: &str) -> Result<Vec<Node>, ImportError> {
    let file: Rc<str> = Rc::from(file);
    let mut reader = csv::Reader::from_reader(text.as_bytes());
    let headers = reader
        .headers()
        .map_err(|e| ImportError::Syntax {
            at: format!("{file}:1"),
            message: e.to_string(),
        })?
        .clone();
    let mut tests = Vec::new();
    for record in reader.records() {
        let record = record.map_err(|e| ImportError::Syntax {
            at: format!("{file}:{}", e.position().map_or(0, |p| p.line())),
            message: e.to_string(),
        })?;
        let line = record.position().map_or(0, |p| p.line());
        let cell = |v: Val| Node::synthetic(v, &file, line);
        let (mut vars, mut asserts, mut entries, mut options) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        let mut metric = None;
        for (header, value) in headers.iter().zip(record.iter()) {
            let text = Val::Str(value.to_owned());
            match header {
                h if h.starts_with("__expected") => {
                    if !value.trim().is_empty() {
                        asserts.push(expected(value, &file, line));
                    }
                }
                "__description" => entries.push(("description".to_owned(), cell(text))),
                "__threshold" => entries.push(("threshold".to_owned(), cell(text))),
                "__prefix" => options.push(("prefix".to_owned(), cell(text))),
                "__suffix" => options.push(("suffix".to_owned(), cell(text))),
                "__metric" => metric = Some(value.to_owned()),
                h if h.starts_with("__") => entries.push((h.to_owned(), cell(text))),
                h => vars.push((h.to_owned(), cell(text))),
            }
        }
        if let Some(metric) = metric {
            for a in &mut asserts {
                if let Val::Map(e) = &mut a.val {
                    e.push((
                        "metric".to_owned(),
                        Node::synthetic(Val::Str(metric.clone()), &file, line),
                    ));
                }
            }
        }
        entries.push(("vars".to_owned(), cell(Val::Map(vars))));
        entries.push(("assert".to_owned(), cell(Val::Seq(asserts))));
        if !options.is_empty() {
            entries.push(("options".to_owned(), cell(Val::Map(options))));
        }
        tests.push(cell(Val::Map(entries)));
    }
    Ok(tests)
}

/// An `__expected` cell: `type:value`, `type(threshold):value`, `grade:` (=
/// `llm-rubric`), `fn:`/`eval:` (= `javascript`), else an `equals` value.
fn expected(cell: &str, file: &Rc<str>, line: u64) -> Node {
    let node = |v: Val| Node::synthetic(v, file, line);
    let parsed = Regex::new(r"(?s)^(not-)?([a-z][a-z0-9-]*)(?:\(([0-9.]+)\))?(?::\s?(.*))?$")
        .ok()
        .and_then(|re| {
            re.captures(cell).map(|c| {
                let get = |i| c.get(i).map(|m| m.as_str().to_owned());
                (get(1), get(2).unwrap_or_default(), get(3), get(4))
            })
        });
    let mut entries = Vec::new();
    match parsed {
        Some((not, kind, threshold, value))
            if crate::asserts::is_type(alias(&kind))
                && (value.is_some() || threshold.is_some() || !cell.contains(' ')) =>
        {
            let kind = format!("{}{}", not.unwrap_or_default(), alias(&kind));
            entries.push(("type".to_owned(), node(Val::Str(kind))));
            if let Some(v) = value {
                entries.push(("value".to_owned(), node(Val::Str(v))));
            }
            if let Some(t) = threshold.and_then(|t| serde_json::Number::from_f64(t.parse().ok()?)) {
                entries.push(("threshold".to_owned(), node(Val::Num(t))));
            }
        }
        _ => {
            entries.push(("type".to_owned(), node(Val::Str("equals".into()))));
            entries.push(("value".to_owned(), node(Val::Str(cell.to_owned()))));
        }
    }
    node(Val::Map(entries))
}

fn alias(kind: &str) -> &str {
    match kind {
        "grade" => "llm-rubric",
        "fn" | "eval" => "javascript",
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shown(n: &Node) -> String {
        n.to_json().to_string()
    }

    #[test]
    fn expected_cells_follow_promptfoo_shorthands() {
        let f: Rc<str> = Rc::from("t.csv");
        assert_eq!(
            shown(&expected("Paris", &f, 2)),
            r#"{"type":"equals","value":"Paris"}"#
        );
        assert_eq!(
            shown(&expected("contains: Paris", &f, 2)),
            r#"{"type":"contains","value":"Paris"}"#
        );
        assert_eq!(
            shown(&expected("grade: is polite", &f, 2)),
            r#"{"type":"llm-rubric","value":"is polite"}"#
        );
        assert_eq!(
            shown(&expected("similar(0.8):the capital", &f, 2)),
            r#"{"type":"similar","value":"the capital","threshold":0.8}"#
        );
        assert_eq!(
            shown(&expected("not-icontains:sorry", &f, 2)),
            r#"{"type":"not-icontains","value":"sorry"}"#
        );
        assert_eq!(
            shown(&expected("fn:output.length < 9", &f, 2)),
            r#"{"type":"javascript","value":"output.length < 9"}"#
        );
        assert_eq!(shown(&expected("is-json", &f, 2)), r#"{"type":"is-json"}"#);
        assert_eq!(
            shown(&expected("note: hello", &f, 2)),
            r#"{"type":"equals","value":"note: hello"}"#
        );
    }
}
