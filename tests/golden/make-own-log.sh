#!/usr/bin/env bash
# Writes tests/golden/own/run/: a small event log of inferbench's own with every outcome class,
# fetched once from ib-sim and frozen. Run it only to replace that log (the expected outputs
# are refreshed separately, with IB_BLESS=1 cargo test golden). It uses the release binaries:
# build them first (make bins).
#
# The providers are the hostile end-to-end test's (tests/fixtures/e2e/hostile-*.yaml: one
# misbehaviour each) plus four more for the classes those lack: HTTP 429, HTTP 5xx, a stall past
# the deadline (timeout) and a dropped connection (transport error). One fetch is stopped while
# the stall is in flight and resumed, so one request has an interrupted attempt and a second.
set -euo pipefail
cd "$(dirname "$0")/../.."
BIN=target/release
OUT=tests/golden/own
work=$(mktemp -d)
trap 'kill ${sim:-} 2>/dev/null || true; rm -rf "$work"' EXIT

mkdir -p "$OUT/pipeline/prompts"
cp pipelines/micro-single-task/prompts/* "$OUT/pipeline/prompts/"
{
  cat tests/fixtures/e2e/hostile-providers.yaml
  for name in rate-limited server-error stalled dropped; do
    key=IB_GOLDEN_$(echo "$name" | tr a-z- A-Z_)_KEY
    cat <<ENTRY
  - name: $name
    endpoint: https://$name.invalid/v1/chat/completions
    auth: {kind: bearer, env: $key}
    model_id: m-$name
    token_limit_field: max_tokens
    reasoning: {reasoning_effort: low}
    stream_usage: true
    price_usd_per_million_tokens: {input: 0.15, output: 0.50}
ENTRY
  done
} >"$OUT/pipeline/providers.yaml"
{
  cat tests/fixtures/e2e/hostile-sim-profiles.yaml
  for spec in "rate-limited:{http_429: 1.0}" "server-error:{http_5xx: 1.0}" \
              "stalled:{stall_during: 1.0, stall_during_ms: 8000}" "dropped:{disconnect: 1.0}"; do
    name=${spec%%:*}
    cat <<PROFILE
  $name:
    model: m-$name
    ttft_ms: {median: 60, p99: 70}
    tokens_per_second: {median: 400, p05: 380}
    faults: ${spec#*:}
PROFILE
  done
} >"$OUT/pipeline/sim-profiles.yaml"
count=$(grep -c '^  - name:' "$OUT/pipeline/providers.yaml")
sed -e "s/maximum_global_concurrency: 10$/maximum_global_concurrency: $count/" \
    -e "s/total_provider_requests: 6000$/total_provider_requests: $((600 * count))/" \
    pipelines/micro-single-task/spec.yaml >"$OUT/pipeline/spec.yaml"

SPEC=$OUT/pipeline/spec.yaml
DATA=tests/fixtures/micro-single-task
RUN=$work/golden-own
$BIN/ib-select --run "$RUN" --spec "$SPEC" --dataset "$DATA" --per-family 1 --sample
$BIN/ib-schedule --run "$RUN" --spec "$SPEC"
$BIN/ib-sim --profiles "$OUT/pipeline/sim-profiles.yaml" --spec "$SPEC" --dataset "$DATA" --port-file "$work/url" >/dev/null &
sim=$!
for _ in $(seq 100); do [ -s "$work/url" ] && break; sleep 0.1; done
credentials=$(grep -o 'env: [A-Z_]*' "$OUT/pipeline/providers.yaml" | sed 's/env: \(.*\)/\1=sk-\1-golden/')
fetch=(env $credentials $BIN/ib-fetch --run "$RUN" --spec "$SPEC" --dataset "$DATA"
  --endpoint-base "$(cat "$work/url")" --deadline-seconds 3 --env-file /nonexistent --send-credentials-to-simulator)
# Stopped (SIGTERM) while round 0's stall is in flight, then resumed.
"${fetch[@]}" & fetching=$!
sleep 1.5
kill -TERM $fetching
wait $fetching || true
"${fetch[@]}"
rm -rf "$OUT/run"
mkdir -p "$OUT/run/events"
cp "$RUN/lock.json" "$RUN/selection.parquet" "$RUN/schedule.parquet" "$OUT/run/"
cp "$RUN"/events/*.jsonl "$OUT/run/events/"
echo "wrote $OUT/run ($(cat "$OUT"/run/events/*.jsonl | wc -l) events)"
