#!/usr/bin/env bash
# inferbench's open-loop client beside three peer load generators, vllm-bench, AIPerf and
# GuideLLM, against one ib-sim on the same machine (issues 24 and 34): the same rates, the
# same prompts in the same order, the same arrival process, one run per tool, arrival process
# and rate. `make bench-peers` runs it; it is a benchmark, not a test.
#
#   PEERS_RATES="50 200 500 2000" PEERS_SECONDS=15 benches/peers/run.sh
#   PEERS_VLLM_BENCH=https://github.com/vllm-project/vllm-bench PEERS_TOOLS="inferbench vllm-bench" \
#       PEERS_ARRIVALS="poisson constant" PEERS_RATES="500 1000 2000" benches/peers/run.sh
#
# Environment (all optional):
#   PEERS_RATES    requests per second, one step per rate (default "50 200 500 2000")
#   PEERS_SECONDS  seconds per step (default 15)
#   PEERS_ARRIVALS the arrival processes, each run at every rate (default "constant"; also
#                  "poisson")
#   PEERS_TOOLS    which tools, in the order they run at each rate (default
#                  "inferbench vllm-bench aiperf guidellm"; inferbench's schedule is made in
#                  any case, since the peers' prompt files are written from it)
#   PEERS_VLLM_BENCH  where vllm-bench comes from: a built binary, a source directory (a
#                  checkout, or a bare git directory such as a mirror), or a git URL, built
#                  with `cargo install` (what `cargo install --git
#                  https://github.com/vllm-project/vllm-bench vllm-bench` does: its release
#                  profile, LTO, one codegen unit; several minutes) into
#                  target/peers-vllm-bench, and reused from there while the source is the
#                  same. Without it, and with nothing built there, vllm-bench is absent: the
#                  script says so and runs the other tools.
#   PEERS_TIME_SCALE  serve the generated profile (a first token after about 300 ms, 200
#                  tokens/s) with its delays times this, instead of at zero latency: a slow
#                  provider, so that thousands of streams are open at once (e.g. 20 at 500 req/s:
#                  every tool's memory per open stream shows)
#   PEERS_OUT      where the results go (default target/bench/peers/<UTC time>)
#   PEERS_VENV     the peers' virtualenv (default target/peers-venv; made on first use)
#   PEERS_PYTHON   the Python that makes it (default python3; AIPerf 0.13 needs 3.11-3.13)
#   BIN            inferbench's release binaries (default target/release)
#
# What each tool is given:
#   - ib-sim: one simulated provider at zero latency (`ib-sim generate-fleet --zero-latency`),
#     which answers every request whose user message is a dataset item with that item's answer
#     (tens of tokens, one token per SSE event), with `usage_chunk: never` added to its profile:
#     both peers ask for a usage chunk and inferbench does not, and counting a prompt's tokens
#     for one costs ib-sim more than the rest of the request (the prompts here are about a
#     thousand tokens), so that with it the server, not a client, would set the highest rate.
#     Started once, warmed with three requests, its request log (--log) kept: each tool's
#     requests are counted there too.
#   - inferbench: the spec `make load` writes (`ib-load-spec --arrivals constant`, one step at
#     the rate); ib-select, ib-schedule, then ib-fetch, measured; ib-reconstruct after it,
#     measured apart (it is where inferbench computes its figures).
#   - vllm-bench (the archived standalone vllm-project/vllm-bench; its maintained copy is in
#     vLLM's Rust workspace, rust/src/bench): the openai-chat backend, `--request-rate` with
#     `--burstiness inf` (constant) or 1 (Poisson), rate × seconds prompts from its custom
#     JSONL in the schedule's order (`--disable-shuffle`), each line the item's user message
#     (the format has no system message, so its requests are a system prompt shorter),
#     `--custom-output-len 256`, the same o200k_base tokenizer as a local tokenizer.json, and
#     `--save-detailed` for each request's start. It records no intended send time: its lag
#     is not known.
#   - AIPerf: `aiperf profile` at its defaults but for the endpoint, `--request-rate` with
#     `--arrival-pattern constant` (or poisson), `--benchmark-duration`, the run's prompts (system and user
#     message of each item, in the order of inferbench's schedule) as a multi_turn file,
#     `--tokenizer builtin` (tiktoken's o200k_base, inferbench's tokenizer too) and max_tokens
#     256 (what inferbench's spec asks for).
#   - GuideLLM: `guidellm run` with a scenario: openai_http backend (validate_backend off: its
#     health check asks for /health under the target, which ib-sim does not serve), profile
#     constant (or poisson) at the rate, max_duration, the same prompts as a JSON file with system and
#     prompt columns, a Hugging Face tokenizer converted from the same o200k_base file, and
#     max_tokens 256; everything else at its defaults.
# Neither peer reaches a model hub: HF_HUB_OFFLINE=1, and tiktoken's cache holds o200k_base,
# taken from the tiktoken-rs crate inferbench builds with.
#
# Every client runs under benches/peers/peers.py measure, which samples the CPU time of its
# whole process tree every 50 ms, so that the CPU spent while the tool was sending (from its
# first send to its last) can be told from its start-up and its exports.
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD

