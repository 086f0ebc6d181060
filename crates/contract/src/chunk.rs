//! One `chat.completion.chunk` as the judge and the timing read it, parsed once.
//!
//! Every event of every stream passes through here (live in `ib-fetch`, again in every
//! rescore and in the seal), so the common shape is read straight into the few fields that
//! matter, borrowing from the event's text, without building a JSON tree: [`fast`]. Anything
//! that reading does not model exactly (a member of an unexpected type, a duplicated key, a
//! non-null `error`, Python-only JSON such as `NaN`, an `error` event) is refused by it and
//! read the general way instead, into a [`serde_json::Value`] through
//! [`crate::lenient_json`], and the same fields taken from the tree by [`from_value`]. The
//! two readings agree on every chunk the fast one accepts (the tests below generate
//! thousands of odd chunks to hold them to it), so which one ran never shows in a figure.
use serde::de::{Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::Value;
use std::borrow::Cow;

pub mod grammar;

use crate::vocab::WireApi;

/// Token usage as the provider reported it (later non-null values win).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Usage {
    pub prompt_tokens: Option<i64>,
    pub completion_tokens: Option<i64>,
    pub total_tokens: Option<i64>,
    pub cached_tokens: Option<i64>,
}

impl Usage {
    /// `later`'s values where it has them, else these.
    pub fn merge(&mut self, later: &Usage) {
        self.prompt_tokens = later.prompt_tokens.or(self.prompt_tokens);
        self.completion_tokens = later.completion_tokens.or(self.completion_tokens);
        self.total_tokens = later.total_tokens.or(self.total_tokens);
        self.cached_tokens = later.cached_tokens.or(self.cached_tokens);
    }
}

/// What one event's data says, read as the timing reads each chunk (also the typed columns
/// of `events.parquet`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ChunkFields {
    pub reasoning: String,
    pub answer: String,
    /// `choices[0].finish_reason` when it is a string (possibly empty).
    pub finish_reason: Option<String>,
    /// The usage this chunk reports (its own values, not merged with earlier chunks').
    pub usage: Usage,
    /// `model`, when a non-empty string.
    pub model: Option<String>,
}

/// A JSON object's data, read.
#[derive(Debug, Clone, PartialEq)]
pub struct Chunk {
    pub fields: ChunkFields,
    /// `request_id` (or, when the chunk has no such member, `id`), when a non-empty string.
    pub provider_request_id: Option<String>,
    /// The whole object, kept only when the general reading made it (the fast one refuses
    /// every chunk whose error the judge must quote).
    value: Option<Value>,
    /// What the event is in its grammar: `None` for a chat chunk, which has no grammar beyond
    /// its fields ([`grammar`]).
    pub event: Option<grammar::Event>,
}

impl Chunk {
    /// Reads `text` when it is a JSON object (as Python's parser reads JSON); `None` for JSON
    /// that is not an object, `Err(())` for text that is not JSON at all. `keep_value` forces
    /// the general reading and keeps its tree (an `error` event's data is quoted whole).
    // The one failure is "not JSON at all", which every caller classifies itself: no error
    // value would carry more.
    #[allow(clippy::result_unit_err)]
    pub fn read(text: &str, keep_value: bool) -> Result<Option<Chunk>, ()> {
        if !keep_value {
            if let Some(chunk) = fast(text) {
                return Ok(Some(chunk));
            }
        }
        match crate::lenient_json::parse(text) {
            Some(value @ Value::Object(_)) => Ok(Some(from_value(value))),
            Some(_) => Ok(None),
            None => Err(()),
        }
    }

    /// Reads one event's `text` as `api`'s grammar reads it: a chat chunk as [`Chunk::read`]
    /// (an `error` event's data kept whole), any other API's event into the same fields and its
    /// [`grammar::Event`]. The same `None` and `Err(())` as [`Chunk::read`].
    #[allow(clippy::result_unit_err)]
    pub fn read_on(api: WireApi, event_name: Option<&str>, text: &str) -> Result<Option<Chunk>, ()> {
        if api == WireApi::ChatCompletions {
            return Chunk::read(text, event_name == Some("error"));
        }
        if let Some(chunk) = grammar::fast(api, event_name, text) {
            return Ok(Some(chunk));
        }
        match crate::lenient_json::parse(text) {
            Some(value @ Value::Object(_)) => Ok(Some(grammar::read(api, event_name, value))),
            Some(_) => Ok(None),
            None => Err(()),
        }
    }

