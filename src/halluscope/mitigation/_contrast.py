"""The per-step arithmetic of the four methods, as pure functions of logits (float32, shape [..., vocab])."""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch
import torch.nn.functional as F


def plausible(logits: torch.Tensor, beta: float | None) -> torch.Tensor:
    """Mask of tokens with p_t >= beta * max p_t (all True without a threshold); the argmax always survives."""
    if beta is None or beta <= 0:
        return torch.ones_like(logits, dtype=torch.bool)
    logp = F.log_softmax(logits.float(), dim=-1)
    return logp >= logp.max(dim=-1, keepdim=True).values + torch.log(torch.tensor(beta))


def contrast(z: torch.Tensor, z_neg: torch.Tensor, *, alpha: float, beta: float | None = None) -> torch.Tensor:
    """(1 + alpha) z - alpha z^-, restricted to the plausible set of softmax(z) (AAD, VCD, MTI).

    The same distribution as contrasting log-probabilities: the log-normalisers only add a constant.
    """
    z, z_neg = z.float(), z_neg.float()
    out = (1 + alpha) * z - alpha * z_neg
    return out.masked_fill(~plausible(z, beta), float("-inf"))


def entropy(logits: torch.Tensor | None = None, *, logp: torch.Tensor | None = None) -> torch.Tensor:
    """Shannon entropy (nats) of softmax(logits) (MTI's uncertainty test); or of exp(logp), log-probabilities
    already computed."""
    if logp is None:
        logp = F.log_softmax(logits.float(), dim=-1)
    return -(logp.exp() * logp).sum(dim=-1)


def js_divergence(logits_p: torch.Tensor, logits_q: torch.Tensor) -> torch.Tensor:
    """Jensen-Shannon divergence (nats) between softmax(logits_p) and softmax(logits_q), over the last axis."""
    lp, lq = F.log_softmax(logits_p.float(), dim=-1), F.log_softmax(logits_q.float(), dim=-1)
    m = 0.5 * (lp.exp() + lq.exp())
    lm = torch.log(m.clamp_min(1e-30))
    return 0.5 * ((lp.exp() * (lp - lm)).sum(-1) + (lq.exp() * (lq - lm)).sum(-1))