RATES=${PEERS_RATES:-"50 200 500 2000"}
SECONDS_PER_STEP=${PEERS_SECONDS:-15}
ARRIVALS=${PEERS_ARRIVALS:-constant}
TOOLS=${PEERS_TOOLS:-"inferbench vllm-bench aiperf guidellm"}
for arrivals in $ARRIVALS; do
    case $arrivals in constant|poisson) ;; *) echo "run.sh: PEERS_ARRIVALS: $arrivals is neither constant nor poisson" >&2; exit 2 ;; esac
done
BIN=$(realpath "${BIN:-target/release}")
VENV=${PEERS_VENV:-$ROOT/target/peers-venv}
PYTHON=${PEERS_PYTHON:-python3}
OUT=${PEERS_OUT:-$ROOT/target/bench/peers/$(date -u +%Y%m%dT%H%M%SZ)}
DATASET=$ROOT/data/micro-single-task
AIPERF_VERSION=0.13.0
GUIDELLM_VERSION=0.8.1
HELPER=$ROOT/benches/peers/peers.py
MODEL=m-sim-0001

for bin in ib-sim ib-load-spec ib-select ib-schedule ib-fetch ib-reconstruct; do
    [ -x "$BIN/$bin" ] || { echo "run.sh: $BIN/$bin is missing (make bins, or set BIN)" >&2; exit 1; }
done
mkdir -p "$OUT"
OUT=$(realpath "$OUT")

# --- the peers' virtualenv ---------------------------------------------------------------
# The Python peers when either runs; otherwise only what this script's helper needs (pyarrow
# to read inferbench's tables, tiktoken and transformers to write the tokenizer), which the
# full set holds too.
full="aiperf==$AIPERF_VERSION guidellm==$GUIDELLM_VERSION"
if [[ " $TOOLS " == *" aiperf "* || " $TOOLS " == *" guidellm "* ]]; then
    want=$full
else
    want="pyarrow tiktoken transformers"
fi
installed=$(head -n1 "$VENV/.peers-installed" 2>/dev/null || true)
if [ "$installed" != "$want" ] && [ "$installed" != "$full" ]; then
    "$PYTHON" -c 'import sys; sys.exit(not (3, 11) <= sys.version_info[:2] <= (3, 13))' || {
        echo "run.sh: AIPerf $AIPERF_VERSION needs Python 3.11 to 3.13; set PEERS_PYTHON" >&2; exit 1; }
    [ "$want" = "$full" ] && echo "run.sh: installing $want into $VENV (GuideLLM pulls torch: about 6.5 GB)" >&2
    rm -rf "$VENV"
    "$PYTHON" -m venv "$VENV"
    started=$(date +%s)
    # The versions every dependency resolved to when the figures in BENCHMARKS.md were taken.
    "$VENV/bin/pip" install --no-cache-dir --disable-pip-version-check --quiet \
        -c "$ROOT/benches/peers/constraints.txt" $want
    { echo "$want"; echo "installed in $(( $(date +%s) - started )) s; $(du -sh "$VENV" | cut -f1)"; } \
        >"$VENV/.peers-installed"
