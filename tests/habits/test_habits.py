"""The maintainer's habits, checked in the README's test command: ruff (the rule set in pyproject.toml; `ruff format
--check` once the repo-wide format lands), codespell, the import layers (import-linter's contract in pyproject.toml,
every import counted, function-level ones too), and mypy on src/ against a baseline that may only shrink
(tests/habits/mypy_baseline.json: errors per file)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]
BIN = Path(sys.executable).parent
BASELINE = Path(__file__).with_name("mypy_baseline.json")


def _run(*argv: str, timeout: int = 600) -> subprocess.CompletedProcess:
    return subprocess.run(
        argv, cwd=ROOT, capture_output=True, text=True, timeout=timeout, env={**os.environ, "NO_COLOR": "1"}
    )


def _tool(name: str) -> str:
    path = BIN / name
    if not path.exists():
        pytest.fail(f"{name} is not installed in {BIN}: bash scripts/install.sh installs the lint extra")
    return str(path)


def test_ruff():
    out = _run(_tool("ruff"), "check", "src", "tests", "benchmarks", "scripts", "docs", "--output-format", "concise")
    assert out.returncode == 0, out.stdout[-4000:] + out.stderr[-2000:]


# the tree stays as 'ruff format' writes it (the pre-commit hook formats a commit's files)
def test_ruff_format():
    out = _run(_tool("ruff"), "format", "--check", "src", "tests", "benchmarks", "scripts")
    assert out.returncode == 0, out.stdout[-4000:] + out.stderr[-2000:]


def test_codespell():
    out = _run(_tool("codespell"), "src", "tests", "benchmarks", "scripts", "docs", "README.md", "CHANGELOG.md")
    assert out.returncode == 0, out.stdout[-4000:] + out.stderr[-2000:]


def test_import_layers():
    out = _run(_tool("lint-imports"), "--no-cache")
    assert out.returncode == 0, out.stdout[-6000:] + out.stderr[-2000:]
    assert "0 broken" in out.stdout and "ignore" not in _contracts(), out.stdout


def _contracts() -> str:
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    return text[text.index("[tool.importlinter]") :]


def mypy_errors() -> Counter:
    out = _run(_tool("mypy"), "src/halluscope", "--cache-dir", "/dev/null", timeout=900)
    found = Counter(m[1] for m in re.finditer(r"^(src/[^:]+):\d+: error:", out.stdout, re.M))
    assert found or out.returncode == 0, out.stdout[-3000:] + out.stderr[-2000:]
    return found


def test_mypy_errors_only_shrink():
    """No file has more mypy errors than the baseline records; when a file gets better, lower its count
    (python tests/habits/test_habits.py --write-baseline)."""
    baseline = json.loads(BASELINE.read_text(encoding="utf-8"))
    found = mypy_errors()
    worse = {f: (n, baseline.get(f, 0)) for f, n in found.items() if n > baseline.get(f, 0)}
    assert not worse, "more mypy errors than the baseline (found, baseline): " + json.dumps(worse, indent=1)


if __name__ == "__main__" and sys.argv[1:] == ["--write-baseline"]:
    counts = mypy_errors()
    BASELINE.write_text(json.dumps(dict(sorted(counts.items())), indent=1) + "\n", encoding="utf-8")
    print(f"{sum(counts.values())} errors in {len(counts)} files -> {BASELINE}")
