"""Decoding-time hallucination mitigation for local models (seed 001, section 3.4 and App. B.3).

Four contrastive methods over next-token logits z_t and a contrast z_t^-, each branch with its own KV cache:
AAD (audio removed), VCD (diffused audio), MTI (a temporary ignore-the-audio instruction at high-entropy
steps) and DoLa (a premature layer chosen per step by Jensen-Shannon divergence). Reached as options of the
'hf-audio/<path>' backend (all four) and the 'hf/<path>' backend (DoLa): ``--mitigation aad -o alpha=1`` (the
option 'mitigation' under the hood).
"""

from __future__ import annotations

from typing import Any

from halluscope.mitigation._config import (
    AAD_PREFIX,
    AUDIO_METHODS,
    DEFAULTS,
    FIELDS,
    METHOD_ORDER,
    METHODS,
    MTI_INSTRUCTION,
    MitigationConfig,
    method_label,
    mitigation_of,
    model_and_method,
    model_order,
    parse_mitigation,
    split_mitigation,
)

# the decoding loop and the contrasts need torch: imported on first use, so that reading a method's label (the
# reports, every --help) never loads torch
_LAZY = {
    "contrast": "_contrast",
    "diffuse": "_contrast",
    "dola": "_contrast",
    "dola_candidates": "_contrast",
    "entropy": "_contrast",
    "js_divergence": "_contrast",
    "plausible": "_contrast",
    "Branch": "_decode",
    "DecodeResult": "_decode",
    "Decoder": "_decode",
    "StepTrace": "_decode",
    "decode": "_decode",
    "sampler": "_decode",
}


def label_of(mitigation: object) -> str:
    """Table row label of a stored mitigation setting (a config, its key dict, a method name or None): 'W/O' if none."""
    cfg = parse_mitigation(mitigation)
    return "W/O" if cfg is None else cfg.label()


__all__ = [
    "METHOD_ORDER",
    "model_and_method",
    "model_order",
    "AAD_PREFIX",
    "AUDIO_METHODS",
    "DEFAULTS",
    "FIELDS",
    "METHODS",
    "MTI_INSTRUCTION",
    "Branch",
    "DecodeResult",
    "Decoder",
    "MitigationConfig",
    "StepTrace",
    "contrast",
    "decode",
    "diffuse",
    "dola",
    "dola_candidates",
    "entropy",
    "js_divergence",
    "label_of",
    "method_label",
    "mitigation_of",
    "parse_mitigation",
    "plausible",
    "sampler",
    "split_mitigation",
]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(f"halluscope.mitigation.{_LAZY[name]}"), name)
    raise AttributeError(f"module 'halluscope.mitigation' has no attribute '{name}'")
