//! Randomised event streams for the property tests of the framer ([`crate::sse`]) and the judge
//! ([`crate::stream`], [`crate::timing`]): realistic streams (the chunks `ib-sim` and real
//! providers send), then mutated the ways a hostile or broken provider or network mangles them,
//! then cut into reads at arbitrary points.
//!
//! How many cases each property runs: [`config`]. `make test` runs the defaults (a few seconds
//! in a debug build); `PROPTEST_CASES=100000 cargo test -p inferbench-judge props` is a long
//! campaign (README, Tests).
use inferbench_contract::vocab::WireApi;
use proptest::prelude::*;
use proptest::sample::Index;
use proptest::test_runner::Config;

/// The config of a property: `cases` cases unless `PROPTEST_CASES` says otherwise. No failure
/// file is written into the source tree: a failure prints its minimal input, which becomes a
/// unit test beside the code it broke.
pub fn config(cases: u32) -> Config {
    let mut config = Config::default();
    if std::env::var_os("PROPTEST_CASES").is_none() {
        config.cases = cases;
    }
    config.failure_persistence = None;
    config
}

/// One event of a realistic stream.
#[derive(Debug, Clone)]
pub enum Piece {
    Role,
    Reasoning(String),
    Answer(String),
    Finish(&'static str),
    Usage,
    Done,
    KeepAlive,
    EmptyData,
    /// `event: error` with a JSON error.
    ErrorEvent,
    /// `{"error": {...}}` in the data.
    InBandError,
    /// Python-only JSON (`NaN`) in a member the timing never reads.
    PythonJson,
    /// One JSON chunk over several `data:` lines.
    MultiLine(String),
    /// `id:` and `retry:` lines before a chunk.
    IdRetry(u16),
    /// Data that is not JSON.
    NotJson,
    /// Messages: a content block starts (0: thinking, 1: text); a delta or stop of another
    /// grammar's structure (an output item, a content part) elsewhere.
    Block(u8),
    /// Messages: a block stops.
    BlockStop(u8),
}

/// Text a model may send: ASCII, accents, emoji, JSON-looking text, Unicode line separators.
fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-zA-Z0-9 ,.{}\":]{0,12}",
        Just("é😀".to_string()),
        Just("a\u{2028}b\u{85}c".to_string()),
        Just("{\"answer\":\"Ada\"}".to_string()),
        Just("<|endoftext|>".to_string()),
        any::<String>().prop_map(|s| s.chars().take(8).collect()),
    ]
}

fn piece() -> impl Strategy<Value = Piece> {
    prop_oneof![
        2 => Just(Piece::Role),
        3 => text().prop_map(Piece::Reasoning),
        8 => text().prop_map(Piece::Answer),
        2 => prop_oneof![Just("stop"), Just("length"), Just(""), Just(" ")].prop_map(Piece::Finish),
        1 => Just(Piece::Usage),
        2 => Just(Piece::Done),
        1 => Just(Piece::KeepAlive),
        1 => Just(Piece::EmptyData),
        1 => Just(Piece::ErrorEvent),
        1 => Just(Piece::InBandError),
        1 => Just(Piece::PythonJson),
        1 => text().prop_map(Piece::MultiLine),
        1 => any::<u16>().prop_map(Piece::IdRetry),
        1 => Just(Piece::NotJson),
        2 => (0..2u8).prop_map(Piece::Block),
        1 => (0..2u8).prop_map(Piece::BlockStop),
    ]
}

fn delta(key: &str, text: &str) -> String {
    serde_json::json!({"id": "chatcmpl-1", "model": "m", "choices": [{"index": 0, "delta": {key: text}}]}).to_string()
}

/// The lines of one piece on `api` (without their ends; an empty line dispatches).
fn lines(api: WireApi, piece: &Piece) -> Vec<String> {
    match api {
        WireApi::ChatCompletions => chat_lines(piece),
        WireApi::Responses => responses_lines(piece),
        WireApi::Messages => messages_lines(piece),
    }
}

/// An event with an `event:` line naming its JSON type, as OpenAI and Anthropic write them.
fn typed(value: serde_json::Value) -> Vec<String> {
    let name = value["type"].as_str().unwrap_or_default().to_string();
    vec![format!("event: {name}"), format!("data: {value}"), String::new()]
}

