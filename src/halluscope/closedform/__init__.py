"""Closed-form audio hallucination benchmarks: HalluAudio, AHa-Bench and yes/no object hallucination.

Load published prediction files, extract answers word by word (strict mode) or with the official scorers'
substring rules (compatibility mode), and compute the benchmarks' metrics with bootstrap intervals (halluscope.metrics.rates and .classification).
Names are imported lazily so that 'halluscope --help' does not pay for scikit-learn and matplotlib.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "extract": [
        "ABSTENTIONS",
        "NON_ANSWERS",
        "Extraction",
        "extract_choice",
        "extract_label",
        "extract_number",
        "extract_option",
        "extract_yesno",
        "normalize_reply",
    ],
    "loaders": ["load_aha", "load_halluaudio", "load_yesno"],
    "records": ["AhaItem", "HalluAudioItem", "Loaded", "LoadProblem", "YesNoItem"],
    "report": ["write_score_report"],
    "score": ["ScoredItem", "ScoreResult", "score_aha", "score_halluaudio", "score_yesno"],
}
_WHERE = {name: module for module, names in _EXPORTS.items() for name in names}
__all__ = sorted(_WHERE)


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module 'halluscope.closedform' has no attribute '{name}'")
    return getattr(importlib.import_module(f"halluscope.closedform.{_WHERE[name]}"), name)
