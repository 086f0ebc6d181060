#!/usr/bin/env bash
# Installs what the browser check (tests/browser/check-report.mjs) runs on into
# tests/browser/node_modules: playwright-core at the exact version package-lock.json pins,
# from the npm registry, with `npm ci` (no browser download: playwright-core drives the
# system's Chromium, /usr/bin/chromium, which `make test` installs from Debian's packages).
set -euo pipefail
cd "$(dirname "$0")"
npm ci --no-audit --no-fund --loglevel=error
node -e 'import("playwright-core").then(() => {}, (e) => { console.error(e.message); process.exit(1); })'
