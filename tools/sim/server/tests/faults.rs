//! The hostile faults over a real socket: exactly what reaches the client.
use super::*;
use crate::{credential, wire};
use inferbench_contract::canonical::sha256_hex;

fn path(provider: &str) -> String {
    inferbench_inputs::providers::simulated_endpoint("", provider, inferbench_contract::vocab::WireApi::ChatCompletions)
}

#[tokio::test]
async fn in_band_errors_end_the_body_cleanly_after_half_the_answer() {
    let sim = start().await;
    for (provider, fault, last_event) in [
        ("in-band", "in_band_error", format!("data: {}", stream::STREAM_ERROR)),
        ("error-event", "error_event", format!("event: error\ndata: {}", stream::STREAM_ERROR)),
    ] {
        let reply = send(sim.addr, &path(provider), &chat_body_with_usage(TICKET)).await;
        assert!(reply.head.starts_with("HTTP/1.1 200"), "{}", reply.head);
        let text = reply.text();
        let events: Vec<&str> = text.split("\n\n").filter(|e| !e.is_empty()).collect();
        assert_eq!(events.last().unwrap(), &last_event, "{provider}");
        assert!(!text.contains("[DONE]") && !text.contains("finish_reason\":\"stop"), "{provider}: {text}");
        let answer = answer_of(&events[..events.len() - 1].join("\n\n"));
        assert!(!answer.is_empty() && TICKET_ANSWER.starts_with(&answer) && answer != TICKET_ANSWER, "{answer}");
        let rec = logged(&sim, provider).await;
        assert_eq!((rec["fault"].as_str(), rec["ending"].as_str()), (Some(fault), Some("completed")));
        assert!(rec["fault_event_offset_ms"].as_f64().is_some());
        let sent = rec["answer_event_offsets_ms"].as_array().unwrap().len() as u64;
        assert_eq!(sent, rec["answer_events"].as_u64().unwrap().div_ceil(2));
    }
}

#[tokio::test]
async fn non_sse_answers() {
    let sim = start().await;
    let r = send(sim.addr, &path("json"), &chat_body(TICKET)).await;
    assert!(r.head.starts_with("HTTP/1.1 200"), "{}", r.head);
    assert_eq!(r.header("content-type").as_deref(), Some("application/json"));
    assert!(r.header("content-length").is_some() && r.header("transfer-encoding").is_none(), "{}", r.head);
    let v: Value = serde_json::from_slice(&r.body).unwrap();
    assert_eq!(
        (v["object"].as_str(), v["choices"][0]["message"]["content"].as_str()),
        (Some("chat.completion"), Some(TICKET_ANSWER))
    );

    let r = send(sim.addr, &path("html"), &chat_body(TICKET)).await;
    assert!(r.head.starts_with("HTTP/1.1 200"), "{}", r.head);
    assert_eq!(r.header("content-type").as_deref(), Some("text/html; charset=utf-8"));
    assert!(String::from_utf8_lossy(&r.body).starts_with("<!DOCTYPE html>"));

    let r = send(sim.addr, &path("empty"), &chat_body(TICKET)).await;
    assert!(r.head.starts_with("HTTP/1.1 200"), "{}", r.head);
    assert_eq!(r.header("content-type").as_deref(), Some("text/event-stream"));
    assert_eq!((r.header("content-length").as_deref(), r.body.len()), (Some("0"), 0));

    let r = send(sim.addr, &path("no-content"), &chat_body(TICKET)).await;
    assert!(r.head.starts_with("HTTP/1.1 204"), "{}", r.head);
    assert!(r.header("content-type").is_none() && r.body.is_empty(), "{}", r.head);

    for (provider, kind, status) in
        [("json", "json", 200), ("html", "html", 200), ("empty", "empty", 200), ("no-content", "no_content", 204)]
    {
        let rec = logged(&sim, provider).await;
        assert_eq!(
            (rec["fault"].as_str(), rec["non_sse_kind"].as_str(), rec["status"].as_u64()),
            (Some("non_sse"), Some(kind), Some(status))
        );
        assert_eq!((rec["ending"].as_str(), rec["events_sent"].as_u64()), (Some("completed"), Some(0)));
    }
}

