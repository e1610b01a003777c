//! The cache key: SHA-256 over a canonical serialization of the request,
//! written straight from the request's fields (no JSON tree is built: the key is
//! computed on every model call).

use serde::ser::{Serialize, SerializeMap, SerializeSeq, SerializeStruct, Serializer};
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::{ChatRequest, Message, ModelId, OutputSchema, ToolCallRequest, ToolDef};

/// Bumped whenever the key's material changes shape, so old entries are never
/// mistaken for answers to new requests. (2: streamed field order.)
const KEY_VERSION: u32 = 2;

/// The cache key of `request` to `model`: the hex SHA-256 of JSON holding a key
/// version, the model id and every field of the request, with the keys of every
/// free-form JSON object (schemas, tool parameters, tool-call arguments) sorted.
///
/// Every field of [`ChatRequest`] can change the answer, so none is left out:
/// `sample` makes repeats distinct samples and `template_hash` ties the entry to
/// the prompt template's version. What cannot change the answer (timeouts,
/// retries, rate limits, concurrency) lives in the layer settings, not in the
/// request, so it never reaches the key.
pub fn cache_key(model: &ModelId, request: &ChatRequest) -> String {
    // Destructured so that a new request field cannot be added without deciding
    // here whether it belongs in the key.
    let ChatRequest {
        system,
        messages,
        temperature,
        max_tokens,
        schema,
        tools,
        sample,
        template_hash,
        top_logprobs,
    } = request;
    let material = Material {
        v: KEY_VERSION,
        model: model.to_string(),
        system,
        messages: messages.iter().map(Msg).collect(),
        temperature,
        max_tokens,
        schema: schema.as_ref().map(Schema),
        tools: tools.iter().map(Tool).collect(),
        sample: *sample,
        template_hash,
        top_logprobs,
    };
    // Written out whole, then hashed in one pass: fed to the hasher piece by
    // piece, the serializer's many small writes each paid the hasher's overhead.
    let mut json = Vec::with_capacity(KEY_BUFFER);
    // Plain data into a Vec: serialization cannot fail.
    let _ = serde_json::to_writer(&mut json, &material);
    hex::encode(Sha256::digest(&json))
}

/// Bytes reserved for a request's key material: a judge prompt and its schema.
const KEY_BUFFER: usize = 8 * 1024;

#[derive(serde::Serialize)]
struct Material<'a> {
    v: u32,
    model: String,
    system: &'a Option<String>,
    messages: Vec<Msg<'a>>,
    temperature: &'a Option<f64>,
    max_tokens: &'a Option<u32>,
    schema: Option<Schema<'a>>,
    tools: Vec<Tool<'a>>,
    sample: u32,
    template_hash: &'a Option<String>,
    /// Left out when not asked for, so keys of requests without it are unchanged.
    #[serde(skip_serializing_if = "Option::is_none")]
    top_logprobs: &'a Option<u8>,
}

/// A JSON value with the keys of every object in sorted order (serde_json keeps
/// insertion order in this workspace, so equal schemas written in different key
/// orders would otherwise hash differently).
struct Sorted<'a>(&'a Value);

impl Serialize for Sorted<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            Value::Object(map) => {
                let mut entries: Vec<(&String, &Value)> = map.iter().collect();
                entries.sort_unstable_by(|a, b| a.0.cmp(b.0));
                let mut out = s.serialize_map(Some(entries.len()))?;
                for (key, value) in entries {
                    out.serialize_entry(key, &Sorted(value))?;
                }
                out.end()
            }
            Value::Array(items) => {
                let mut out = s.serialize_seq(Some(items.len()))?;
                for item in items {
                    out.serialize_element(&Sorted(item))?;
                }
                out.end()
            }
            other => other.serialize(s),
        }
    }
}

struct Msg<'a>(&'a Message);

impl Serialize for Msg<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let Message {
            role,
            content,
            tool_calls,
            tool_call_id,
        } = self.0;
        let mut out = s.serialize_struct("Message", 4)?;
        out.serialize_field("role", role)?;
        out.serialize_field("content", content)?;
        let calls: Vec<Call<'_>> = tool_calls.iter().map(Call).collect();
        out.serialize_field("tool_calls", &calls)?;
        out.serialize_field("tool_call_id", tool_call_id)?;
        out.end()
    }
}

