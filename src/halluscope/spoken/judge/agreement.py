"""Agreement between two judges on 1..5 ratings (seed 000, section 3.4 and Table 9).

Quadratic-weighted Cohen's kappa (scikit-learn), Spearman's rho (scipy) and the share of items rated
within one point. Kappa and rho are None where they are undefined (no variance to agree on).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from itertools import combinations

from halluscope.core.errors import HalluscopeError
from halluscope.prompts.protocol import DIMENSION_ORDER
from halluscope.core.records import Judgement

SCALE = (1, 2, 3, 4, 5)


@dataclass(frozen=True)
class Agreement:
    n: int
    kappa_quadratic: float | None
    spearman_rho: float | None
    spearman_p: float | None
    within_one: float | None
    exact: float | None

    def as_dict(self) -> dict:
        return asdict(self)


def _finite(x: float) -> float | None:
    return None if x is None or math.isnan(x) else float(x)


def agreement(*, a: Sequence[int], b: Sequence[int]) -> Agreement:
    """Agreement of two raters over the same items, in the same order."""
    if len(a) != len(b):
        raise HalluscopeError(f"agreement needs paired ratings: got {len(a)} and {len(b)}")
    bad = sorted({x for x in (*a, *b) if x not in SCALE})
    if bad:
        raise HalluscopeError(f"ratings must be integers 1..5, got {bad}")
    n = len(a)
    if n == 0:
        return Agreement(0, None, None, None, None, None)
    from scipy.stats import spearmanr
    from sklearn.metrics import cohen_kappa_score

    with warnings.catch_warnings():  # constant ratings: 0/0, reported as None
        warnings.simplefilter("ignore")
        kappa = cohen_kappa_score(a, b, labels=list(SCALE), weights="quadratic") if n > 1 else float("nan")
        rho, p = spearmanr(a, b) if n > 1 else (float("nan"), float("nan"))
    return Agreement(
        n=n, kappa_quadratic=_finite(kappa), spearman_rho=_finite(rho), spearman_p=_finite(p),
        within_one=sum(abs(x - y) <= 1 for x, y in zip(a, b)) / n, exact=sum(x == y for x, y in zip(a, b)) / n,
    )


def agreement_rows(judgements: Mapping[str, Mapping[str, Judgement]]) -> list[dict]:
    """Table 9: one row per judge pair x dimension, over items both judges scored."""
    rows = []
    for ja, jb in combinations(list(judgements), 2):
        A, B = judgements[ja], judgements[jb]
        both = sorted(k for k in A.keys() & B.keys() if A[k].status == "ok" and B[k].status == "ok")
        for dim in DIMENSION_ORDER:
            items = [k for k in both if dim in A[k].scores and dim in B[k].scores]
            if not items:
                continue
            ag = agreement(a=[A[k].scores[dim] for k in items], b=[B[k].scores[dim] for k in items])
            rows.append({"judge_a": ja, "judge_b": jb, "dimension": dim, **ag.as_dict()})
    return rows
