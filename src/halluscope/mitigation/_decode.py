"""The contrastive decoding loop: one KV cache per branch, one new token through each branch per step.

Batch size 1: audio prompts of different lengths pad very differently and the hf-audio backend already runs
one call at a time; the hf (text) backend decodes a mitigated batch request by request.

Cost per generated token, after the prefills: plain 1 token-forward; AAD and VCD 2 (the contrast branch
advances by the same token on its own cache, never recomputed from scratch); MTI 1, plus len(instruction)
at the uncertain steps only (the instruction is pushed through the main cache and cropped away again);
DoLa 1 forward plus one norm + LM head per candidate layer.
"""

from __future__ import annotations

import inspect
import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch

from halluscope.core.hashing import TORCH_SEED_MAX, seed_from
from halluscope.mitigation._config import MitigationConfig
from halluscope.mitigation._contrast import (
    choose,
    contrast,
    dola,
    dola_candidates,
    entropy,
)


@dataclass
class StepTrace:
    """What happened at one decoding step (kept for tests, the benchmark and the reply's summary)."""

    token: int
    contrasted: bool
    entropy: float
    layer: int | None = None
    logits: torch.Tensor | None = None  # the adjusted next-token logits, when keep_logits=True


@dataclass
class DecodeResult:
    tokens: list[int]
    finish_reason: str
    steps: list[StepTrace] = field(default_factory=list)
    prefill_s: float = 0.0  # wall time of the prefills (both branches)
    decode_s: float = 0.0  # wall time of everything after them

    def summary(self, cfg: MitigationConfig | None) -> dict:
        """Per-reply facts worth storing: how often the contrast ran and which DoLa layers were picked."""
        out: dict[str, Any] = {"method": cfg.method if cfg else None,
                               "contrast_steps": sum(s.contrasted for s in self.steps), "steps": len(self.steps)}
        layers = [s.layer for s in self.steps if s.layer is not None]
        if layers:
            out["layers"] = {str(k): layers.count(k) for k in sorted(set(layers))}
        return out


class Branch:
    """One input sequence of a model and its KV cache.

    Some models keep decoding state on a module (Qwen2.5-Omni's mRoPE ``rope_deltas``, set at prefill and
    reused while decoding); a branch saves it after its own prefill and restores it before each of its steps,
    so two branches with different prompts (AAD: with and without audio) never see each other's positions.
    """

    def __init__(self, model: Any, tensors: dict, *, hidden: bool = False) -> None:
        self.model, self.tensors, self.hidden = model, tensors, hidden
        self.cache: Any = None
        self.length = 0
        self._holders = [m for m in model.modules() if hasattr(m, "rope_deltas")]
        # transformers >= 5.2x renames the forward's past_key_values to cache (the old name warns, then goes)
        self._cache_kw = "cache" if "cache" in inspect.signature(model.forward).parameters else "past_key_values"
        self._state: list[Any] = []

    @staticmethod
    def _cache_of(out: Any) -> Any:
        cache = out.get("cache")  # transformers >= 5.2x; reading .past_key_values there warns
        return cache if cache is not None else out.past_key_values

    def _run(self, **kwargs: Any) -> Any:
        with torch.inference_mode():
            return self.model(**kwargs, use_cache=True, output_hidden_states=self.hidden, return_dict=True)

    def prefill(self) -> Any:
        for h in self._holders:
            h.rope_deltas = None
        out = self._run(**self.tensors)
        self.cache, self.length = self._cache_of(out), int(self.tensors["input_ids"].shape[1])
        self._state = [h.rope_deltas for h in self._holders]
        return out

    def step(self, ids: Sequence[int]) -> Any:
        """Push ``ids`` through the cache; the output's last position predicts the next token."""
        for h, s in zip(self._holders, self._state):
            h.rope_deltas = s
        dev = self.tensors["input_ids"].device
        new = torch.tensor([list(ids)], dtype=torch.long, device=dev)
        mask = torch.ones((1, self.length + len(ids)), dtype=torch.long, device=dev)
        pos = torch.arange(self.length, self.length + len(ids), device=dev).view(1, -1)
        deltas = [s for s in self._state if s is not None]
        if deltas:  # mRoPE: three position rows, shifted by the prompt's delta
            pos = (pos + deltas[0].to(dev).view(-1, 1)).unsqueeze(0).expand(3, -1, -1)
        out = self._run(input_ids=new, attention_mask=mask, position_ids=pos, **{self._cache_kw: self.cache})
        self.cache, self.length = self._cache_of(out), self.length + len(ids)
        return out

    def crop(self, length: int) -> None:
        """Forget everything after ``length`` tokens (MTI's temporary instruction)."""
        if self.length > length:
            self.cache.crop(length - self.length)  # negative: tokens to drop (transformers 4 and 5 agree on it)
        self.length = length


