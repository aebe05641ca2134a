"""Accuracy, macro-F1 and their bootstrap replicates against scikit-learn, on every resample."""

import numpy as np
import pytest
from sklearn.metrics import accuracy_score, f1_score

from halluscope.metrics.bootstrap import resample_weights
from halluscope.metrics.classification import INVALID, macro_f1, replicates, score_classification

LABELS = ["fabrication", "contradiction", "context_inconsistency"]


def _expand(values, weights_row):
    return [v for v, w in zip(values, weights_row) for _ in range(int(w))]


@pytest.mark.parametrize("clusters", [None, [f"art{i // 3}" for i in range(40)]])
def test_replicates_equal_sklearn_on_every_resample(clusters):
    rng = np.random.default_rng(0)
    ref = list(rng.choice(LABELS, 40))
    hyp = [None if x == INVALID else x for x in rng.choice(LABELS + [INVALID], 40)]
    w = resample_weights(40, rounds=50, seed=1, clusters=clusters)
    accs, f1s = replicates(ref, hyp, LABELS, w)
    for row, a, f in zip(w, accs, f1s):
        r = _expand(ref, row)
        h = _expand([INVALID if x is None else x for x in hyp], row)
        assert a == pytest.approx(accuracy_score(r, h), abs=1e-12)
        assert f == pytest.approx(f1_score(r, h, labels=LABELS, average="macro", zero_division=0), abs=1e-12)


def test_score_classification_counts_invalid_as_errors():
    # 4 items, one prediction missing: accuracy 2/4; class a: tp 1, fn 2 (the None and the b), fp 0
    # -> F1 2/4; class b: tp 1, fp 1, fn 0 -> F1 2/3; macro (1/2 + 2/3) / 2 = 7/12
    s = score_classification(reference=["a", "a", "b", "a"], hypothesis=["a", None, "b", "b"], labels=["a", "b"])
    assert s.accuracy == 0.5 and abs(s.macro_f1 - 7 / 12) < 1e-12 and s.invalid == 1
    assert s.macro_f1_ci[0] <= s.macro_f1 <= s.macro_f1_ci[1]
    assert macro_f1(reference=["a", "a", "b", "a"], hypothesis=["a", None, "b", "b"], labels=["a", "b"]) == s.macro_f1


def test_one_article_has_no_interval_and_clusters_must_align():
    ref, hyp = ["a", "b", "a", "b"], ["a", "a", "a", "b"]
    s = score_classification(reference=ref, hypothesis=hyp, labels=["a", "b"], clusters=["x"] * 4)
    assert s.accuracy == 0.75 and s.accuracy_ci is None  # one cluster: nothing to resample
    with pytest.raises(ValueError, match="cluster"):
        score_classification(reference=ref, hypothesis=hyp, labels=["a", "b"], clusters=["x", "y"])


def test_clustered_interval_is_wider_on_articles_scored_all_right_or_all_wrong():
    # 30 articles of 4 items each (an original and three rewrites); the detector gets an article's items all
    # right or all wrong, so the items are not independent: resampling items understates the uncertainty
    rng = np.random.default_rng(3)
    art_right = rng.random(30) < 0.6
    ref, hyp, arts = [], [], []
    for i, ok in enumerate(art_right):
        for gold in ("original", "hallucinated", "hallucinated", "hallucinated"):
            ref.append(gold)
            hyp.append(gold if ok else ("hallucinated" if gold == "original" else "original"))
            arts.append(f"a{i}")
    labels = ["original", "hallucinated"]
    items = score_classification(reference=ref, hypothesis=hyp, labels=labels, seed=0)
    clustered = score_classification(reference=ref, hypothesis=hyp, labels=labels, seed=0, clusters=arts)
    assert items.accuracy == clustered.accuracy and items.macro_f1 == clustered.macro_f1

    def width(ci):
        return ci[1] - ci[0]

    assert width(clustered.accuracy_ci) > 1.5 * width(items.accuracy_ci)
    assert width(clustered.macro_f1_ci) > 1.5 * width(items.macro_f1_ci)


def test_interval_brackets_accuracy_when_a_reference_is_outside_the_label_set():
    # 'other' is no label of the task: answering it None is wrong for accuracy (scikit-learn) and was right in
    # every bootstrap replicate (both coded 'outside the label set'), so the interval sat above the estimate
    ref, hyp = ["a", "b", "other", "other"], ["a", "b", None, None]
    s = score_classification(reference=ref, hypothesis=hyp, labels=["a", "b"], bootstrap=300)
    assert s.accuracy == 0.5
    accs, _ = replicates(ref, hyp, ["a", "b"], resample_weights(4, rounds=300, seed=0))
    w = resample_weights(4, rounds=300, seed=0)
    assert (accs == (w[:, 0] + w[:, 1]) / 4).all()
    assert s.accuracy_ci[0] <= s.accuracy <= s.accuracy_ci[1]


@pytest.mark.parametrize("k", [2, 3, 9])
def test_point_estimates_equal_sklearn_to_the_bit(k):
    # accuracy and macro-F1 are numpy here (the report does not import scikit-learn): the same floats
    rng = np.random.default_rng(k)
    labels = [f"c{i}" for i in range(k)]
    for _ in range(100):
        n = int(rng.integers(1, 60))
        ref = list(rng.choice(labels + ["outside"], n))
        hyp = [None if x == "none" else str(x) for x in rng.choice(labels + ["none", "other"], n)]
        got = score_classification(reference=ref, hypothesis=hyp, labels=labels, bootstrap=0)
        h = [INVALID if x is None else x for x in hyp]
        assert got.accuracy == accuracy_score(ref, h)
        assert got.macro_f1 == f1_score(ref, h, labels=labels, average="macro", zero_division=0)