    /// The object as a JSON tree, when the general reading made one.
    pub fn value(&self) -> Option<&Value> {
        self.value.as_ref()
    }
}

// ---------------------------------------------------------------------------------------
// The general reading: from a JSON tree.

/// Text of a delta field: a string as-is; a list concatenates its strings and its objects'
/// `text` (or else `content`) strings; anything else is empty.
fn text_of(value: Option<&Value>) -> String {
    match value {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(items)) => items
            .iter()
            .filter_map(|item| match item {
                Value::String(s) => Some(s.as_str()),
                Value::Object(o) => o.get("text").or_else(|| o.get("content")).and_then(Value::as_str),
                _ => None,
            })
            .collect(),
        _ => String::new(),
    }
}

/// `choices[0]` of a chunk, as a JSON pointer reads it (an object's `"0"` member too).
fn first_choice(payload: &Value) -> Option<&Value> {
    match payload.get("choices")? {
        Value::Array(items) => items.first(),
        Value::Object(o) => o.get("0"),
        _ => None,
    }
}

/// The reasoning and answer deltas of one chunk.
pub fn deltas(payload: &Value) -> (String, String) {
    let delta = first_choice(payload).and_then(|c| c.get("delta"));
    let reasoning = ["reasoning_content", "reasoning", "reasoning_details"]
        .iter()
        .map(|key| text_of(delta.and_then(|d| d.get(*key))))
        .find(|text| !text.is_empty())
        .unwrap_or_default();
    let answer = text_of(delta.and_then(|d| d.get("content")));
    (reasoning, answer)
}

fn non_negative_int(value: Option<&Value>) -> Option<i64> {
    value.and_then(Value::as_i64).filter(|n| *n >= 0)
}

fn usage_of(payload: &Value) -> Usage {
    let Some(u) = payload.get("usage").filter(|u| u.is_object()) else {
        return Usage::default();
    };
    let pick = |a: &str, b: &str| non_negative_int(u.get(a)).or_else(|| non_negative_int(u.get(b)));
    Usage {
        prompt_tokens: pick("prompt_tokens", "input_tokens"),
        completion_tokens: pick("completion_tokens", "output_tokens"),
        total_tokens: non_negative_int(u.get("total_tokens")),
        cached_tokens: non_negative_int(u.get("prompt_tokens_details").and_then(|d| d.get("cached_tokens"))),
    }
}

fn non_empty_string(value: Option<&Value>) -> Option<String> {
    value.and_then(Value::as_str).filter(|s| !s.is_empty()).map(str::to_string)
}

/// The chunk's fields from its tree (which it keeps).
pub fn from_value(payload: Value) -> Chunk {
    let (reasoning, answer) = deltas(&payload);
    let fields = ChunkFields {
        reasoning,
        answer,
        finish_reason: first_choice(&payload)
            .and_then(|c| c.get("finish_reason"))
            .and_then(Value::as_str)
            .map(str::to_string),
        usage: usage_of(&payload),
        model: non_empty_string(payload.get("model")),
    };
    let provider_request_id = non_empty_string(payload.get("request_id").or_else(|| payload.get("id")));
    Chunk { fields, provider_request_id, value: Some(payload), event: None }
}

// ---------------------------------------------------------------------------------------
// The fast reading: typed, borrowing, refusing what it does not model.

/// Visitor methods for the JSON types a loose value takes as `$value`: each read (a list or
/// an object to its end, so it is still checked as JSON) and otherwise ignored.
macro_rules! taken_as {
    ($de:lifetime, $value:expr; $($kind:ident),+) => { $( taken_as!(@ $de, $value; $kind); )+ };
    (@ $de:lifetime, $value:expr; bool) => {
        fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> { Ok($value) }
    };
    (@ $de:lifetime, $value:expr; i64) => {
        fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> { Ok($value) }
    };
    (@ $de:lifetime, $value:expr; u64) => {
        fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> { Ok($value) }
    };
    (@ $de:lifetime, $value:expr; f64) => {
        fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> { Ok($value) }
    };
    (@ $de:lifetime, $value:expr; unit) => {
        fn visit_unit<E>(self) -> Result<Self::Value, E> { Ok($value) }
    };
    (@ $de:lifetime, $value:expr; str) => {
        fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> { Ok($value) }
    };
    (@ $de:lifetime, $value:expr; seq) => {
        fn visit_seq<A: SeqAccess<$de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
            while seq.next_element::<IgnoredAny>()?.is_some() {}
            Ok($value)
        }
    };
    (@ $de:lifetime, $value:expr; map) => {
        fn visit_map<A: MapAccess<$de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
            Ok($value)
        }
    };
}