#[tokio::test]
async fn done_then_hang_keeps_the_connection_open_until_the_client_leaves() {
    let sim = start().await;
    let mut s = TcpStream::connect(sim.addr).await.unwrap();
    let body = chat_body(TICKET);
    let req = format!(
        "POST {} HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
        path("hang"),
        body.len()
    );
    s.write_all(req.as_bytes()).await.unwrap();
    let mut raw = Vec::new();
    let mut buf = vec![0u8; 4096];
    while !String::from_utf8_lossy(&raw).contains("data: [DONE]\n\n") {
        let n = s.read(&mut buf).await.unwrap();
        assert!(n > 0, "the body ended before [DONE]");
        raw.extend_from_slice(&buf[..n]);
    }
    // After [DONE]: silence, and no end of the body (no terminator, no close).
    let more = tokio::time::timeout(Duration::from_millis(300), s.read(&mut buf)).await;
    assert!(more.is_err(), "expected silence after [DONE], got {more:?}");
    assert!(!raw.ends_with(b"0\r\n\r\n"));
    assert!(log_lines(&sim).is_empty(), "the stream is still going");
    drop(s);
    let rec = logged(&sim, "hang").await;
    assert_eq!(
        (rec["fault"].as_str(), rec["ending"].as_str()),
        (Some("done_then_hang"), Some("hung_until_client_left"))
    );
    assert_eq!(rec["answer_event_offsets_ms"].as_array().unwrap().len() as u64, rec["answer_events"].as_u64().unwrap());
}

#[tokio::test]
async fn data_after_done_and_truncation() {
    let sim = start().await;
    let text = send(sim.addr, &path("trailing"), &chat_body(TICKET)).await.text();
    let data = data_lines(&text);
    assert_eq!(data[data.len() - 2], "[DONE]");
    let trailing: Value = serde_json::from_str(data[data.len() - 1]).unwrap();
    assert_eq!(delta(&trailing, "content"), stream::TRAILING);
    // Up to [DONE] the answer is the gold.
    assert_eq!(answer_of(text.split("data: [DONE]").next().unwrap()), TICKET_ANSWER);

    let text = send(sim.addr, &path("truncated"), &chat_body_with_usage(TICKET)).await.text();
    assert!(!text.contains("[DONE]") && !text.contains("finish_reason\":\"stop") && !text.contains("usage"));
    let answer = answer_of(&text);
    assert!(!answer.is_empty() && TICKET_ANSWER.starts_with(&answer) && answer != TICKET_ANSWER, "{answer}");
    let rec = logged(&sim, "truncated").await;
    assert_eq!((rec["fault"].as_str(), rec["ending"].as_str()), (Some("truncate"), Some("completed")));
    assert!(rec["fault_event_offset_ms"].as_f64().is_some());
}

#[tokio::test]
async fn empty_data_keep_alives_in_a_complete_answer() {
    let sim = start().await;
    let text = send(sim.addr, &path("keepalive"), &chat_body(TICKET)).await.text();
    assert!(text.starts_with("data: {"));
    assert!(text.contains("\n\ndata:\n\n") && text.contains("\n\ndata: \n\n"), "{text}");
    let events: Vec<&str> = text.split("\n\n").collect();
    let first_answer = events.iter().position(|e| e.contains("\"content\":\"{")).unwrap();
    assert!(events[..first_answer].iter().any(|e| e.trim_end() == "data:"));
    assert_eq!(answer_of(&text), TICKET_ANSWER);
    assert_eq!(data_lines(&text).last(), Some(&"[DONE]"));
}

#[tokio::test]
async fn an_oversized_line_arrives_whole_in_bounded_chunks() {
    let sim = start().await;
    let reply = send(sim.addr, &path("oversized"), &chat_body(TICKET)).await;
    let (frames, complete) = chunks(&reply.body);
    assert!(complete);
    assert!(frames.iter().all(|f| f.len() <= wire::PIECE), "a frame over {} bytes", wire::PIECE);
    let text = String::from_utf8(frames.concat()).unwrap();
    let long: Vec<&str> = text.split('\n').filter(|l| l.len() > 10_000).collect();
    assert_eq!(long.len(), 1);
    assert_eq!(long[0].len(), 3_000_000);
    let v: Value = serde_json::from_str(long[0].strip_prefix("data: ").unwrap()).unwrap();
    assert!(delta(&v, "content").len() > 2_999_000);
    // Around it, the whole answer and a normal end.
    let rest: String = text.split("\n\n").filter(|e| e.len() < 10_000).collect::<Vec<_>>().join("\n\n");
    assert_eq!(answer_of(&rest), TICKET_ANSWER);
    assert!(text.ends_with("data: [DONE]\n\n"));
    let rec = logged(&sim, "oversized").await;
    assert_eq!((rec["oversized_bytes"].as_u64(), rec["ending"].as_str()), (Some(3_000_000), Some("completed")));
}

