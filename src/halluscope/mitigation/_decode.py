"""The contrastive decoding loop: one KV cache per branch, one new token through each branch per step.

One request at a time: the hf-audio backend runs one call at a time; the hf (text) backend decodes a mitigated
batch request by request.

Cost per generated token, after the prefills: plain 1 token-forward; AAD and VCD 1 forward of a batch of 2 (each
branch is prefilled on its own, then the two KV caches are left-padded into one and both branches advance by the
same token in one forward: ``BranchPair``; never recomputed from scratch); MTI 1, plus len(instruction) at the
uncertain steps only (the instruction is pushed through the main cache and cropped away again); DoLa 1 forward
plus one norm + LM head over all candidate layers at once.
"""

from __future__ import annotations

import inspect
import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch
import torch.nn.functional as F

from halluscope.core.hashing import TORCH_SEED_MAX, seed_from
from halluscope.mitigation._config import MitigationConfig
from halluscope.mitigation._contrast import (
    choose,
    contrast,
    dola,
    dola_candidates,
    entropy,
    penalize,
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
    decode_cpu_s: float = 0.0  # CPU time of this thread over the same span (one torch thread: all of the work)

    def summary(self, cfg: MitigationConfig | None) -> dict:
        """Per-reply facts worth storing: how often the contrast ran and which DoLa layers were picked."""
        out: dict[str, Any] = {
            "method": cfg.method if cfg else None,
            "contrast_steps": sum(s.contrasted for s in self.steps),
            "steps": len(self.steps),
        }
        layers = [s.layer for s in self.steps if s.layer is not None]
        if layers:
            out["layers"] = {str(k): layers.count(k) for k in sorted(set(layers))}
        return out


def _forget_history(cache: Any) -> None:
    """transformers >= 5.25 records every recurrent (Mamba) state while past recording is on, to crop back to; a
    branch keeps the one state it crops back to itself (Branch.mark), so the record is dropped after each step
    rather than growing with the reply."""
    for layer in getattr(cache, "layers", ()):
        history = getattr(layer, "recurrent_states_history", None)
        if history:
            for k in history:
                history[k] = []  # one list per state (the cache made them one shared list)


def _record_past(cache: Any) -> None:
    """Turn on a cache's past recording, where it has one. Recurrent (Mamba) states are kept by Branch.mark, not by
    the cache: none asked of it (transformers 5.25 reads the default None as a count and fails at the next prefill)."""
    record = getattr(cache, "activate_past_recording", None)
    if record is None:
        return
    params = inspect.signature(record).parameters.values()
    if any(p.name == "recurrent_states_to_keep" or p.kind is p.VAR_KEYWORD for p in params):
        record(recurrent_states_to_keep=0)
    else:
        record()


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
        self._kept: list[tuple[Any, int, torch.Tensor]] = []

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
        _forget_history(self.cache)
        return out

    def mark(self) -> None:
        """Before a temporary step: keep what ``crop`` cannot roll back, the recurrent states of linear-attention
        (Mamba) cache layers, which hold no positions (their conv states crop with past recording on)."""
        self._kept = [
            (layer, i, s.clone())
            for layer in getattr(self.cache, "layers", ())
            for i, s in (getattr(layer, "recurrent_states", None) or {}).items()
            if s is not None
        ]

    def crop(self, length: int) -> None:
        """Forget everything after ``length`` tokens (MTI's temporary instruction); recurrent states kept by
        ``mark`` are put back."""
        with torch.inference_mode():  # the cache's tensors are inference tensors (its crop updates a length in place)
            for layer, i, s in self._kept:
                if getattr(layer, "recurrent_states_history", None) is not None:  # transformers >= 5.25: its crop
                    layer.recurrent_states_history[i] = [s] * (self.length - length)  # rolls back to the kept state
            if self.length > length:
                self.cache.crop(length - self.length)  # negative: tokens to drop (transformers 4 and 5 agree on it)
            for layer, i, s in self._kept:
                layer.recurrent_states[i].copy_(s)
        self._kept = []
        self.length = length


# transformers' cache layers BranchPair merges
MERGEABLE = ("DynamicLayer", "DynamicSlidingWindowLayer", "DummyLayer", "LinearAttentionLayer")
STATES = ("conv_states", "recurrent_states")  # a LinearAttentionLayer's (Mamba's) per-sequence states, by index


class BranchPair:
    """Two prefilled branches decoded as one batch of 2 (AAD, VCD): per step one forward instead of two.

    The shorter branch's KV cache is left-padded to the longer one's length and masked out; each row keeps its own
    positions (and mRoPE delta), so a row attends exactly to what its own branch would. Growing (DynamicLayer),
    sliding-window (Gemma-3n's local layers), state-less (KV-shared, MoE) and Mamba (LinearAttentionLayer: its
    states are stacked, a one-token step never masks them) layers are merged; ``merge`` returns None for anything
    else and the caller steps the two branches one after the other.
    """

    def __init__(self, a: Branch, b: Branch, layers: list[tuple[Any, Any]]) -> None:
        self.a, self.b = a, b
        self.cache, self.lengths = a.cache, [a.length, b.length]
        width = max(self.lengths)
        dev = a.tensors["input_ids"].device
        self.mask = torch.zeros((2, width), dtype=torch.long, device=dev)
        for row, n in enumerate(self.lengths):
            self.mask[row, width - n :] = 1
        for la, lb in layers:
            kind = type(la).__name__
            if kind == "DummyLayer":  # a KV-shared or MoE layer: it holds no state
                continue
            if kind == "LinearAttentionLayer":  # a fixed-size state per sequence, whatever its length: stacked
                for name in STATES:
                    ours, theirs = getattr(la, name), getattr(lb, name)
                    for i in ours:
                        ours[i] = torch.cat([ours[i], theirs[i]], dim=0)
                continue
            # a growing layer holds every position; a sliding one the last window - 1 (fewer while shorter), which
            # left-padding aligns at the right as the mask does (its offset follows the merged cumulative length)
            slots = width if kind == "DynamicLayer" else max(la.keys.shape[-2], lb.keys.shape[-2])
            for name in ("keys", "values"):
                ka, kb = getattr(la, name), getattr(lb, name)
                setattr(la, name, torch.cat([_left_pad(ka, slots), _left_pad(kb, slots)], dim=0))
            if hasattr(la, "cumulative_length"):
                la.cumulative_length = width
        self._holders = a._holders
        deltas = [a._state, b._state]
        self._deltas = None
        if any(s is not None for s in a._state):
            self._deltas = [
                torch.stack([d[i].reshape(-1)[:1] for d in deltas]).view(2, 1) for i in range(len(a._state))
            ]

    @classmethod
    def merge(cls, a: Branch, b: Branch) -> "BranchPair | None":
        layers_a, layers_b = getattr(a.cache, "layers", None), getattr(b.cache, "layers", None)
        if not layers_a or not layers_b or len(layers_a) != len(layers_b) or a._cache_kw != b._cache_kw:
            return None
        for x, y in zip(layers_a, layers_b):
            kind = type(x).__name__
            if kind != type(y).__name__ or kind not in MERGEABLE:
                return None
            if kind == "DummyLayer":
                continue
            if kind == "LinearAttentionLayer":
                if x.record_past or y.record_past or not _states_merge(x, y):
                    return None
                continue
            if (
                getattr(x, "keys", None) is None
                or getattr(y, "keys", None) is None
                or x.keys.shape[0] != 1
                or y.keys.shape[0] != 1
            ):
                return None
            if kind == "DynamicSlidingWindowLayer" and (
                x.sliding_window != y.sliding_window or x.record_past or y.record_past
            ):
                return None
        if any(s is not None and s.numel() != 1 for s in (*a._state, *b._state)):
            return None  # an mRoPE delta per position group: not merged
        if (any(s is None for s in a._state) or any(s is None for s in b._state)) and any(
            s is not None for s in (*a._state, *b._state)
        ):
            return None
        return cls(a, b, list(zip(layers_a, layers_b)))

    def step(self, token: int) -> tuple[torch.Tensor, torch.Tensor]:
        """Advance both rows by ``token``; the next-token logits of (a, b)."""
        dev = self.mask.device
        self.mask = torch.cat([self.mask, torch.ones((2, 1), dtype=torch.long, device=dev)], dim=1)
        pos = torch.tensor([[n] for n in self.lengths], dtype=torch.long, device=dev)
        if self._deltas is not None:
            for h, d in zip(self._holders, self._deltas):
                h.rope_deltas = d.to(dev)
            pos = (pos + self._deltas[0].to(dev)).unsqueeze(0).expand(3, -1, -1)
        new = torch.tensor([[token], [token]], dtype=torch.long, device=dev)
        out = self.a._run(input_ids=new, attention_mask=self.mask, position_ids=pos, **{self.a._cache_kw: self.cache})
        self.cache = Branch._cache_of(out)
        self.lengths = [n + 1 for n in self.lengths]
        return out.logits[0, -1], out.logits[1, -1]


def _states_merge(x: Any, y: Any) -> bool:
    """Two LinearAttentionLayers whose states are all set, batch 1, of one shape each."""
    for name in STATES:
        sx, sy = getattr(x, name, None), getattr(y, name, None)
        if not isinstance(sx, dict) or not isinstance(sy, dict) or sx.keys() != sy.keys():
            return False
        if any(sx[i] is None or sy[i] is None or sx[i].shape != sy[i].shape or sx[i].shape[0] != 1 for i in sx):
            return False
    return True


def _left_pad(x: torch.Tensor, width: int) -> torch.Tensor:
    """[1, heads, n, dim] -> [1, heads, width, dim] with zeros before the n cached positions."""
    n = x.shape[-2]
    if n == width:
        return x
    pad = torch.zeros((*x.shape[:-2], width - n, x.shape[-1]), dtype=x.dtype, device=x.device)
    return torch.cat([pad, x], dim=-2)


def decoder_of(model: Any) -> Any:
    """The module holding the decoder layers: ``get_decoder()``, followed down while it returns a wrapper
    (a multimodal model's ``language_model`` that is itself a causal LM around the decoder)."""
    dec = model.get_decoder()
    while not hasattr(dec, "layers") and hasattr(dec, "get_decoder") and dec.get_decoder() is not dec:
        dec = dec.get_decoder()
    return dec


def layer_logits(model: Any) -> Callable[[Sequence[torch.Tensor]], torch.Tensor]:
    """Early exit for DoLa: the final norm, then the LM head (Chuang et al. 2024 read premature layers so), over the
    last position of each given layer's hidden states [1, seq, hidden]: logits [len(states), vocab]."""
    norm = getattr(decoder_of(model), "norm", None)
    head = model.get_output_embeddings()
    if norm is None or head is None:
        raise ValueError(f"{type(model).__name__}: DoLa needs a decoder with a final 'norm' and an LM head")
    return lambda states: head(norm(torch.cat([h[0, -1:] for h in states])))


def sampler(params: dict) -> torch.Generator | None:
    """A generator seeded from the decoding parameters (incl. seed and mitigation), None when greedy."""
    if float(params.get("temperature", 0)) <= 0:
        return None
    blob = json.dumps(params, sort_keys=True, default=str).encode()
    return torch.Generator().manual_seed(seed_from(blob) % TORCH_SEED_MAX)


class _Last:
    """The slice of a model output the loop reads (``logits[0, -1]``) for a row of a BranchPair step."""

    def __init__(self, z: torch.Tensor) -> None:
        self.logits = z.view(1, 1, -1)


class Decoder:
    """One contrastive decode, a token at a time: ``prefill()`` once, then ``step()`` until it returns None.

    ``step()`` chooses the next token from the current logits (contrasted as ``cfg`` says) and, unless that ends the
    reply, pushes it through the cache(s); ``decode`` runs it to the end. Stepping two decoders in turn (the
    benchmark, plain against a method) times them under the same machine conditions token by token.
    """

    def __init__(
        self,
        model: Any,
        main: dict,
        cfg: MitigationConfig | None,
        *,
        max_tokens: int,
        eos: Sequence[int],
        contrast_inputs: dict | None = None,
        instruction: Sequence[int] = (),
        temperature: float = 0.0,
        top_p: float = 1.0,
        generator: torch.Generator | None = None,
        keep_logits: bool = False,
        batch_branches: bool = True,
        layer_exit: Callable | None = None,
        top_k: int = 0,
        repetition_penalty: float = 1.0,
    ) -> None:
        r = cfg.resolved() if cfg is not None else None
        # the model card's top-k and repetition penalty (seed 001, Table 5); DoLa keeps its own penalty (Table 6)
        self.top_k, self.repetition_penalty = int(top_k or 0), float(repetition_penalty or 1.0)
        self.r, self.method = r, (r.method if r else None)
        if self.method in ("aad", "vcd") and contrast_inputs is None:
            raise ValueError(f"{self.method} needs contrast inputs")
        if self.method == "mti" and not instruction:
            raise ValueError("mti needs the instruction's token ids")
        self.candidates: Sequence[int] = ()
        if self.method == "dola":
            layers = getattr(decoder_of(model), "layers", None)
            if layers is None:
                raise ValueError(f"{type(model).__name__}: DoLa needs a decoder with a 'layers' list")
            self.candidates = r.layers or dola_candidates(len(layers))
        self.instruction, self.max_tokens, self.eos = instruction, max_tokens, set(eos)
        self.temperature, self.top_p, self.generator, self.keep_logits = temperature, top_p, generator, keep_logits
        self.branch = Branch(model, main, hidden=self.method == "dola")
        self.neg = Branch(model, contrast_inputs) if self.method in ("aad", "vcd") else None
        self.batch_branches = batch_branches
        self.exit = (layer_exit or layer_logits(model)) if self.method == "dola" else None
        self.tokens: list[int] = []
        self.steps: list[StepTrace] = []
        self.finish: str | None = None
        self.pair: BranchPair | None = None
        # DoLa's repetition penalty reads the distinct tokens said so far (a repeat changes nothing), as a tensor
        # rebuilt only when a new one is said
        self.seen: dict[int, None] = {}
        self.said = torch.empty(0, dtype=torch.long, device=main["input_ids"].device)

    def prefill(self) -> None:
        self.out = self.branch.prefill()
        if self.method == "mti":  # sliding-window caches keep what MTI's crop rolls back to (no-op for the others)
            _record_past(self.branch.cache)
        self.z_neg = self.neg.prefill().logits[0, -1] if self.neg else None
        if self.neg is not None and self.batch_branches:
            self.pair = BranchPair.merge(self.branch, self.neg)
        if self.max_tokens <= 0:
            self.finish = "length"

    def step(self) -> StepTrace | None:
        """Choose one token and advance the cache(s) by it; None once the reply has ended (``finish`` says why)."""
        if self.finish is not None:
            return None
        r, method = self.r, self.method
        z = self.out.logits[0, -1].float()
        logp = F.log_softmax(z, dim=-1)
        h = float(entropy(logp=logp))
        contrasted, layer = False, None
        if method in ("aad", "vcd"):
            adjusted, contrasted = contrast(z, self.z_neg, alpha=r.alpha, beta=r.beta), True
        elif method == "mti" and h > r.tau:
            keep = self.branch.length
            self.branch.mark()
            z_tmp = self.branch.step(self.instruction).logits[0, -1]
            self.branch.crop(keep)
            adjusted, contrasted = contrast(z, z_tmp, alpha=r.alpha, beta=r.beta), True
        elif method == "dola":
            with torch.inference_mode():  # one norm + head call over every candidate layer; no autograd bookkeeping
                stacked = self.exit([self.out.hidden_states[i] for i in self.candidates])
                adjusted, layer, _ = dola(
                    z,
                    stacked,
                    layers=self.candidates,
                    alpha=r.alpha,
                    beta=r.beta,
                    generated=self.said,
                    repetition_penalty=r.repetition_penalty,
                    logp=logp,
                )
            contrasted = True
        else:
            adjusted = z
        if self.repetition_penalty != 1.0 and method != "dola":
            adjusted = penalize(adjusted, self.said, self.repetition_penalty)
        tok = choose(
            adjusted, temperature=self.temperature, top_p=self.top_p, generator=self.generator, top_k=self.top_k
        )
        trace = StepTrace(tok, contrasted, h, layer, adjusted.clone() if self.keep_logits else None)
        self.steps.append(trace)
        if (method == "dola" or self.repetition_penalty != 1.0) and tok not in self.seen:
            self.seen[tok] = None
            self.said = torch.tensor(list(self.seen), dtype=torch.long, device=self.said.device)
        self.tokens.append(tok)
        if tok in self.eos:
            self.finish = "stop"
        elif len(self.tokens) == self.max_tokens:
            self.finish = "length"
        elif self.pair is not None:
            z_pos, self.z_neg = self.pair.step(tok)
            self.out = _Last(z_pos)
        else:
            self.out = self.branch.step([tok])
            if self.neg is not None:
                self.z_neg = self.neg.step([tok]).logits[0, -1]
        return trace


def decode(
    model: Any,
    main: dict,
    cfg: MitigationConfig | None,
    *,
    max_tokens: int,
    eos: Sequence[int],
    contrast_inputs: dict | None = None,
    instruction: Sequence[int] = (),
    temperature: float = 0.0,
    top_p: float = 1.0,
    generator: torch.Generator | None = None,
    keep_logits: bool = False,
    batch_branches: bool = True,
    layer_exit: Callable | None = None,
    top_k: int = 0,
    repetition_penalty: float = 1.0,
) -> DecodeResult:
    """Decode from ``main`` (model input tensors), contrasting as ``cfg`` says; cfg None decodes plainly.

    ``batch_branches``: AAD and VCD advance both branches in one batch-of-2 forward (``BranchPair``) where the
    model's cache allows; False steps them one after the other (the same tokens, up to float rounding).
    ``layer_exit``: DoLa's early exit, candidate layers' hidden states -> their last-position logits (default
    ``layer_logits``; a model whose hidden states are not [1, seq, hidden] brings its own)."""
    d = Decoder(
        model,
        main,
        cfg,
        max_tokens=max_tokens,
        eos=eos,
        contrast_inputs=contrast_inputs,
        instruction=instruction,
        temperature=temperature,
        top_p=top_p,
        generator=generator,
        keep_logits=keep_logits,
        batch_branches=batch_branches,
        layer_exit=layer_exit,
        top_k=top_k,
        repetition_penalty=repetition_penalty,
    )
    t0 = time.perf_counter()
    d.prefill()
    t1, c1 = time.perf_counter(), time.thread_time()
    while d.step() is not None:
        pass
    return DecodeResult(
        d.tokens, d.finish or "length", d.steps, t1 - t0, time.perf_counter() - t1, time.thread_time() - c1
    )
