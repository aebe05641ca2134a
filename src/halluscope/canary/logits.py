"""hf-audio only: how far the model's next-token distribution at the first answer token moves when its audio is
taken away, from the adapter's AAD branch pair (``inputs_pair``: the same prompt with and without the clip)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from halluscope.canary.records import SR, CanaryDivergence, Probe
from halluscope.core.stages import Stage, run_stage
from halluscope.core.store import Store


def first_token_divergence(adapter: Any, messages: Sequence, clips: Sequence) -> tuple[float, float, bool, int]:
    """(KL, JS, same top-1, audio tokens) of the last prompt position's distributions with and without ``clips``."""
    import torch

    with_audio, without = adapter.inputs_pair(messages, clips)
    la = adapter.forward(with_audio).logits[0, -1].float()
    lb = adapter.forward(without).logits[0, -1].float()
    pa, pb = torch.log_softmax(la, -1), torch.log_softmax(lb, -1)
    kl = float(torch.sum(pa.exp() * (pa - pb)))
    m = torch.logsumexp(torch.stack([pa, pb]), 0) - float(np.log(2.0))
    js = float(0.5 * torch.sum(pa.exp() * (pa - m)) + 0.5 * torch.sum(pb.exp() * (pb - m)))
    return max(kl, 0.0), max(js, 0.0), bool(int(la.argmax()) == int(lb.argmax())), int(with_audio.audio_tokens)


def divergences(
    store: Store,
    stage: Stage,
    backend: Any,
    picked: Sequence[Probe],
    clips: dict[str, np.ndarray],
    *,
    audio_policy: str,
    window: float | None,
    quiet: bool = False,
) -> dict[str, CanaryDivergence]:
    """One forward pair per sampled item, stored under ``stage`` (a rerun reads them back); the model is loaded in
    this process for it and released after."""
    from halluscope.backends.audio_lm import audio_request

    todo = store.done_ids(stage.name, stage.fingerprint)
    if not all(p.id in todo for p in picked):
        backend._load()  # the backend's own loader (device, dtype, window, chat template as configured)

    def one(p: Probe) -> CanaryDivergence:
        sent, _ = audio_request(p.request, (clips[p.id], SR), audio_policy, window)
        clipped = sent.audio if sent is not None else ()
        kl, js, same, tokens = first_token_divergence(backend.adapter, p.request.messages, clipped)
        return CanaryDivergence(item_id=p.id, kl=round(kl, 6), js=round(js, 6), same_top1=same, audio_tokens=tokens)

    try:
        out = run_stage(
            store, stage, [(p.id, p) for p in picked], one, CanaryDivergence, quiet=quiet, description="canary logits"
        )
    finally:
        backend.adapter = None
    return out.results
