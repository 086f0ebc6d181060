"""Helpers of benches/peers/run.sh: inferbench's load client beside vllm-bench, AIPerf and
GuideLLM.

Run with the peers' venv's Python (it has pyarrow, tiktoken and transformers). Subcommands:

  tokenizer DIR O200K_FILE   o200k_base offline, for both peers: DIR/tiktoken holds tiktoken's
                             cache of the BPE file (AIPerf's `--tokenizer builtin`), DIR/hf a
                             Hugging Face tokenizer converted from it (GuideLLM's processor).
                             The BPE file is the one the tiktoken-rs crate ships, which
                             inferbench's judge counts tokens with.
  prompts RUN DATASET OUT    the prompts inferbench's run RUN sends (each item's system and
                             user message), in its schedule's order, as OUT/aiperf.jsonl
                             (AIPerf's multi_turn format), OUT/guidellm.jsonl (columns
                             system and prompt) and OUT/vllm-bench.jsonl (its custom format:
                             one prompt, sent as the user message, per line): the same
                             messages, so ib-sim answers every tool with the same items'
                             answers.
  measure OUT -- CMD …       runs CMD, samples the CPU time and resident memory of its whole
                             process tree every 50 ms (/proc; with PEERS_SERVER_PID, the
                             server's CPU too), and writes OUT (JSON): the samples, the wall
                             times, the exit status and the tree's rusage at the end.
                             PEERS_TIMEOUT (s, default 600) ends a run that hangs.
  summarize DIR              reads every step under DIR and prints the table (Markdown),
                             writing DIR/summary.json beside it.
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path


# --- tokenizer ---------------------------------------------------------------------------


def cmd_tokenizer(out: Path, bpe_file: Path) -> None:
    import tiktoken_ext.openai_public as openai_public

    # tiktoken keys its cache by sha1 of the BPE file's URL: take the URL (and the file's
    # expected hash) from tiktoken itself, so that nothing here names it.
    seen: dict[str, str] = {}

    def capture(url: str, expected_hash: str | None = None) -> dict:
        seen["url"], seen["hash"] = url, expected_hash or ""
        return {}

    real = openai_public.load_tiktoken_bpe
    openai_public.load_tiktoken_bpe = capture
    try:
        pat_str = openai_public.o200k_base()["pat_str"]
    finally:
        openai_public.load_tiktoken_bpe = real
    data = bpe_file.read_bytes()
    if seen["hash"] and hashlib.sha256(data).hexdigest() != seen["hash"]:
        sys.exit(f"{bpe_file}: not tiktoken's o200k_base (its SHA-256 differs)")
    cache = out / "tiktoken"
    cache.mkdir(parents=True, exist_ok=True)
    (cache / hashlib.sha1(seen["url"].encode()).hexdigest()).write_bytes(data)

    os.environ["TIKTOKEN_CACHE_DIR"] = str(cache)
    import tiktoken
    from transformers import PreTrainedTokenizerFast
    from transformers.convert_slow_tokenizer import TikTokenConverter

    hf = out / "hf"
    hf.mkdir(parents=True, exist_ok=True)
    bpe_copy = hf / "o200k_base.tiktoken"
    shutil.copyfile(bpe_file, bpe_copy)
    converted = TikTokenConverter(vocab_file=str(bpe_copy), pattern=pat_str).converted()
    fast = PreTrainedTokenizerFast(tokenizer_object=converted, eos_token="<|endoftext|>")
    fast.save_pretrained(hf)
    bpe_copy.unlink()
    # The two must count alike: check on a sentence.
    text = "Ticket 4812: the export to CSV fails with 'permission denied' since 3.14.2."
    want = tiktoken.get_encoding("o200k_base").encode(text)
    got = PreTrainedTokenizerFast.from_pretrained(hf)(text, add_special_tokens=False)["input_ids"]
    if want != got:
        sys.exit(f"the converted tokenizer differs from tiktoken's o200k_base: {got} vs {want}")
    print(f"o200k_base: tiktoken cache {cache}, Hugging Face tokenizer {hf}")


# --- prompts -----------------------------------------------------------------------------


def cmd_prompts(run: Path, dataset: Path, out: Path) -> None:
    import pyarrow.parquet as pq

    prompts: dict[str, dict] = {}
    for family in dataset.glob("*.jsonl"):
        for line in family.read_text().splitlines():
            item = json.loads(line)
            prompts[item["id"]] = item["prompt"]
    schedule = pq.read_table(run / "schedule.parquet", columns=["item_id", "intended_offset_ns"]).to_pylist()
    schedule.sort(key=lambda r: r["intended_offset_ns"])
    order = [prompts[r["item_id"]] for r in schedule]
    # A tenth more than the schedule: a peer that sends a few more requests than due (GuideLLM
    # at a low rate) must not run out of prompts.
    order = (order * 2)[: len(order) * 11 // 10 + 100]
    out.mkdir(parents=True, exist_ok=True)
    # AIPerf: one conversation a line, its leading system turn hoisted into the system message
    # of the one request (its multi_turn format); GuideLLM: a system and a prompt column.
    with open(out / "aiperf.jsonl", "w") as f:
        for i, p in enumerate(order):
            turns = [{"role": "system", "text": p["system"]}, {"text": p["user"]}]
            f.write(json.dumps({"session_id": f"s{i}", "turns": turns}) + "\n")
    with open(out / "guidellm.jsonl", "w") as f:
        for p in order:
            f.write(json.dumps({"system": p["system"], "prompt": p["user"]}) + "\n")
    # vllm-bench's custom JSONL has no system message: the user message alone.
    with open(out / "vllm-bench.jsonl", "w") as f:
        for p in order:
            f.write(json.dumps({"prompt": p["user"]}) + "\n")
    print(f"{len(schedule)} prompts in schedule order (file holds {len(order)}) → {out}")


# --- measure -----------------------------------------------------------------------------

CLK_TCK = os.sysconf("SC_CLK_TCK")
PAGE = os.sysconf("SC_PAGE_SIZE")


def _stat(pid: int) -> list[str] | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat[stat.rindex(")") + 2 :].split()


def _kids(pid: int) -> list[int]:
    kids: list[int] = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return kids
    for tid in tasks:
        try:
            kids.extend(int(k) for k in Path(f"/proc/{pid}/task/{tid}/children").read_text().split())
        except OSError:
            pass
    return kids


def tree(root: int) -> tuple[float, int, int]:
    """CPU seconds (user + system of every thread, plus the reaped children's), resident
    bytes and process count of root and its descendants."""
    cpu, rss, count, stack = 0.0, 0, 0, [root]
    while stack:
        pid = stack.pop()
        fields = _stat(pid)
        if fields is None:
            continue
        # After "pid (comm) ": state is field 0; utime, stime, cutime, cstime are 11-14;
        # rss (pages) is 21.
        cpu += sum(int(x) for x in fields[11:15]) / CLK_TCK
        rss += int(fields[21]) * PAGE
        count += 1
        stack.extend(_kids(pid))
    return cpu, rss, count


def cmd_measure(out: Path, argv: list[str], timeout: float, server: int | None) -> int:
    """Runs argv in a session of its own; every 50 ms, the CPU and resident memory of its
    process tree (and the server's CPU, when given). After `timeout` seconds, SIGINT to the
    session, SIGKILL 20 s later."""
    started_unix = time.time()
    started = time.monotonic()
    child = subprocess.Popen(argv, start_new_session=True)
    samples = []
    killed = False
    kill_at = 0.0
    while True:
        cpu, rss, procs = tree(child.pid)
        server_cpu = tree(server)[0] if server else 0.0
        samples.append([time.time(), cpu, rss, procs, server_cpu])
        pid, status_word, usage = os.wait4(child.pid, os.WNOHANG)
        if pid == child.pid:
            status = os.waitstatus_to_exitcode(status_word)
            break
        now = time.monotonic()
        if now - started > timeout and not killed:
            killed = True
            os.killpg(child.pid, signal.SIGINT)
            kill_at = now + 20
        if killed and now > kill_at:
            os.killpg(child.pid, signal.SIGKILL)
        time.sleep(0.05)
    ended_unix = time.time()
    # Whatever the tree left running (a worker that outlived its parent) is ended too.
    try:
        os.killpg(child.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    cpu_total = usage.ru_utime + usage.ru_stime
    samples.append([ended_unix, max(cpu_total, samples[-1][1]), 0, 0, tree(server)[0] if server else 0.0])
    out.write_text(
        json.dumps(
            {
                "argv": argv,
                "started_unix": started_unix,
                "ended_unix": ended_unix,
                "exit": status,
                "timed_out": killed,
                "cpu_s": cpu_total,
                "user_s": usage.ru_utime,
                "sys_s": usage.ru_stime,
                "peak_tree_rss_bytes": max(s[2] for s in samples),
                "peak_processes": max(s[3] for s in samples),
                "loadavg_before": os.environ.get("PEERS_LOADAVG", ""),
                "loadavg_after": Path("/proc/loadavg").read_text().strip(),
                "samples": samples,
            }
        )
    )
    return status


# --- summarize ---------------------------------------------------------------------------


TORN: dict[str, int] = {}


def jsonl(path: Path) -> list[dict]:
    """The lines of a JSONL file that parse; the others are counted in TORN by file."""
    rows = []
    for line in path.read_text().splitlines():
        if not line.strip():
            continue
        try:
            rows.append(json.loads(line))
        except ValueError:
            TORN[str(path)] = TORN.get(str(path), 0) + 1
    return rows


def pct(values: list[float], p: float) -> float | None:
    """Nearest-rank percentile."""
    if not values:
        return None
    s = sorted(values)
    rank = max(1, -(-len(s) * p // 100))
    return s[int(rank) - 1]


Requests = tuple[list[tuple[float | None, float, bool]], list[float]]


def requests_inferbench(step: Path, rate: float, arrivals: str) -> Requests:
    """(intended, sent, completed) per request, wall-clock seconds (intended None where the
    tool does not record it); and the tool's own lag (ms)."""
    import pyarrow.parquet as pq

    cols = ["started_at", "started_t_ns", "intended_t_ns", "outcome", "send_lag_ms"]
    rows = pq.read_table(step / "run" / "responses.parquet", columns=cols).to_pylist()
    out = []
    for r in rows:
        sent = r["started_at"].replace(tzinfo=__import__("datetime").timezone.utc).timestamp()
        intended = sent - (r["started_t_ns"] - r["intended_t_ns"]) / 1e9
        out.append((intended, sent, r["outcome"] == "completed"))
    return out, [r["send_lag_ms"] for r in rows]


def requests_aiperf(step: Path, rate: float, arrivals: str) -> Requests:
    """AIPerf exports, per request, when its timing manager issued the request's credit and
    when the worker started sending it, not the schedule itself. The schedule of a constant
    rate is t0 + i / rate: t0 the first credit's issue, i the credit's rank by issue time;
    a Poisson schedule cannot be recovered, so its lag is not known."""
    path = step / "artifacts" / "profile_export.jsonl"
    if not path.exists():
        return [], []
    recs = jsonl(path)
    recs = [r for r in recs if r.get("metadata", {}).get("benchmark_phase", "profiling") == "profiling"]
    recs.sort(key=lambda r: r["metadata"]["credit_issued_ns"])
    if not recs:
        return [], []
    t0 = recs[0]["metadata"]["credit_issued_ns"] / 1e9
    out, own = [], []
    for i, r in enumerate(recs):
        m = r["metadata"]
        if m.get("request_start_ns") is None:
            continue
        ok = not r.get("error") and not m.get("was_cancelled")
        intended = t0 + i / rate if arrivals == "constant" else None
        out.append((intended, m["request_start_ns"] / 1e9, ok))
        own.append((m["request_start_ns"] - m["credit_issued_ns"]) / 1e6)
    return out, own


def requests_guidellm(step: Path, rate: float, arrivals: str) -> Requests:
    """GuideLLM exports each request's targeted start and its actual request start."""
    path = step / "benchmarks.json"
    if not path.exists():
        return [], []
    report = json.loads(path.read_text())
    out, own = [], []
    for bench in report["benchmarks"]:
        for group, ok in (("successful", True), ("errored", False), ("incomplete", False)):
            for r in bench["requests"].get(group) or []:
                t = r["info"]["timings"]
                if t.get("request_start") is None or t.get("targeted_start") is None:
                    continue
                out.append((t["targeted_start"], t["request_start"], ok))
                if r.get("request_dispatch_delay") is not None:
                    own.append(r["request_dispatch_delay"] * 1e3)
    return out, own


def requests_vllm_bench(step: Path, rate: float, arrivals: str) -> Requests:
    """vllm-bench's detailed result has each request's start, in seconds after its benchmark
    began (on the monotonic clock, after its start-up), and error; it records no intended send
    time. The starts are relative: step_figures places them on the wall clock by the server's
    first receipt of the run (ALIGN_BY_SERVER)."""
    path = step / "result.json"
    if not path.exists():
        return [], []
    result = json.loads(path.read_text())
    starts, errors = result.get("start_times") or [], result.get("errors") or []
    out = [(None, t, not (errors[i] if i < len(errors) else "")) for i, t in enumerate(starts)]
    return out, []


# Tools whose send times are relative to an unknown moment: the first send is taken to be the
# server's first receipt during the tool's run (loopback: tens of microseconds apart).
ALIGN_BY_SERVER = {"vllm-bench"}


EXTRACT = {
    "inferbench": requests_inferbench,
    "aiperf": requests_aiperf,
    "guidellm": requests_guidellm,
    "vllm-bench": requests_vllm_bench,
}
PEERS = ("vllm-bench", "aiperf", "guidellm")


def at(samples: list[list[float]], t: float, col: int) -> float:
    """A sampled counter at time t, linear between the samples around it."""
    prev = samples[0]
    for s in samples:
        if s[0] >= t:
            if s[0] == prev[0]:
                return s[col]
            return prev[col] + (s[col] - prev[col]) * (t - prev[0]) / (s[0] - prev[0])
        prev = s
    return samples[-1][col]


def step_figures(step: Path, tool: str, arrivals: str, rate: float, sim: list[dict]) -> dict:
    m = json.loads((step / "measure.json").read_text())
    reqs, own = EXTRACT[tool](step, rate, arrivals)
    reqs.sort(key=lambda r: r[1])
    n = len(reqs)
    fig: dict = {
        "tool": tool,
        "arrivals": arrivals,
        "rate": rate,
        "exit": m["exit"],
        "timed_out": m["timed_out"],
        "wall_s": m["ended_unix"] - m["started_unix"],
        "cpu_s": m["cpu_s"],
        "peak_tree_rss_mib": m["peak_tree_rss_bytes"] / 2**20,
        "peak_processes": m["peak_processes"],
        "loadavg_before": m.get("loadavg_before", ""),
        "sent": n,
        "completed": sum(1 for r in reqs if r[2]),
    }
    got = [r for r in sim if m["started_unix"] <= r["received_unix_ms"] / 1e3 <= m["ended_unix"] + 1]
    if tool in ALIGN_BY_SERVER and reqs and got:
        shift = min(r["received_unix_ms"] for r in got) / 1e3 - reqs[0][1]
        reqs = [(due, sent + shift, ok) for due, sent, ok in reqs]
    fig["server_received"] = len(got)
    if len(got) >= 2:
        times = sorted(r["received_unix_ms"] for r in got)
        fig["server_achieved"] = (len(got) - 1) / max((times[-1] - times[0]) / 1e3, 1e-9)
    if got:
        fig["server_answer_tokens_mean"] = sum(r["answer_tokens"] for r in got) / len(got)
        fig["server_events_mean"] = sum(r["events_sent"] for r in got) / len(got)
        fig["server_body_bytes_mean"] = sum(r["body_bytes"] for r in got) / len(got)
        fig["server_usage_chunks"] = sum(1 for r in got if r.get("usage_chunk"))
    if n >= 2:
        first, last = reqs[0][1], reqs[-1][1]
        fig["send_span_s"] = last - first
        fig["startup_s"] = first - m["started_unix"]
        if all(r[0] is not None for r in reqs):
            due = sorted(r[0] for r in reqs)
            fig["due_span_s"] = due[-1] - due[0]
            fig["achieved"] = (n - 1) / max(last - first, due[-1] - due[0])
            lags = [(r[1] - r[0]) * 1e3 for r in reqs]
            fig["lag_ms"] = {"p50": pct(lags, 50), "p99": pct(lags, 99), "max": max(lags), "min": min(lags)}
        else:
            # No schedule to stretch: the sends' own span.
            fig["achieved"] = (n - 1) / max(last - first, 1e-9)
        fig["own_lag_ms"] = {"p50": pct(own, 50), "p99": pct(own, 99)} if own else None
        samples = m["samples"]
        window_cpu = at(samples, last, 1) - at(samples, first, 1)
        fig["window_cpu_s"] = window_cpu
        fig["cpu_per_1k_window"] = window_cpu / (n - 1) * 1000
        fig["cpu_per_1k_whole"] = m["cpu_s"] / n * 1000
        fig["server_cpu_per_1k_window"] = (at(samples, last, 4) - at(samples, first, 4)) / (n - 1) * 1000
    if tool == "inferbench" and (step / "reconstruct.json").exists():
        r = json.loads((step / "reconstruct.json").read_text())
        fig["offline_cpu_per_1k"] = r["cpu_s"] / max(n, 1) * 1000
    return fig


def fmt(v, digits=1) -> str:
    if v is None:
        return "—"
    if isinstance(v, float):
        if abs(v) >= 100:
            return f"{v:,.0f}"
        return f"{v:.{digits}f}"
    return str(v)


def ratio(a, b) -> str:
    if a is None or b is None or b == 0:
        return "—"
    r = a / b
    return f"{r:,.0f}×" if r >= 100 else f"{r:.1f}×" if r >= 10 else f"{r:.2f}×"


def cmd_summarize(out: Path) -> None:
    meta = json.loads((out / "meta.json").read_text())
    sim = jsonl(out / "sim.jsonl")
    figures = []
    arrivals_all = meta.get("arrivals", ["constant"])
    for arrivals in arrivals_all:
        for rate in meta["rates"]:
            for tool in meta["tools"]:
                step = out / "steps" / arrivals / f"{rate:g}" / tool
                if (step / "measure.json").exists():
                    figures.append(step_figures(step, tool, arrivals, rate, sim))
    (out / "summary.json").write_text(json.dumps({"meta": meta, "steps": figures, "unreadable_lines": TORN}, indent=1))
    lines = [
        f"{meta['duration']:g} s per step; target rates {', '.join(f'{r:g}' for r in meta['rates'])} req/s;"
        f" {' and '.join(arrivals_all)} arrivals;"
        + (f" a slow provider (its profile's delays × {meta['time_scale']:g});" if meta.get("time_scale") else " the provider at zero latency;")
        + f" {meta['tools_versions']}",
        "",
        "| tool | arrivals | target req/s | started | completed | server got | achieved req/s (client) | (server) | lag p50 ms | lag p99 ms"
        " | lag max ms | tool's own p99 ms | client CPU-s / 1,000 req (sending) | (whole run) | server CPU-s / 1,000"
        " | wall s | load avg before |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for f in figures:
        lag = f.get("lag_ms") or {}
        own = f.get("own_lag_ms") or {}
        note = " (timed out)" if f["timed_out"] else (f" (exit {f['exit']})" if f["exit"] else "")
        lines.append(
            f"| {f['tool']}{note} | {f['arrivals']} | {f['rate']:g} | {f['sent']} | {f['completed']} | {f['server_received']}"
            f" | {fmt(f.get('achieved'))} | {fmt(f.get('server_achieved'))} | {fmt(lag.get('p50'), 3)} | {fmt(lag.get('p99'), 3)} | {fmt(lag.get('max'), 2)}"
            f" | {fmt(own.get('p99'), 3)} | {fmt(f.get('cpu_per_1k_window'), 2)} | {fmt(f.get('cpu_per_1k_whole'), 2)}"
            f" | {fmt(f.get('server_cpu_per_1k_window'), 2)} | {fmt(f['wall_s'])} | {f['loadavg_before'].split(' ')[0] if f['loadavg_before'] else '—'} |"
        )
    lines += [
        "",
        "Ratios, each peer against inferbench at the same target (achieved, at the server:"
        " inferbench ÷ peer; lag and CPU: peer ÷ inferbench; above 1 is inferbench's advantage; memory: the peak of"
        " the client's whole process tree, peer ÷ inferbench):",
        "",
        "| arrivals | target req/s | peer | achieved | lag p50 | lag p99 | CPU / 1,000 (sending) | CPU / 1,000 (whole run) | peak memory |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    by = {(f["tool"], f["arrivals"], f["rate"]): f for f in figures}
    for arrivals in arrivals_all:
        for rate in meta["rates"]:
            ib = by.get(("inferbench", arrivals, rate))
            if not ib:
                continue
            for peer in PEERS:
                p = by.get((peer, arrivals, rate))
                if not p:
                    continue
                lines.append(
                    f"| {arrivals} | {rate:g} | {peer} | {ratio(ib.get('server_achieved'), p.get('server_achieved'))}"
                    f" | {ratio((p.get('lag_ms') or {}).get('p50'), (ib.get('lag_ms') or {}).get('p50'))}"
                    f" | {ratio((p.get('lag_ms') or {}).get('p99'), (ib.get('lag_ms') or {}).get('p99'))}"
                    f" | {ratio(p.get('cpu_per_1k_window'), ib.get('cpu_per_1k_window'))}"
                    f" | {ratio(p.get('cpu_per_1k_whole'), ib.get('cpu_per_1k_whole'))}"
                    f" | {ratio(p.get('peak_tree_rss_mib'), ib.get('peak_tree_rss_mib'))} |"
                )
    ib_offline = [f for f in figures if f["tool"] == "inferbench" and f.get("offline_cpu_per_1k") is not None]
    if ib_offline:
        lines += [
            "",
            "inferbench computes its figures after the fetch: `ib-reconstruct` (which tokenizes every"
            " answer) took "
            + ", ".join(f"{f['offline_cpu_per_1k']:.2f}" for f in ib_offline)
            + " CPU-s per 1,000 requests for the steps above, in order.",
        ]
    lines += [
        "",
        "The client's process tree (sampled every 50 ms):",
        "",
        "| tool | arrivals | target req/s | processes | peak resident memory, summed over its processes (MiB) | start to first request (s) |",
        "|---|---|---|---|---|---|",
    ]
    for f in figures:
        lines.append(
            f"| {f['tool']} | {f['arrivals']} | {f['rate']:g} | {f['peak_processes']} | {fmt(f['peak_tree_rss_mib'])}"
            f" | {fmt(f.get('startup_s'), 2)} |"
        )
    lines += [
        "",
        "Work per request at the server (ib-sim's log, every request received during each tool's run):",
        "",
        "| tool | arrivals | target req/s | answer tokens (mean) | SSE events (mean) | body bytes (mean) | usage chunks |",
        "|---|---|---|---|---|---|---|",
    ]
    for f in figures:
        lines.append(
            f"| {f['tool']} | {f['arrivals']} | {f['rate']:g} | {fmt(f.get('server_answer_tokens_mean'), 2)}"
            f" | {fmt(f.get('server_events_mean'), 2)} | {fmt(f.get('server_body_bytes_mean'))}"
            f" | {f.get('server_usage_chunks', '—')} |"
        )
    for path, count in TORN.items():
        lines += ["", f"{count} line(s) of {Path(path).relative_to(out)} could not be read (not JSON); left out."]
    text = "\n".join(lines) + "\n"
    (out / "summary.md").write_text(text)
    print(text)


def main() -> None:
    args = sys.argv[1:]
    if not args:
        sys.exit(__doc__)
    cmd, rest = args[0], args[1:]
    if cmd == "tokenizer":
        cmd_tokenizer(Path(rest[0]), Path(rest[1]))
    elif cmd == "prompts":
        cmd_prompts(Path(rest[0]), Path(rest[1]), Path(rest[2]))
    elif cmd == "measure":
        timeout = float(os.environ.get("PEERS_TIMEOUT", "600"))
        server = int(os.environ["PEERS_SERVER_PID"]) if os.environ.get("PEERS_SERVER_PID") else None
        sep = rest.index("--")
        sys.exit(cmd_measure(Path(rest[0]), rest[sep + 1 :], timeout, server))
    elif cmd == "summarize":
        cmd_summarize(Path(rest[0]))
    else:
        sys.exit(f"unknown subcommand {cmd!r}\n{__doc__}")


if __name__ == "__main__":
    main()
