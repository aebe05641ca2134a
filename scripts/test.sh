#!/usr/bin/env bash
# Install (idempotent) and run the default test suite offline. Slow tests: add -m slow.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
# two workers (this machine and CI have 2 cores); each test file stays on one worker, so its module fixtures are
# built once (a folder's session fixture may be built once per worker)
exec .venv/bin/python -m pytest -q -n "${HALLUSCOPE_TEST_WORKERS:-2}" --dist loadfile --durations=15 "$@"