fn responses_lines(piece: &Piece) -> Vec<String> {
    use serde_json::json;
    let usage = json!({"input_tokens": 20, "output_tokens": 7, "total_tokens": 27});
    match piece {
        Piece::Role => {
            typed(json!({"type": "response.created", "response": {"id": "resp_1", "model": "m", "usage": null}}))
        }
        Piece::Reasoning(t) => typed(json!({"type": "response.reasoning_summary_text.delta", "delta": t})),
        // Data-only, as LiteLLM writes it.
        Piece::Answer(t) => {
            vec![format!("data: {}", json!({"type": "response.output_text.delta", "delta": t})), String::new()]
        }
        Piece::Finish("length") => typed(json!({"type": "response.incomplete",
            "response": {"incomplete_details": {"reason": "max_output_tokens"}, "usage": usage}})),
        Piece::Finish(_) => typed(json!({"type": "response.output_text.done", "text": ""})),
        Piece::Usage => typed(json!({"type": "response.completed", "response": {"id": "resp_1", "usage": usage}})),
        Piece::ErrorEvent => typed(json!({"type": "error", "code": "server_error", "message": "overloaded"})),
        Piece::InBandError => typed(json!({"type": "response.failed", "response": {"error": {"message": "boom"}}})),
        Piece::Block(_) => typed(json!({"type": "response.output_item.added", "item": {"type": "message"}})),
        Piece::BlockStop(_) => typed(json!({"type": "response.output_item.done", "item": {"type": "message"}})),
        Piece::MultiLine(t) => {
            let json = json!({"type": "response.output_text.delta", "delta": t}).to_string();
            let (a, b) = json.split_at(json.find(':').unwrap_or(0));
            vec![format!("data: {a}"), format!("data:{b}"), String::new()]
        }
        other => chat_lines(other),
    }
}

fn messages_lines(piece: &Piece) -> Vec<String> {
    use serde_json::json;
    match piece {
        Piece::Role => typed(json!({"type": "message_start", "message": {"id": "msg_1", "model": "m",
            "usage": {"input_tokens": 20, "output_tokens": 1}}})),
        Piece::Reasoning(t) => typed(
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": t}}),
        ),
        Piece::Answer(t) => {
            typed(json!({"type": "content_block_delta", "index": 1, "delta": {"type": "text_delta", "text": t}}))
        }
        Piece::Finish(r) => {
            let reason = if *r == "length" { "max_tokens" } else { "end_turn" };
            typed(json!({"type": "message_delta", "delta": {"stop_reason": reason}, "usage": {"output_tokens": 7}}))
        }
        Piece::Usage => typed(json!({"type": "message_stop"})),
        Piece::KeepAlive => typed(json!({"type": "ping"})),
        Piece::ErrorEvent | Piece::InBandError => {
            typed(json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}))
        }
        Piece::Block(i) => {
            let block =
                if *i == 0 { json!({"type": "thinking", "thinking": ""}) } else { json!({"type": "text", "text": ""}) };
            typed(json!({"type": "content_block_start", "index": i, "content_block": block}))
        }
        Piece::BlockStop(i) => typed(json!({"type": "content_block_stop", "index": i})),
        Piece::MultiLine(t) => {
            let json = json!({"type": "content_block_delta", "delta": {"type": "text_delta", "text": t}}).to_string();
            let (a, b) = json.split_at(json.find(':').unwrap_or(0));
            vec![format!("data: {a}"), format!("data:{b}"), String::new()]
        }
        other => chat_lines(other),
    }
}