#[tokio::test]
async fn an_unterminated_line_streams_until_the_client_leaves() {
    let sim = start().await;
    const READ: usize = 4 << 20;
    let until = |raw: &[u8]| raw.len() > READ;
    let how = Send { until: Some(&until), ..Send::default() };
    let reply = send_with(sim.addr, "POST", &path("endless"), &chat_body(TICKET), how).await;
    let (frames, complete) = chunks(&reply.body);
    assert!(!complete);
    let text = String::from_utf8_lossy(&frames.concat()).into_owned();
    let (before, line) = text.split_at(text.find(stream::UNTERMINATED_PREFIX).unwrap());
    assert!(before.starts_with("data: {") && before.ends_with("\n\n"));
    assert!(line.len() > READ - 100_000, "{}", line.len());
    assert!(!line.contains('\n') && !line.contains('\r'));
    let rec = logged(&sim, "endless").await;
    assert_eq!((rec["fault"].as_str(), rec["ending"].as_str()), (Some("unterminated_line"), Some("client_gone")));
    // The server waited for the reader: it wrote what was read plus what the channel and the
    // loopback socket buffers hold (a few MiB), not what it could produce in the meantime.
    let written = rec["body_bytes"].as_u64().unwrap();
    assert!(written >= line.len() as u64 && written < (READ + (32 << 20)) as u64, "{written}");
}

#[tokio::test]
async fn no_model_chunks() {
    let sim = start().await;
    let text = send(sim.addr, &path("anonymous"), &chat_body(TICKET)).await.text();
    let chunks = chunk_values(&text);
    assert!(chunks.len() > 3 && chunks.iter().all(|c| c.get("model").is_none() && c["id"].is_string()));
    assert_eq!(answer_of(&text), TICKET_ANSWER);
    assert_eq!(data_lines(&text).last(), Some(&"[DONE]"));
}

#[tokio::test]
async fn credential_echo_reaches_every_logged_field_and_not_the_simulators_log() {
    const KEY: &str = "sk-sim-test-key-42";
    const SECRET: &str = "xs-secret-77";
    let sim = start().await;
    let headers = [("authorization", "Bearer sk-sim-test-key-42"), ("x-key-secret", SECRET)];
    let how = Send { headers: &headers, ..Send::default() };
    let reply = send_with(sim.addr, "POST", &path("echo"), &chat_body(TICKET), how).await;
    let both = format!("{KEY}.{SECRET}");
    assert_eq!(reply.header("x-request-id"), Some(format!("req-{both}")));
    let text = reply.text();
    let events: Vec<&str> = text.split("\n\n").filter(|e| !e.is_empty()).collect();
    assert!(events[0].starts_with(&format!(": {both}\nid: {both}\ndata: ")), "{}", events[0]);
    assert!(events[1].starts_with(&format!("event: {both}\ndata: ")), "{}", events[1]);
    let chunks = chunk_values(&text);
    assert!(chunks.iter().all(|c| c["id"] == format!("chatcmpl-{both}")));
    let finish = chunks.iter().find(|c| c["choices"][0]["finish_reason"] == "stop").unwrap();
    assert_eq!(finish["system_fingerprint"], both);
    // The raw bytes of that field do not hold the credentials; its JSON decoding does.
    let event = events.iter().find(|e| e.contains("system_fingerprint")).unwrap();
    let raw = event.split("\"system_fingerprint\":").nth(1).unwrap();
    assert!(!raw.contains(KEY) && !raw.contains(SECRET) && raw.starts_with("\"\\u0073\\u006b"), "{raw}");
    for (field, key) in
        [("reasoning_content", KEY), ("content", KEY), ("reasoning_content", SECRET), ("content", SECRET)]
    {
        let texts: Vec<String> = chunks.iter().map(|c| delta(c, field)).filter(|t| !t.is_empty()).collect();
        assert!(texts.iter().all(|t| !t.contains(key)), "{field}: one delta holds {key}");
        assert!(texts.windows(2).any(|w| format!("{}{}", w[0], w[1]).contains(key)), "{field}: {texts:?}");
    }
    let answer: Value = serde_json::from_str(&answer_of(&text)).unwrap();
    assert_eq!(answer["credentials"], both);
    assert_eq!(data_lines(&text).last(), Some(&"[DONE]"));

    let rec = logged(&sim, "echo").await;
    let line = std::fs::read_to_string(&sim.log).unwrap();
    assert!(!line.contains(KEY) && !line.contains(SECRET), "the simulator's log holds a credential");
    let echo = &rec["credential_echo"];
    assert_eq!(echo["headers"], json!(["authorization", "x-key-secret"]));
    assert_eq!(echo["sha256"], json!([sha256_hex(KEY.as_bytes()), sha256_hex(SECRET.as_bytes())]));
    assert_eq!(echo["fields"], json!(credential::FIELDS));
    assert_eq!(rec["ending"], "completed");
}