/// Visitor methods for a JSON string, borrowed where it has no escapes, as `$wrap(cow)`.
macro_rules! strings_as {
    ($de:lifetime, $wrap:expr) => {
        fn visit_borrowed_str<E>(self, s: &$de str) -> Result<Self::Value, E> {
            Ok($wrap(Cow::Borrowed(s)))
        }
        fn visit_str<E>(self, s: &str) -> Result<Self::Value, E> {
            Ok($wrap(Cow::Owned(s.to_string())))
        }
        fn visit_string<E>(self, s: String) -> Result<Self::Value, E> {
            Ok($wrap(Cow::Owned(s)))
        }
    };
}

/// A visitor of `$value` (a type with lifetime `'a`) that accepts any JSON value.
macro_rules! any_value_visitor {
    ($value:ident, $($methods:tt)*) => {{
        struct V<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for V<'a> {
            type Value = $value<'a>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("any JSON value")
            }
            $($methods)*
        }
        V(std::marker::PhantomData)
    }};
}

/// A string member, or `None` for a member of any other type (read and skipped).
struct LooseStr<'a>(Option<Cow<'a, str>>);

impl<'de: 'a, 'a> Deserialize<'de> for LooseStr<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(any_value_visitor!(LooseStr,
            strings_as!('de, |s| LooseStr(Some(s)));
            taken_as!('de, LooseStr(None); bool, i64, u64, f64, unit, seq, map);
        ))
    }
}

/// A member present with any value (`None` inside for a non-string), as opposed to absent.
fn present<'de: 'a, 'a, D: Deserializer<'de>>(d: D) -> Result<Option<LooseStr<'a>>, D::Error> {
    LooseStr::deserialize(d).map(Some)
}

/// A usage count: a JSON integer that fits an i64 and is not negative; anything else none.
struct Count(Option<i64>);

impl<'de> Deserialize<'de> for Count {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Count;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_i64<E>(self, n: i64) -> Result<Count, E> {
                Ok(Count(Some(n).filter(|n| *n >= 0)))
            }
            fn visit_u64<E>(self, n: u64) -> Result<Count, E> {
                Ok(Count(i64::try_from(n).ok()))
            }
            taken_as!('de, Count(None); f64, bool, str, unit, seq, map);
        }
        d.deserialize_any(V)
    }
}

/// Delta text (see [`text_of`]): a string, or a list of strings and `{text|content}` objects;
/// anything else is empty.
struct Text<'a>(Cow<'a, str>);

/// One item of a delta list: its text, if it has one.
struct TextItem<'a>(Option<Cow<'a, str>>);

impl<'de: 'a, 'a> Deserialize<'de> for TextItem<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(any_value_visitor!(TextItem,
            strings_as!('de, |s| TextItem(Some(s)));
            taken_as!('de, TextItem(None); bool, i64, u64, f64, unit, seq);
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                // `text` when the object has one (whatever its type), else `content`; a
                // repeated key's last value, as the tree keeps it.
                let (mut text, mut content): (Option<LooseStr>, Option<LooseStr>) = (None, None);
                while let Some(key) = map.next_key::<Cow<'de, str>>()? {
                    match key.as_ref() {
                        "text" => text = Some(map.next_value()?),
                        "content" => content = Some(map.next_value()?),
                        _ => {
                            map.next_value::<IgnoredAny>()?;
                        }
                    }
                }
                Ok(TextItem(text.or(content).and_then(|s| s.0)))
            }
        ))
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Text<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(any_value_visitor!(Text,
            strings_as!('de, Text);
            taken_as!('de, Text(Cow::Borrowed("")); bool, i64, u64, f64, unit, map);
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                let mut out = String::new();
                while let Some(TextItem(item)) = seq.next_element::<TextItem>()? {
                    out.push_str(item.as_deref().unwrap_or(""));
                }
                Ok(Text(Cow::Owned(out)))
            }
        ))
    }
}

