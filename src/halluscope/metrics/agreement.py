"""Agreement between raters: Cohen's kappa (scikit-learn's formula in numpy) and the agreement rate.

* Binary labels (MISHAP, seed 001, App. B.4 and E.4): kappa and AGR = N_agree / N, judge vs each annotator,
  pooled, and annotator vs annotator.
* Ratings 1..5 (seed 000, section 3.4 and Table 9): quadratic-weighted kappa, Spearman's rho (scipy) and the
  shares of items rated identically and within one point, for every rater pair and dimension.

Kappa and rho are None where they are undefined (no variance to agree on).
"""

from __future__ import annotations

import math
import warnings
from collections import Counter, defaultdict
from collections.abc import Collection, Hashable, Mapping, Sequence
from dataclasses import asdict, dataclass
from itertools import combinations
from typing import Literal

from halluscope.core.errors import HalluscopeError

VERDICTS = ("grounded", "hallucinated")
SCALE = (1, 2, 3, 4, 5)


def _finite(x: float | None) -> float | None:
    return None if x is None or math.isnan(x) else float(x)


def cohen_kappa(
    a: Sequence[Hashable],
    b: Sequence[Hashable],
    *,
    labels: Sequence[Hashable],
    weights: Literal["linear", "quadratic"] | None = None,
) -> float | None:
    """Cohen's kappa of two raters over ``labels`` (in scale order when weighted); None when undefined
    (fewer than one pair, or both raters constant on one label: p_e = 1)."""
    if len(a) != len(b):
        raise HalluscopeError(f"agreement needs paired ratings: got {len(a)} and {len(b)}")
    if not a:
        return None
    return _kappa(a, b, list(labels), weights)


def _kappa(a: Sequence[Hashable], b: Sequence[Hashable], labels: list, weights: str | None) -> float | None:
    """scikit-learn's cohen_kappa_score in numpy, operation for operation (same float result), so the report
    does not import scikit-learn (about a second) for it: pairs with a value outside ``labels`` are left out."""
    import numpy as np

    if not any(x in labels for x in a):
        raise HalluscopeError(f"agreement: none of the first rater's values is one of the labels {labels}")
    index = {label: i for i, label in enumerate(labels)}
    n = len(labels)
    confusion = np.zeros((n, n), dtype=np.int64)
    for x, y in zip(a, b):
        if x in index and y in index:
            confusion[index[x], index[y]] += 1
    confusion = confusion.astype(np.float64)
    sum0, sum1 = confusion.sum(axis=0), confusion.sum(axis=1)
    total = sum0.sum()
    if total == 0:
        return None
    expected = np.outer(sum0, sum1) / total
    if weights is None:
        w_mat = np.ones((n, n), dtype=np.float64)
        np.fill_diagonal(w_mat, 0)
    else:
        w_mat = np.zeros((n, n), dtype=np.float64) + np.arange(n)
        w_mat = np.abs(w_mat - w_mat.T) if weights == "linear" else (w_mat - w_mat.T) ** 2
    denominator = np.sum(w_mat * expected)
    if denominator == 0:
        return None
    return _finite(float(1 - np.sum(w_mat * confusion) / denominator))


# ------------------------------------------------------------------------------------------------ binary labels
def _check_paired(a: Sequence, b: Sequence, allowed: Sequence, what: str, must: str) -> None:
    """Two raters' values on the same items, in the same order, each one of ``allowed``."""
    if len(a) != len(b):
        raise HalluscopeError(f"agreement needs paired {what}: got {len(a)} and {len(b)}")
    bad = sorted({x for x in (*a, *b) if x not in allowed})
    if bad:
        raise HalluscopeError(f"{what} must be {must}, got {bad}")


@dataclass(frozen=True)
class BinaryAgreement:
    """Cohen's kappa and AGR = N_agree / N over paired binary labels (seed 001, App. B.4)."""

    n: int
    n_agree: int
    agreement_rate: float | None
    kappa: float | None

    def as_dict(self) -> dict:
        return asdict(self)


def binary_agreement(*, a: Sequence[str], b: Sequence[str], labels: Sequence[str] = VERDICTS) -> BinaryAgreement:
    """Two evaluators' labels (grounded/hallucinated by default) on the same responses, in the same order."""
    _check_paired(a, b, labels, "labels", " or ".join(labels))
    n = len(a)
    if n == 0:
        return BinaryAgreement(0, 0, None, None)
    agree = sum(x == y for x, y in zip(a, b))
    return BinaryAgreement(n, agree, agree / n, cohen_kappa(a, b, labels=labels))