fi
PY=$VENV/bin/python

# --- vllm-bench, built from where PEERS_VLLM_BENCH says ------------------------------------
VLLM_ROOT=$ROOT/target/peers-vllm-bench
VLLM_BIN=$VLLM_ROOT/bin/vllm-bench
if [[ " $TOOLS " == *" vllm-bench "* ]]; then
    source=${PEERS_VLLM_BENCH:-}
    if [ -n "$source" ] && [ -f "$source" ] && [ -x "$source" ]; then
        VLLM_BIN=$(realpath "$source")
    elif [ -n "$source" ] && [ "$(cat "$VLLM_ROOT/.source" 2>/dev/null)" != "$source" ]; then
        echo "run.sh: building vllm-bench from $source into $VLLM_ROOT (cargo install; its release profile takes minutes)" >&2
        rm -rf "$VLLM_ROOT"
        if [ -f "$source/Cargo.toml" ]; then
            cargo install --locked --quiet --path "$source" --root "$VLLM_ROOT" vllm-bench
        elif [ -d "$source" ]; then
            # A bare git directory (a mirror): cargo fetches from it as from a remote.
            cargo install --locked --quiet --git "file://$(realpath "$source")" --root "$VLLM_ROOT" vllm-bench
        else
            cargo install --locked --quiet --git "$source" --root "$VLLM_ROOT" vllm-bench
        fi
        echo "$source" >"$VLLM_ROOT/.source"
    fi
    if [ ! -x "$VLLM_BIN" ]; then
        echo "run.sh: vllm-bench is absent: set PEERS_VLLM_BENCH to a built binary, its source directory or a git URL" >&2
        echo "        (e.g. PEERS_VLLM_BENCH=https://github.com/vllm-project/vllm-bench); running without it" >&2
        TOOLS=$(echo " $TOOLS " | sed 's/ vllm-bench / /; s/^ *//; s/ *$//')
    else
        VLLM_VERSION="vllm-bench $("$VLLM_BIN" --version 2>/dev/null | awk '{print $NF}') ($(cat "$VLLM_ROOT/.source" 2>/dev/null || echo "$VLLM_BIN"))"
    fi
fi