/// A JSON object read as `T` (a derived struct), and nothing else: serde's derive would
/// also read a struct from a JSON list, field by field, where the tree sees no members.
struct Obj<T>(T);

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Obj<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        T::deserialize(MapOnly(d)).map(Obj)
    }
}

/// A deserializer that reads a struct only from a JSON object.
struct MapOnly<D>(D);

impl<'de, D: Deserializer<'de>> Deserializer<'de> for MapOnly<D> {
    type Error = D::Error;
    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, D::Error> {
        self.0.deserialize_any(visitor)
    }
    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        self.0.deserialize_map(visitor)
    }
    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf option unit
        unit_struct newtype_struct seq tuple tuple_struct map enum identifier ignored_any
    }
}

// The typed chunk. A member of another type than modelled, or a key given twice, fails the
// whole reading (serde's derive refuses both), and the general reading takes over.

#[derive(Deserialize)]
struct FastDelta<'a> {
    #[serde(borrow = "'a", default)]
    content: Option<Text<'a>>,
    #[serde(borrow = "'a", default)]
    reasoning_content: Option<Text<'a>>,
    #[serde(borrow = "'a", default)]
    reasoning: Option<Text<'a>>,
    #[serde(borrow = "'a", default)]
    reasoning_details: Option<Text<'a>>,
}

#[derive(Deserialize)]
struct FastChoice<'a> {
    #[serde(borrow = "'a", default)]
    delta: Option<Obj<FastDelta<'a>>>,
    #[serde(borrow = "'a", default)]
    finish_reason: Option<LooseStr<'a>>,
}

/// `choices`: a list whose first item is read (the rest skipped), or null.
struct FirstChoice<'a>(Option<Obj<FastChoice<'a>>>);

impl<'de: 'a, 'a> Deserialize<'de> for FirstChoice<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for V<'a> {
            type Value = FirstChoice<'a>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a list of choices")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                let first = seq.next_element::<Obj<FastChoice>>()?;
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(FirstChoice(first))
            }
        }
        d.deserialize_seq(V(std::marker::PhantomData))
    }
}

#[derive(Deserialize)]
struct FastDetails {
    #[serde(default)]
    cached_tokens: Option<Count>,
}

#[derive(Deserialize)]
struct FastUsage {
    #[serde(default)]
    prompt_tokens: Option<Count>,
    #[serde(default)]
    input_tokens: Option<Count>,
    #[serde(default)]
    completion_tokens: Option<Count>,
    #[serde(default)]
    output_tokens: Option<Count>,
    #[serde(default)]
    total_tokens: Option<Count>,
    #[serde(default)]
    prompt_tokens_details: Option<Obj<FastDetails>>,
}

#[derive(Deserialize)]
struct FastChunk<'a> {
    #[serde(borrow = "'a", default)]
    model: Option<LooseStr<'a>>,
    #[serde(borrow = "'a", default, deserialize_with = "present")]
    request_id: Option<LooseStr<'a>>,
    #[serde(borrow = "'a", default, deserialize_with = "present")]
    id: Option<LooseStr<'a>>,
    #[serde(default)]
    usage: Option<Obj<FastUsage>>,
    #[serde(borrow = "'a", default)]
    choices: Option<FirstChoice<'a>>,
    /// Present only to refuse a non-null error (the judge quotes the tree).
    #[serde(default)]
    error: Option<IgnoredAny>,
}

fn count(c: &Option<Count>) -> Option<i64> {
    c.as_ref().and_then(|c| c.0)
}

fn non_empty(s: Option<LooseStr>) -> Option<String> {
    s.and_then(|s| s.0).filter(|s| !s.is_empty()).map(Cow::into_owned)
}

fn text(t: Option<Text>) -> Cow<str> {
    t.map_or(Cow::Borrowed(""), |t| t.0)
}

