#!/usr/bin/env bash
# Build llama-cpp-python's OpenAI-compatible server once, into .venv-llama (kept apart from .venv, so the main
# install stays quick). It compiles llama.cpp from source: about 7 minutes on 2 idle cores (35 here, shared). GGML_NATIVE=OFF: a
# native build crashed on its first request here (issue 18). The tests marked 'llama_server' use it when present:
#   scripts/build_llama_server.sh && .venv/bin/python -m pytest -m llama_server tests/backends/llm/test_llama_server.py
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-python3}"
if [ -x .venv-llama/bin/python ] && .venv-llama/bin/python -c "import llama_cpp.server" 2>/dev/null; then
    echo "llama-cpp-python server already built in $(pwd)/.venv-llama"
    exit 0
fi
"$PY" -m venv .venv-llama
.venv-llama/bin/python -m pip install -q --upgrade pip
CMAKE_ARGS="-DGGML_NATIVE=OFF" .venv-llama/bin/python -m pip install -q 'llama-cpp-python[server]==0.3.36'
.venv-llama/bin/python -c "import llama_cpp.server" && echo "llama-cpp-python server built in $(pwd)/.venv-llama"
