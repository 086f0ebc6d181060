#!/usr/bin/env python3
"""Replays what a run recorded of its Responses and Messages attempts through the official
SDKs' own stream readers, and prints what each assembled, so that inferbench's reading of the
same bytes can be held to theirs (tests/e2e/wire_apis.rs).

Usage: assemble.py RUN_DIR  ->  stdout: {"<request_id>": {"api": ..., "answer": ..., "reasoning": ...}}

Each attempt's logged events (events.parquet: their `event:` names, data and comments, in
order) are served again as one server-sent event stream by a local HTTP server, and read by
openai-python (`responses.create(stream=True)`: its typed events, whose text deltas are joined)
or anthropic-sdk-python (`messages.stream()` and its final message: the SDK's own assembly of
the text and thinking blocks). `make test` installs both, pinned, into target/sdk-python.
"""
import http.server
import json
import sys
import threading

import anthropic
import openai
import polars as pl


def streams(run):
    events = pl.read_parquet(f"{run}/events.parquet")
    apis = {}
    for row in events.filter(pl.col("type") == "request_started").iter_rows(named=True):
        data = json.loads(row["data"])
        api = data.get("api", "chat-completions")
        if api != "chat-completions":
            apis[(row["request_id"], row["attempt"])] = api
    bodies = {}
    sse = events.filter(pl.col("type") == "sse_event").sort(["request_id", "attempt", "sse_index"])
    for row in sse.iter_rows(named=True):
        key = (row["request_id"], row["attempt"])
        if key not in apis:
            continue
        if row["sse_comment"] is not None:
            text = f":{row['sse_comment']}\n\n"
        else:
            lines = [f"event: {row['sse_event']}"] if row["sse_event"] is not None else []
            lines += [f"data: {line}" for line in (row["sse_data"] or "").split("\n")]
            text = "\n".join(lines) + "\n\n"
        bodies.setdefault(key, []).append(text)
    return {key: (apis[key], "".join(parts).encode()) for key, parts in bodies.items()}


def main():
    recorded = streams(sys.argv[1])
    by_path = {}

    class Replay(http.server.BaseHTTPRequestHandler):
        def do_POST(self):
            self.rfile.read(int(self.headers.get("content-length", 0)))
            body = by_path[self.path]
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Replay)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    out = {}
    for (request_id, attempt), (api, body) in sorted(recorded.items()):
        try:
            out[request_id] = read(api, base, f"/{request_id}-{attempt}", body, by_path)
        except Exception as e:  # a stream the SDK refuses (an error event, a cut): its verdict
            out[request_id] = {"api": api, "sdk_error": type(e).__name__}
    server.shutdown()
    json.dump(out, sys.stdout)


def read(api, base, prefix, body, by_path):
    """What the SDK of `api` assembles from `body`, served at `prefix`."""
    if api == "responses":
        by_path[f"{prefix}/v1/responses"] = body
        client = openai.OpenAI(base_url=f"{base}{prefix}/v1", api_key="replay", max_retries=0)
        answer, reasoning = [], []
        for event in client.responses.create(model="m", input="x", stream=True):
            if event.type in ("response.output_text.delta", "response.refusal.delta"):
                answer.append(event.delta)
            elif event.type in ("response.reasoning_summary_text.delta", "response.reasoning_text.delta"):
                reasoning.append(event.delta)
        return {"api": api, "answer": "".join(answer), "reasoning": "".join(reasoning)}
    by_path[f"{prefix}/v1/messages"] = body
    client = anthropic.Anthropic(base_url=f"{base}{prefix}", api_key="replay", max_retries=0)
    with client.messages.stream(model="m", max_tokens=1, messages=[{"role": "user", "content": "x"}]) as s:
        message = s.get_final_message()
    answer = "".join(b.text for b in message.content if b.type == "text")
    reasoning = "".join(b.thinking for b in message.content if b.type == "thinking")
    return {"api": api, "answer": answer, "reasoning": reasoning}


if __name__ == "__main__":
    main()
