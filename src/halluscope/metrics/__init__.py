"""Pure metric functions: ASR error rates and classification scores.

Submodules load on first use: an ASR worker needs jiwer, not scikit-learn (about 1 s of import).
"""

from importlib import import_module

_WHERE = {"AsrScore": "asr", "normalize_for_wer": "asr", "score_asr": "asr",
          "ClassificationScore": "classification", "score_classification": "classification"}

__all__ = sorted(_WHERE)


def __getattr__(name: str):
    if name not in _WHERE:
        raise AttributeError(f"module 'halluscope.metrics' has no attribute {name!r}")
    return getattr(import_module(f"halluscope.metrics.{_WHERE[name]}"), name)
