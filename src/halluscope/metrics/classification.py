"""Classification scores: accuracy and macro-F1 with bootstrap intervals (seed 000, Tables 2-4), and the
yes/no object-hallucination scores (precision, recall, F1 of one positive class).

Missing predictions (None: unparsable, refused) count as errors everywhere. Point estimates equal
scikit-learn's to the bit (numpy here, tests compare); the bootstrap replicates are weighted confusion counts (halluscope.metrics.bootstrap), which
tests check against scikit-learn on every resample. Items that share a source article are resampled
together when ``clusters`` names each item's article.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from halluscope.metrics.bootstrap import CI, percentile_ci, ratio_ci, resampled_sums, units

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
            "accuracy": self.accuracy,
            "macro_f1": self.macro_f1,
            "n": self.n,
            "invalid": self.invalid,
            "accuracy_ci": list(self.accuracy_ci) if self.accuracy_ci else None,
            "macro_f1_ci": list(self.macro_f1_ci) if self.macro_f1_ci else None,
        }


def encode(values: Sequence[str | None], labels: Sequence[str]) -> np.ndarray:
    """Label codes 0..k-1; None and anything outside ``labels`` become k (an error for every class)."""
    codes = {lab: i for i, lab in enumerate(labels)}
    return np.array([codes.get(v, len(labels)) if v is not None else len(labels) for v in values], dtype=np.int64)


def _weighted(mask: np.ndarray, weights: np.ndarray | None) -> np.ndarray:
    """Per row, the (weighted) count of the items where ``mask`` holds."""
    if weights is None:
        return np.atleast_2d(mask).sum(axis=1)
    if mask.ndim == 1:  # one prediction vector, many resamples: a matrix-vector product
        return weights @ mask.astype(weights.dtype)
    return (mask * weights).sum(axis=1)


def macro_f1_rows(ref: np.ndarray, hyp: np.ndarray, k: int, weights: np.ndarray | None = None) -> np.ndarray:
    """Macro-F1 over classes 0..k-1 of each row of ``hyp`` (rows x items, or one row), each item counted
    ``weights`` times (rows x items; once if None); scikit-learn's zero_division=0."""
    return macro_f1_from(class_counts(ref, hyp, k, weights))


def class_counts(ref: np.ndarray, hyp: np.ndarray, k: int, weights: np.ndarray | None = None) -> list[tuple]:
    """Per class 0..k-1, the per-row (weighted) (TP, FP, FN) macro_f1_rows is made of."""
    out = []
    for c in range(k):
        is_ref, is_hyp = ref == c, hyp == c
        out.append(
            (
                _weighted(is_hyp & is_ref, weights),
                _weighted(is_hyp & ~is_ref, weights),
                _weighted(~is_hyp & is_ref, weights),
            )
        )
    return out


def macro_f1_from(counts: Sequence[tuple]) -> np.ndarray:
    """Macro-F1 per row of each class's (TP, FP, FN); scikit-learn's zero_division=0."""
    f1: np.ndarray | float = 0.0
    for tp, fp, fn in counts:
        denom = 2 * tp + fp + fn
        f1 = f1 + np.where(denom > 0, 2 * tp / np.maximum(denom, 1), 0.0)
    return np.atleast_1d(f1 / len(counts))


def accuracy_rows(ref: np.ndarray, hyp: np.ndarray, k: int, weights: np.ndarray | None = None) -> np.ndarray:
    """Accuracy of each row, weighted like macro_f1_rows."""
    if weights is None:
        return np.atleast_2d(hyp == ref).mean(axis=1)
    return _weighted(hyp == ref, weights) / weights.sum(axis=1)


