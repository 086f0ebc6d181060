//! The Responses and Messages routes over a real socket: the request bodies each API sends,
//! its authentication headers, its errors and its stream.
use super::*;

const API_PROFILES: &str = r#"
time_scale: 0.01
providers:
  Z.AI:
    model: glm-5.3-flash
    ttft_ms: {median: 3000, p99: 6000}
    tokens_per_second: {median: 2000, p05: 1000}
    reasoning_tokens: {mean: 6}
  llama:
    model: m
    ttft_ms: {median: 100, p99: 200}
    tokens_per_second: {median: 1000, p05: 500}
    reasoning_tokens: {mean: 6}
    dialect: {no_indices: true, reasoning_text: true, reasoning_closed_late: true, no_ping: true}
  litellm:
    model: m
    ttft_ms: {median: 100, p99: 200}
    tokens_per_second: {median: 1000, p05: 500}
    dialect: {data_only: true, done_after_terminal: true, usage_at_end: true}
  limited:
    model: m
    ttft_ms: {median: 100, p99: 200}
    tokens_per_second: {median: 100, p05: 50}
    faults: {http_429: 1.0}
  overloaded:
    model: m
    ttft_ms: {median: 100, p99: 200}
    tokens_per_second: {median: 100, p05: 50}
    faults: {http_5xx: 1.0}
  failing:
    model: m
    ttft_ms: {median: 100, p99: 200}
    tokens_per_second: {median: 1000, p05: 500}
    faults: {response_failed: 1.0}
  ceiling:
    model: m
    ttft_ms: {median: 100, p99: 200}
    tokens_per_second: {median: 1000, p05: 500}
    faults: {response_incomplete: 1.0}
  cut:
    model: m
    ttft_ms: {median: 100, p99: 200}
    tokens_per_second: {median: 1000, p05: 500}
    faults: {cut_after_structure: 1.0}
  echo:
    model: m
    ttft_ms: {median: 100, p99: 200}
    tokens_per_second: {median: 1000, p05: 500}
    faults: {credential_echo: 1.0}
  moved:
    model: m
    ttft_ms: {median: 100, p99: 200}
    tokens_per_second: {median: 1000, p05: 500}
    faults: {redirect: 1.0}
"#;

async fn start_apis() -> Sim {
    let dir = tempfile::tempdir().unwrap();
    let profiles = Profiles::parse(API_PROFILES, FsPath::new("t.yaml")).unwrap();
    let log_path = dir.path().join("sim.jsonl");
    let log = RequestLog::open(log_path.clone()).unwrap();
    let time_scale = profiles.time_scale;
    let app = Arc::new(App::new(profiles, fixtures::dataset(), time_scale, 0, Some(log)));
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop, stopped) = oneshot::channel::<()>();
    tokio::spawn(serve(
        listener,
        app,
        async move {
            let _ = stopped.await;
        },
        Duration::from_secs(1),
    ));
    Sim { addr, log: log_path, _dir: dir, stop: Some(stop) }
}

fn path(provider: &str, api: WireApi) -> String {
    inferbench_inputs::providers::simulated_endpoint("", provider, api)
}

/// The body docs/reference/wire-apis.md defines for Responses.
fn responses_body(user: &str) -> String {
    json!({
        "model": "glm-5.3-flash", "instructions": "s", "input": [{"role": "user", "content": user}], "stream": true,
        "max_output_tokens": 256, "temperature": 0, "top_p": 1, "text": {"format": {"type": "json_object"}},
        "reasoning": {"effort": "low"},
    })
    .to_string()
}

/// The body docs/reference/wire-apis.md defines for Messages.
fn messages_body(user: &str) -> String {
    json!({
        "model": "glm-5.3-flash", "system": "s", "messages": [{"role": "user", "content": user}], "stream": true,
        "max_tokens": 256, "temperature": 0, "top_p": 1, "thinking": {"type": "enabled", "budget_tokens": 1024},
    })
    .to_string()
}

const ANTHROPIC: [(&str, &str); 2] = [("x-api-key", "sk-ant-test-1"), ("anthropic-version", "2023-06-01")];

