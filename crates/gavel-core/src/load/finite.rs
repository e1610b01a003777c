//! One pass over a YAML or JSON text that refuses NaN and infinities anywhere
//! (`.nan`, `.inf`, `1e400`), naming the field path; typed `f64` fields would
//! otherwise take them as they are.

use std::fmt;

use serde::de::{self, Deserialize, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

/// A whole document whose numbers are all finite.
pub(crate) struct Finite;

impl<'de> Deserialize<'de> for Finite {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(Node(String::new())).map(|()| Finite)
    }
}

/// A node at a field path (`cases[2].timeout_s`).
struct Node(String);

impl Node {
    fn child(&self, step: &str) -> Node {
        match (self.0.is_empty(), step.starts_with('[')) {
            (true, _) | (false, true) => Node(format!("{}{step}", self.0)),
            (false, false) => Node(format!("{}.{step}", self.0)),
        }
    }
}

impl<'de> DeserializeSeed<'de> for Node {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Node {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any YAML node")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(key) = map.next_key::<Value>()? {
            let step = match &key {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            map.next_value_seed(self.child(&step))?;
        }
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let mut i = 0usize;
        while seq
            .next_element_seed(self.child(&format!("[{i}]")))?
            .is_some()
        {
            i += 1;
        }
        Ok(())
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<(), E> {
        match crate::bounds::finite(v) {
            Ok(_) => Ok(()),
            Err(e) if self.0.is_empty() => Err(E::custom(e)),
            Err(e) => Err(E::custom(format!("`{}`: {e}", self.0))),
        }
    }

    fn visit_str<E: de::Error>(self, _: &str) -> Result<(), E> {
        Ok(())
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<(), E> {
        Ok(())
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> Result<(), E> {
        Ok(())
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> Result<(), E> {
        Ok(())
    }

    fn visit_i128<E: de::Error>(self, _: i128) -> Result<(), E> {
        Ok(())
    }

    fn visit_u128<E: de::Error>(self, _: u128) -> Result<(), E> {
        Ok(())
    }

    fn visit_bytes<E: de::Error>(self, _: &[u8]) -> Result<(), E> {
        Ok(())
    }

    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_none<E: de::Error>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}