def dola_candidates(n_layers: int) -> tuple[int, ...]:
    """Every second decoder layer from the midpoint up to the one below the final (hidden-state indices).

    Hidden state i is the output of decoder layer i (0 = embeddings, n_layers = final, after the final norm);
    this is the 'high' bucket of Chuang et al. (2024): range(N // 2, N, 2).
    """
    cands = tuple(range(n_layers // 2, n_layers, 2))
    if not cands:
        raise ValueError(f"DoLa needs at least 2 decoder layers, the model has {n_layers}")
    return cands


def dola(
    final: torch.Tensor,
    premature: dict[int, torch.Tensor] | torch.Tensor,
    *,
    alpha: float = 1.0,
    beta: float | None = 0.1,
    generated: Sequence[int] | torch.Tensor = (),
    repetition_penalty: float = 1.0,
    layers: Sequence[int] | None = None,
    logp: torch.Tensor | None = None,
) -> tuple[torch.Tensor, int, dict[int, float]]:
    """DoLa's adjusted logits log q_N - alpha log q_M on the plausible set of q_N, with M the candidate layer of
    largest JS divergence from the final layer; then the repetition penalty on already generated tokens.

    ``premature``: layer -> logits, or the candidates' logits stacked [candidates, vocab] with ``layers`` naming
    them. ``logp``: log_softmax(final), when the caller has it. Returns (adjusted logits, chosen layer, JS
    divergence per candidate). Shapes: [vocab] (batch size 1).
    Every candidate is scored in one pass (each log-softmax computed once), as this runs at every step; with a
    single candidate there is nothing to choose and no divergence is computed (nan).
    """
    if isinstance(premature, dict):
        layers, stacked = list(premature), torch.stack([premature[k] for k in premature])
    else:
        stacked, layers = premature, list(layers or ())
    lp = F.log_softmax(final.float(), -1) if logp is None else logp
    lq = F.log_softmax(stacked.float(), -1)  # [candidates, vocab]
    if len(layers) == 1:  # nothing to choose: no divergence is computed (reported as nan)
        best, js = 0, {layers[0]: float("nan")}
    else:
        p, q = lp.exp(), lq.exp()
        lm = torch.log((0.5 * (p + q)).clamp_min(1e-30))
        js_all = 0.5 * ((p * (lp - lm)).sum(-1) + (q * (lq - lm)).sum(-1))
        best = int(torch.argmax(js_all))  # ties: the lower layer (candidates ascend; argmax takes the first)
        js = dict(zip(layers, js_all.tolist()))
    # this runs at every step: few ops (a tiny model's token is a few hundred), in place where it can
    out = lp - lq[best] if alpha == 1.0 else torch.sub(lp, lq[best], alpha=alpha)
    if beta is not None and beta > 0:
        out.masked_fill_(lp < float(lp.max()) + math.log(beta), float("-inf"))
    if repetition_penalty != 1.0 and len(generated):
        # a repeated id reads and writes the same value, so a token list with repeats goes in as it is
        idx = generated if isinstance(generated, torch.Tensor) else torch.tensor(list(generated), dtype=torch.long)
        idx = idx.to(out.device)
        vals = out.index_select(-1, idx)
        # negative values are multiplied by the penalty, positive ones divided (Keskar et al. 2019, as in HF)
        scaled, shrunk = vals * repetition_penalty, vals / repetition_penalty
        out.index_copy_(
            -1, idx, torch.minimum(scaled, shrunk) if repetition_penalty > 1 else torch.maximum(scaled, shrunk)
        )
    return out, layers[best], js


def diffuse(x: torch.Tensor, *, abar: float, generator: torch.Generator) -> torch.Tensor:
    """Forward diffusion in one jump: sqrt(abar) x + sqrt(1 - abar) eps, eps ~ N(0, I) from ``generator``."""
    eps = torch.randn(x.shape, generator=generator, dtype=torch.float32).to(device=x.device)
    return (abar**0.5 * x.float() + (1 - abar) ** 0.5 * eps).to(x.dtype)


def penalize(logits: torch.Tensor, said: torch.Tensor, penalty: float) -> torch.Tensor:
    """The repetition penalty on already said ids (a model card's decoding setting, seed 001 Table 5): negative
    logits multiplied by it, positive ones divided (as HF's RepetitionPenaltyLogitsProcessor); a new tensor."""
    if penalty == 1.0 or not len(said):
        return logits
    out = logits.clone()
    vals = out.index_select(-1, said.to(out.device))
    out.index_copy_(-1, said.to(out.device), torch.where(vals < 0, vals * penalty, vals / penalty))
    return out


def choose(
    logits: torch.Tensor, *, temperature: float, top_p: float, generator: torch.Generator | None, top_k: int = 0
) -> int:
    """Greedy at temperature 0, else sampling from softmax(logits / temperature) with ``generator``, kept to the
    ``top_k`` most likely ids (0: all) and then to the nucleus ``top_p``."""
    if temperature <= 0:
        return int(torch.argmax(logits))
    if 0 < top_k < logits.shape[-1]:
        kth = torch.topk(logits, top_k).values[..., -1]
        logits = logits.masked_fill(logits < kth, float("-inf"))
    probs = torch.softmax(logits.float().cpu() / temperature, dim=-1)
    if top_p < 1.0:
        sorted_p, order = torch.sort(probs, descending=True)
        keep = torch.cumsum(sorted_p, -1) - sorted_p < top_p
        probs = torch.zeros_like(probs).scatter(-1, order, sorted_p * keep)
    return int(torch.multinomial(probs / probs.sum(), 1, generator=generator))
