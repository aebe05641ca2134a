"""Detectors, registered by kind: 'tfidf' (offline baseline) here; other kinds register in their modules."""

from halluscope.spoken.detect import (
    encoder as _encoder,  # noqa: E402,F401 - registers 'encoder/<path>'
    whitebox as _whitebox,  # noqa: E402,F401 - registers 'whitebox/<hf-audio dir>'
    zeroshot as _zeroshot,  # noqa: E402,F401 - registers openai, hf, hf-audio
)
from halluscope.spoken.detect.run import DETECTORS, DetectContext, DetectorKind, detect, register_detector
from halluscope.spoken.detect.splits import split_by_article

__all__ = ["DETECTORS", "DetectContext", "DetectorKind", "detect", "register_detector", "split_by_article"]