def judge_human_agreement(
    judge: Mapping[str, str], human: Mapping[tuple[str, str], str], *, exclude: Collection[str] = ()
) -> list[dict]:
    """Judge vs each annotator, and pooled over every (response, annotator) pair the judge also scored.

    ``judge``: answer id -> verdict (scored only); ``human``: (answer id, annotator) -> label; ``exclude``:
    answers the judge saw as in-context examples, left out (their labels would grade the judge on its own
    prompt); each row counts the pairs it left out in 'examples_left_out'.
    """
    excluded = set(exclude)
    per: dict[str, list[tuple[str, str]]] = defaultdict(list)
    left: Counter[str] = Counter()
    for (aid, who), label in sorted(human.items()):
        if aid not in judge:
            continue
        if aid in excluded:
            left[who] += 1
        else:
            per[who].append((judge[aid], label))
    rows = []
    for who in sorted(per.keys() | left.keys()):
        pairs = per.get(who, [])
        rows.append(
            {
                "pair": f"judge vs {who}",
                **binary_agreement(a=[p[0] for p in pairs], b=[p[1] for p in pairs]).as_dict(),
                "examples_left_out": left[who],
            }
        )
    pooled = [p for pairs in per.values() for p in pairs]
    rows.append(
        {
            "pair": "judge vs humans (pooled)",
            **binary_agreement(a=[p[0] for p in pooled], b=[p[1] for p in pooled]).as_dict(),
            "examples_left_out": sum(left.values()),
        }
    )
    return rows


def human_human_agreement(human: Mapping[tuple[str, str], str]) -> list[dict]:
    """Every annotator pair on the responses both labelled, and pooled over all pairs."""
    by_who: dict[str, dict[str, str]] = defaultdict(dict)
    for (aid, who), label in human.items():
        by_who[who][aid] = label
    rows, pooled_a, pooled_b = [], [], []
    for x, y in combinations(sorted(by_who), 2):
        shared = sorted(by_who[x].keys() & by_who[y].keys())
        if not shared:
            continue
        a, b = [by_who[x][i] for i in shared], [by_who[y][i] for i in shared]
        pooled_a += a
        pooled_b += b
        rows.append({"pair": f"{x} vs {y}", **binary_agreement(a=a, b=b).as_dict()})
    if rows:
        rows.append({"pair": "humans (pooled pairs)", **binary_agreement(a=pooled_a, b=pooled_b).as_dict()})
    return rows


# ------------------------------------------------------------------------------------------------ 1..5 ratings
@dataclass(frozen=True)
class RatingAgreement:
    """Two raters' 1..5 ratings: quadratic kappa, Spearman's rho and p, shares exact and within one point."""

    n: int
    kappa_quadratic: float | None
    spearman_rho: float | None
    spearman_p: float | None
    within_one: float | None
    exact: float | None

    def as_dict(self) -> dict:
        return asdict(self)


def rating_agreement(*, a: Sequence[int], b: Sequence[int], scale: Sequence[int] = SCALE) -> RatingAgreement:
    """Agreement of two raters over the same items, in the same order."""
    _check_paired(a, b, scale, "ratings", f"integers {scale[0]}..{scale[-1]}")
    n = len(a)
    if n == 0:
        return RatingAgreement(0, None, None, None, None, None)
    from scipy.stats import spearmanr

    with warnings.catch_warnings():  # constant ratings: rho undefined, reported as None
        warnings.simplefilter("ignore")
        rho, p = spearmanr(a, b) if n > 1 else (float("nan"), float("nan"))
    return RatingAgreement(
        n=n,
        kappa_quadratic=cohen_kappa(a, b, labels=scale, weights="quadratic") if n > 1 else None,
        spearman_rho=_finite(rho),
        spearman_p=_finite(p),
        within_one=sum(abs(x - y) <= 1 for x, y in zip(a, b)) / n,
        exact=sum(x == y for x, y in zip(a, b)) / n,
    )


def rating_agreement_rows(
    ratings: Mapping[str, Mapping[str, Mapping[str, int]]], dimensions: Sequence[str]
) -> list[dict]:
    """One row per rater pair x dimension (Table 9), over the items both raters rated on that dimension.

    ``ratings``: rater -> item -> dimension -> rating (only the items the rater scored)."""
    rows = []
    for ra, rb in combinations(list(ratings), 2):
        A, B = ratings[ra], ratings[rb]
        both = sorted(A.keys() & B.keys())
        for dim in dimensions:
            items = [k for k in both if dim in A[k] and dim in B[k]]
            if not items:
                continue
            ag = rating_agreement(a=[A[k][dim] for k in items], b=[B[k][dim] for k in items])
            rows.append({"judge_a": ra, "judge_b": rb, "dimension": dim, **ag.as_dict()})
    return rows
