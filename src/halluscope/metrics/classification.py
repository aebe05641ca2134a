"""Accuracy and macro-F1 with bootstrap intervals; missing predictions count as errors (seed 000, Table 3)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from sklearn.metrics import accuracy_score, f1_score

INVALID = "__invalid__"


@dataclass(frozen=True)
class ClassificationScore:
    """Scores over ``n`` items; ``invalid`` predictions (None) are included as errors."""

    accuracy: float
    macro_f1: float
    n: int
    invalid: int
    accuracy_ci: tuple[float, float] | None = None
    macro_f1_ci: tuple[float, float] | None = None

    def as_dict(self) -> dict:
        return {
            "accuracy": self.accuracy, "macro_f1": self.macro_f1, "n": self.n, "invalid": self.invalid,
            "accuracy_ci": list(self.accuracy_ci) if self.accuracy_ci else None,
            "macro_f1_ci": list(self.macro_f1_ci) if self.macro_f1_ci else None,
        }


def _f1(ref: Sequence[str], hyp: Sequence[str], labels: Sequence[str]) -> float:
    return float(f1_score(ref, hyp, labels=list(labels), average="macro", zero_division=0))


def score_classification(
    *,
    reference: Sequence[str],
    hypothesis: Sequence[str | None],
    labels: Sequence[str],
    bootstrap: int = 1000,
    seed: int = 0,
) -> ClassificationScore:
    """Accuracy and macro-F1 over the task's label space, with percentile bootstrap 95% intervals."""
    if len(reference) != len(hypothesis):
        raise ValueError(f"reference has {len(reference)} items but hypothesis has {len(hypothesis)}")
    if not reference:
        raise ValueError("cannot score an empty set of items")
    ref = list(reference)
    hyp = [INVALID if h is None else h for h in hypothesis]
    acc = float(accuracy_score(ref, hyp))
    f1 = _f1(ref, hyp, labels)
    acc_ci = f1_ci = None
    if bootstrap > 0 and len(ref) > 1:
        rng = np.random.default_rng(seed)
        idx = rng.integers(0, len(ref), (bootstrap, len(ref)))
        accs, f1s = bootstrap_acc_f1(ref, hyp, labels, idx)
        acc_ci = (float(np.percentile(accs, 2.5)), float(np.percentile(accs, 97.5)))
        f1_ci = (float(np.percentile(f1s, 2.5)), float(np.percentile(f1s, 97.5)))
    return ClassificationScore(acc, f1, len(ref), sum(h is None for h in hypothesis), acc_ci, f1_ci)


def bootstrap_acc_f1(ref: Sequence[str], hyp: Sequence[str], labels: Sequence[str],
                     idx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Accuracy and macro-F1 of every resample (rows of ``idx``) at once.

    Same definition as sklearn's f1_score(average="macro", labels=labels, zero_division=0), computed
    from per-resample confusion counts because sklearn's per-call validation made a 1000-resample
    bootstrap take seconds per cell; tests check the two agree.
    """
    codes = {lab: i for i, lab in enumerate(labels)}
    k = len(labels)
    r = np.array([codes.get(x, k) for x in ref])
    h = np.array([codes.get(x, k) for x in hyp])  # k = outside the label space (e.g. invalid)
    rr, hh = r[idx], h[idx]
    correct = rr == hh
    accs = correct.mean(axis=1)
    f1s = np.zeros(len(idx))
    for c in range(k):
        tp = (correct & (rr == c)).sum(axis=1)
        fp = ((hh == c) & ~correct).sum(axis=1)
        fn = ((rr == c) & ~correct).sum(axis=1)
        denom = 2 * tp + fp + fn
        f1s += np.where(denom > 0, 2 * tp / np.maximum(denom, 1), 0.0)
    return accs, f1s / k


def majority_baseline(*, train: Sequence[str], test: Sequence[str], labels: Sequence[str]) -> ClassificationScore:
    """Predict the most frequent training label for every test item (ties broken by label order)."""
    counts = Counter(train)
    best = max(labels, key=lambda lab: (counts.get(lab, 0), -list(labels).index(lab)))
    return score_classification(reference=test, hypothesis=[best] * len(test), labels=labels, bootstrap=0)