#[tokio::test]
async fn credential_echo_without_credentials_is_a_normal_stream() {
    let sim = start().await;
    let text = send(sim.addr, &path("echo"), &chat_body(TICKET)).await.text();
    assert!(text.starts_with("data: {") && !text.contains("event:"));
    assert_eq!(answer_of(&text), TICKET_ANSWER);
    let rec = logged(&sim, "echo").await;
    assert_eq!(rec["credential_echo"], json!({"headers": [], "sha256": [], "fields": []}));
}

#[tokio::test]
async fn http_400_and_redirect() {
    let sim = start().await;
    let r = send(sim.addr, &path("bad-request"), &chat_body(TICKET)).await;
    assert!(r.head.starts_with("HTTP/1.1 400"), "{}", r.head);
    let v: Value = serde_json::from_slice(&r.body).unwrap();
    assert_eq!((v["error"]["type"].as_str(), v["error"]["code"].as_u64()), (Some("invalid_request_error"), Some(400)));

    let r = send(sim.addr, &path("moved"), &chat_body(TICKET)).await;
    assert!(r.head.starts_with("HTTP/1.1 307"), "{}", r.head);
    assert_eq!(r.header("location"), Some(redirect_location("moved")));
    assert_eq!((r.header("content-length").as_deref(), r.body.len()), (Some("0"), 0));
    // Following it leads nowhere: no second draw.
    let r2 = send(sim.addr, &redirect_location("moved"), &chat_body(TICKET)).await;
    assert!(r2.head.starts_with("HTTP/1.1 404"), "{}", r2.head);
    let log = log_lines(&sim);
    assert_eq!(log.len(), 2);
    assert_eq!((log[0]["status"].as_u64(), log[0]["fault"].as_str()), (Some(400), Some("http_400")));
    assert_eq!(
        (log[1]["status"].as_u64(), log[1]["location"].as_str()),
        (Some(307), Some("/moved/redirected/v1/chat/completions"))
    );
}

#[tokio::test]
async fn crlf_line_endings() {
    let sim = start().await;
    let text = send(sim.addr, &path("crlf"), &chat_body(TICKET)).await.text();
    assert!(text.ends_with("data: [DONE]\r\n\r\n"));
    assert_eq!(text.matches('\n').count(), text.matches("\r\n").count());
    assert_eq!(answer_of(&text.replace("\r\n", "\n")), TICKET_ANSWER);
    assert_eq!(logged(&sim, "crlf").await["line_ending"], "crlf");
}

#[tokio::test]
async fn split_utf8_cuts_events_inside_a_character() {
    let sim = start().await;
    let reply = send(sim.addr, &path("split"), &chat_body("Notes 2. Who signs off?")).await;
    let (frames, complete) = chunks(&reply.body);
    assert!(complete);
    let text = String::from_utf8(frames.concat()).unwrap();
    let events = text.split("\n\n").filter(|e| !e.is_empty()).count();
    assert_eq!(frames.len(), 2 * events, "each event in two frames");
    // The answer has non-ASCII (no-break spaces) and its events are cut inside them.
    let answer = answer_of(&text);
    assert_eq!(answer, "{\"answer\":\"Tomas\u{a0}Lindqvist\"}");
    let cut_inside = frames.chunks(2).filter(|pair| std::str::from_utf8(&pair[0]).is_err()).count();
    assert!(cut_inside >= 2, "{cut_inside} events cut inside a character");
    let answer_cut = frames.chunks(2).any(|pair| {
        std::str::from_utf8(&pair[0]).is_err() && String::from_utf8(pair.concat()).unwrap().contains('\u{a0}')
    });
    assert!(answer_cut, "no answer event cut inside its no-break space");
}
