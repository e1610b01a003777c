//! The loader's first pass over a YAML or JSON text: its shape, every number
//! checked finite (`.nan`, `.inf` and `1e400` are refused, naming the field
//! path; typed `f64` fields would otherwise take them as they are), and the
//! top-level values other than cases read as JSON values. The cases are only
//! walked here; the second pass reads them.

use std::cell::RefCell;
use std::fmt::{self, Write};

use serde::de::{self, Deserialize, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

use super::parse::{CASE_KEYS, SUITE_KEYS};

/// A document's top-level shape, its numbers all finite.
pub(crate) enum Outline {
    /// A list (of cases).
    List,
    /// A mapping: a suite when it has a suite key, else one case. `header`
    /// holds its values other than cases; `examples` counts the cases under
    /// `examples` (seed 002's, graded by the rubric).
    Map {
        suite: bool,
        header: Map<String, Value>,
        examples: usize,
    },
    /// Nothing.
    Empty,
    /// A lone scalar.
    Scalar,
}

impl<'de> Deserialize<'de> for Outline {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let path = RefCell::new(String::new());
        d.deserialize_any(Top(&path))
    }
}

/// The field path being read (`cases[2].timeout_s`), one buffer for the whole
/// document: a step is appended on the way down and cut on the way back.
type Path = RefCell<String>;

/// Runs `read` with `step` appended to the path.
fn at<T>(path: &Path, step: impl fmt::Display, index: bool, read: impl FnOnce() -> T) -> T {
    let len = path.borrow().len();
    {
        let mut p = path.borrow_mut();
        if index {
            let _ = write!(p, "[{step}]");
        } else if len == 0 {
            let _ = write!(p, "{step}");
        } else {
            let _ = write!(p, ".{step}");
        }
    }
    let out = read();
    path.borrow_mut().truncate(len);
    out
}

/// A number, refused unless finite.
fn finite<E: de::Error>(path: &Path, v: f64) -> Result<f64, E> {
    crate::bounds::finite(v).map_err(|e| {
        let path = path.borrow();
        match path.is_empty() {
            true => E::custom(e),
            false => E::custom(format!("`{path}`: {e}")),
        }
    })
}

struct Top<'p>(&'p Path);

impl<'de> Visitor<'de> for Top<'_> {
    type Value = Outline;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a suite, a list of cases or one case")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Outline, A::Error> {
        let mut i = 0usize;
        while at(self.0, i, true, || seq.next_element_seed(Node(self.0)))?.is_some() {
            i += 1;
        }
        Ok(Outline::List)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Outline, A::Error> {
        let (mut suite, mut header, mut examples) = (false, Map::new(), 0);
        while let Some(key) = map.next_key::<KeyText>()? {
            let key = key.0;
            suite |= SUITE_KEYS.contains(&key.as_str());
            if CASE_KEYS.contains(&key.as_str()) {
                let count = at(self.0, &key, false, || map.next_value_seed(Node(self.0)))?;
                if key == "examples" {
                    examples += count;
                }
            } else {
                let value = at(self.0, &key, false, || map.next_value_seed(Tree(self.0)))?;
                header.insert(key, value);
            }
        }
        Ok(Outline::Map {
            suite,
            header,
            examples,
        })
    }

    fn visit_unit<E: de::Error>(self) -> Result<Outline, E> {
        Ok(Outline::Empty)
    }

    fn visit_none<E: de::Error>(self) -> Result<Outline, E> {
        Ok(Outline::Empty)
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Outline, E> {
        finite(self.0, v).map(|_| Outline::Scalar)
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Outline, E> {
        Ok(Outline::Scalar)
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Outline, E> {
        Ok(Outline::Scalar)
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Outline, E> {
        Ok(Outline::Scalar)
    }

    fn visit_str<E: de::Error>(self, _: &str) -> Result<Outline, E> {
        Ok(Outline::Scalar)
    }
}

/// A mapping key as text (a non-string key as its JSON text).
struct KeyText(String);

impl<'de> Deserialize<'de> for KeyText {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(d)?;
        Ok(KeyText(match value {
            Value::String(s) => s,
            other => other.to_string(),
        }))
    }
}

/// A node only walked: its numbers checked, nothing kept but, for a
/// sequence, how many elements it has (0 for anything else).
#[derive(Clone, Copy)]
struct Node<'p>(&'p Path);

impl<'de> DeserializeSeed<'de> for Node<'_> {
    type Value = usize;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<usize, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Node<'_> {
    type Value = usize;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any YAML node")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<usize, A::Error> {
        while let Some(key) = map.next_key::<KeyText>()? {
            at(self.0, key.0, false, || map.next_value_seed(self))?;
        }
        Ok(0)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<usize, A::Error> {
        let mut i = 0usize;
        while at(self.0, i, true, || seq.next_element_seed(self))?.is_some() {
            i += 1;
        }
        Ok(i)
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<usize, E> {
        finite(self.0, v).map(|_| 0)
    }

    fn visit_str<E: de::Error>(self, _: &str) -> Result<usize, E> {
        Ok(0)
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<usize, E> {
        Ok(0)
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> Result<usize, E> {
        Ok(0)
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> Result<usize, E> {
        Ok(0)
    }

    fn visit_i128<E: de::Error>(self, _: i128) -> Result<usize, E> {
        Ok(0)
    }

    fn visit_u128<E: de::Error>(self, _: u128) -> Result<usize, E> {
        Ok(0)
    }

    fn visit_bytes<E: de::Error>(self, _: &[u8]) -> Result<usize, E> {
        Ok(0)
    }

    fn visit_unit<E: de::Error>(self) -> Result<usize, E> {
        Ok(0)
    }

    fn visit_none<E: de::Error>(self) -> Result<usize, E> {
        Ok(0)
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<usize, D::Error> {
        d.deserialize_any(self)
    }
}

/// A node read as a JSON value, its numbers checked.
#[derive(Clone, Copy)]
struct Tree<'p>(&'p Path);

impl<'de> DeserializeSeed<'de> for Tree<'_> {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Tree<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any YAML node")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut out = Map::new();
        while let Some(key) = map.next_key::<KeyText>()? {
            let value = at(self.0, &key.0, false, || map.next_value_seed(self))?;
            out.insert(key.0, value);
        }
        Ok(Value::Object(out))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut out = Vec::new();
        while let Some(v) = at(self.0, out.len(), true, || seq.next_element_seed(self))? {
            out.push(v);
        }
        Ok(Value::Array(out))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Value, E> {
        finite(self.0, v).map(Value::from)
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_i128<E: de::Error>(self, v: i128) -> Result<Value, E> {
        Ok(Value::from(v as f64))
    }

    fn visit_u128<E: de::Error>(self, v: u128) -> Result<Value, E> {
        Ok(Value::from(v as f64))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_none<E: de::Error>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
}
