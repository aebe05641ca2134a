"""Detectors, registered by kind: 'tfidf' (offline baseline) here; other kinds register in their modules."""

from halluscope.detect.run import DETECTORS, DetectContext, DetectorKind, detect, register_detector
from halluscope.detect.splits import split_by_article

__all__ = ["DETECTORS", "DetectContext", "DetectorKind", "detect", "register_detector", "split_by_article"]
