"""Every script in benchmarks/ runs end to end at smoke size (``--smoke``: a handful of items, one round, the same
code path) and prints its ratio lines: a bench whose body no longer matches the library (a renamed import, a changed
signature, a stage that now fails its items) fails here. What is asserted is what was printed, never a time.

The benches are found, not listed: a new benchmarks/bench_*.py is run without touching this file. They are started
together once per module (they are mostly waiting on subprocesses, servers and model loads), each test waits for its
own. The line format is benchmarks/_ratios.py's: ``ratio: <what> = <value>[x] ...``.
"""

from __future__ import annotations

import math
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]
BENCHES = sorted((ROOT / "benchmarks").glob("bench_*.py"))
sys.path.insert(0, str(ROOT / "benchmarks"))
from _ratios import parse  # noqa: E402

TIMEOUT_S = 600


def test_there_are_benches():
    assert len(BENCHES) >= 5, [b.name for b in BENCHES]


@pytest.fixture(scope="module")
def smoke_runs():
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "RAY_USAGE_STATS_ENABLED": "0"}
    procs = {}
    for script in BENCHES:
        out = tempfile.TemporaryFile(mode="w+")
        procs[script.name] = (
            subprocess.Popen(
                [sys.executable, str(script), "--smoke"],
                stdout=out,
                stderr=subprocess.STDOUT,
                text=True,
                env=env,
                cwd=ROOT,
            ),
            out,
        )
    yield procs
    for proc, out in procs.values():
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        out.close()


@pytest.mark.parametrize("script", BENCHES, ids=lambda p: p.name)
def test_bench_runs_at_smoke_size_and_prints_ratios(script, smoke_runs):
    proc, out = smoke_runs[script.name]
    try:
        proc.wait(timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    out.seek(0)
    text = out.read()
    assert proc.returncode == 0, f"{script.name} --smoke exited {proc.returncode}:\n{text[-3000:]}"
    lines = parse(text)
    assert lines, (
        f"{script.name} --smoke printed no ratio line (format: 'ratio: <what> = <value>x', see "
        f"benchmarks/_ratios.py):\n{text[-2000:]}"
    )
    for line in lines:
        assert not math.isnan(line["value"]) and line["value"] >= 0, line  # inf: never reached in the run
        assert "NOT MET" not in line["rest"], f"a smoke run judged a goal: {line}"


def test_ratio_lines_parse():
    lines = parse("noise\nratio: a / b = 0.912x  (goal >= 0.9: met)  note\nratio: c = 12.5\nratio: bad = x\n")
    assert [(x["name"], x["value"], x["goal"]) for x in lines] == [("a / b", 0.912, (">=", 0.9)), ("c", 12.5, None)]
