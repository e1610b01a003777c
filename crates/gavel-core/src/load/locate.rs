//! Where a field of a case sits in its YAML file: `checks[0].nodes[1].no` of the
//! case at `suite.yaml:12` → `suite.yaml:15:23`. Used for errors found after
//! loading (check compilation), which know only the case and the field path.

use std::fmt;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_saphyr::Spanned;

/// A YAML node with the position of every child.
enum Node {
    Map(Vec<(String, Spanned<Node>)>),
    Seq(Vec<Spanned<Node>>),
    Scalar,
}

impl<'de> Deserialize<'de> for Node {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(NodeVisitor)
    }
}

struct NodeVisitor;

impl<'de> Visitor<'de> for NodeVisitor {
    type Value = Node;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any YAML node")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Node, A::Error> {
        let mut entries = Vec::new();
        // Keys as written (`no`, not YAML 1.1's false).
        while let Some(key) = map.next_key::<String>()? {
            entries.push((key, map.next_value::<Spanned<Node>>()?));
        }
        Ok(Node::Map(entries))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Node, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element::<Spanned<Node>>()? {
            items.push(item);
        }
        Ok(Node::Seq(items))
    }

    fn visit_str<E: de::Error>(self, _: &str) -> Result<Node, E> {
        Ok(Node::Scalar)
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Node, E> {
        Ok(Node::Scalar)
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Node, E> {
        Ok(Node::Scalar)
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Node, E> {
        Ok(Node::Scalar)
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Node, E> {
        Ok(Node::Scalar)
    }

    fn visit_unit<E: de::Error>(self) -> Result<Node, E> {
        Ok(Node::Scalar)
    }

    fn visit_none<E: de::Error>(self) -> Result<Node, E> {
        Ok(Node::Scalar)
    }
}

/// One step of a field path.
enum Step<'a> {
    Key(&'a str),
    Index(usize),
}

/// `checks[0].nodes[1].no` → checks, 0, nodes, 1, no.
fn steps(field: &str) -> Vec<Step<'_>> {
    let mut out = Vec::new();
    for part in field.split('.').filter(|p| !p.is_empty()) {
        let (key, rest) = part.split_once('[').unwrap_or((part, ""));
        if !key.is_empty() {
            out.push(Step::Key(key));
        }
        for index in rest.split('[') {
            if let Ok(i) = index.trim_end_matches(']').parse() {
                out.push(Step::Index(i));
            }
        }
    }
    out
}

/// `file:line:column` of `field` in the case defined at `source` (`file:line`):
/// the deepest part of the path found in the YAML file. `None` when the file
/// cannot be read or parsed as YAML, or the case is not found in it (a dataset
/// row, a JSON file).
pub fn locate(source: &str, field: &str) -> Option<String> {
    let (file, line) = source.rsplit_once(':')?;
    let line: u32 = line.parse().ok()?;
    let text = crate::bounds::read_text(file.as_ref()).ok()?;
    let root: Node = serde_saphyr::from_str(&text).ok()?;
    let Node::Map(top) = root else {
        return None;
    };
    let cases = top
        .iter()
        .find(|(k, _)| matches!(k.as_str(), "cases" | "examples" | "test_cases"))?;
    let Node::Seq(cases) = &cases.1.value else {
        return None;
    };
    let mut at = cases
        .iter()
        .find(|c| c.referenced.line() == u64::from(line))?;
    for step in steps(field) {
        let next = match (step, &at.value) {
            (Step::Key(k), Node::Map(entries)) => {
                entries.iter().find(|(e, _)| e == k).map(|(_, v)| v)
            }
            (Step::Index(i), Node::Seq(items)) => items.get(i),
            _ => None,
        };
        match next {
            Some(n) => at = n,
            None => break,
        }
    }
    Some(format!(
        "{file}:{}:{}",
        at.referenced.line(),
        at.referenced.column()
    ))
}

#[cfg(test)]
mod tests {
    use super::locate;

    #[test]
    fn fields_resolve_to_their_line_and_column() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let path = dir.path().join("s.yaml");
        let yaml = "cases:\n  - id: a\n    input: q\n  - id: b\n    input: q\n    checks:\n      - type: dag\n        nodes:\n          - {name: x, binary: q, yes: y, no: z}\n";
        std::fs::write(&path, yaml).unwrap_or_else(|e| panic!("{e}"));
        let file = path.display().to_string();
        let at = |field: &str| locate(&format!("{file}:4"), field);
        assert_eq!(at("checks[0].nodes[0].no"), Some(format!("{file}:9:46")));
        assert_eq!(at("checks[0].nodes[0]"), Some(format!("{file}:9:13")));
        // The deepest part found: the unknown key stops at the node.
        assert_eq!(
            at("checks[0].nodes[0].weight"),
            Some(format!("{file}:9:13"))
        );
        assert_eq!(
            locate(&format!("{file}:3"), "checks"),
            None,
            "no case starts on line 3"
        );
        assert_eq!(locate("missing.yaml:1", "checks"), None);
    }
}
