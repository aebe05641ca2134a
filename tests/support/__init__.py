"""Shared test support: scripted servers, tiny random-weight models, corpora and helpers (import as support.X)."""

import os
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
# Real material nobody on the project wrote (../shared/realdata beside the clone, or $HALLUSCOPE_REALDATA).
# A user's clone does not have it: tests that need it skip (the 'realdata' fixture).
REALDATA = Path(os.environ.get("HALLUSCOPE_REALDATA", TESTS.parents[1] / "shared" / "realdata"))


def pythonpath(*extra: Path) -> str:
    """PYTHONPATH for a subprocess (or a Ray worker) that imports support.* or a test module in ``extra``."""
    return os.pathsep.join([*(str(p) for p in extra), str(TESTS)])
