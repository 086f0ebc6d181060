//! One event of an OpenAI Responses or Anthropic Messages stream, read into the fields a chat
//! chunk gives (answer and reasoning text, finish reason, usage, model, the provider's id) and
//! what the event is in its grammar (docs/reference/wire-apis.md has both tables).
//!
//! Every event is dispatched on its JSON `type`, else on its SSE `event:` name, so data-only
//! streams and streams with `event:` lines read alike. Index, `sequence_number` and
//! `output_index` fields are not required: real servers leave them out.
use super::{Chunk, ChunkFields, Usage};
use crate::vocab::WireApi;
use serde::de::{Deserializer, IgnoredAny, MapAccess, Visitor};
use serde::Deserialize;
use serde_json::Value;
use std::borrow::Cow;

/// What one event is in its grammar.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Kind {
    /// Opens the response: `response.created`, `message_start`.
    Opened,
    /// Answer or reasoning text (in the chunk's fields), or an event of the grammar that
    /// carries none: never a first token unless it carries text.
    Content,
    /// Messages: a content block starts, has a delta, or stops (the block's `index`, when the
    /// event has one).
    BlockStart(Option<u64>),
    BlockDelta(Option<u64>),
    BlockStop(Option<u64>),
    /// Allowed anywhere, even before the response opens: Messages' `ping` keep-alive, and
    /// Responses' `response.queued` (a background response waiting for its turn).
    Ping,
    /// The response is over: `response.completed`, `response.incomplete`, `message_stop`.
    Terminal,
    /// `response.failed`: the provider failed the response.
    Failed,
    /// An `error` event.
    Error,
}

/// The grammar's reading of one event: its kind and its name (the JSON `type`, else the SSE
/// event name, else empty).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    pub kind: Kind,
    pub name: String,
}

/// The chat-completions words for a finish reason, from a Messages `stop_reason`.
fn messages_finish(reason: &str) -> String {
    match reason {
        "end_turn" | "stop_sequence" => "stop",
        "max_tokens" | "model_context_window_exceeded" => "length",
        "refusal" => "content_filter",
        "tool_use" => "tool_calls",
        other => other,
    }
    .to_string()
}

/// The chat-completions words for a Responses `incomplete_details.reason`.
fn incomplete_finish(reason: &str) -> String {
    match reason {
        "max_output_tokens" => "length",
        other => other,
    }
    .to_string()
}

fn count(value: Option<&Value>) -> Option<i64> {
    value.and_then(Value::as_i64).filter(|n| *n >= 0)
}

fn string(value: Option<&Value>) -> Option<String> {
    value.and_then(Value::as_str).filter(|s| !s.is_empty()).map(str::to_string)
}

fn text(value: Option<&Value>) -> String {
    value.and_then(Value::as_str).unwrap_or_default().to_string()
}

/// A Responses usage object in the chat completions' terms.
fn responses_usage(u: Option<&Value>) -> Usage {
    let Some(u) = u.filter(|u| u.is_object()) else { return Usage::default() };
    Usage {
        prompt_tokens: count(u.get("input_tokens")),
        completion_tokens: count(u.get("output_tokens")),
        total_tokens: count(u.get("total_tokens")),
        cached_tokens: count(u.get("input_tokens_details").and_then(|d| d.get("cached_tokens"))),
    }
}

/// A Messages usage object in the chat completions' terms: every input token counts as a
/// prompt token (Anthropic's `input_tokens` leaves out those read from or written to the cache).
fn messages_usage(u: Option<&Value>) -> Usage {
    let Some(u) = u.filter(|u| u.is_object()) else { return Usage::default() };
    let cache_read = count(u.get("cache_read_input_tokens"));
    let cache_write = count(u.get("cache_creation_input_tokens"));
    let prompt = count(u.get("input_tokens")).map(|n| n + cache_read.unwrap_or(0) + cache_write.unwrap_or(0));
    let completion = count(u.get("output_tokens"));
    Usage { prompt_tokens: prompt, completion_tokens: completion, total_tokens: None, cached_tokens: cache_read }
}

/// Reads one event of `api`'s grammar (not chat completions') from its JSON object.
pub fn read(api: WireApi, event_name: Option<&str>, value: Value) -> Chunk {
    let name = value.get("type").and_then(Value::as_str).or(event_name).unwrap_or_default().to_string();
    let mut fields = ChunkFields::default();
    let mut provider_request_id = None;
    let kind = match api {
        WireApi::Responses => responses(&name, &value, &mut fields, &mut provider_request_id),
        WireApi::Messages => messages(&name, &value, &mut fields, &mut provider_request_id),
        WireApi::ChatCompletions => unreachable!("chat chunks are read by Chunk::read"),
    };
    Chunk { fields, provider_request_id, value: Some(value), event: Some(Event { kind, name }) }
}