/// The typed reading; `None` when the chunk is not of the shape it models exactly.
pub fn fast(text_: &str) -> Option<Chunk> {
    let Obj(chunk): Obj<FastChunk> = serde_json::from_str(text_).ok()?;
    if chunk.error.is_some() {
        return None;
    }
    let (delta, finish_reason) = match chunk.choices.and_then(|c| c.0) {
        Some(Obj(choice)) => (choice.delta.map(|d| d.0), choice.finish_reason.and_then(|f| f.0).map(Cow::into_owned)),
        None => (None, None),
    };
    let (reasoning, answer) = match delta {
        Some(d) => {
            let reasoning = [d.reasoning_content, d.reasoning, d.reasoning_details]
                .into_iter()
                .map(text)
                .find(|t| !t.is_empty())
                .unwrap_or_default();
            (reasoning.into_owned(), text(d.content).into_owned())
        }
        None => (String::new(), String::new()),
    };
    let usage = chunk.usage.map_or_else(Usage::default, |Obj(u)| Usage {
        prompt_tokens: count(&u.prompt_tokens).or_else(|| count(&u.input_tokens)),
        completion_tokens: count(&u.completion_tokens).or_else(|| count(&u.output_tokens)),
        total_tokens: count(&u.total_tokens),
        cached_tokens: u.prompt_tokens_details.and_then(|d| count(&d.0.cached_tokens)),
    });
    let provider_request_id = non_empty(chunk.request_id.or(chunk.id));
    let fields = ChunkFields { reasoning, answer, finish_reason, usage, model: non_empty(chunk.model) };
    Some(Chunk { fields, provider_request_id, value: None, event: None })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The general reading of `text` (which must be a JSON object).
    fn general(text: &str) -> Chunk {
        from_value(crate::lenient_json::parse(text).expect("JSON"))
    }

    fn agree(text: &str) -> bool {
        match fast(text) {
            Some(chunk) => {
                let mut expected = general(text);
                expected.value = None;
                assert_eq!(chunk, expected, "the fast reading differs on {text}");
                true
            }
            None => false,
        }
    }

    #[test]
    fn the_common_chunk_is_read_fast_and_as_the_tree_reads_it() {
        for text in [
            r#"{"id":"chatcmpl-1","object":"chat.completion.chunk","created":0,"model":"m","choices":[{"index":0,"delta":{"content":"{\"a\":"}}]}"#,
            r#"{"id":"x","model":"","choices":[{"delta":{"reasoning_content":"think","content":null},"finish_reason":null}],"usage":null}"#,
            r#"{"choices":[{"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15,"prompt_tokens_details":{"cached_tokens":2}}}"#,
            r#"{"request_id":null,"id":"y","choices":[]}"#,
            r#"{"error":null,"choices":[{"delta":{"reasoning":[{"text":"a"},"b",{"content":"c"},{"text":null,"content":"d"},5]}}]}"#,
            r#"{"choices":[{"delta":{"content":"é\u00e9\ud83d\ude00"},"finish_reason":false}]}"#,
        ] {
            assert!(agree(text), "read fast: {text}");
        }
    }

    #[test]
    fn what_the_fast_reading_does_not_model_is_left_to_the_tree() {
        for text in [
            r#"{"error":{"message":"overloaded"}}"#,
            r#"{"choices":[{"delta":{"content":"a"}}],"lp":NaN}"#,
            r#"{"model":"a","model":"b"}"#,
            r#"{"choices":{"0":{"delta":{"content":"a"}}}}"#,
            r#"{"choices":[5]}"#,
            r#"{"choices":[{"delta":"text"}]}"#,
            r#"{"usage":7}"#,
            r#"{"usage":{"prompt_tokens":1e999}}"#,
            r#"{"choices":[{"delta":["a","b"]}]}"#,
            r#"{"choices":[["a"]]}"#,
            r#"{"usage":[1,2,3]}"#,
            r#"[]"#,
            r#"[{"choices":[{"delta":{"content":"a"}}]}]"#,
        ] {
            assert!(fast(text).is_none(), "not read fast: {text}");
        }
        // ... and the general reading still reads them as before.
        let chunk = Chunk::read(r#"{"choices":{"0":{"delta":{"content":"a"}}}}"#, false).unwrap().unwrap();
        assert_eq!(chunk.fields.answer, "a");
        let chunk = Chunk::read(r#"{"choices":[{"delta":{"content":"a"}}],"lp":NaN}"#, false).unwrap().unwrap();
        assert_eq!(chunk.fields.answer, "a");
        assert_eq!(Chunk::read("[1]", false), Ok(None));
        assert_eq!(Chunk::read("[]", false), Ok(None));
        assert_eq!(Chunk::read(r#"{"choices":[{"delta":["a"]}]}"#, false).unwrap().unwrap().fields.answer, "");
        assert_eq!(Chunk::read("{", false), Err(()));
        assert!(Chunk::read(r#"{"a":1}"#, true).unwrap().unwrap().value().is_some(), "kept when asked");
    }

    /// A small deterministic generator (no dependency): xorshift64*.
    struct Gen(u64);
    impl Gen {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
        }
        fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
            items[(self.next() % items.len() as u64) as usize]
        }
        fn chance(&mut self, percent: u64) -> bool {
            self.next() % 100 < percent
        }
    }

    const SCALARS: &[&str] = &[
        "null",
        "true",
        "false",
        "0",
        "-0",
        "7",
        "-3",
        "1.5",
        "5.0",
        "1e3",
        "18446744073709551615",
        "9223372036854775807",
        "9223372036854775808",
        "123456789012345678901234567890",
        "\"\"",
        "\" \"",
        "\"a\"",
        "\"stop\"",
        "\"\\\"q\\\"\"",
        "\"\\u00e9\\n\"",
        "\"\\ud83d\\ude00\"",
        "\"<|endoftext|>\"",
        "[]",
        "{}",
    ];

    fn value(g: &mut Gen, depth: u32) -> String {
        match g.next() % 8 {
            0 if depth < 3 => {
                let n = g.next() % 4;
                let items: Vec<String> = (0..n).map(|_| item(g, depth + 1)).collect();
                format!("[{}]", items.join(","))
            }
            1 if depth < 3 => object(g, &["text", "content", "x", "cached_tokens"], depth + 1),
            _ => g.pick(SCALARS).to_string(),
        }
    }

    fn item(g: &mut Gen, depth: u32) -> String {
        if g.chance(40) {
            object(g, &["text", "content", "type"], depth)
        } else {
            value(g, depth)
        }
    }

    fn object(g: &mut Gen, keys: &[&str], depth: u32) -> String {
        let n = g.next() % 4;
        let members: Vec<String> = (0..n).map(|_| format!("\"{}\":{}", g.pick(keys), value(g, depth))).collect();
        format!("{{{}}}", members.join(","))
    }

    /// A chunk-like object: mostly the real members, each with a plausible or an odd value.
    fn chunk(g: &mut Gen) -> String {
        let mut members = Vec::new();
        for key in ["model", "request_id", "id", "error", "object"] {
            if g.chance(40) {
                members.push(format!("\"{key}\":{}", value(g, 1)));
            }
        }
        if g.chance(40) {
            let usage = if g.chance(70) {
                let keys = ["prompt_tokens", "input_tokens", "completion_tokens", "output_tokens", "total_tokens"];
                let mut parts: Vec<String> =
                    (0..g.next() % 4).map(|_| format!("\"{}\":{}", g.pick(&keys), value(g, 2))).collect();
                if g.chance(30) {
                    parts.push(format!("\"prompt_tokens_details\":{}", object(g, &["cached_tokens"], 2)));
                }
                format!("{{{}}}", parts.join(","))
            } else {
                value(g, 1)
            };
            members.push(format!("\"usage\":{usage}"));
        }
        if g.chance(90) {
            let delta_keys = ["content", "reasoning_content", "reasoning", "reasoning_details", "role"];
            let delta = if g.chance(85) {
                let parts: Vec<String> =
                    (0..g.next() % 4).map(|_| format!("\"{}\":{}", g.pick(&delta_keys), value(g, 3))).collect();
                format!("{{{}}}", parts.join(","))
            } else {
                value(g, 1)
            };
            let mut choice = vec![format!("\"delta\":{delta}")];
            if g.chance(50) {
                choice.push(format!("\"finish_reason\":{}", value(g, 3)));
            }
            if g.chance(20) {
                choice.reverse();
            }
            let first = if g.chance(90) { format!("{{{}}}", choice.join(",")) } else { value(g, 1) };
            let choices = match g.next() % 10 {
                0 => value(g, 1),
                1 => format!("[{first},{}]", value(g, 2)),
                2 => "[]".to_string(),
                _ => format!("[{first}]"),
            };
            members.push(format!("\"choices\":{choices}"));
        }
        let n = members.len();
        for i in 0..n {
            let j = (g.next() % n as u64) as usize;
            members.swap(i, j);
        }
        format!("{{{}}}", members.join(","))
    }

    #[test]
    fn on_thousands_of_odd_chunks_the_two_readings_agree_whenever_the_fast_one_reads() {
        let mut g = Gen(0x9e37_79b9_7f4a_7c15);
        let (mut fast_read, total) = (0, 20_000);
        for _ in 0..total {
            let text = chunk(&mut g);
            if agree(&text) {
                fast_read += 1;
            } else {
                // Refused by the fast reading: the general one still reads it (or finds it
                // is no JSON object, which the generator never makes).
                assert!(Chunk::read(&text, false).is_ok(), "{text}");
            }
        }
        // Both paths are exercised, or the test proves nothing.
        assert!(fast_read > total / 4 && fast_read < total, "{fast_read} of {total} read fast");
    }
}

/// Property tests: chunks as providers send them, mangled byte by byte. Reading never panics,
/// whatever the text; whenever the fast reading reads a chunk, the general one reads the same
/// fields; and a chunk both read is an object. `PROPTEST_CASES` sets the number of cases.
#[cfg(test)]
mod props {
    use super::*;
    use proptest::prelude::*;

    fn config(cases: u32) -> proptest::test_runner::Config {
        let mut config = proptest::test_runner::Config::default();
        if std::env::var_os("PROPTEST_CASES").is_none() {
            config.cases = cases;
        }
        config.failure_persistence = None;
        config
    }

    const CHUNKS: &[&str] = &[
        r#"{"id":"chatcmpl-1","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}"#,
        r#"{"id":"c","choices":[{"index":0,"delta":{"content":"{\"a\":\"é😀\\n\"}"},"finish_reason":null}]}"#,
        r#"{"choices":[{"delta":{"reasoning_content":"think","content":null}}],"usage":null}"#,
        r#"{"choices":[{"delta":{"reasoning":[{"text":"a"},"b",{"content":"c"}]}}]}"#,
        r#"{"choices":[{"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15,"prompt_tokens_details":{"cached_tokens":2}}}"#,
        r#"{"error":{"message":"overloaded","type":"server_error","code":500}}"#,
        r#"{"choices":[{"delta":{"content":"x"},"logprobs":NaN}]}"#,
        r#"{"request_id":"r","choices":{"0":{"delta":{"content":"a"}}}}"#,
    ];

    /// A chunk with a few bytes flipped, inserted or deleted.
    fn mangled() -> impl Strategy<Value = Vec<u8>> {
        let edit = (any::<prop::sample::Index>(), 0..3u8, any::<u8>());
        (prop::sample::select(CHUNKS), prop::collection::vec(edit, 0..4)).prop_map(|(chunk, edits)| {
            let mut bytes = chunk.as_bytes().to_vec();
            for (at, kind, byte) in edits {
                let p = at.index(bytes.len() + 1);
                match kind {
                    0 if p < bytes.len() => bytes[p] = byte,
                    1 => bytes.insert(p, byte),
                    _ if p < bytes.len() => {
                        bytes.remove(p);
                    }
                    _ => {}
                }
            }
            bytes
        })
    }

    proptest! {
        #![proptest_config(config(1024))]

        #[test]
        fn mangled_chunks_are_read_alike_by_both_readings_and_never_panic(bytes in mangled(), keep in any::<bool>()) {
            // The framer hands the reader text: invalid UTF-8 arrives as replacement characters.
            let text = String::from_utf8_lossy(&bytes);
            let read = Chunk::read(&text, keep);
            if let Some(chunk) = fast(&text) {
                let mut general = from_value(crate::lenient_json::parse(&text).expect("read fast, so JSON"));
                general.value = None;
                prop_assert_eq!(chunk, general);
                prop_assert!(matches!(read, Ok(Some(_))));
            }
        }

        #[test]
        fn any_text_is_read_without_a_panic(text in any::<String>(), keep in any::<bool>()) {
            let _ = Chunk::read(&text, keep);
        }
    }
}
