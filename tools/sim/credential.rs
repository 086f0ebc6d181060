//! `credential_echo`: a provider that echoes the request's credentials back in every field a
//! client logs, so a test can check that none of them reaches the client's files.
//!
//! Which request headers are credentials: `Authorization` and `Proxy-Authorization` (the
//! token after `Bearer `, else the whole value), and every header whose name is not one of
//! the standard HTTP request headers of [`STANDARD`] nor an API's protocol header of
//! [`PROTOCOL`] (so `Modal-Key`, `X-Key-Secret`, `api-key`, `x-api-key`, `Cookie`…). Empty values and values with bytes outside visible ASCII and
//! space are not echoed (they could not be echoed in a response header); duplicates once.
//! The simulator never writes a credential to its own log: only the header names, the
//! SHA-256 of each value and the names of the fields that carried them.
use axum::http::HeaderMap;
use inferbench_judge::tokenizer;
use inferbench_sim::answer::Chunks;
use serde::Serialize;

/// Request headers that carry no credential: RFC 9110/9111/9112 request fields, the fetch
/// metadata and tracing headers clients add on their own.
pub const STANDARD: [&str; 31] = [
    "accept",
    "accept-charset",
    "accept-encoding",
    "accept-language",
    "cache-control",
    "connection",
    "content-encoding",
    "content-length",
    "content-type",
    "date",
    "expect",
    "from",
    "host",
    "if-match",
    "if-modified-since",
    "if-none-match",
    "if-range",
    "if-unmodified-since",
    "keep-alive",
    "max-forwards",
    "origin",
    "pragma",
    "priority",
    "range",
    "referer",
    "te",
    "traceparent",
    "trailer",
    "transfer-encoding",
    "upgrade",
    "user-agent",
];

/// Request headers of the wire APIs' own protocol that carry no credential (Messages'
/// version and beta headers).
pub const PROTOCOL: [&str; 2] = ["anthropic-version", "anthropic-beta"];

/// The fields a `credential_echo` stream puts the credentials in, as logged. On Responses
/// and Messages, `sse:event` is an event after the first, `chunk:id` the response or message
/// id (and the item ids), `chunk:system_fingerprint:json_escaped` a member of the finish's
/// first closing event (`response.output_text.done`, the text block's `content_block_stop`).
pub const FIELDS: [&str; 9] = [
    // `x-request-id: req-<credentials>`.
    "header:x-request-id",
    // `: <credentials>` on the role event.
    "sse:comment",
    // `id: <credentials>` on the role event.
    "sse:id",
    // `event: <credentials>` on an empty-delta chunk right after the role.
    "sse:event",
    // `"id": "chatcmpl-<credentials>"` in every chunk.
    "chunk:id",
    // `"system_fingerprint"` of the finish chunk, every character written as `\uXXXX`.
    "chunk:system_fingerprint:json_escaped",
    // Each credential cut in two consecutive reasoning deltas.
    "reasoning:split",
    // Each credential cut in two consecutive answer deltas.
    "answer:split",
    // The answer text has `"credentials":"\u00XX…"`: decoded only when the answer is parsed.
    "answer:json_escaped",
];

/// The credentials of one request.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Echo {
    /// Lower-case header names, one per value.
    pub headers: Vec<String>,
    pub values: Vec<String>,
}

/// What the `--log` records of an echo: never the values.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EchoLog {
    pub headers: Vec<String>,
    pub sha256: Vec<String>,
    /// Empty when the request carried no credential (then nothing was echoed).
    pub fields: Vec<&'static str>,
}

impl Echo {
    pub fn from_headers(headers: &HeaderMap) -> Echo {
        let mut echo = Echo::default();
        for (name, value) in headers {
            let name = name.as_str();
            let Ok(value) = value.to_str() else { continue };
            let value = match name {
                "authorization" | "proxy-authorization" => bearer_token(value),
                _ if STANDARD.contains(&name) || PROTOCOL.contains(&name) => continue,
                _ => value,
            }
            .trim();
            if !value.is_empty() && !echo.values.iter().any(|v| v == value) {
                echo.headers.push(name.to_string());
                echo.values.push(value.to_string());
            }
        }
        echo
    }

    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// Every credential in one field value, `.`-separated: each is a substring of it.
    pub fn joined(&self) -> String {
        self.values.join(".")
    }