fn responses(name: &str, v: &Value, fields: &mut ChunkFields, id: &mut Option<String>) -> Kind {
    let response = v.get("response");
    if let Some(r) = response {
        *id = string(r.get("id"));
        fields.model = string(r.get("model"));
    }
    match name {
        "response.created" => Kind::Opened,
        "response.queued" => Kind::Ping,
        "response.output_text.delta" | "response.refusal.delta" => {
            fields.answer = text(v.get("delta"));
            Kind::Content
        }
        "response.reasoning_summary_text.delta" | "response.reasoning_text.delta" => {
            fields.reasoning = text(v.get("delta"));
            Kind::Content
        }
        "response.completed" | "response.incomplete" => {
            let r = response.unwrap_or(&Value::Null);
            fields.usage = responses_usage(r.get("usage"));
            fields.finish_reason = Some(if name == "response.completed" {
                "stop".to_string()
            } else {
                let reason = r.get("incomplete_details").and_then(|d| d.get("reason")).and_then(Value::as_str);
                incomplete_finish(reason.unwrap_or("incomplete"))
            });
            Kind::Terminal
        }
        "response.failed" => {
            fields.usage = responses_usage(response.and_then(|r| r.get("usage")));
            Kind::Failed
        }
        "error" => Kind::Error,
        _ => Kind::Content,
    }
}

fn messages(name: &str, v: &Value, fields: &mut ChunkFields, id: &mut Option<String>) -> Kind {
    let index = v.get("index").and_then(Value::as_u64);
    match name {
        "message_start" => {
            let m = v.get("message").unwrap_or(&Value::Null);
            *id = string(m.get("id"));
            fields.model = string(m.get("model"));
            fields.usage = messages_usage(m.get("usage"));
            Kind::Opened
        }
        "content_block_start" => {
            // A block may start with text of its own (the official servers send it empty).
            let block = v.get("content_block").unwrap_or(&Value::Null);
            match block.get("type").and_then(Value::as_str) {
                Some("text") => fields.answer = text(block.get("text")),
                Some("thinking") => fields.reasoning = text(block.get("thinking")),
                _ => {}
            }
            Kind::BlockStart(index)
        }
        "content_block_delta" => {
            let delta = v.get("delta").unwrap_or(&Value::Null);
            match delta.get("type").and_then(Value::as_str) {
                Some("text_delta") => fields.answer = text(delta.get("text")),
                Some("thinking_delta") => fields.reasoning = text(delta.get("thinking")),
                _ => {}
            }
            Kind::BlockDelta(index)
        }
        "content_block_stop" => Kind::BlockStop(index),
        "message_delta" => {
            fields.usage = messages_usage(v.get("usage"));
            fields.finish_reason =
                v.get("delta").and_then(|d| d.get("stop_reason")).and_then(Value::as_str).map(messages_finish);
            Kind::Content
        }
        "message_stop" => Kind::Terminal,
        "ping" => Kind::Ping,
        "error" => Kind::Error,
        _ => Kind::Content,
    }
}

// ---------------------------------------------------------------------------------------
// The fast reading of the events that carry text: most of every stream, one per token.

/// The members of a text-carrying event the fast reading takes: its `type`, its `delta` (a
/// string on Responses, an object on Messages) and its `index`. Any other member is skipped
/// (read as JSON all the same); a member of another type, or a duplicated one, fails the
/// reading, and the event is read the general way instead.
#[derive(Deserialize)]
struct Hot<'a> {
    #[serde(rename = "type", borrow, default)]
    kind: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    delta: Option<HotDelta<'a>>,
    #[serde(default)]
    index: Option<u64>,
    /// Present on a Responses event, the general reading takes the response's id and model.
    #[serde(default)]
    response: Option<IgnoredAny>,
}

