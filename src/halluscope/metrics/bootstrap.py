"""The one bootstrap of halluscope: seeded percentile intervals, resampling items or whole clusters.

A resample is a row of weights, one per item: how many times the item was drawn. Without clusters the
items are drawn with replacement (n draws of n items); with clusters (e.g. source article ids: an original
and its rewrites share one) the clusters are drawn with replacement, as many as there are, and every item
of a drawn cluster gets that cluster's count, so an article's items are in or out of a resample together.
Any metric that sums over items (accuracy, rates, confusion counts, hence F1) reads a weighted sum per row.

Seeded draws are those of ``numpy.random.default_rng(seed).integers(0, units, (rounds, units))``: the
intervals halluscope printed before this module existed are reproduced exactly.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

import numpy as np

CI = tuple[float, float] | None
CONFIDENCE = 0.95


def cluster_index(clusters: Sequence[str]) -> tuple[np.ndarray, int]:
    """Each item's cluster as an index into the sorted distinct cluster names, and how many there are."""
    keys = sorted(set(clusters))
    pos = {k: i for i, k in enumerate(keys)}
    return np.array([pos[c] for c in clusters], dtype=np.int64), len(keys)


def draws(units: int, rounds: int, seed: int) -> np.ndarray:
    """The seeded draws, ``default_rng(seed).integers(0, units, (rounds, units))``, read-only."""
    out = np.random.default_rng(seed).integers(0, units, (rounds, units))
    out.flags.writeable = False
    return out


def drawn_counts(units: int, rounds: int, seed: int) -> np.ndarray:
    """Per row of the seeded draws, how many times each unit was drawn (floats, for matrix products), read-only: the
    last four of at most 32 MB each are kept (a pure function; a report's cells share a few sizes: a severity table
    asks for 288 intervals of 29 sizes, in runs of two or three), so a resampled sum is one matrix product."""
    return (
        _kept_counts(units, rounds, seed) if units * rounds <= 4_000_000 else _counts(draws(units, rounds, seed), units)
    )


@lru_cache(maxsize=4)
def _kept_counts(units: int, rounds: int, seed: int) -> np.ndarray:
    out = _counts(draws(units, rounds, seed), units)
    out.flags.writeable = False
    return out


def _counts(drawn: np.ndarray, units: int) -> np.ndarray:
    """Per row, how many times each unit 0..units-1 was drawn."""
    rounds = drawn.shape[0]
    flat = (drawn + np.arange(rounds, dtype=np.int64)[:, None] * units).ravel()
    return np.bincount(flat, minlength=rounds * units).reshape(rounds, units).astype(np.float64)


def resample_weights(n: int, *, rounds: int, seed: int, clusters: Sequence[str] | None = None) -> np.ndarray:
    """(rounds, n) draw counts of ``n`` items (as floats, for matrix products); with ``clusters`` (one name per
    item) whole clusters are drawn."""
    if clusters is not None and len(clusters) != n:
        raise ValueError(f"{n} items but {len(clusters)} cluster names; pass one cluster (e.g. article id) per item")
    if clusters is None:
        return drawn_counts(n, rounds, seed).copy()
    idx, units = cluster_index(clusters)
    return drawn_counts(units, rounds, seed)[:, idx]


def resampled_sums(columns: np.ndarray, *, rounds: int, seed: int, clusters: Sequence[str] | None = None) -> np.ndarray:
    """(rounds, m): ``resample_weights(...) @ columns`` (items x m), from the same draws. Whole numbers with
    clusters are summed per cluster first, so the draw counts stay (rounds, clusters), never (rounds, items):
    their sums are exact in any order, the figures identical."""
    cols = np.asarray(columns, dtype=float)
    if clusters is None or not whole_numbers(cols):
        return resample_weights(len(cols), rounds=rounds, seed=seed, clusters=clusters) @ cols
    if len(clusters) != len(cols):
        raise ValueError(
            f"{len(cols)} items but {len(clusters)} cluster names; pass one cluster (e.g. article id) per item"
        )
    idx, n_units = cluster_index(clusters)
    per = np.stack([np.bincount(idx, c, n_units) for c in cols.T], axis=1).reshape(n_units, cols.shape[1])
    return drawn_counts(n_units, rounds, seed) @ per


def units(n: int, clusters: Sequence[str] | None) -> int:
    """How many units a resample draws: the items, or the distinct clusters."""
    return n if clusters is None else len(set(clusters))


def whole_numbers(x: np.ndarray) -> bool:
    """Whole numbers whose every resampled sum is exact in float64 (below 2**53), so summation order cannot matter."""
    return bool(np.all(x == np.round(x))) and float(np.abs(x).max(initial=0.0)) * x.size < 2.0**53


def percentile_ci(values: np.ndarray, confidence: float = CONFIDENCE) -> tuple[float, float]:
    """The percentile interval of bootstrap replicates (2.5th and 97.5th percentiles at 95%)."""
    tail = round((1 - confidence) * 50, 9)  # 2.5 exactly at 95%, not 2.5000000000000022
    return float(np.percentile(values, tail)), float(np.percentile(values, 100 - tail))


def ratio_ci(
    *,
    numerator: Sequence[float],
    denominator: Sequence[float],
    clusters: Sequence[str] | None = None,
    bootstrap: int = 1000,
    seed: int = 0,
) -> CI:
    """Percentile bootstrap 95% interval of sum(numerator) / sum(denominator), resampling items (or clusters);
    resamples with a zero denominator are left out; None when nothing can be resampled."""
    num, den = np.asarray(numerator, dtype=float), np.asarray(denominator, dtype=float)
    if bootstrap <= 0 or units(len(num), clusters) < 2 or den.sum() == 0:
        return None
    if clusters is not None:  # each cluster's items summed first: the same draws over (clusters, not items) columns
        idx, n_units = cluster_index(clusters)
        num, den = np.bincount(idx, num, n_units), np.bincount(idx, den, n_units)
    w = drawn_counts(len(num), bootstrap, seed)  # resample_weights' draws
    if whole_numbers(num) and whole_numbers(den):  # whole numbers sum exactly in any order: one product for both
        nums, dens = (w @ np.stack([num, den], axis=1)).T
    else:  # a weighted sum per row of the count matrix, as every other reader of the draws does
        nums, dens = w @ num, w @ den
    ok = dens > 0
    if not ok.any():
        return None
    return percentile_ci(nums[ok] / dens[ok])