fn chat_lines(piece: &Piece) -> Vec<String> {
    let data = |d: String| vec![format!("data: {d}"), String::new()];
    match piece {
        Piece::Role => data(
            r#"{"id":"chatcmpl-1","model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}"#
                .into(),
        ),
        Piece::Reasoning(t) => data(delta("reasoning_content", t)),
        Piece::Answer(t) => data(delta("content", t)),
        Piece::Finish(r) => data(format!(r#"{{"choices":[{{"index":0,"delta":{{}},"finish_reason":"{r}"}}]}}"#)),
        Piece::Usage => {
            data(r#"{"choices":[],"usage":{"prompt_tokens":20,"completion_tokens":7,"total_tokens":27}}"#.into())
        }
        Piece::Done => data("[DONE]".into()),
        Piece::KeepAlive => vec![": keep-alive".into()],
        Piece::EmptyData => vec!["data:".into(), String::new()],
        Piece::ErrorEvent => {
            vec!["event: error".into(), r#"data: {"error":{"message":"overloaded"}}"#.into(), String::new()]
        }
        Piece::InBandError => data(r#"{"error":{"message":"boom","type":"server_error","code":500}}"#.into()),
        Piece::PythonJson => data(r#"{"choices":[{"delta":{"content":"x"},"logprobs":NaN}]}"#.into()),
        Piece::MultiLine(t) => {
            let json = delta("content", t);
            let (a, b) = json.split_at(json.find(':').unwrap_or(0));
            vec![format!("data: {a}"), format!("data:{b}"), String::new()]
        }
        Piece::IdRetry(n) => vec![format!("id: {n}"), format!("retry: {n}")],
        Piece::NotJson => data("{\"choices\": [".into()),
        // Chat completions has no blocks: a role chunk in their place.
        Piece::Block(_) | Piece::BlockStop(_) => chat_lines(&Piece::Role),
    }
}

/// How a stream ends its lines.
#[derive(Debug, Clone, Copy)]
pub enum Ending {
    Lf,
    CrLf,
    Cr,
    /// Each line's end drawn from the three.
    Mixed,
}

/// A realistic stream: the pieces, written with one ending, maybe with a byte-order mark.
#[derive(Debug, Clone)]
pub struct Realistic {
    /// The grammar the pieces are written in.
    pub api: WireApi,
    pub pieces: Vec<Piece>,
    pub ending: Ending,
    pub bom: bool,
}

impl Realistic {
    pub fn bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        if self.bom {
            out.extend_from_slice("\u{feff}".as_bytes());
        }
        let mut n = 0usize;
        for line in self.pieces.iter().flat_map(|p| lines(self.api, p)) {
            out.extend_from_slice(line.as_bytes());
            let end: &[u8] = match self.ending {
                Ending::Lf => b"\n",
                Ending::CrLf => b"\r\n",
                Ending::Cr => b"\r",
                Ending::Mixed => [&b"\n"[..], b"\r\n", b"\r"][n % 3],
            };
            n = n.wrapping_mul(31).wrapping_add(line.len()) % 1009;
            out.extend_from_slice(end);
        }
        out
    }
}

/// A realistic stream of `api`'s grammar.
pub fn realistic_on(api: WireApi) -> impl Strategy<Value = Realistic> {
    let ending = prop_oneof![Just(Ending::Lf), Just(Ending::CrLf), Just(Ending::Cr), Just(Ending::Mixed)];
    // Most streams of a grammar open as it requires (else every one would be refused at once).
    (prop::collection::vec(piece(), 0..14), ending, prop::bool::weighted(0.1), prop::bool::weighted(0.8)).prop_map(
        move |(mut pieces, ending, bom, opened)| {
            if opened && api != WireApi::ChatCompletions {
                pieces.insert(0, Piece::Role);
            }
            Realistic { api, pieces, ending, bom }
        },
    )
}

/// One way of mangling a stream's bytes. Positions are drawn as [`Index`]es, so a mutation
/// fits any stream it is applied to (and shrinks well).
#[derive(Debug, Clone)]
pub enum Mutation {
    Flip(Index, u8),
    Insert(Index, Vec<u8>),
    Delete(Index, usize),
    DuplicateLine(Index),
    DropLine(Index),
    /// `len` copies of `byte` (a line that is huge, or never ends).
    Huge(Index, u8, usize),
    /// A lone CR, LF, CRLF, or an LF CR pair.
    LineEnd(Index, &'static [u8]),
    Bom(Index),
    /// Bytes that are never UTF-8: a stray continuation byte, a cut sequence, 0xFF.
    InvalidUtf8(Index, &'static [u8]),
    /// The stream stops here.
    Truncate(Index),
}

pub fn mutation(huge: usize) -> impl Strategy<Value = Mutation> {
    let index = any::<Index>;
    prop_oneof![
        3 => (index(), 1..=255u8).prop_map(|(i, x)| Mutation::Flip(i, x)),
        3 => (index(), prop::collection::vec(any::<u8>(), 1..6)).prop_map(|(i, b)| Mutation::Insert(i, b)),
        2 => (index(), 1..40usize).prop_map(|(i, n)| Mutation::Delete(i, n)),
        2 => index().prop_map(Mutation::DuplicateLine),
        2 => index().prop_map(Mutation::DropLine),
        1 => (index(), prop_oneof![Just(b'x'), Just(b'\xff'), Just(b':'), Just(b' ')], 1..huge)
            .prop_map(|(i, b, n)| Mutation::Huge(i, b, n)),
        2 => (index(), prop_oneof![Just(&b"\r"[..]), Just(&b"\n"[..]), Just(&b"\r\n"[..]), Just(&b"\n\r"[..])])
            .prop_map(|(i, e)| Mutation::LineEnd(i, e)),
        1 => index().prop_map(Mutation::Bom),
        2 => (index(), prop_oneof![Just(&b"\x80"[..]), Just(&b"\xc3"[..]), Just(&b"\xe2\x80"[..]), Just(&b"\xff\xfe"[..])])
            .prop_map(|(i, b)| Mutation::InvalidUtf8(i, b)),
        1 => index().prop_map(Mutation::Truncate),
    ]
}

/// The byte ranges of `bytes`' lines, each with its end (CR, LF or CRLF).
fn line_spans(bytes: &[u8]) -> Vec<(usize, usize)> {
    let mut spans = Vec::new();
    let (mut start, mut i) = (0, 0);
    while i < bytes.len() {
        if bytes[i] == b'\r' || bytes[i] == b'\n' {
            let end = if bytes[i] == b'\r' && bytes.get(i + 1) == Some(&b'\n') { i + 2 } else { i + 1 };
            spans.push((start, end));
            start = end;
            i = end;
        } else {
            i += 1;
        }
    }
    if start < bytes.len() {
        spans.push((start, bytes.len()));
    }
    spans
}

impl Mutation {
    pub fn apply(&self, bytes: &mut Vec<u8>) {
        let at = |i: &Index, len: usize| if len == 0 { 0 } else { i.index(len + 1) };
        let splice = |bytes: &mut Vec<u8>, i: &Index, new: &[u8]| {
            let p = at(i, bytes.len());
            bytes.splice(p..p, new.iter().copied());
        };
        match self {
            Mutation::Flip(i, x) if !bytes.is_empty() => {
                let p = i.index(bytes.len());
                bytes[p] ^= x;
            }
            Mutation::Flip(..) => {}
            Mutation::Insert(i, new) => splice(bytes, i, new),
            Mutation::Delete(i, n) => {
                let p = at(i, bytes.len());
                let end = (p + n).min(bytes.len());
                bytes.drain(p..end);
            }
            Mutation::DuplicateLine(i) | Mutation::DropLine(i) => {
                let spans = line_spans(bytes);
                if spans.is_empty() {
                    return;
                }
                let (s, e) = spans[i.index(spans.len())];
                if matches!(self, Mutation::DropLine(_)) {
                    bytes.drain(s..e);
                } else {
                    let line = bytes[s..e].to_vec();
                    bytes.splice(e..e, line);
                }
            }
            Mutation::Huge(i, b, n) => splice(bytes, i, &vec![*b; *n]),
            Mutation::LineEnd(i, e) | Mutation::InvalidUtf8(i, e) => splice(bytes, i, e),
            Mutation::Bom(i) => splice(bytes, i, "\u{feff}".as_bytes()),
            Mutation::Truncate(i) => {
                let p = at(i, bytes.len());
                bytes.truncate(p);
            }
        }
    }
}

/// A realistic stream with up to `max_mutations` mutations (huge lines up to `huge` bytes).
pub fn mangled(max_mutations: usize, huge: usize) -> impl Strategy<Value = Vec<u8>> {
    mangled_on(WireApi::ChatCompletions, max_mutations, huge)
}

/// [`mangled`] for a stream of `api`'s grammar.
pub fn mangled_on(api: WireApi, max_mutations: usize, huge: usize) -> impl Strategy<Value = Vec<u8>> {
    (realistic_on(api), prop::collection::vec(mutation(huge), 0..=max_mutations)).prop_map(|(stream, mutations)| {
        let mut bytes = stream.bytes();
        for m in &mutations {
            m.apply(&mut bytes);
        }
        bytes
    })
}

/// Cut points for a body: up to `max` of them, anywhere.
pub fn cuts(max: usize) -> impl Strategy<Value = Vec<Index>> {
    prop::collection::vec(any::<Index>(), 0..=max)
}

/// `bytes` cut at `cuts` (positions sorted; empty reads are kept, as a transport may hand them).
pub fn chunked<'a>(bytes: &'a [u8], cuts: &[Index]) -> Vec<&'a [u8]> {
    let mut points: Vec<usize> = cuts.iter().map(|i| i.index(bytes.len() + 1)).collect();
    points.sort_unstable();
    let mut reads = Vec::with_capacity(points.len() + 1);
    let mut start = 0;
    for p in points {
        reads.push(&bytes[start..p]);
        start = p;
    }
    reads.push(&bytes[start..]);
    reads
}
