#!/usr/bin/env bash
# Installs the independent servers the interop test (tests/e2e/interop.rs) runs inferbench
# against into tests/interop/node_modules: aimock (@copilotkit/aimock, MIT, no dependencies,
# 12 MB), a fixture-driven mock of OpenAI chat completions, OpenAI Responses and Anthropic
# Messages with its own streaming timings, at the exact version package-lock.json pins.
set -euo pipefail
cd "$(dirname "$0")"
npm ci --no-audit --no-fund --loglevel=error
node node_modules/@copilotkit/aimock/dist/cli.js --help >/dev/null