def macro_f1(*, reference: Sequence[str], hypothesis: Sequence[str | None], labels: Sequence[str]) -> float:
    """Macro-F1 over ``labels`` (None and out-of-set predictions are errors), equal to scikit-learn's f1_score
    (average="macro", zero_division=0) to the bit: its per-class 2TP / (true + predicted), then the mean. In numpy,
    so that the report does not import scikit-learn (about a second) for it."""
    ref = list(reference)
    hyp = [INVALID if h is None else h for h in hypothesis]
    if len(ref) != len(hyp):
        raise ValueError(f"reference has {len(ref)} items but hypothesis has {len(hyp)}")
    f = np.zeros(len(labels))
    for i, label in enumerate(labels):
        tp = sum(r == label and h == label for r, h in zip(ref, hyp))
        denom = float(ref.count(label) + hyp.count(label))
        f[i] = 2.0 * tp / denom if denom else 0.0
    return float(np.mean(f))


def replicates(
    ref: Sequence[str], hyp: Sequence[str | None], labels: Sequence[str], weights: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Accuracy and macro-F1 of every bootstrap resample (rows of ``weights``, resample_weights) at once.

    Accuracy compares the labels themselves, as the point estimate does: a reference outside ``labels`` answered
    None was counted right by the replicates before (both coded 'outside'), wrong by scikit-learn."""
    return _from_sums(weights @ _columns(ref, hyp, labels), len(labels))


def _columns(ref: Sequence[str], hyp: Sequence[str | None], labels: Sequence[str]) -> np.ndarray:
    """Per item: 1, correct, then each class's TP, FP, FN (0/1): the sums every replicate is made of."""
    r, h = encode(ref, labels), encode(hyp, labels)
    cols = [np.ones(len(r)), np.array([x is not None and x == y for x, y in zip(hyp, ref)], dtype=float)]
    for c in range(len(labels)):
        is_ref, is_hyp = r == c, h == c
        cols += [is_hyp & is_ref, is_hyp & ~is_ref, ~is_hyp & is_ref]
    return np.column_stack(cols).astype(float)


def _from_sums(sums: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Accuracy and macro-F1 per row of _columns' (weighted) sums, as accuracy_rows and macro_f1_rows make them."""
    return sums[:, 1] / sums[:, 0], macro_f1_from(
        [(sums[:, 2 + 3 * c], sums[:, 3 + 3 * c], sums[:, 4 + 3 * c]) for c in range(k)]
    )


def score_classification(
    *,
    reference: Sequence[str],
    hypothesis: Sequence[str | None],
    labels: Sequence[str],
    bootstrap: int = 1000,
    seed: int = 0,
    clusters: Sequence[str] | None = None,
) -> ClassificationScore:
    """Accuracy and macro-F1 over the task's label space, with percentile bootstrap 95% intervals that
    resample items, or whole clusters when ``clusters`` gives each item's source article."""
    if len(reference) != len(hypothesis):
        raise ValueError(f"reference has {len(reference)} items but hypothesis has {len(hypothesis)}")
    if not reference:
        raise ValueError("cannot score an empty set of items")
    ref = list(reference)
    hyp = [INVALID if h is None else h for h in hypothesis]
    acc = sum(r == h for r, h in zip(ref, hyp)) / len(ref)  # scikit-learn's accuracy_score
    f1 = macro_f1(reference=ref, hypothesis=hyp, labels=labels)
    acc_ci = f1_ci = None
    if bootstrap > 0 and units(len(ref), clusters) > 1:
        sums = resampled_sums(_columns(ref, hyp, labels), rounds=bootstrap, seed=seed, clusters=clusters)
        accs, f1s = _from_sums(sums, len(labels))
        acc_ci, f1_ci = percentile_ci(accs), percentile_ci(f1s)
    return ClassificationScore(acc, f1, len(ref), sum(h is None for h in hypothesis), acc_ci, f1_ci)


def majority_baseline(*, train: Sequence[str], test: Sequence[str], labels: Sequence[str]) -> ClassificationScore:
    """Predict the most frequent training label for every test item (ties broken by label order)."""
    counts = Counter(train)
    best = max(labels, key=lambda lab: (counts.get(lab, 0), -list(labels).index(lab)))
    return score_classification(reference=test, hypothesis=[best] * len(test), labels=labels, bootstrap=0)


# ------------------------------------------------------------------------------------------------ yes/no objects
@dataclass(frozen=True)
class YesNoScores:
    """Object-hallucination scores with ``positive`` as the positive class ('yes' by default: the object is
    present). Abstentions and unparsable replies are in n, never a yes or a no: they lower accuracy and recall."""

    n: int
    positive: str
    accuracy: float
    precision: float | None
    recall: float | None
    f1: float | None
    yes_rate: float
    tp: int
    fp: int
    fn: int
    tn: int
    n_answered: int
    accuracy_answered: float | None
    classes: dict[str, int]
    ci: dict[str, CI]

    def as_dict(self) -> dict:
        d = {k: getattr(self, k) for k in self.__dataclass_fields__ if k != "ci"}
        d["ci95"] = {k: (list(v) if v else None) for k, v in self.ci.items()}
        return d


def yesno_scores(
    *, reference: Sequence[str], hypothesis: Sequence[str], positive: str = "yes", bootstrap: int = 1000, seed: int = 0
) -> YesNoScores:
    """Accuracy, precision, recall, F1 (scikit-learn, ``positive`` class), yes-rate, with bootstrap intervals.
    FN counts every positive item not answered ``positive`` (a refusal on a present object is a miss)."""
    from sklearn.metrics import accuracy_score, precision_recall_fscore_support

    if len(reference) != len(hypothesis):
        raise ValueError(f"reference has {len(reference)} items but hypothesis has {len(hypothesis)}")
    if not reference:
        raise ValueError("cannot score an empty set of yes/no items")
    if positive not in ("yes", "no"):
        raise ValueError(f"positive must be 'yes' or 'no', got '{positive}'")
    negative = "no" if positive == "yes" else "yes"
    ref, hyp = np.array(reference, dtype=object), np.array(hypothesis, dtype=object)
    p, r, f, _ = precision_recall_fscore_support(list(ref), list(hyp), labels=[positive], average=None, zero_division=0)
    tp_i = (ref == positive) & (hyp == positive)
    fp_i = (ref == negative) & (hyp == positive)
    fn_i = (ref == positive) & (hyp != positive)
    tp, fp, fn = int(tp_i.sum()), int(fp_i.sum()), int(fn_i.sum())
    tn = int(((ref == negative) & (hyp == negative)).sum())
    answered = np.isin(hyp, ["yes", "no"])
    correct = ref == hyp
    seeds = dict(bootstrap=bootstrap, seed=seed)
    tp_f, fp_f, fn_f = tp_i.astype(float), fp_i.astype(float), fn_i.astype(float)
    ci = {
        "accuracy": ratio_ci(numerator=correct, denominator=np.ones(len(ref)), **seeds),
        "precision": ratio_ci(numerator=tp_f, denominator=(hyp == positive), **seeds),
        "recall": ratio_ci(numerator=tp_f, denominator=(ref == positive), **seeds),
        "f1": ratio_ci(numerator=2 * tp_f, denominator=2 * tp_f + fp_f + fn_f, **seeds),  # F1 = 2TP / (2TP + FP + FN)
        "yes_rate": ratio_ci(numerator=(hyp == "yes"), denominator=np.ones(len(ref)), **seeds),
    }
    return YesNoScores(
        n=len(ref),
        positive=positive,
        accuracy=float(accuracy_score(list(ref), list(hyp))),
        precision=float(p[0]) if tp + fp else None,
        recall=float(r[0]) if tp + fn else None,
        f1=float(f[0]) if tp + fp + fn else None,
        yes_rate=float((hyp == "yes").mean()),
        tp=tp,
        fp=fp,
        fn=fn,
        tn=tn,
        n_answered=int(answered.sum()),
        accuracy_answered=float(correct[answered].mean()) if answered.any() else None,
        classes=dict(sorted(Counter(hypothesis).items())),
        ci=ci,
    )
