//! The JSON of one response's chunks in the OpenAI chunk format, of the text-carrying events of
//! the Responses and Messages grammars, and the size of the smallest oversized line each can
//! make (which the profile file is checked against). A leaf: it knows neither profiles nor
//! plans, so both `profile.rs` and the grammars' renderers in `stream/` can use it.
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

/// The Responses grammar's event data (`stream/responses.rs` renders the stream).
pub mod responses {
    use serde_json::{json, Map, Value};

    /// The fields that `dialect.no_indices` leaves out.
    const INDICES: [&str; 4] = ["sequence_number", "output_index", "content_index", "summary_index"];

    /// The data of one event: `type`, then `sequence_number` (when numbered), then `fields`;
    /// without the index fields when `indexed` is false.
    pub fn event(ty: &str, seq: Option<u64>, fields: Value, indexed: bool) -> Value {
        let mut m = Map::new();
        m.insert("type".into(), ty.into());
        if let (Some(seq), true) = (seq, indexed) {
            m.insert("sequence_number".into(), seq.into());
        }
        if let Value::Object(fields) = fields {
            for (k, v) in fields {
                if indexed || !INDICES.contains(&k.as_str()) {
                    m.insert(k, v);
                }
            }
        }
        Value::Object(m)
    }

    /// The data of an `output_text.delta`.
    pub fn text_delta(seq: u64, item_id: &str, output_index: usize, delta: &str, indexed: bool) -> Value {
        let fields = json!({
            "item_id": item_id, "output_index": output_index, "content_index": 0, "delta": delta, "logprobs": [],
        });
        event("response.output_text.delta", Some(seq), fields, indexed)
    }

    /// The shortest `oversized_bytes` a provider can have on this API: its oversized
    /// `output_text.delta` data line with no filler, for the longest item id and sequence number.
    pub fn oversized_line_min_bytes(slug: &str) -> u64 {
        let id = format!("msg_{slug}-{}", u64::MAX);
        ("data: ".len() + text_delta(u64::MAX, &id, 1, "", true).to_string().len()) as u64
    }
}

/// The Messages grammar's text delta (`stream/messages.rs` renders the stream).
pub mod messages {
    use serde_json::{json, Value};

    /// The data of a `text_delta` of block `index`.
    pub fn text_delta(index: usize, text: &str) -> Value {
        json!({"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": text}})
    }

    /// The shortest `oversized_bytes` a provider can have on this API: its oversized
    /// `text_delta` data line with no filler.
    pub fn oversized_line_min_bytes() -> u64 {
        ("data: ".len() + text_delta(1, "").to_string().len()) as u64
    }
}