/// Each event of an LF-framed stream: its `event:` name, if any, and its data, if any.
fn sse_events(text: &str) -> Vec<(Option<String>, Option<String>)> {
    text.split("\n\n")
        .filter(|e| !e.is_empty())
        .map(|e| {
            let name = e.lines().find_map(|l| l.strip_prefix("event: ")).map(str::to_string);
            let data = e.lines().find_map(|l| l.strip_prefix("data: ")).map(str::to_string);
            (name, data)
        })
        .collect()
}

fn json_events(text: &str) -> Vec<Value> {
    sse_events(text)
        .into_iter()
        .filter_map(|(_, d)| d)
        .filter(|d| d != "[DONE]")
        .map(|d| serde_json::from_str(&d).unwrap())
        .collect()
}

fn types(events: &[Value]) -> Vec<String> {
    events.iter().map(|v| v["type"].as_str().unwrap().to_string()).collect()
}

fn responses_answer(events: &[Value]) -> String {
    events.iter().filter(|v| v["type"] == "response.output_text.delta").map(|v| v["delta"].as_str().unwrap()).collect()
}

fn messages_answer(events: &[Value]) -> String {
    events.iter().filter(|v| v["delta"]["type"] == "text_delta").map(|v| v["delta"]["text"].as_str().unwrap()).collect()
}

#[tokio::test]
async fn the_responses_route_streams_the_responses_grammar() {
    let sim = start_apis().await;
    let how = Send { headers: &[("authorization", "Bearer sk-test-1")], ..Send::default() };
    let reply = send_with(sim.addr, "POST", &path("Z.AI", WireApi::Responses), &responses_body(TICKET), how).await;
    assert!(reply.head.starts_with("HTTP/1.1 200"), "{}", reply.head);
    assert_eq!(reply.header("content-type").as_deref(), Some("text/event-stream"));
    assert_eq!(reply.header("x-request-id").as_deref(), Some("resp_z-ai-0"));
    let text = reply.text();
    let raw = sse_events(&text);
    assert!(raw.iter().all(|(name, data)| name.is_some() && data.is_some()), "{text}");
    let events = json_events(&text);
    let t = types(&events);
    assert_eq!(
        t[..4],
        [
            "response.created",
            "response.in_progress",
            "response.output_item.added",
            "response.reasoning_summary_part.added"
        ]
    );
    assert_eq!(t.last().map(String::as_str), Some("response.completed"));
    assert_eq!(t.iter().filter(|t| t.as_str() == "response.completed").count(), 1);
    let seqs: Vec<u64> = events.iter().map(|v| v["sequence_number"].as_u64().unwrap()).collect();
    assert_eq!(seqs, (0..events.len() as u64).collect::<Vec<_>>());
    assert_eq!(responses_answer(&events), TICKET_ANSWER);
    let completed = events.last().unwrap();
    assert_eq!(
        (completed["response"]["id"].as_str(), completed["response"]["model"].as_str()),
        (Some("resp_z-ai-0"), Some("glm-5.3-flash"))
    );
    let usage = &completed["response"]["usage"];
    assert!(usage["input_tokens"].as_u64().unwrap() > 3);
    assert!(usage["output_tokens_details"]["reasoning_tokens"].as_u64().unwrap() > 0);

    let rec = logged(&sim, "z-ai").await;
    assert_eq!(
        (rec["api"].as_str(), rec["item_id"].as_str(), rec["fault"].as_str()),
        (Some("responses"), Some("t-1"), Some("none"))
    );
    assert_eq!((rec["ending"].as_str(), rec["usage_chunk"].as_bool()), (Some("completed"), Some(true)));
    assert_eq!(rec["events_sent"].as_u64().unwrap() as usize, raw.len());
    assert_eq!(
        rec["answer_event_offsets_ms"].as_array().unwrap().len(),
        rec["answer_events"].as_u64().unwrap() as usize
    );
    assert_eq!(rec["requested_model"], "glm-5.3-flash");
}

