"""Shared test support: scripted servers, tiny random-weight models, corpora and helpers (import as support.X)."""

import os
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]


def pythonpath(*extra: Path) -> str:
    """PYTHONPATH for a subprocess (or a Ray worker) that imports support.* or a test module in ``extra``."""
    return os.pathsep.join([*(str(p) for p in extra), str(TESTS)])
