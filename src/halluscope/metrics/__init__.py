"""Pure metric functions: ASR error rates and classification scores."""

from halluscope.metrics.asr import AsrScore, normalize_for_wer, score_asr
from halluscope.metrics.classification import ClassificationScore, score_classification

__all__ = ["AsrScore", "ClassificationScore", "normalize_for_wer", "score_asr", "score_classification"]
