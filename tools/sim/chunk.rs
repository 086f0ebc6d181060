//! The JSON of one response's chunks in the OpenAI chunk format, and the size of the
//! smallest oversized line it can make (which the profile file is checked against). A leaf:
//! it knows neither profiles nor plans, so both `profile.rs` and `stream.rs` can use it.
use serde_json::{json, Map, Value};

/// Builds the chunk JSON of one response.
pub struct Chunker<'a> {
    pub id: String,
    /// `None`: the chunks have no `model` field (`no_model`).
    pub model: Option<String>,
    pub reasoning_field: &'a str,
}

impl Chunker<'_> {
    pub fn object(&self, object: &str, choices: Value) -> Map<String, Value> {
        let mut m = Map::new();
        m.insert("id".into(), Value::from(self.id.as_str()));
        m.insert("object".into(), Value::from(object));
        m.insert("created".into(), Value::from(0));
        if let Some(model) = &self.model {
            m.insert("model".into(), Value::from(model.as_str()));
        }
        m.insert("choices".into(), choices);
        m
    }

    pub fn chunk(&self, delta: Value, finish: Option<&str>) -> String {
        let choices = json!([{"index": 0, "delta": delta, "finish_reason": finish}]);
        Value::Object(self.object("chat.completion.chunk", choices)).to_string()
    }

    pub fn content(&self, text: &str) -> String {
        self.chunk(json!({"content": text}), None)
    }

    pub fn reasoning(&self, text: &str) -> String {
        let mut delta = Map::new();
        delta.insert(self.reasoning_field.to_string(), Value::from(text));
        self.chunk(Value::Object(delta), None)
    }

    /// A content chunk cut around its (empty) content: `(before, after)`, so that
    /// `before + text + after` is the chunk of `text` for any JSON-safe `text`.
    pub fn content_halves(&self) -> (String, String) {
        let chunk = self.content("");
        // The first `"content":"` is the key: in any string value it would be escaped.
        let at = chunk.find(r#""content":""#).map(|i| i + r#""content":""#.len()).unwrap_or(chunk.len());
        (chunk[..at].to_string(), chunk[at..].to_string())
    }
}

/// The shortest `oversized_bytes` a provider can have: its oversized chunk with no filler,
/// for the longest request id (`chatcmpl-<slug>-<u64::MAX>`).
pub fn oversized_line_min_bytes(slug: &str, model: &str) -> u64 {
    let c = Chunker { id: format!("chatcmpl-{slug}-{}", u64::MAX), model: Some(model.into()), reasoning_field: "" };
    let (before, after) = c.content_halves();
    ("data: ".len() + before.len() + after.len()) as u64
}
