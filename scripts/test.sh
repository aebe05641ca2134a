#!/usr/bin/env bash
# Install (idempotent) and run the default test suite offline. Slow tests: add -m slow.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
exec .venv/bin/python -m pytest -q "$@"