#[tokio::test]
async fn the_messages_route_streams_the_messages_grammar() {
    let sim = start_apis().await;
    let how = Send { headers: &ANTHROPIC, ..Send::default() };
    let reply = send_with(sim.addr, "POST", &path("Z.AI", WireApi::Messages), &messages_body(TICKET), how).await;
    assert!(reply.head.starts_with("HTTP/1.1 200"), "{}", reply.head);
    assert_eq!(reply.header("x-request-id").as_deref(), Some("msg_z-ai-0"));
    let text = reply.text();
    let raw = sse_events(&text);
    // Every event's name is its JSON type.
    for (name, data) in &raw {
        let v: Value = serde_json::from_str(data.as_deref().unwrap()).unwrap();
        assert_eq!(name.as_deref(), v["type"].as_str());
    }
    let events = json_events(&text);
    let t = types(&events);
    assert_eq!(t[..3], ["message_start", "ping", "content_block_start"]);
    assert_eq!(t[t.len() - 3..], ["content_block_stop", "message_delta", "message_stop"]);
    assert_eq!(events[2]["content_block"]["type"], "thinking");
    assert_eq!(messages_answer(&events), TICKET_ANSWER);
    assert_eq!(events[0]["message"]["id"], "msg_z-ai-0");
    let delta = &events[events.len() - 2];
    assert_eq!(delta["delta"]["stop_reason"], "end_turn");
    assert!(delta["usage"]["output_tokens"].as_u64().unwrap() > 6);
    let rec = logged(&sim, "z-ai").await;
    assert_eq!((rec["api"].as_str(), rec["item_id"].as_str()), (Some("messages"), Some("t-1")));
    assert_eq!(rec["usage_chunk"], true);
}