struct Call<'a>(&'a ToolCallRequest);

impl Serialize for Call<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let ToolCallRequest {
            id,
            name,
            arguments,
        } = self.0;
        let mut out = s.serialize_struct("ToolCall", 3)?;
        out.serialize_field("id", id)?;
        out.serialize_field("name", name)?;
        out.serialize_field("arguments", &Sorted(arguments))?;
        out.end()
    }
}

struct Tool<'a>(&'a ToolDef);

impl Serialize for Tool<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let ToolDef {
            name,
            description,
            parameters,
        } = self.0;
        let mut out = s.serialize_struct("Tool", 3)?;
        out.serialize_field("name", name)?;
        out.serialize_field("description", description)?;
        out.serialize_field("parameters", &Sorted(parameters))?;
        out.end()
    }
}

struct Schema<'a>(&'a OutputSchema);

impl Serialize for Schema<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let OutputSchema { name, schema } = self.0;
        let mut out = s.serialize_struct("Schema", 2)?;
        out.serialize_field("name", name)?;
        out.serialize_field("schema", &Sorted(schema))?;
        out.end()
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn id() -> ModelId {
        "openai:gpt-5-mini".parse().unwrap()
    }

    #[test]
    fn keys_ignore_object_key_order_but_nothing_else() {
        let with_schema = |schema: Value| ChatRequest {
            messages: vec![Message::user("hi")],
            schema: Some(OutputSchema {
                name: "verdict".into(),
                schema,
            }),
            ..ChatRequest::default()
        };
        let a = with_schema(json!({"type": "object", "properties": {"b": {}, "a": {}}}));
        let b = with_schema(json!({"properties": {"a": {}, "b": {}}, "type": "object"}));
        assert_eq!(cache_key(&id(), &a), cache_key(&id(), &b));

        let key = cache_key(&id(), &a);
        assert_eq!(key.len(), 64);
        assert!(key.bytes().all(|c| c.is_ascii_hexdigit()));

        let c = with_schema(json!({"type": "object", "properties": {"a": {}}}));
        assert_ne!(cache_key(&id(), &a), cache_key(&id(), &c));
        let other: ModelId = "openai:gpt-5".parse().unwrap();
        assert_ne!(cache_key(&id(), &a), cache_key(&other, &a));

        // Tool-call arguments too; their values still count.
        let called = |arguments: Value| ChatRequest {
            messages: vec![Message {
                role: crate::Role::Assistant,
                content: String::new(),
                tool_calls: vec![ToolCallRequest {
                    id: "c1".into(),
                    name: "search".into(),
                    arguments,
                }],
                tool_call_id: None,
            }],
            ..ChatRequest::default()
        };
        assert_eq!(
            cache_key(&id(), &called(json!({"q": "x", "n": 1}))),
            cache_key(&id(), &called(json!({"n": 1, "q": "x"})))
        );
        assert_ne!(
            cache_key(&id(), &called(json!({"q": "x", "n": 1}))),
            cache_key(&id(), &called(json!({"q": "x", "n": 2})))
        );
    }

    #[test]
    fn every_request_field_changes_the_key() {
        let base = ChatRequest {
            messages: vec![Message::user("hi")],
            ..ChatRequest::default()
        };
        let variants = [
            ChatRequest {
                system: Some("be brief".into()),
                ..base.clone()
            },
            ChatRequest {
                messages: vec![Message::user("hi!")],
                ..base.clone()
            },
            ChatRequest {
                temperature: Some(0.0),
                ..base.clone()
            },
            ChatRequest {
                max_tokens: Some(10),
                ..base.clone()
            },
            ChatRequest {
                tools: vec![crate::ToolDef {
                    name: "t".into(),
                    description: String::new(),
                    parameters: json!({}),
                }],
                ..base.clone()
            },
            ChatRequest {
                sample: 1,
                ..base.clone()
            },
            ChatRequest {
                template_hash: Some("abc".into()),
                ..base.clone()
            },
        ];
        let mut keys = vec![cache_key(&id(), &base)];
        keys.extend(variants.iter().map(|r| cache_key(&id(), r)));
        let distinct: std::collections::BTreeSet<_> = keys.iter().collect();
        assert_eq!(distinct.len(), keys.len());
    }
}
