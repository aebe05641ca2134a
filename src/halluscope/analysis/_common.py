"""What the analysis sections share: the latest detection predictions of a spoken run, item WER, listener labels,
and the tests (clustered intervals of means and ratios, a cluster permutation test, Holm's correction, a paired slope
test). Intervals resample source articles through halluscope.metrics.bootstrap (seed 000: an original and its
rewrites are one unit)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from functools import lru_cache

import numpy as np

from halluscope.core.records import Prediction, Transcript, Variant
from halluscope.core.store import Store
from halluscope.metrics.bootstrap import CI, percentile_ci, ratio_ci, resample_weights, whole_numbers

BOOTSTRAP = 1000
ROUNDS = 2000  # permutation rounds
INPUT_NAMES = {"text": "O", "transcript": "T", "audio": "audio"}  # seed 000: original text, ASR transcript, audio
INPUT_ORDER = ("text", "transcript", "audio")


def detect_runs(store: Store) -> dict[tuple[str, str, str], dict[str, Prediction]]:
    """(row label, task, input) -> predictions of each distinct 'detect' run (spoken/detect/runs.py: the one query
    and the report's row labels); runs on a compared ASR system's transcripts (``--transcripts``) are left out
    (they are Table 7's)."""
    from halluscope.spoken.detect.runs import detect_runs as runs

    return {(d.key, d.task, d.input): d.predictions for d in runs(store) if not d.run.config.transcripts}


def scored(preds: dict[str, Prediction], samples: dict[str, Variant]) -> dict[str, Prediction]:
    """The predictions a detector is scored on: the test split (a zero-shot detector: every split) of this build."""
    return {i: p for i, p in preds.items() if i in samples and (p.split == "test" or p.zero_shot)}


def item_wer(t: Transcript, reference: str) -> float:
    """The transcript's stored item WER, or App. A.4's cleaning then jiwer's WER (1.0 for an empty reference)."""
    if t.wer is not None:
        return float(t.wer)
    from halluscope.metrics.asr import edit_counts, normalize_for_wer

    ref, hyp = normalize_for_wer(reference), normalize_for_wer(t.text)
    if not ref:
        return 0.0 if not hyp else 1.0
    edits, words, _, _ = edit_counts(ref, hyp)
    return edits / words


INTELLIGIBILITY = ("fully", "mostly", "poorly", "unintelligible")  # view/quality.py's scale (seed 000, 3.4)


def listener_labels(store: Store) -> dict[str, str]:
    """item id -> the majority intelligibility of its listeners' latest ratings (ties: the worse label)."""
    latest: dict[str, dict[str, str]] = {}
    for r in store.ratings():
        latest.setdefault(r["item_id"], {})[r["annotator"]] = r["intelligibility"]
    out = {}
    for item, per in latest.items():
        c = Counter(per.values())
        top = max(c.values())
        out[item] = max((lab for lab, n in c.items() if n == top), key=INTELLIGIBILITY.index)
    return out


def mean_ci(values: Sequence[float], clusters: Sequence[str], *, seed: int = 0) -> CI:
    """Clustered percentile interval of the mean of per-item values."""
    return ratio_ci(
        numerator=list(values), denominator=[1.0] * len(values), clusters=list(clusters), bootstrap=BOOTSTRAP, seed=seed
    )


def f1_parts(gold_pos: Sequence[bool], pred_pos: Sequence[bool]) -> tuple[list[float], list[float]]:
    """Per item numerator 2*TP and denominator 2*TP+FP+FN of the positive class's F1 (a ratio of sums)."""
    num = [2.0 if g and p else 0.0 for g, p in zip(gold_pos, pred_pos)]
    den = [2.0 if g and p else 1.0 if g != p else 0.0 for g, p in zip(gold_pos, pred_pos)]
    return num, den


def ratio(num: Sequence[float], den: Sequence[float]) -> float | None:
    d = float(sum(den))
    return float(sum(num)) / d if d else None


def holm(pvalues: Sequence[float | None]) -> list[float | None]:
    """Holm's step-down adjusted p-values (Holm 1979), in input order; None stays None."""
    idx = sorted((i for i, p in enumerate(pvalues) if p is not None), key=lambda i: pvalues[i])  # type: ignore[arg-type]
    m, out, running = len(idx), [None] * len(pvalues), 0.0
    for rank, i in enumerate(idx):
        running = max(running, min(1.0, (m - rank) * float(pvalues[i])))  # type: ignore[arg-type]
        out[i] = running
    return out


Stat = Callable[[np.ndarray], np.ndarray]  # (rounds, m) summed counts -> (rounds,) statistic


def cluster_permutation(
    counts_a: np.ndarray, counts_b: np.ndarray, stat: Stat, *, rounds: int = ROUNDS, seed: int = 0
) -> tuple[float, float]:
    """Two groups of clusters (rows: per-cluster summed counts), statistic ``stat(A) - stat(B)``; two-sided
    p-value of a permutation test that reassigns whole clusters to the groups (sizes kept): (difference, p)."""
    a, b = np.asarray(counts_a, float), np.asarray(counts_b, float)
    obs = float(stat(a.sum(0)[None])[0] - stat(b.sum(0)[None])[0])
    pooled = np.vstack([a, b])
    in_a = _group_a(rounds, len(pooled), len(a), seed).astype(float)
    sa = in_a @ pooled
    # whole counts sum exactly in any order: B is the rest
    sb = pooled.sum(0) - sa if whole_numbers(pooled) else (1.0 - in_a) @ pooled
    with np.errstate(divide="ignore", invalid="ignore"):
        d = stat(sa) - stat(sb)
    d = d[np.isfinite(d)]
    p = (1 + int(np.sum(np.abs(d) >= abs(obs) - 1e-12))) / (1 + len(d))
    return obs, p


@lru_cache(maxsize=8)  # a pure function: each language pair's tests (WER, then F1 per detector) share their sizes
def _group_a(rounds: int, n: int, n_a: int, seed: int) -> np.ndarray:
    """(rounds, n) booleans, read-only: per round, the ``n_a`` clusters of ``n`` that a random order puts first."""
    keys = np.random.default_rng(seed).random((rounds, n))  # a random order per round
    # only which clusters come first matters, not their order: a partition finds the same set as a full sort
    first = np.argpartition(keys, n_a - 1, axis=1) if 0 < n_a < n else np.argsort(keys, axis=1)
    out = np.zeros((rounds, n), dtype=bool)
    np.put_along_axis(out, first[:, :n_a], True, axis=1)
    out.flags.writeable = False
    return out


def ratio_stat(x: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return x[:, 0] / x[:, 1]


def per_cluster(clusters: Sequence[str], rows: Sequence[Sequence[float]]) -> np.ndarray:
    """Per-item count rows summed per cluster (in sorted cluster order)."""
    keys = sorted(set(clusters))
    pos = {k: i for i, k in enumerate(keys)}
    out = np.zeros((len(keys), len(rows[0]) if rows else 0))
    for c, r in zip(clusters, rows):
        out[pos[c]] += np.asarray(r, float)
    return out


def slope(x: np.ndarray, y: np.ndarray, w: np.ndarray | None = None) -> np.ndarray:
    """Weighted least-squares slope of y on x, one per row of ``w`` (a vector without weights)."""
    w = np.ones((1, len(x))) if w is None else np.atleast_2d(w)
    sw = w.sum(1)
    mx, my = (w @ x) / sw, (w @ y) / sw
    sxx = (w * (x[None] - mx[:, None]) ** 2).sum(1)
    sxy = (w * (x[None] - mx[:, None]) * (y[None] - my[:, None])).sum(1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return sxy / sxx


def slope_test(x: Sequence[float], y: Sequence[float], clusters: Sequence[str], *, seed: int = 0) -> dict:
    """Does y (a paired per-item difference, e.g. O correct - T correct) grow with x (item WER)? The OLS slope,
    its clustered bootstrap interval and a one-sided permutation p-value (y shuffled over items: H0 no
    association; p = share of shuffled slopes >= the observed one)."""
    xa, ya = np.asarray(x, float), np.asarray(y, float)
    if len(xa) < 3 or np.ptp(xa) == 0:
        return {"slope": None, "slope_ci": None, "p_grows": None}
    obs = float(slope(xa, ya)[0])
    w = resample_weights(len(xa), rounds=BOOTSTRAP, seed=seed, clusters=list(clusters))
    boots = slope(xa, ya, w)
    boots = boots[np.isfinite(boots)]
    rng = np.random.default_rng(seed)
    shuffled = np.array([rng.permutation(ya) for _ in range(ROUNDS)])
    xc = xa - xa.mean()
    perm = (shuffled - shuffled.mean(1, keepdims=True)) @ xc / float(xc @ xc)
    p = (1 + int(np.sum(perm >= obs - 1e-12))) / (1 + ROUNDS)
    return {"slope": obs, "slope_ci": percentile_ci(boots) if len(boots) else None, "p_grows": p}
