"""MISHAP metrics (seed 001, section 4, App. B.4 and E.4): hallucination rates with Wilson intervals, stance
rates, and Cohen's kappa and agreement rate (AGR) between two sets of binary labels.

Pure functions over plain rows; unscored verdicts are counted and left out of every rate, never folded
into a class.
"""

from __future__ import annotations

import math
import warnings
from collections import Counter, defaultdict
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from itertools import combinations

from halluscope.core.errors import HalluscopeError
from halluscope.core.records import STANCES

LABELS = ("grounded", "hallucinated")


@dataclass(frozen=True)
class Rate:
    """k of n, the rate and its 95% Wilson score interval (None when n = 0)."""

    n: int
    k: int
    rate: float | None
    ci_low: float | None
    ci_high: float | None


def rate(*, k: int, n: int, confidence: float = 0.95) -> Rate:
    if not 0 <= k <= n:
        raise HalluscopeError(f"a rate needs 0 <= k <= n, got k={k}, n={n}")
    if n == 0:
        return Rate(0, 0, None, None, None)
    from scipy.stats import binomtest

    ci = binomtest(k, n).proportion_ci(confidence_level=confidence, method="wilson")
    return Rate(n, k, k / n, float(ci.low), float(ci.high))


def _grouped(rows: Iterable[Mapping], by: Sequence[str], field: str) -> dict[tuple, list[str | None]]:
    """The values of ``field`` per group of the ``by`` keys."""
    groups: dict[tuple, list[str | None]] = defaultdict(list)
    for r in rows:
        groups[tuple(r[k] for k in by)].append(r.get(field))
    return groups


def hallucination_rates(rows: Iterable[Mapping], *, by: Sequence[str]) -> list[dict]:
    """One row per group of ``by`` (e.g. model, domain, category): n, hallucinated, rate, CI, unscored.

    Each input row has the ``by`` keys and 'verdict' ('grounded', 'hallucinated' or None for unscored).
    """
    groups = _grouped(rows, by, "verdict")
    bad = {v for verdicts in groups.values() for v in verdicts if v is not None and v not in LABELS}
    if bad:
        raise HalluscopeError(f"verdicts must be one of {LABELS} or None, got {sorted(bad)}")
    out = []
    for key in sorted(groups, key=lambda t: tuple(str(x) for x in t)):
        verdicts = groups[key]
        scored = [v for v in verdicts if v in LABELS]
        r = rate(k=sum(v == "hallucinated" for v in scored), n=len(scored))
        out.append({**dict(zip(by, key)), "n": r.n, "hallucinated": r.k, "rate": r.rate, "ci_low": r.ci_low,
                    "ci_high": r.ci_high, "unscored": len(verdicts) - len(scored)})
    return out


def stance_rates(rows: Iterable[Mapping], *, by: Sequence[str]) -> list[dict]:
    """Share of responses that abstain, assert an answer, or endorse a false premise, per group (with Wilson CIs)."""
    groups = _grouped(rows, by, "stance")
    out = []
    for key in sorted(groups, key=lambda t: tuple(str(x) for x in t)):
        stances = groups[key]
        known = [s for s in stances if s in STANCES]
        row: dict = {**dict(zip(by, key)), "n": len(known), "unscored": len(stances) - len(known)}
        for s in STANCES:
            r = rate(k=sum(x == s for x in known), n=len(known))
            row[s] = r.rate
            row[f"{s}_ci"] = None if r.rate is None else (r.ci_low, r.ci_high)
        out.append(row)
    return out


@dataclass(frozen=True)
class Agreement:
    """Cohen's kappa and AGR = N_agree / N over paired binary labels (App. B.4)."""

    n: int
    n_agree: int
    agreement_rate: float | None
    kappa: float | None

    def as_dict(self) -> dict:
        return asdict(self)


def binary_agreement(*, a: Sequence[str], b: Sequence[str]) -> Agreement:
    """Two evaluators' grounded/hallucinated labels on the same responses, in the same order."""
    if len(a) != len(b):
        raise HalluscopeError(f"agreement needs paired labels: got {len(a)} and {len(b)}")
    bad = sorted({x for x in (*a, *b) if x not in LABELS})
    if bad:
        raise HalluscopeError(f"labels must be {' or '.join(LABELS)}, got {bad}")
    n = len(a)
    if n == 0:
        return Agreement(0, 0, None, None)
    from sklearn.metrics import cohen_kappa_score

    agree = sum(x == y for x, y in zip(a, b))
    with warnings.catch_warnings():  # both evaluators constant: p_e = 1, kappa undefined
        warnings.simplefilter("ignore")
        kappa = float(cohen_kappa_score(a, b, labels=list(LABELS)))
    return Agreement(n, agree, agree / n, None if math.isnan(kappa) else kappa)


def judge_human_agreement(judge: Mapping[str, str], human: Mapping[tuple[str, str], str], *,
                          exclude: Collection[str] = ()) -> list[dict]:
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
        rows.append({"pair": f"judge vs {who}", **binary_agreement(a=[p[0] for p in pairs], b=[p[1] for p in pairs]).as_dict(),
                     "examples_left_out": left[who]})
    pooled = [p for pairs in per.values() for p in pairs]
    rows.append({"pair": "judge vs humans (pooled)", **binary_agreement(a=[p[0] for p in pooled], b=[p[1] for p in pooled]).as_dict(),
                 "examples_left_out": sum(left.values())})
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