/// A `delta` member: a string (Responses) or a Messages delta object's `type`, `text` and
/// `thinking` strings (any other member skipped).
enum HotDelta<'a> {
    Text(Cow<'a, str>),
    Block { kind: Option<Cow<'a, str>>, text: Option<Cow<'a, str>>, thinking: Option<Cow<'a, str>> },
}

impl<'de: 'a, 'a> Deserialize<'de> for HotDelta<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for V<'a> {
            type Value = HotDelta<'a>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a string or an object")
            }
            fn visit_borrowed_str<E>(self, s: &'de str) -> Result<Self::Value, E> {
                Ok(HotDelta::Text(Cow::Borrowed(s)))
            }
            fn visit_str<E>(self, s: &str) -> Result<Self::Value, E> {
                Ok(HotDelta::Text(Cow::Owned(s.to_string())))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let (mut kind, mut text, mut thinking) = (None, None, None);
                while let Some(key) = map.next_key::<Cow<'de, str>>()? {
                    let slot = match key.as_ref() {
                        "type" => &mut kind,
                        "text" => &mut text,
                        "thinking" => &mut thinking,
                        _ => {
                            map.next_value::<IgnoredAny>()?;
                            continue;
                        }
                    };
                    if slot.is_some() {
                        return Err(serde::de::Error::custom("a duplicated member"));
                    }
                    *slot = Some(map.next_value::<Cow<'de, str>>()?);
                }
                Ok(HotDelta::Block { kind, text, thinking })
            }
        }
        d.deserialize_any(V(std::marker::PhantomData))
    }
}

/// Reads a text-carrying event of `api` without a JSON tree (`response.output_text.delta`,
/// `response.reasoning_*_text.delta`, `content_block_delta` with `text_delta` or
/// `thinking_delta`); `None` for any other event, or one this reading does not model exactly
/// (the general reading, [`read`], then reads it; both give the same chunk for every event the
/// fast one accepts, which the tests below hold them to).
pub fn fast(api: WireApi, event_name: Option<&str>, text: &str) -> Option<Chunk> {
    // serde's derive would also read the struct from a JSON list, member by member.
    if !text.trim_start_matches([' ', '\t', '\n', '\r']).starts_with('{') {
        return None;
    }
    let hot: Hot = serde_json::from_str(text).ok()?;
    if hot.response.is_some() {
        return None;
    }
    let name = hot.kind.as_deref().or(event_name)?;
    let mut fields = ChunkFields::default();
    let kind = match (api, name, hot.delta) {
        (WireApi::Responses, "response.output_text.delta" | "response.refusal.delta", Some(HotDelta::Text(t))) => {
            fields.answer = t.into_owned();
            Kind::Content
        }
        (
            WireApi::Responses,
            "response.reasoning_summary_text.delta" | "response.reasoning_text.delta",
            Some(HotDelta::Text(t)),
        ) => {
            fields.reasoning = t.into_owned();
            Kind::Content
        }
        (WireApi::Messages, "content_block_delta", Some(HotDelta::Block { kind, text, thinking })) => {
            match kind.as_deref() {
                Some("text_delta") => fields.answer = text.map(Cow::into_owned).unwrap_or_default(),
                Some("thinking_delta") => fields.reasoning = thinking.map(Cow::into_owned).unwrap_or_default(),
                _ => {}
            }
            Kind::BlockDelta(hot.index)
        }
        _ => return None,
    };
    let event = Event { kind, name: name.to_string() };
    Some(Chunk { fields, provider_request_id: None, value: None, event: Some(event) })
}

/// The message of an error a grammar reports: an `error` event's (`error.message`, Anthropic;
/// `message`, OpenAI Responses) or a failed response's (`response.error.message`).
pub fn error_message(value: &Value) -> Option<&str> {
    let error = value.get("error").or_else(|| value.get("response").and_then(|r| r.get("error")));
    error.and_then(|e| e.get("message")).or_else(|| value.get("message")).and_then(Value::as_str)
}

