"""Greedy generation that computes a shared prompt prefix once (``prefix_cache`` of an 'hf/' backend).

A judge asks every item with the same instructions and in-context examples: in the MISHAP judge prompt about 80%
of the ~1,400 tokens are the same for every answer of a category. With ``prefix_cache`` on, the key/value cache of
such a prefix (found as the longest token prefix two prompts share, at least ``MIN_TOKENS`` long) is computed once
and reused: each batch row is the prefix, left padding, then the row's own tokens, and only those are run through
the model (transformers' cache reuse: ``generate(..., cache=<a copy of the prefix cache>)``). The
attention mask leaves the padding out and the positions continue from the prefix, so the result is the plain
batched generation's, computed with less work. Greedy only (sampling keeps the plain path).
"""

from __future__ import annotations

import copy
import threading
from typing import Any

MIN_TOKENS = 128  # shorter shared prefixes are not worth a cache
KEEP = 8  # prefixes kept (most recent first)


def _lcp(a: list[int], b: list[int]) -> int:
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


class PrefixCache:
    """The KV caches of shared prompt prefixes, and the prompts seen (to find the next shared prefix)."""

    def __init__(self) -> None:
        self.entries: list[tuple[list[int], Any]] = []  # (prefix token ids, DynamicCache of that prefix)
        self.seen: list[list[int]] = []
        self.reused_tokens = 0  # prompt tokens not run through the model again (a counter for tests and benches)
        self._lock = threading.Lock()  # batches may run on several threads of the local pool

    def _prefix(self, ids: list[int], others: list[list[int]], model) -> tuple[list[int], Any] | None:
        usable = [e for e in self.entries if len(e[0]) < len(ids) and ids[: len(e[0])] == e[0]]
        best = max(usable, key=lambda e: len(e[0])) if usable else None
        shared = max((_lcp(ids, o) for o in others if o is not ids), default=0)
        shared = min(shared, len(ids) - 1)  # at least one token of the row's own runs through the model
        # a longer shared prefix than the cached one (two prompt families share a header, each family its examples)
        if shared < MIN_TOKENS + (len(best[0]) if best is not None else 0):
            return best
        import torch
        from transformers import DynamicCache

        prefix, cache = ids[:shared], DynamicCache()
        with torch.inference_mode():
            model(input_ids=torch.tensor([prefix], device=model.device), cache=cache, use_cache=True)
        self.entries = [(prefix, cache), *self.entries][:KEEP]
        return prefix, cache

    def generate(self, model, tok, prompts: list[str], kwargs: dict) -> list[tuple[list[int], int]] | None:
        """(new token ids, prompt tokens) per prompt, or None when no prompt shares a prefix (plain path)."""
        with self._lock:
            return self._generate(model, tok, prompts, kwargs)

    def _generate(self, model, tok, prompts: list[str], kwargs: dict) -> list[tuple[list[int], int]] | None:
        import torch

        rows = [tok(p, add_special_tokens=False)["input_ids"] for p in prompts]
        groups: dict[int, tuple[list[int], Any, list[int]]] = {}
        for i, ids in enumerate(rows):
            found = self._prefix(ids, rows + self.seen, model)
            if found is None:
                self.seen = [ids, *self.seen][:KEEP]
                return None
            groups.setdefault(id(found[1]), (found[0], found[1], []))[2].append(i)
        self.seen = [*rows, *self.seen][:KEEP]
        out: list[tuple[list[int], int]] = [([], 0)] * len(rows)
        for prefix, cache, members in groups.values():
            p, own = len(prefix), [rows[i][len(prefix) :] for i in members]
            width = max(len(s) for s in own)
            pad = tok.pad_token_id
            ids = torch.tensor([prefix + [pad] * (width - len(s)) + s for s in own], device=model.device)
            mask = torch.tensor([[1] * p + [0] * (width - len(s)) + [1] * len(s) for s in own], device=model.device)
            past = copy.deepcopy(cache)
            if len(members) > 1:
                past.batch_repeat_interleave(len(members))
            with torch.inference_mode():
                gen = model.generate(input_ids=ids, attention_mask=mask, cache=past, **kwargs)
            self.reused_tokens += p * len(members)
            for row, i in enumerate(members):
                out[i] = (gen[row, p + width :].tolist(), p + len(own[row]))
        return out
