"""Paired significance tests for detectors scored on the same items (O vs T, model vs model).

Accuracy differences are tested with the exact
McNemar test (a two-sided binomial test on the discordant pairs, scipy); macro-F1 differences, which
do not decompose over items, with a paired approximate randomization test (swap the two systems'
predictions item by item; Yeh 2000, Noreen 1989) and a paired bootstrap interval of the difference
(halluscope.metrics.bootstrap; whole source articles resampled when ``clusters`` is given). None predictions (unparsable, refused) count as errors, as everywhere in halluscope.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import product

import numpy as np

from halluscope.metrics.bootstrap import percentile_ci, resample_weights, units
from halluscope.metrics.classification import accuracy_rows, class_counts, encode, macro_f1_from, macro_f1_rows

EXACT_LIMIT = 16  # up to 2**16 swap patterns are enumerated; beyond, rounds are sampled


@dataclass(frozen=True)
class McNemarResult:
    """Exact McNemar test: ``a_only`` items only A got right, ``b_only`` items only B got right."""

    n: int
    a_correct: int
    b_correct: int
    a_only: int
    b_only: int
    p_value: float

    @property
    def accuracy_difference(self) -> float:
        return (self.a_correct - self.b_correct) / self.n if self.n else 0.0


@dataclass(frozen=True)
class PairedResult:
    """A paired randomization test of ``metric(A) - metric(B)`` with a paired bootstrap 95% interval."""

    metric: str
    n: int
    a: float
    b: float
    difference: float
    p_value: float
    rounds: int
    exact: bool
    difference_ci: tuple[float, float] | None


def _check(reference: Sequence[str], *hyps: Sequence[str | None]) -> None:
    for h in hyps:
        if len(h) != len(reference):
            raise ValueError(
                f"reference has {len(reference)} items but a hypothesis has {len(h)}; "
                "paired tests need both systems' predictions on the same items, in the same order"
            )
    if not reference:
        raise ValueError("cannot test on an empty set of items")


def binom_half_two_sided(k: int, n: int) -> float:
    """``scipy.stats.binomtest(k, n, 0.5).pvalue``: at p = 1/2 the distribution is symmetric, so the two-sided p is
    twice the lighter tail (1 at the centre), summed exactly in integers; a report's McNemar tests then need no
    SciPy import (0.7 s of the report's critical path). Very large n falls back to SciPy."""
    if n > 20_000:
        from scipy.stats import binomtest

        return float(binomtest(k, n, 0.5).pvalue)
    m = min(k, n - k)
    if 2 * m == n:
        return 1.0
    term = tail = 1
    for i in range(1, m + 1):
        term = term * (n - i + 1) // i  # C(n, i), exact
        tail += term
    return min(1.0, (2 * tail) / (1 << n))  # int / int: correctly rounded


def mcnemar(
    *, reference: Sequence[str], hypothesis_a: Sequence[str | None], hypothesis_b: Sequence[str | None]
) -> McNemarResult:
    """Exact McNemar test on paired correctness; p = 1 when the systems never disagree in correctness."""
    _check(reference, hypothesis_a, hypothesis_b)
    ca = [a is not None and a == r for r, a in zip(reference, hypothesis_a)]
    cb = [b is not None and b == r for r, b in zip(reference, hypothesis_b)]
    a_only = sum(x and not y for x, y in zip(ca, cb))
    b_only = sum(y and not x for x, y in zip(ca, cb))
    p = 1.0 if a_only + b_only == 0 else binom_half_two_sided(a_only, a_only + b_only)
    return McNemarResult(len(reference), sum(ca), sum(cb), a_only, b_only, min(1.0, p))


def _encode(
    reference: Sequence[str], hyp: Sequence[str | None], labels: Sequence[str]
) -> tuple[np.ndarray, np.ndarray]:
    missing = sorted({r for r in reference if r not in labels})
    if missing:
        raise ValueError(f"reference labels {missing} are not in the label set {list(labels)}")
    return encode(reference, labels), encode(hyp, labels)


_METRICS = {"macro_f1": macro_f1_rows, "accuracy": accuracy_rows}


def paired_randomization(
    *,
    reference: Sequence[str],
    hypothesis_a: Sequence[str | None],
    hypothesis_b: Sequence[str | None],
    labels: Sequence[str],
    metric: str = "macro_f1",
    rounds: int = 10000,
    bootstrap: int = 1000,
    seed: int = 0,
    clusters: Sequence[str] | None = None,
) -> PairedResult:
    """Two-sided paired randomization test of metric(A) - metric(B).

    Only items where A and B predict differently can be swapped; with at most 16 such items every swap
    pattern is enumerated (an exact test, p = share of patterns with |difference| >= observed),
    otherwise ``rounds`` patterns are sampled and p = (hits + 1) / (rounds + 1).
    """
    if metric not in _METRICS:
        raise ValueError(f"unknown metric '{metric}': expected one of {sorted(_METRICS)}")
    _check(reference, hypothesis_a, hypothesis_b)
    fn, k = _METRICS[metric], len(labels)
    ref, a = _encode(reference, hypothesis_a, labels)
    _, b = _encode(reference, hypothesis_b, labels)
    score_a, score_b = float(fn(ref, a, k)[0]), float(fn(ref, b, k)[0])
    observed = score_a - score_b
    diff = np.flatnonzero(a != b)
    eps = 1e-12
    if diff.size <= EXACT_LIMIT:
        patterns = np.array(list(product((False, True), repeat=int(diff.size))), dtype=bool).reshape(
            2 ** int(diff.size), int(diff.size)
        )
        hits, total, exact = _count_hits(ref, a, b, diff, patterns, fn, k, abs(observed) - eps), len(patterns), True
        p = hits / total
    else:
        rng = np.random.default_rng(seed)
        hits = 0
        for start in range(0, rounds, 1000):
            patterns = rng.random((min(1000, rounds - start), diff.size)) < 0.5
            hits += _count_hits(ref, a, b, diff, patterns, fn, k, abs(observed) - eps)
        total, exact = rounds, False
        p = (hits + 1) / (rounds + 1)
    ci = None
    if bootstrap > 0 and units(len(ref), clusters) > 1:
        w = resample_weights(len(ref), rounds=bootstrap, seed=seed + 1, clusters=clusters)
        ci = percentile_ci(fn(ref, a, k, w) - fn(ref, b, k, w))
    return PairedResult(metric, len(ref), score_a, score_b, observed, min(1.0, float(p)), total, exact, ci)


def _count_hits(
    ref: np.ndarray,
    a: np.ndarray,
    b: np.ndarray,
    diff: np.ndarray,
    patterns: np.ndarray,
    fn: object,
    k: int,
    threshold: float,
) -> int:
    """How many swap patterns give |metric(A') - metric(B')| >= threshold."""
    if fn in (macro_f1_rows, accuracy_rows):  # counts: the unswapped items' once, plus each row's swapped items'
        return int((np.abs(_swapped_deltas(ref, a, b, diff, patterns, fn, k)) >= threshold).sum())
    ra = np.repeat(a[None, :], len(patterns), axis=0)
    rb = np.repeat(b[None, :], len(patterns), axis=0)
    sub_a, sub_b = ra[:, diff], rb[:, diff]
    ra[:, diff] = np.where(patterns, sub_b, sub_a)
    rb[:, diff] = np.where(patterns, sub_a, sub_b)
    deltas = fn(ref, ra, k) - fn(ref, rb, k)  # type: ignore[operator]
    return int((np.abs(deltas) >= threshold).sum())


def _swapped_deltas(
    ref: np.ndarray, a: np.ndarray, b: np.ndarray, diff: np.ndarray, patterns: np.ndarray, fn: object, k: int
) -> np.ndarray:
    """metric(A') - metric(B') per pattern from whole-number counts (the same integers, so the same figures as
    the metric over every item), touching only the items A and B disagree on."""
    same = np.ones(len(ref), dtype=bool)
    same[diff] = False
    rd, da, db = ref[diff], a[diff], b[diff]
    sa, sb = np.where(patterns, db, da), np.where(patterns, da, db)
    if fn is accuracy_rows:
        base = int((a[same] == ref[same]).sum())
        return (base + (sa == rd).sum(1)) / len(ref) - (base + (sb == rd).sum(1)) / len(ref)
    fixed = class_counts(ref[same], a[same], k)

    def f1(rows: np.ndarray) -> np.ndarray:
        return macro_f1_from([tuple(x + y for x, y in zip(c0, c)) for c0, c in zip(fixed, class_counts(rd, rows, k))])

    return f1(sa) - f1(sb)
