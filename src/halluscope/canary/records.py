"""The canary's records: one call's answer, one item's logit divergence, and the probes it is given."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
from pydantic import Field

from halluscope.core.records import AudioDelivery, ModelRequest, Record

SR = 16_000


class CanaryAnswer(Record):
    """One canary call: the item asked with its real clip or an ablation of it, and the answer as compared."""

    item_id: str
    ablation: Literal["real", "silence", "noise", "swap"]
    donor: str | None = Field(default=None, description="swap: the item whose clip was sent.")
    status: str = Field(description="The reply's status (ok, refusal, unparsable) or 'skipped' (audio policy).")
    answer: str | None = Field(
        default=None,
        description="What is compared across ablations (the parsed answer, "
        "or the reply normalised: lower case, whitespace collapsed).",
    )
    label: str | None = Field(default=None, description="The answer as a gold-comparable label (None: no gold).")
    gold: str | None = None
    call_key: str | None = None
    audio: AudioDelivery | None = None


class CanaryDivergence(Record):
    """hf-audio only: the next-token distributions with and without the audio at the first answer token."""

    item_id: str
    kl: float = Field(description="KL(p_audio || p_no_audio) in nats.")
    js: float = Field(description="Jensen-Shannon divergence in nats (0 .. ln 2).")
    same_top1: bool = Field(description="Both branches put the same token first.")
    audio_tokens: int


@dataclass(frozen=True)
class Probe:
    """One item the command asked: its request without audio, its clip (samples, rate) and its gold label."""

    id: str
    request: ModelRequest
    clip: tuple[np.ndarray, int]
    gold: str | None = None