/// The error object a grammar reports, to quote: `error` (Anthropic), `response.error` (a
/// failed response), else the event itself (an OpenAI Responses `error` event).
pub fn error_object(value: &Value) -> &Value {
    value.get("error").or_else(|| value.get("response").and_then(|r| r.get("error"))).unwrap_or(value)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn kind_of(api: WireApi, value: Value) -> (Kind, ChunkFields, Option<String>) {
        let c = read(api, None, value);
        (c.event.unwrap().kind, c.fields, c.provider_request_id)
    }

    #[test]
    fn responses_events_fall_in_their_channels() {
        let r = WireApi::Responses;
        let (k, f, id) =
            kind_of(r, json!({"type": "response.created", "response": {"id": "resp_1", "model": "m", "usage": null}}));
        assert_eq!((k, f.model.as_deref(), id.as_deref()), (Kind::Opened, Some("m"), Some("resp_1")));
        let (k, f, _) = kind_of(r, json!({"type": "response.output_text.delta", "delta": "Hi", "item_id": "x"}));
        assert_eq!((k, f.answer.as_str(), f.reasoning.as_str()), (Kind::Content, "Hi", ""));
        for t in ["response.reasoning_summary_text.delta", "response.reasoning_text.delta"] {
            let (_, f, _) = kind_of(r, json!({"type": t, "delta": "hm"}));
            assert_eq!((f.answer.as_str(), f.reasoning.as_str()), ("", "hm"), "{t}");
        }
        for t in [
            "response.in_progress",
            "response.output_item.added",
            "response.content_part.added",
            "response.output_text.done",
        ] {
            let (k, f, _) = kind_of(r, json!({"type": t, "text": "the whole text", "part": {"text": ""}}));
            assert_eq!((k, f), (Kind::Content, ChunkFields::default()), "{t}: structure carries no text");
        }
        let usage = json!({"input_tokens": 12, "input_tokens_details": {"cached_tokens": 4}, "output_tokens": 7,
            "output_tokens_details": {"reasoning_tokens": 2}, "total_tokens": 19});
        let (k, f, _) = kind_of(r, json!({"type": "response.completed", "response": {"id": "resp_1", "usage": usage}}));
        assert_eq!((k, f.finish_reason.as_deref()), (Kind::Terminal, Some("stop")));
        assert_eq!(
            f.usage,
            Usage {
                prompt_tokens: Some(12),
                completion_tokens: Some(7),
                total_tokens: Some(19),
                cached_tokens: Some(4)
            }
        );
        let incomplete = json!({"type": "response.incomplete",
            "response": {"incomplete_details": {"reason": "max_output_tokens"}, "usage": usage}});
        assert_eq!(kind_of(r, incomplete).1.finish_reason.as_deref(), Some("length"), "a token ceiling is length");
        assert_eq!(
            kind_of(r, json!({"type": "response.failed", "response": {"error": {"message": "x"}}})).0,
            Kind::Failed
        );
        assert_eq!(kind_of(r, json!({"type": "error", "message": "boom"})).0, Kind::Error);
        assert_eq!(kind_of(r, json!({"type": "response.queued", "response": {"status": "queued"}})).0, Kind::Ping);
        // Data-only events are dispatched on their JSON type; an event without one on its SSE name.
        let c = read(r, Some("response.output_text.delta"), json!({"delta": "x"}));
        assert_eq!(c.fields.answer, "x");
    }

    #[test]
    fn messages_events_fall_in_their_channels() {
        let m = WireApi::Messages;
        let start = json!({"type": "message_start", "message": {"id": "msg_1", "model": "claude", "usage":
            {"input_tokens": 3, "cache_read_input_tokens": 90, "cache_creation_input_tokens": 7, "output_tokens": 1}}});
        let (k, f, id) = kind_of(m, start);
        assert_eq!((k, id.as_deref(), f.model.as_deref()), (Kind::Opened, Some("msg_1"), Some("claude")));
        assert_eq!(
            f.usage,
            Usage { prompt_tokens: Some(100), completion_tokens: Some(1), total_tokens: None, cached_tokens: Some(90) }
        );
        let (k, f, _) = kind_of(
            m,
            json!({"type": "content_block_start", "index": 1, "content_block": {"type": "text", "text": ""}}),
        );
        assert_eq!((k, f.answer.as_str()), (Kind::BlockStart(Some(1)), ""));
        let (k, f, _) = kind_of(
            m,
            json!({"type": "content_block_delta", "index": 1, "delta": {"type": "text_delta", "text": "Hi"}}),
        );
        assert_eq!((k, f.answer.as_str()), (Kind::BlockDelta(Some(1)), "Hi"));
        let (_, f, _) = kind_of(
            m,
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "so"}}),
        );
        assert_eq!((f.answer.as_str(), f.reasoning.as_str()), ("", "so"));
        for delta in [
            json!({"type": "signature_delta", "signature": "abc"}),
            json!({"type": "input_json_delta", "partial_json": "{"}),
        ] {
            let (_, f, _) = kind_of(m, json!({"type": "content_block_delta", "index": 0, "delta": delta}));
            assert_eq!(f, ChunkFields::default());
        }
        assert_eq!(kind_of(m, json!({"type": "content_block_stop"})).0, Kind::BlockStop(None));
        let (_, f, _) = kind_of(
            m,
            json!({"type": "message_delta", "delta": {"stop_reason": "max_tokens"}, "usage": {"output_tokens": 9}}),
        );
        assert_eq!(
            (f.finish_reason.as_deref(), f.usage.completion_tokens, f.usage.prompt_tokens),
            (Some("length"), Some(9), None)
        );
        assert_eq!(kind_of(m, json!({"type": "message_stop"})).0, Kind::Terminal);
        assert_eq!(kind_of(m, json!({"type": "ping"})).0, Kind::Ping);
        let error = json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}});
        assert_eq!(error_message(&error), Some("Overloaded"));
        assert_eq!(error_object(&error), &json!({"type": "overloaded_error", "message": "Overloaded"}));
    }

    /// The general reading of `text` (as `Chunk::read_on` falls back to it), without the tree
    /// it keeps (the fast reading keeps none: no error event is read by it).
    fn general(api: WireApi, name: Option<&str>, text: &str) -> Option<Chunk> {
        match crate::lenient_json::parse(text) {
            Some(value @ Value::Object(_)) => Some(Chunk { value: None, ..read(api, name, value) }),
            _ => None,
        }
    }

    #[test]
    fn the_fast_reading_takes_the_text_events_and_agrees_with_the_general_one() {
        let cases = [
            (
                WireApi::Responses,
                r#"{"type":"response.output_text.delta","item_id":"m","output_index":1,"content_index":0,"delta":"Hi \"x\"\n","logprobs":[],"sequence_number":7}"#,
            ),
            (WireApi::Responses, r#"{"type":"response.reasoning_text.delta","delta":"hm"}"#),
            (WireApi::Responses, r#"{"type":"response.reasoning_summary_text.delta","delta":"é😀"}"#),
            (
                WireApi::Messages,
                r#"{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"Hi"}}"#,
            ),
            (
                WireApi::Messages,
                r#"{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"so"}}"#,
            ),
            (WireApi::Messages, r#"{"type":"content_block_delta","delta":{"type":"signature_delta","signature":"s"}}"#),
            (WireApi::Messages, r#"{"delta":{"type":"text_delta","text":"named by its event line"}}"#),
        ];
        for (api, text) in cases {
            let name = Some("content_block_delta")
                .filter(|_| !text.contains("\"type\":\"content") && api == WireApi::Messages);
            let fast = fast(api, name, text).unwrap_or_else(|| panic!("the fast reading takes {text}"));
            assert_eq!(Some(fast), general(api, name, text), "{text}");
        }
        // What it does not model goes the general way.
        for text in [
            r#"["response.output_text.delta","x"]"#,
            r#"{"type":"response.output_text.delta","delta":{"text":"x"}}"#,
            r#"{"type":"response.output_text.delta","delta":"a","delta":"b"}"#,
            r#"{"type":"response.output_text.delta","delta":"a","response":{"id":"r"}}"#,
            r#"{"type":"response.completed","response":{}}"#,
            r#"{"type":"response.output_text.delta","delta":"x","index":-1}"#,
            r#"{"type":"response.output_text.delta","delta":"x","n":NaN}"#,
        ] {
            assert_eq!(fast(WireApi::Responses, None, text), None, "{text}");
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::test_runner::Config { cases: 2000, failure_persistence: None, ..Default::default() })]

        /// Whatever the members, their types, duplicates and order: when the fast reading takes
        /// an event, the general one reads it alike.
        #[test]
        fn the_two_readings_agree_on_every_event_the_fast_one_takes(
            members in proptest::collection::vec((0..7usize, 0..9usize), 0..6),
            api in proptest::prop_oneof![proptest::strategy::Just(WireApi::Responses), proptest::strategy::Just(WireApi::Messages)],
            named in proptest::bool::ANY,
        ) {
            let keys = ["type", "delta", "index", "response", "item_id", "text", "thinking"];
            let values = [
                r#""response.output_text.delta""#, r#""content_block_delta""#, r#""a"bé""#, "3", "-1", "null",
                r#"{"type":"text_delta","text":"x"}"#, r#"{"type":"thinking_delta","thinking":"y","text":1}"#, "[1,{}]",
            ];
            let body: Vec<String> = members.iter().map(|(k, v)| format!("\"{}\":{}", keys[*k], values[*v])).collect();
            let text = format!("{{{}}}", body.join(","));
            let name = named.then_some(if api == WireApi::Messages { "content_block_delta" } else { "response.output_text.delta" });
            if let Some(fast) = fast(api, name, &text) {
                proptest::prop_assert_eq!(Some(fast), general(api, name, &text), "{}", text);
            }
        }
    }

    #[test]
    fn stop_reasons_are_recorded_in_chat_completions_words() {
        for (sent, recorded) in [
            ("end_turn", "stop"),
            ("stop_sequence", "stop"),
            ("max_tokens", "length"),
            ("model_context_window_exceeded", "length"),
            ("refusal", "content_filter"),
            ("tool_use", "tool_calls"),
            ("pause_turn", "pause_turn"),
        ] {
            assert_eq!(messages_finish(sent), recorded);
        }
        assert_eq!(incomplete_finish("content_filter"), "content_filter");
    }
}