    pub fn log(&self) -> EchoLog {
        EchoLog {
            headers: self.headers.clone(),
            sha256: self.values.iter().map(|v| inferbench_contract::canonical::sha256_hex(v.as_bytes())).collect(),
            fields: if self.is_empty() { Vec::new() } else { FIELDS.to_vec() },
        }
    }

    /// The reasoning: two deltas per credential that each hold part of it, then `normal`.
    pub fn reasoning(&self, normal: &Chunks) -> Chunks {
        let mut deltas = Vec::new();
        for v in &self.values {
            let (a, b) = halves(v);
            deltas.push(format!("The request is authorized with {a}"));
            deltas.push(format!("{b}. "));
        }
        let mut out = with_ends(&deltas, "");
        let offset = out.token_count;
        out.chunks.extend(normal.chunks.iter().map(|(t, end)| (t.clone(), end + offset)));
        out.token_count += normal.token_count;
        out
    }

    /// The answer: `text` (a JSON object) chunked as usual, then more members before its
    /// closing brace: each credential split over two deltas, then all of them
    /// `\u`-escaped in one delta, so the answer is still one JSON object.
    pub fn answer(&self, text: &str, tokens_per_chunk: usize) -> Chunks {
        let body = text.strip_suffix('}').unwrap_or(text);
        let mut out = inferbench_sim::answer::tokenize(body, tokens_per_chunk);
        let mut deltas = Vec::new();
        for (i, v) in self.values.iter().enumerate() {
            let (a, b) = halves(v);
            deltas.push(format!(",\"credential_{i}\":\"{a}"));
            deltas.push(format!("{b}\""));
        }
        deltas.push(format!(",\"credentials\":\"{}\"", escape_all(&self.joined())));
        deltas.push("}".to_string());
        let extra = with_ends(&deltas, body);
        let mut last = out.chunks.last().map(|c| c.1).unwrap_or(0);
        for (t, end) in extra.chunks {
            last = end.max(last + 1);
            out.chunks.push((t, last));
        }
        out.token_count = tokenizer::count(&format!("{body}{}", deltas.concat())).max(last);
        out
    }
}

/// The token after `Bearer ` (any case), else the whole value.
fn bearer_token(value: &str) -> &str {
    match value.split_once(' ') {
        Some((scheme, token)) if scheme.eq_ignore_ascii_case("bearer") => token,
        _ => value,
    }
}

/// A value cut in the middle (on a character boundary), so neither half contains it.
fn halves(v: &str) -> (&str, &str) {
    let mut cut = v.len() / 2;
    while !v.is_char_boundary(cut) {
        cut -= 1;
    }
    v.split_at(cut)
}

/// Every UTF-16 unit of `s` as a JSON `\uXXXX` escape: the text has none of `s`'s
/// characters, its JSON decoding is `s`.
pub fn escape_all(s: &str) -> String {
    s.encode_utf16().map(|u| format!("\\u{u:04x}")).collect()
}