#[tokio::test]
async fn every_route_answers_the_same_prompt_alike() {
    let sim = start_apis().await;
    // The chat request, then Responses with a plain-string input and input_text parts, then
    // Messages with system and content as text blocks: the same item, the same answer.
    let chat = send(sim.addr, &path("litellm", WireApi::ChatCompletions), &chat_body(TICKET)).await.text();
    assert_eq!(answer_of(&chat), TICKET_ANSWER);
    let plain = json!({"model": "m", "input": TICKET, "stream": true}).to_string();
    let parts = json!({"model": "m", "instructions": "s", "stream": true, "input": [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": TICKET}]}]}).to_string();
    for body in [plain, parts] {
        let text = send(sim.addr, &path("litellm", WireApi::Responses), &body).await.text();
        assert_eq!(responses_answer(&json_events(&text)), TICKET_ANSWER, "{body}");
    }
    let blocks = json!({"model": "m", "max_tokens": 64, "stream": true, "system": [{"type": "text", "text": "s"}], "messages": [{"role": "user", "content": [{"type": "text", "text": TICKET}]}]}).to_string();
    let text = send(sim.addr, &path("litellm", WireApi::Messages), &blocks).await.text();
    assert_eq!(messages_answer(&json_events(&text)), TICKET_ANSWER);
    let mut lines = Vec::new();
    for _ in 0..500 {
        lines = log_lines(&sim).into_iter().filter(|v| v["provider"] == "litellm").collect();
        if lines.len() == 4 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    lines.sort_by_key(|v| v["counter"].as_u64());
    let seen: Vec<(Option<&str>, Option<&str>)> =
        lines.iter().map(|v| (v["api"].as_str(), v["item_id"].as_str())).collect();
    assert_eq!(
        seen,
        [
            (None, Some("t-1")),
            (Some("responses"), Some("t-1")),
            (Some("responses"), Some("t-1")),
            (Some("messages"), Some("t-1"))
        ]
    );
}

#[tokio::test]
async fn dialects_over_the_wire() {
    let sim = start_apis().await;
    // LiteLLM: data-only events, a [DONE] after the Responses terminal, usage at the end.
    let text = send(sim.addr, &path("litellm", WireApi::Responses), &responses_body(TICKET)).await.text();
    let raw = sse_events(&text);
    assert!(raw.iter().all(|(name, _)| name.is_none()), "{text}");
    assert_eq!(raw.last().unwrap().1.as_deref(), Some("[DONE]"));
    assert_eq!(types(&json_events(&text)).last().map(String::as_str), Some("response.completed"));
    let text = send(sim.addr, &path("litellm", WireApi::Messages), &messages_body(TICKET)).await.text();
    let events = json_events(&text);
    assert_eq!(events[0]["message"]["usage"], json!({"input_tokens": 0, "output_tokens": 0}));
    assert!(events[events.len() - 2]["usage"]["input_tokens"].as_u64().unwrap() > 0);
    // llama.cpp: no indices, raw reasoning text, the thinking block closed after the text.
    let text = send(sim.addr, &path("llama", WireApi::Responses), &responses_body(TICKET)).await.text();
    let events = json_events(&text);
    assert!(events.iter().all(|v| v.get("sequence_number").is_none() && v.get("output_index").is_none()));
    assert!(types(&events).contains(&"response.reasoning_text.delta".to_string()));
    assert_eq!(responses_answer(&events), TICKET_ANSWER);
    let text = send(sim.addr, &path("llama", WireApi::Messages), &messages_body(TICKET)).await.text();
    let events = json_events(&text);
    let t = types(&events);
    assert!(!t.contains(&"ping".to_string()));
    let stop0 = events.iter().position(|v| v["type"] == "content_block_stop" && v["index"] == 0).unwrap();
    let start1 = events.iter().position(|v| v["type"] == "content_block_start" && v["index"] == 1).unwrap();
    assert!(start1 < stop0, "{t:?}");
}

#[tokio::test]
async fn the_new_faults_over_the_wire() {
    let sim = start_apis().await;
    // response_failed
    let text = send(sim.addr, &path("failing", WireApi::Responses), &responses_body(TICKET)).await.text();
    let last = json_events(&text).pop().unwrap();
    assert_eq!(
        (last["type"].as_str(), last["response"]["error"]["code"].as_str()),
        (Some("response.failed"), Some("server_error"))
    );
    let text = send(sim.addr, &path("failing", WireApi::Messages), &messages_body(TICKET)).await.text();
    assert!(text.ends_with(&format!("event: error\ndata: {}\n\n", stream::messages::STREAM_ERROR)), "{text}");
    let text = send(sim.addr, &path("failing", WireApi::ChatCompletions), &chat_body(TICKET)).await.text();
    assert!(text.ends_with(&format!("data: {}\n\n", stream::STREAM_ERROR)), "{text}");
    // response_incomplete
    let text = send(sim.addr, &path("ceiling", WireApi::Responses), &responses_body(TICKET)).await.text();
    let events = json_events(&text);
    assert_eq!(events.last().unwrap()["response"]["incomplete_details"]["reason"], "max_output_tokens");
    let sent = responses_answer(&events);
    assert!(!sent.is_empty() && sent.len() < TICKET_ANSWER.len() && TICKET_ANSWER.starts_with(&sent));
    let text = send(sim.addr, &path("ceiling", WireApi::Messages), &messages_body(TICKET)).await.text();
    let events = json_events(&text);
    assert_eq!(events[events.len() - 2]["delta"]["stop_reason"], "max_tokens");
    let text = send(sim.addr, &path("ceiling", WireApi::ChatCompletions), &chat_body(TICKET)).await.text();
    assert!(text.contains("\"finish_reason\":\"length\""), "{text}");
    // cut_after_structure: a clean, complete body of the opening events only.
    for (api, want) in [
        (WireApi::Responses, vec!["response.created", "response.in_progress"]),
        (WireApi::Messages, vec!["message_start", "ping"]),
    ] {
        let body = if api == WireApi::Responses { responses_body(TICKET) } else { messages_body(TICKET) };
        let text = send(sim.addr, &path("cut", api), &body).await.text();
        assert_eq!(types(&json_events(&text)), want);
    }
    let text = send(sim.addr, &path("cut", WireApi::ChatCompletions), &chat_body(TICKET)).await.text();
    assert_eq!(chunk_values(&text).len(), 1);
    let rec = logged(&sim, "cut").await;
    assert_eq!((rec["fault"].as_str(), rec["ending"].as_str()), (Some("cut_after_structure"), Some("completed")));
}

#[tokio::test]
async fn errors_before_the_stream_take_each_api_s_shape() {
    let sim = start_apis().await;
    let anthropic = |r: &Reply, status: &str, kind: &str| {
        assert!(r.head.starts_with(&format!("HTTP/1.1 {status}")), "{}", r.head);
        let body = dechunk(&r.body).unwrap_or(r.body.clone());
        let v: Value = serde_json::from_slice(&body).unwrap();
        assert_eq!((v["type"].as_str(), v["error"]["type"].as_str()), (Some("error"), Some(kind)), "{v}");
        assert!(v["error"]["message"].as_str().is_some_and(|m| !m.is_empty()));
    };
    let openai = |r: &Reply, status: &str, kind: &str| {
        assert!(r.head.starts_with(&format!("HTTP/1.1 {status}")), "{}", r.head);
        let body = dechunk(&r.body).unwrap_or(r.body.clone());
        let v: Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(v["error"]["type"].as_str(), Some(kind), "{v}");
    };
    let m = |provider: &str| path(provider, WireApi::Messages);
    let r = |provider: &str| path(provider, WireApi::Responses);
    anthropic(&send(sim.addr, &m("nobody"), &messages_body(TICKET)).await, "404", "not_found_error");
    anthropic(&send(sim.addr, &m("z-ai"), "not json").await, "400", "invalid_request_error");
    let no_limit = json!({"model": "m", "stream": true, "messages": [{"role": "user", "content": "x"}]}).to_string();
    anthropic(&send(sim.addr, &m("z-ai"), &no_limit).await, "400", "invalid_request_error");
    let no_messages = json!({"model": "m", "stream": true, "max_tokens": 5}).to_string();
    anthropic(&send(sim.addr, &m("z-ai"), &no_messages).await, "400", "invalid_request_error");
    let not_streamed = json!({"model": "m", "max_tokens": 5, "messages": []}).to_string();
    anthropic(&send(sim.addr, &m("z-ai"), &not_streamed).await, "400", "invalid_request_error");
    let limited = send(sim.addr, &m("limited"), &messages_body(TICKET)).await;
    anthropic(&limited, "429", "rate_limit_error");
    assert_eq!(limited.header("retry-after").as_deref(), Some("2"));
    anthropic(&send(sim.addr, &m("overloaded"), &messages_body(TICKET)).await, "503", "overloaded_error");

    openai(&send(sim.addr, &r("nobody"), &responses_body(TICKET)).await, "404", "not_found_error");
    let no_input = json!({"model": "m", "stream": true}).to_string();
    openai(&send(sim.addr, &r("z-ai"), &no_input).await, "400", "invalid_request_error");
    openai(&send(sim.addr, &r("limited"), &responses_body(TICKET)).await, "429", "rate_limit_error");
    openai(&send(sim.addr, &r("overloaded"), &responses_body(TICKET)).await, "503", "server_error");
    // A redirect points under the route it came in on.
    let moved = send(sim.addr, &m("moved"), &messages_body(TICKET)).await;
    assert!(moved.head.starts_with("HTTP/1.1 307"), "{}", moved.head);
    assert_eq!(moved.header("location").as_deref(), Some("/moved/redirected/v1/messages"));
    // Only the drawn requests are logged.
    let log = log_lines(&sim);
    assert_eq!(log.len(), 5, "{log:#?}");
}

#[tokio::test]
async fn credentials_are_echoed_from_each_api_s_headers() {
    let sim = start_apis().await;
    let how = Send { headers: &ANTHROPIC, ..Send::default() };
    let reply = send_with(sim.addr, "POST", &path("echo", WireApi::Messages), &messages_body(TICKET), how).await;
    assert_eq!(reply.header("x-request-id").as_deref(), Some("req-sk-ant-test-1"));
    let text = reply.text();
    assert!(text.starts_with(": sk-ant-test-1\nid: sk-ant-test-1\nevent: message_start\n"), "{text}");
    assert!(!text.contains("2023-06-01"), "the API version is no credential");
    let rec = logged(&sim, "echo").await;
    assert_eq!(rec["credential_echo"]["headers"], json!(["x-api-key"]));
    assert_eq!(
        messages_answer(&json_events(&text))[..TICKET_ANSWER.len() - 1],
        TICKET_ANSWER[..TICKET_ANSWER.len() - 1]
    );
}

#[tokio::test]
async fn a_token_limit_ignoring_eos_sets_the_length_on_every_route() {
    let sim = start_apis().await;
    let body = json!({"model": "m", "input": "a synthetic prompt", "stream": true, "max_output_tokens": 40, "ignore_eos": true});
    send(sim.addr, &path("litellm", WireApi::Responses), &body.to_string()).await;
    let body = json!({"model": "m", "messages": [{"role": "user", "content": "a synthetic prompt"}], "stream": true, "max_tokens": 30, "ignore_eos": true});
    send(sim.addr, &path("litellm", WireApi::Messages), &body.to_string()).await;
    let mut lines = Vec::new();
    for _ in 0..500 {
        lines = log_lines(&sim);
        if lines.len() == 2 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    lines.sort_by_key(|v| v["counter"].as_u64());
    let tokens: Vec<u64> = lines.iter().map(|v| v["answer_tokens"].as_u64().unwrap()).collect();
    assert_eq!(tokens, [40, 30]);
}
