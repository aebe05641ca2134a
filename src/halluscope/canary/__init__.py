"""Does the model hear? The audio-reliance check ("canary") of every audio run.

For a seeded sample of N items the model is asked the same request again with (a) silence of the clip's length,
(b) white noise at the clip's loudness (RMS) and (c) another sampled item's clip, cut or looped to the same length
(only the content differs). Every call goes through the store like any other (stage 'canary'); the report gives,
per model and ablation, the share of answers unchanged, an exact binomial test on the changed answers and, where
gold labels exist, the exact McNemar test on correctness; on local hf-audio models also the divergence between the
next-token distributions with and without audio at the first answer token (the AAD branch pair).
"""

from halluscope.canary.core import (
    ABLATIONS,
    CHANGE_FLOOR,
    CanaryAnswer,
    CanaryDivergence,
    CanaryResult,
    Probe,
    ablate,
    run_canary,
    summarize,
)

__all__ = [
    "ABLATIONS",
    "CHANGE_FLOOR",
    "CanaryAnswer",
    "CanaryDivergence",
    "CanaryResult",
    "Probe",
    "ablate",
    "run_canary",
    "summarize",
]