/// One chunk per delta, each ending at the token count of `before` and the deltas so far
/// (strictly increasing, so every delta has its own time in the schedule).
fn with_ends(deltas: &[String], before: &str) -> Chunks {
    let mut text = before.to_string();
    let start = tokenizer::count(before);
    let mut last = start;
    let mut chunks = Vec::new();
    for d in deltas {
        text.push_str(d);
        last = tokenizer::count(&text).max(last + 1);
        chunks.push((d.clone(), last - start));
    }
    Chunks { chunks, token_count: last - start }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;
    use serde_json::Value;

    fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.append(axum::http::HeaderName::from_bytes(k.as_bytes()).unwrap(), HeaderValue::from_str(v).unwrap());
        }
        h
    }

    #[test]
    fn credentials_are_the_bearer_token_and_the_non_standard_headers() {
        let e = Echo::from_headers(&headers(&[
            ("host", "127.0.0.1"),
            ("content-type", "application/json"),
            ("user-agent", "ib-fetch"),
            ("authorization", "Bearer sk-test-1234"),
            ("Modal-Key", "mk-abc"),
            ("X-Key-Secret", "s3cr3t"),
            ("x-empty", ""),
            ("x-again", "mk-abc"),
        ]));
        assert_eq!(e.values, ["sk-test-1234", "mk-abc", "s3cr3t"]);
        assert_eq!(e.headers, ["authorization", "modal-key", "x-key-secret"]);
        assert_eq!(e.joined(), "sk-test-1234.mk-abc.s3cr3t");
        let e = Echo::from_headers(&headers(&[("authorization", "Basic dXNlcjpwYXNz")]));
        assert_eq!(e.values, ["Basic dXNlcjpwYXNz"]);
        assert!(Echo::from_headers(&headers(&[("accept", "*/*")])).is_empty());
    }

    #[test]
    fn the_log_holds_hashes_and_field_names_only() {
        let e = Echo { headers: vec!["authorization".into()], values: vec!["sk-test-1234".into()] };
        let log = serde_json::to_string(&e.log()).unwrap();
        assert!(!log.contains("sk-test-1234"), "{log}");
        assert!(log.contains(&inferbench_contract::canonical::sha256_hex(b"sk-test-1234")));
        assert_eq!(e.log().fields.len(), FIELDS.len());
        assert!(Echo::default().log().fields.is_empty());
    }

    #[test]
    fn escaped_text_hides_the_value_until_decoded() {
        let esc = escape_all("sk-é");
        assert_eq!(esc, "\\u0073\\u006b\\u002d\\u00e9");
        let decoded: String = serde_json::from_str(&format!("\"{esc}\"")).unwrap();
        assert_eq!(decoded, "sk-é");
        // Outside the BMP: a surrogate pair.
        assert_eq!(escape_all("😀"), "\\ud83d\\ude00");
    }

    #[test]
    fn the_answer_splits_each_value_and_stays_one_json_object() {
        let e = Echo { headers: vec!["a".into(), "b".into()], values: vec!["sk-test-1234".into(), "mk-abc".into()] };
        let c = e.answer(r#"{"category":"bug","priority":"p1"}"#, 1);
        let text: String = c.chunks.iter().map(|(t, _)| t.as_str()).collect();
        let v: Value = serde_json::from_str(&text).unwrap();
        assert_eq!((v["category"].as_str(), v["credential_0"].as_str()), (Some("bug"), Some("sk-test-1234")));
        assert_eq!(v["credentials"], "sk-test-1234.mk-abc");
        for key in &e.values {
            assert!(text.contains(key.as_str()), "the split halves join up");
            assert!(c.chunks.iter().all(|(t, _)| !t.contains(key.as_str())), "no single delta holds {key}");
            let split = c
                .chunks
                .windows(2)
                .any(|w| !w[0].0.contains(key.as_str()) && format!("{}{}", w[0].0, w[1].0).contains(key.as_str()));
            assert!(split, "{key} spans two consecutive deltas");
        }
        // Token ends strictly increase, so each delta has its own send time.
        assert!(c.chunks.windows(2).all(|w| w[0].1 < w[1].1));
        assert!(c.token_count >= c.chunks.last().unwrap().1);
    }

    #[test]
    fn the_reasoning_splits_each_value_before_the_usual_reasoning() {
        let e = Echo { headers: vec!["authorization".into()], values: vec!["sk-test-1234".into()] };
        let normal = inferbench_sim::answer::reasoning(5, 1, false);
        let r = e.reasoning(&normal);
        assert_eq!(r.chunks.len(), 2 + normal.chunks.len());
        assert!(!r.chunks[0].0.contains("sk-test-1234") && !r.chunks[1].0.contains("sk-test-1234"));
        assert!(format!("{}{}", r.chunks[0].0, r.chunks[1].0).contains("sk-test-1234"));
        assert_eq!(r.token_count, r.chunks.last().unwrap().1);
        assert!(r.chunks.windows(2).all(|w| w[0].1 < w[1].1));
    }
}
