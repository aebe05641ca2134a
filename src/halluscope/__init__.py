"""halluscope: build, run and score hallucination benchmarks for speech and audio language models.

The public names below are imported on first use, so that 'import halluscope' (and every command's --help)
does not pay for the pipelines and their heavy libraries.
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

_WHERE = {
    "BuildConfig": "halluscope.spoken.build",
    "build_spoken": "halluscope.spoken.build",
    "load_build": "halluscope.spoken.build",
    "load_articles": "halluscope.spoken.corpus",
    "HalluscopeError": "halluscope.core.errors",
    "InputError": "halluscope.core.errors",
    "ItemError": "halluscope.core.errors",
    **{
        n: "halluscope.core.records"
        for n in ("Article", "AudioRef", "Change", "Prediction", "RunManifest", "Transcript", "Variant")
    },
    "Stage": "halluscope.core.stages",
    "run_stage": "halluscope.core.stages",
    "Store": "halluscope.core.store",
}
__all__ = sorted([*_WHERE, "__version__"])


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module 'halluscope' has no attribute '{name}'")
    return getattr(importlib.import_module(_WHERE[name]), name)
