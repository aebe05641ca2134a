"""Detectors: the offline TF-IDF + logistic-regression baseline now; encoders and LLM decoders later."""

from halluscope.detect.run import DETECTORS, detect
from halluscope.detect.splits import split_by_article

__all__ = ["DETECTORS", "detect", "split_by_article"]
