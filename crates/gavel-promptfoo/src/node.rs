//! A YAML (or JSON) document as a tree whose every node knows its file and line,
//! so that anything left unmapped can be reported as `file:line`.

use std::fmt;
use std::path::Path;
use std::rc::Rc;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Value;
use serde_saphyr::Spanned;

use crate::ImportError;

/// One node: its value, and where it was written.
#[derive(Debug, Clone)]
pub(crate) struct Node {
    pub(crate) val: Val,
    pub(crate) file: Rc<str>,
    pub(crate) line: u64,
}

/// A node's value.
#[derive(Debug, Clone)]
pub(crate) enum Val {
    Null,
    Bool(bool),
    Num(serde_json::Number),
    Str(String),
    Seq(Vec<Node>),
    Map(Vec<(String, Node)>),
}

impl Node {
    /// Parses YAML or JSON text read from `file`.
    pub(crate) fn parse(text: &str, file: &str) -> Result<Node, ImportError> {
        let options = serde_saphyr::options! { strict_booleans: true };
        let raw: Spanned<Raw> =
            serde_saphyr::from_str_with_options(text, options).map_err(|e| {
                let at = match e.location() {
                    Some(l) => format!("{file}:{}:{}", l.line(), l.column()),
                    None => file.to_owned(),
                };
                let message = e.to_string();
                let message = message.lines().next().unwrap_or_default().to_owned();
                ImportError::Syntax { at, message }
            })?;
        Ok(Node::from_raw(raw, &Rc::from(file)))
    }

    /// A node made by the converter (a CSV cell, a default), placed at `file:line`.
    pub(crate) fn synthetic(val: Val, file: &Rc<str>, line: u64) -> Node {
        Node {
            val,
            file: file.clone(),
            line,
        }
    }

    fn from_raw(raw: Spanned<Raw>, file: &Rc<str>) -> Node {
        let val = match raw.value {
            Raw::Null => Val::Null,
            Raw::Bool(b) => Val::Bool(b),
            Raw::Num(n) => Val::Num(n),
            Raw::Str(s) => Val::Str(s),
            Raw::Seq(items) => {
                Val::Seq(items.into_iter().map(|i| Node::from_raw(i, file)).collect())
            }
            Raw::Map(entries) => Val::Map(
                entries
                    .into_iter()
                    .map(|(k, v)| (k, Node::from_raw(v, file)))
                    .collect(),
            ),
        };
        Node {
            val,
            file: file.clone(),
            line: raw.referenced.line(),
        }
    }

    /// `file:line` of this node.
    pub(crate) fn at(&self) -> String {
        format!("{}:{}", self.file, self.line)
    }

    /// The value under `key` of a mapping.
    pub(crate) fn get(&self, key: &str) -> Option<&Node> {
        match &self.val {
            Val::Map(entries) => entries.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    /// The mapping's entries (none for other nodes).
    pub(crate) fn entries(&self) -> &[(String, Node)] {
        match &self.val {
            Val::Map(entries) => entries,
            _ => &[],
        }
    }

    /// The text of a string node.
    pub(crate) fn as_str(&self) -> Option<&str> {
        match &self.val {
            Val::Str(s) => Some(s),
            _ => None,
        }
    }

    /// A scalar as text (strings, numbers and booleans).
    pub(crate) fn scalar_text(&self) -> Option<String> {
        match &self.val {
            Val::Str(s) => Some(s.clone()),
            Val::Num(n) => Some(n.to_string()),
            Val::Bool(b) => Some(b.to_string()),
            _ => None,
        }
    }

    /// A number node as f64 (numeric strings too, as CSV cells are).
    pub(crate) fn as_f64(&self) -> Option<f64> {
        match &self.val {
            Val::Num(n) => n.as_f64(),
            Val::Str(s) => s.trim().parse().ok(),
            _ => None,
        }
    }

    /// The node as JSON.
    pub(crate) fn to_json(&self) -> Value {
        match &self.val {
            Val::Null => Value::Null,
            Val::Bool(b) => Value::Bool(*b),
            Val::Num(n) => Value::Number(n.clone()),
            Val::Str(s) => Value::String(s.clone()),
            Val::Seq(items) => Value::Array(items.iter().map(Node::to_json).collect()),
            Val::Map(entries) => Value::Object(
                entries
                    .iter()
                    .map(|(k, v)| (k.clone(), v.to_json()))
                    .collect(),
            ),
        }
    }

    /// The node's items: a sequence's, or the node itself.
    pub(crate) fn items(&self) -> Vec<&Node> {
        match &self.val {
            Val::Seq(items) => items.iter().collect(),
            _ => vec![self],
        }
    }
}

/// Reads a text file as the loader reads suites
/// ([`gavel_core::bounds::read_text`]): a regular file (a device or FIFO is
/// refused before it is opened) of at most 64 MiB, UTF-8.
pub(crate) fn read_text(path: &Path, referenced_at: &str) -> Result<String, ImportError> {
    gavel_core::bounds::read_text(path).map_err(|e| ImportError::File {
        at: referenced_at.to_owned(),
        path: path.display().to_string(),
        message: e.to_string(),
    })
}

/// The raw parse with a span on every child.
enum Raw {
    Null,
    Bool(bool),
    Num(serde_json::Number),
    Str(String),
    Seq(Vec<Spanned<Raw>>),
    Map(Vec<(String, Spanned<Raw>)>),
}

impl<'de> Deserialize<'de> for Raw {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(RawVisitor)
    }
}

struct RawVisitor;

impl<'de> Visitor<'de> for RawVisitor {
    type Value = Raw;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any YAML node")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Raw, A::Error> {
        let mut entries = Vec::new();
        while let Some(key) = map.next_key::<String>()? {
            entries.push((key, map.next_value::<Spanned<Raw>>()?));
        }
        Ok(Raw::Map(entries))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Raw, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element::<Spanned<Raw>>()? {
            items.push(item);
        }
        Ok(Raw::Seq(items))
    }

    fn visit_str<E: de::Error>(self, s: &str) -> Result<Raw, E> {
        Ok(Raw::Str(s.to_owned()))
    }

    fn visit_string<E: de::Error>(self, s: String) -> Result<Raw, E> {
        Ok(Raw::Str(s))
    }

    fn visit_bool<E: de::Error>(self, b: bool) -> Result<Raw, E> {
        Ok(Raw::Bool(b))
    }

    fn visit_i64<E: de::Error>(self, n: i64) -> Result<Raw, E> {
        Ok(Raw::Num(n.into()))
    }

    fn visit_u64<E: de::Error>(self, n: u64) -> Result<Raw, E> {
        Ok(Raw::Num(n.into()))
    }

    fn visit_f64<E: de::Error>(self, n: f64) -> Result<Raw, E> {
        Ok(serde_json::Number::from_f64(n).map_or(Raw::Null, Raw::Num))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Raw, E> {
        Ok(Raw::Null)
    }

    fn visit_none<E: de::Error>(self) -> Result<Raw, E> {
        Ok(Raw::Null)
    }
}