def layer_logits(model: Any) -> Callable[[torch.Tensor], torch.Tensor]:
    """Early exit for DoLa: the final norm, then the LM head (Chuang et al. 2024 read premature layers so)."""
    norm = getattr(model.get_decoder(), "norm", None)
    head = model.get_output_embeddings()
    if norm is None or head is None:
        raise ValueError(f"{type(model).__name__}: DoLa needs a decoder with a final 'norm' and an LM head")
    return lambda h: head(norm(h))


def sampler(params: dict) -> torch.Generator | None:
    """A generator seeded from the decoding parameters (incl. seed and mitigation), None when greedy."""
    if float(params.get("temperature", 0)) <= 0:
        return None
    blob = json.dumps(params, sort_keys=True, default=str).encode()
    return torch.Generator().manual_seed(seed_from(blob) % TORCH_SEED_MAX)


def decode(model: Any, main: dict, cfg: MitigationConfig | None, *, max_new_tokens: int, eos: Sequence[int],
           contrast_inputs: dict | None = None, instruction: Sequence[int] = (), temperature: float = 0.0,
           top_p: float = 1.0, generator: torch.Generator | None = None, keep_logits: bool = False) -> DecodeResult:
    """Decode from ``main`` (model input tensors), contrasting as ``cfg`` says; cfg None decodes plainly."""
    r = cfg.resolved() if cfg is not None else None
    method = r.method if r else None
    if method in ("aad", "vcd") and contrast_inputs is None:
        raise ValueError(f"{method} needs contrast inputs")
    if method == "mti" and not instruction:
        raise ValueError("mti needs the instruction's token ids")
    t0 = time.perf_counter()
    branch = Branch(model, main, hidden=method == "dola")
    neg = Branch(model, contrast_inputs) if method in ("aad", "vcd") else None
    out = branch.prefill()
    z_neg = neg.prefill().logits[0, -1] if neg else None
    candidates, exit_ = (), None
    if method == "dola":
        candidates = r.layers or dola_candidates(len(out.hidden_states) - 1)
        exit_ = layer_logits(model)
    tokens: list[int] = []
    steps: list[StepTrace] = []
    finish = "length"
    t1 = time.perf_counter()
    for _ in range(max_new_tokens):
        z = out.logits[0, -1].float()
        h = float(entropy(z))
        contrasted, layer = False, None
        if method in ("aad", "vcd"):
            adjusted, contrasted = contrast(z, z_neg, alpha=r.alpha, beta=r.beta), True
        elif method == "mti" and h > r.tau:
            keep = branch.length
            z_tmp = branch.step(instruction).logits[0, -1]
            branch.crop(keep)
            adjusted, contrasted = contrast(z, z_tmp, alpha=r.alpha, beta=r.beta), True
        elif method == "dola":
            with torch.inference_mode():
                prem = {i: exit_(out.hidden_states[i][0, -1]).float() for i in candidates}
            adjusted, layer, _ = dola(z, prem, alpha=r.alpha, beta=r.beta, generated=tokens,
                                      repetition_penalty=r.repetition_penalty)
            contrasted = True
        else:
            adjusted = z
        tok = choose(adjusted, temperature=temperature, top_p=top_p, generator=generator)
        steps.append(StepTrace(tok, contrasted, h, layer, adjusted.clone() if keep_logits else None))
        tokens.append(tok)
        if tok in eos:
            finish = "stop"
            break
        if len(tokens) == max_new_tokens:
            break
        out = branch.step([tok])
        if neg is not None:
            z_neg = neg.step([tok]).logits[0, -1]
    return DecodeResult(tokens, finish, steps, t1 - t0, time.perf_counter() - t1)
