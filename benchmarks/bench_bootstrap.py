"""The weighted bootstrap (metrics.bootstrap + classification.replicates) vs the index bootstrap it replaced.

    .venv/bin/python benchmarks/bench_bootstrap.py [--items 1200] [--rounds 1000] [--repeats 3] [--smoke]

Both compute accuracy and macro-F1 of every resample of one Table 2 cell (3 classes, some invalid predictions),
from the same seeded draws: the old way gathered the drawn items (``ref[idx]``) and counted per class; the new
way counts how often each item was drawn and takes weighted sums, which is what lets whole articles be resampled.
It checks that both give the same replicates, then prints seconds per call for each, side by side, and their ratio
(weighted / indexed), alternating the order every repeat. Add ``--articles N`` to time the clustered resample too.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from _ratios import ratio

from halluscope.metrics.bootstrap import resample_weights
from halluscope.metrics.classification import encode, replicates

LABELS = ["fabrication", "contradiction", "context_inconsistency"]


def indexed(ref: list, hyp: list, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The replaced implementation (metrics/classification.py before issue 14, item 5)."""
    k = len(LABELS)
    rr, hh = encode(ref, LABELS)[idx], encode(hyp, LABELS)[idx]
    correct = rr == hh
    f1s = np.zeros(len(idx))
    for c in range(k):
        tp = (correct & (rr == c)).sum(axis=1)
        fp = ((hh == c) & ~correct).sum(axis=1)
        fn = ((rr == c) & ~correct).sum(axis=1)
        denom = 2 * tp + fp + fn
        f1s += np.where(denom > 0, 2 * tp / np.maximum(denom, 1), 0.0)
    return correct.mean(axis=1), f1s / k


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--items", type=int, default=1200)
    ap.add_argument("--rounds", type=int, default=1000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--articles", type=int, default=0)
    ap.add_argument("--smoke", action="store_true", help="60 items, 20 rounds, one repeat (the test suite's run)")
    a = ap.parse_args()
    if a.smoke:
        a.items, a.rounds, a.repeats, a.articles = 60, 20, 1, a.articles and 6
    rng = np.random.default_rng(0)
    ref = list(rng.choice(LABELS, a.items))
    hyp = [None if rng.random() < 0.05 else x for x in rng.choice(LABELS, a.items)]

    def old() -> tuple:
        return indexed(ref, hyp, np.random.default_rng(0).integers(0, a.items, (a.rounds, a.items)))

    def new(clusters: list | None = None) -> tuple:
        return replicates(ref, hyp, LABELS, resample_weights(a.items, rounds=a.rounds, seed=0, clusters=clusters))

    o, n = old(), new()
    assert (o[0] == n[0]).all() and np.allclose(o[1], n[1], rtol=0, atol=1e-15), "replicates differ"
    times: dict[str, list[float]] = {"indexed": [], "weighted": []}
    for r in range(a.repeats):
        order = [("indexed", old), ("weighted", new)]
        for name, fn in order if r % 2 == 0 else order[::-1]:
            t0 = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - t0)
    ti, tw = min(times["indexed"]), min(times["weighted"])
    print(f"{a.items} items x {a.rounds} rounds: indexed {ti:.3f} s, weighted {tw:.3f} s")
    ratio("bootstrap weighted / indexed, seconds per call", tw / ti, smoke=a.smoke)
    if a.articles:
        clusters = [f"a{i % a.articles}" for i in range(a.items)]
        t0 = time.perf_counter()
        new(clusters)
        print(f"clustered over {a.articles} articles: {time.perf_counter() - t0:.3f} s")


if __name__ == "__main__":
    main()
