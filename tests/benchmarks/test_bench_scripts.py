"""Every script in benchmarks/ still imports and parses its arguments: the benches are run by hand, so a module
they import can move without any test noticing (bench_speech.py did once). '--help' exits before any timing."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

BENCHES = sorted((Path(__file__).parents[2] / "benchmarks").glob("bench_*.py"))


def test_there_are_benches():
    assert len(BENCHES) >= 5


@pytest.mark.parametrize("script", BENCHES, ids=lambda p: p.name)
def test_bench_imports_and_has_help(script):
    proc = subprocess.run([sys.executable, str(script), "--help"], capture_output=True, text=True, timeout=300,
                          env={"HF_HUB_OFFLINE": "1", "PATH": "/usr/bin:/bin"})
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "usage" in proc.stdout.lower()