# --- o200k_base, offline, for both peers -------------------------------------------------
TOKENIZER=$ROOT/target/bench/peers-tokenizer
if [ ! -f "$TOKENIZER/hf/tokenizer.json" ]; then
    version=$(awk '/^name = "tiktoken-rs"$/ { getline; gsub(/"/, "", $3); print $3 }' Cargo.lock)
    find_bpe() { ls "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/"tiktoken-rs-$version"/assets/o200k_base.tiktoken 2>/dev/null | head -n1; }
    bpe=$(find_bpe)
    [ -n "$bpe" ] || { cargo fetch --locked >&2; bpe=$(find_bpe); }
    [ -n "$bpe" ] || { echo "run.sh: tiktoken-rs $version's o200k_base.tiktoken not found" >&2; exit 1; }
    "$PY" "$HELPER" tokenizer "$TOKENIZER" "$bpe"
fi

# --- the server --------------------------------------------------------------------------
TIME_SCALE=${PEERS_TIME_SCALE:-}
latency=(--zero-latency)
[ -z "$TIME_SCALE" ] || latency=()
"$BIN/ib-sim" generate-fleet --providers 1 "${latency[@]}" --out "$OUT/fleet" \
    --spec "$ROOT/pipelines/micro-single-task/spec.yaml" >/dev/null
echo "    usage_chunk: never" >>"$OUT/fleet/sim-profiles.yaml"
rm -f "$OUT/sim-url"
"$BIN/ib-sim" --profiles "$OUT/fleet/sim-profiles.yaml" --spec "$OUT/fleet/spec.yaml" --dataset "$DATASET" \
    ${TIME_SCALE:+--time-scale "$TIME_SCALE"} --port-file "$OUT/sim-url" --log "$OUT/sim.jsonl" >/dev/null 2>"$OUT/sim.err" &
SIM=$!
trap 'kill "$SIM" 2>/dev/null || true; wait "$SIM" 2>/dev/null || true' EXIT
for _ in $(seq 300); do [ -s "$OUT/sim-url" ] && break; sleep 0.1; done
[ -s "$OUT/sim-url" ] || { echo "run.sh: ib-sim did not start" >&2; cat "$OUT/sim.err" >&2; exit 1; }
BASE=$(cat "$OUT/sim-url")
for _ in 1 2 3; do
    curl -sS -o /dev/null -H 'content-type: application/json' \
        -d "{\"model\":\"$MODEL\",\"stream\":true,\"messages\":[{\"role\":\"user\",\"content\":\"warm-up\"}]}" \
        "$BASE/sim-0001/v1/chat/completions"
done
export PEERS_SERVER_PID=$SIM
export PEERS_TIMEOUT=$(( SECONDS_PER_STEP * 4 + 120 ))

# The last commit that changed inferbench's code (this bench adds none).
ib_commit=$(git log -1 --format=%h -- crates stages tools Cargo.toml Cargo.lock 2>/dev/null || echo unknown)
"$PY" - "$OUT/meta.json" <<EOF
import json, platform, sys, subprocess
json.dump({
    "rates": [float(r) for r in "$RATES".split()],
    "arrivals": "$ARRIVALS".split(),
    "duration": float("$SECONDS_PER_STEP"),
    "time_scale": float("${TIME_SCALE:-0}") or None,
    "tools": "$TOOLS".split(),
    "tools_versions": "inferbench $ib_commit (ib-fetch from $BIN), ${VLLM_VERSION:-no vllm-bench}, AIPerf $AIPERF_VERSION, GuideLLM $GUIDELLM_VERSION, Python " + platform.python_version(),
    "command": "${TIME_SCALE:+PEERS_TIME_SCALE=$TIME_SCALE }PEERS_RATES='$RATES' PEERS_SECONDS=$SECONDS_PER_STEP PEERS_ARRIVALS='$ARRIVALS' PEERS_TOOLS='$TOOLS' benches/peers/run.sh",
    "cores": int(subprocess.check_output(["nproc"]).strip()),
    "loadavg_start": open("/proc/loadavg").read().strip(),
}, open(sys.argv[1], "w"), indent=1)
EOF

measure() { # measure STEP_DIR NAME -- CMD...
    local dir=$1 name=$2; shift 3
    PEERS_LOADAVG="$(cat /proc/loadavg)" "$PY" "$HELPER" measure "$dir/$name.json" -- "$@" >"$dir/$name.log" 2>&1 || true
}

for arrivals in $ARRIVALS; do
for rate in $RATES; do
    step=$OUT/steps/$arrivals/$rate
    ib=$step/inferbench
    mkdir -p "$ib"
    "$BIN/ib-load-spec" --out "$ib/pipeline" --target "$BASE/sim-0001/v1" --model "$MODEL" --rates "$rate" \
        --duration "$SECONDS_PER_STEP" --arrivals "$arrivals" --template "$ROOT/pipelines/load-sweep/spec.yaml" >/dev/null
    "$BIN/ib-select" --run "$ib/run" --spec "$ib/pipeline/spec.yaml" --dataset "$DATASET" --per-family 200 >/dev/null
    "$BIN/ib-schedule" --run "$ib/run" --spec "$ib/pipeline/spec.yaml" >/dev/null
    "$PY" "$HELPER" prompts "$ib/run" "$DATASET" "$step/prompts" >/dev/null
    for tool in $TOOLS; do
        echo "run.sh: $tool at $rate req/s ($arrivals) for $SECONDS_PER_STEP s (load average $(cut -d' ' -f1-3 /proc/loadavg))" >&2
        dir=$step/$tool
        mkdir -p "$dir"
        case $tool in
        inferbench)
            IB_LOAD_API_KEY=unused measure "$dir" measure -- \
                "$BIN/ib-fetch" --run "$ib/run" --spec "$ib/pipeline/spec.yaml" --dataset "$DATASET"
            measure "$dir" reconstruct -- "$BIN/ib-reconstruct" --run "$ib/run"
            ;;
        vllm-bench)
            burstiness=$([ "$arrivals" = poisson ] && echo 1 || echo inf)
            prompts=$(awk -v r="$rate" -v s="$SECONDS_PER_STEP" 'BEGIN { printf "%d", r * s }')
            (cd "$dir" && HF_HUB_OFFLINE=1 measure "$dir" measure -- \
                "$VLLM_BIN" --backend openai-chat --base-url "$BASE/sim-0001" --endpoint /v1/chat/completions \
                --model "$MODEL" --tokenizer "$TOKENIZER/hf" --dataset-name custom \
                --dataset-path "$step/prompts/vllm-bench.jsonl" --disable-shuffle --skip-chat-template \
                --custom-output-len 256 --num-prompts "$prompts" --request-rate "$rate" --burstiness "$burstiness" \
                --save-result --save-detailed --result-dir "$dir" --result-filename result.json --disable-tqdm)
            ;;
        aiperf)
            (cd "$dir" && TIKTOKEN_CACHE_DIR=$TOKENIZER/tiktoken HF_HUB_OFFLINE=1 measure "$dir" measure -- \
                "$VENV/bin/aiperf" profile --model "$MODEL" --url "$BASE/sim-0001" --endpoint-type chat --streaming \
                --tokenizer builtin --input-file "$step/prompts/aiperf.jsonl" --custom-dataset-type multi_turn \
                --dataset-sampling-strategy sequential --request-rate "$rate" --arrival-pattern "$arrivals" \
                --benchmark-duration "$SECONDS_PER_STEP" --extra-inputs max_tokens:256 \
                --artifact-dir "$dir/artifacts" --ui none)
            ;;
        guidellm)
            cat >"$dir/scenario.json" <<EOF
{"spec": {
  "backend": {"kind": "openai_http", "target": "$BASE/sim-0001", "model": "$MODEL", "max_tokens": 256,
              "validate_backend": false},
  "profile": {"kind": "$arrivals", "rate": [$rate]},
  "constraints": [{"kind": "max_duration", "seconds": $SECONDS_PER_STEP}],
  "tokenizer": {"kind": "hf_auto", "model": "$TOKENIZER/hf"},
  "data": [{"kind": "json_file", "path": "$step/prompts/guidellm.jsonl"}],
  "outputs": [{"kind": "json", "path": "$dir/benchmarks.json"}]
}}
EOF
            (cd "$dir" && TIKTOKEN_CACHE_DIR=$TOKENIZER/tiktoken HF_HUB_OFFLINE=1 measure "$dir" measure -- \
                "$VENV/bin/guidellm" run --scenario "$dir/scenario.json" --disable-progress)
            ;;
        *) echo "run.sh: unknown tool $tool" >&2; exit 2 ;;
        esac
        sleep 2
    done
done
done

kill "$SIM" 2>/dev/null || true
wait "$SIM" 2>/dev/null || true
trap - EXIT
"$PY" "$HELPER" summarize "$OUT"
echo "run.sh: $OUT/summary.md" >&2
