"""The mitigations on an hf-audio adapter: the two branches' inputs from chat messages and clips, then decode.

VCD diffuses the log-mel input features (``input_features``), not the waveform or the encoder outputs.
VCD corrupts the model's input tensor (normalised pixels) so that the whole encoder sees the corruption;
the log-mel features are the audio models' equivalent: the Whisper front end scales them to about [-1, 1],
like VCD's normalised images, so abar sets the signal-to-noise ratio directly. Noise on the waveform would
instead pass through the log compression and the front end's 80 dB floor, making its strength depend on the
clip's loudness; noise on encoder outputs would skip the encoder and bind the method to one architecture's
hidden scale. The feature mask is kept, so the diffused clip has the same length and audio-token count and
both branches stay aligned token for token. eps is drawn once per request from ``noise_seed``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

from halluscope.core.errors import HalluscopeError
from halluscope.core.records import AudioClip, ChatMessage
from halluscope.mitigation._config import MitigationConfig
from halluscope.mitigation._contrast import diffuse
from halluscope.mitigation._decode import DecodeResult, decode, sampler


def with_prefix(messages: Sequence[ChatMessage], prefix: str) -> list[ChatMessage]:
    """AAD's prefix before the last user turn's text (both branches get it)."""
    msgs = list(messages)
    last = max(i for i, m in enumerate(msgs) if m.role == "user")
    msgs[last] = msgs[last].model_copy(update={"content": f"{prefix} {msgs[last].content}"})
    return msgs


def diffused(tensors: dict, cfg: MitigationConfig, key: str = "input_features") -> dict:
    """The same inputs with the log-mel features (``key``: the adapter's ``features_key``) diffused to abar = (1 - eta)^T."""
    if key not in tensors:
        raise HalluscopeError("vcd: the inputs carry no audio features to diffuse")
    gen = torch.Generator().manual_seed(int(cfg.noise_seed))
    out = dict(tensors)
    out[key] = diffuse(tensors[key], abar=cfg.abar, generator=gen)
    return out


def branches(
    adapter: Any, messages: Sequence[ChatMessage], clips: Sequence[AudioClip], cfg: MitigationConfig | None
) -> tuple[Any, dict | None, list[int]]:
    """(main ModelInputs, contrast tensors or None, MTI instruction ids) for this request."""
    r = cfg.resolved() if cfg is not None else None
    if r is not None and r.method in ("aad", "vcd", "mti") and not clips:
        raise HalluscopeError(
            f"{r.method} contrasts the audio, but this request carries none "
            "(use --input audio, or mitigation=dola for text inputs)"
        )
    if r is not None and r.method == "aad":
        msgs = with_prefix(messages, r.prefix or "")
        main, neg = adapter.inputs_pair(msgs, clips)
        return main, dict(neg.tensors), []
    main = adapter.inputs(messages, clips)
    if r is not None and r.method == "vcd":
        return main, diffused(dict(main.tensors), r, getattr(adapter, "features_key", "input_features")), []
    if r is not None and r.method == "mti":
        ids = adapter.tokenizer(r.instruction, add_special_tokens=False)["input_ids"]
        if not ids:
            raise HalluscopeError("mti: the instruction encodes to no tokens")
        return main, None, list(ids)
    return main, None, []


def eos_ids(tokenizer: Any) -> list[int]:
    eos = tokenizer.eos_token_id
    return [eos] if isinstance(eos, int) else list(eos or [])


def generate(
    adapter: Any,
    messages: Sequence[ChatMessage],
    clips: Sequence[AudioClip],
    params: dict,
    cfg: MitigationConfig | None,
    *,
    keep_logits: bool = False,
) -> tuple[dict, Any, DecodeResult]:
    """Decode one request with the mitigation: (reply dict as AudioLMAdapter.generate, main inputs, trace)."""
    main, neg, instruction = branches(adapter, messages, clips, cfg)
    dola_exit = getattr(adapter, "dola_exit", None)  # an adapter whose decoder's hidden states need their own exit
    res = decode(
        adapter.model,
        dict(main.tensors),
        cfg,
        max_tokens=int(params["max_new_tokens"]),
        eos=eos_ids(adapter.tokenizer),
        contrast_inputs=neg,
        instruction=instruction,
        temperature=float(params.get("temperature", 0)),
        top_p=float(params.get("top_p", 1.0)),
        generator=sampler(params),
        keep_logits=keep_logits,
        top_k=int(params.get("top_k") or 0),
        repetition_penalty=float(params.get("repetition_penalty") or 1.0),
        layer_exit=dola_exit(adapter.model) if dola_exit is not None else None,
    )
    ids = res.tokens[:-1] if res.finish_reason == "stop" else res.tokens
    out = {
        "text": adapter.tokenizer.decode(ids, skip_special_tokens=True),
        "finish_reason": res.finish_reason,
        "prompt_tokens": int(main.tensors["attention_mask"][0].sum()),
        "completion_tokens": len(res.tokens),
        "mitigation": res.summary(cfg),
    }
    return out, main, res
