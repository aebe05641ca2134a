"""Paired tests and intervals on examples small enough to compute by hand."""

import numpy as np
import pytest
from sklearn.metrics import f1_score

from halluscope.metrics.classification import macro_f1, majority_baseline, score_classification
from halluscope.metrics.paired import mcnemar, paired_randomization

BIN = ("original", "hallucinated")
O, H = BIN


def test_mcnemar_exact_on_discordant_pairs():
    # A right and B wrong on 3 items, B right and A wrong on 0: p = 2 * 0.5**3 = 0.25
    ref = [H, H, H, O, O, H]
    a = [H, H, H, O, O, O]
    b = [O, O, O, O, O, O]
    r = mcnemar(reference=ref, hypothesis_a=a, hypothesis_b=b)
    assert (r.n, r.a_correct, r.b_correct, r.a_only, r.b_only) == (6, 5, 2, 3, 0)
    assert r.p_value == pytest.approx(0.25)
    assert r.accuracy_difference == pytest.approx(0.5)


def test_mcnemar_balanced_discordance_and_no_discordance():
    # 2 vs 1 discordant: p = P(X<=1)+P(X>=2) for Bin(3, .5) = 1.0
    r = mcnemar(reference=[H, H, O], hypothesis_a=[H, H, H], hypothesis_b=[O, O, O])
    assert (r.a_only, r.b_only) == (2, 1) and r.p_value == pytest.approx(1.0)
    # 5 vs 0: p = 2 / 32
    r = mcnemar(reference=[H] * 5, hypothesis_a=[H] * 5, hypothesis_b=[O] * 5)
    assert r.p_value == pytest.approx(2 / 32)
    assert mcnemar(reference=[H, O], hypothesis_a=[H, O], hypothesis_b=[H, O]).p_value == 1.0


def test_invalid_predictions_count_as_errors_in_paired_tests():
    r = mcnemar(reference=[H, H], hypothesis_a=[H, H], hypothesis_b=[None, H])
    assert (r.a_only, r.b_only) == (1, 0)


def test_exact_randomization_matches_the_enumeration_by_hand():
    # accuracy: A and B differ on 3 items, A right on all three -> observed 3/6; of the 8 swap patterns only
    # all-kept and all-swapped reach |d| = 3/6, so p = 2/8
    ref = [H, H, H, O, O, H]
    a = [H, H, H, O, O, O]
    b = [O, O, O, O, O, O]
    r = paired_randomization(reference=ref, hypothesis_a=a, hypothesis_b=b, labels=BIN, metric="accuracy", bootstrap=0)
    assert r.exact and r.rounds == 8
    assert r.difference == pytest.approx(0.5) and r.p_value == pytest.approx(0.25)


def test_exact_randomization_on_macro_f1_by_hand():
    # ref H H O O ; A = H H O O (F1 1.0); B = O H O O:
    #   B: H: tp1 fp0 fn1 -> 2/3 ; O: tp2 fp1 fn0 -> 4/5 ; macro 11/15
    # one differing item: patterns keep (d = 1 - 11/15) or swap (d = -(1 - 11/15)): both reach |d| -> p = 1
    ref, a, b = [H, H, O, O], [H, H, O, O], [O, H, O, O]
    r = paired_randomization(reference=ref, hypothesis_a=a, hypothesis_b=b, labels=BIN, bootstrap=0)
    assert r.a == pytest.approx(1.0) and r.b == pytest.approx(11 / 15)
    assert r.difference == pytest.approx(4 / 15) and r.p_value == pytest.approx(1.0) and r.rounds == 2


def test_identical_systems_have_p_one_and_zero_interval():
    ref = [H, O, H, O]
    r = paired_randomization(reference=ref, hypothesis_a=ref, hypothesis_b=ref, labels=BIN, bootstrap=50)
    assert r.difference == 0 and r.p_value == 1.0 and r.difference_ci == (0.0, 0.0)


def test_sampled_randomization_detects_a_large_difference_and_is_seeded():
    rng = np.random.default_rng(0)
    ref = list(rng.choice(BIN, 200))
    a = list(ref)
    b = [x if rng.random() < 0.5 else (O if x == H else H) for x in ref]
    r1 = paired_randomization(reference=ref, hypothesis_a=a, hypothesis_b=b, labels=BIN, rounds=2000, bootstrap=200)
    r2 = paired_randomization(reference=ref, hypothesis_a=a, hypothesis_b=b, labels=BIN, rounds=2000, bootstrap=200)
    assert not r1.exact and r1.rounds == 2000
    assert r1.p_value == pytest.approx(1 / 2001)  # no random swap pattern reaches the observed gap
    assert r1 == r2
    lo, hi = r1.difference_ci
    assert 0 < lo <= r1.difference <= hi


def test_fast_macro_f1_equals_sklearn_with_invalid_and_absent_labels():
    rng = np.random.default_rng(1)
    labels = ("mild", "moderate", "severe")
    for _ in range(20):
        ref = list(rng.choice(labels[:2], 15))  # 'severe' never in the reference
        hyp = [None if rng.random() < 0.2 else str(x) for x in rng.choice(labels, 15)]
        expected = f1_score(
            ref, ["__invalid__" if h is None else h for h in hyp], labels=list(labels), average="macro", zero_division=0
        )
        assert macro_f1(reference=ref, hypothesis=hyp, labels=labels) == pytest.approx(expected)


def test_bad_inputs_fail_with_the_reason():
    with pytest.raises(ValueError, match="same items"):
        mcnemar(reference=[H], hypothesis_a=[H, H], hypothesis_b=[H])
    with pytest.raises(ValueError, match="not in the label set"):
        paired_randomization(reference=["x"], hypothesis_a=["x"], hypothesis_b=["x"], labels=BIN)
    with pytest.raises(ValueError, match="unknown metric"):
        paired_randomization(reference=[H], hypothesis_a=[H], hypothesis_b=[H], labels=BIN, metric="auc")


def test_reexported_baseline_and_interval():
    base = majority_baseline(train=[O, O, H], test=[O, H, H, H], labels=BIN)
    assert base.accuracy == pytest.approx(0.25)
    assert base.macro_f1 == pytest.approx((0.4 + 0.0) / 2)  # O: tp1 fp3 fn0 -> 2/5
    s = score_classification(reference=[O, H, H, O], hypothesis=[O, H, O, O], labels=BIN, bootstrap=200)
    assert s.accuracy == 0.75 and s.accuracy_ci[0] <= 0.75 <= s.accuracy_ci[1]


def test_the_exact_half_binomial_equals_scipys_binomtest():
    """McNemar's p without SciPy: twice the lighter tail of Binomial(n, 1/2), summed in integers."""
    import random

    from scipy.stats import binomtest

    from halluscope.metrics.paired import binom_half_two_sided

    rng = random.Random(0)
    cases = [(k, n) for n in range(1, 60) for k in range(n + 1)]
    cases += [(rng.randint(0, n), n) for n in (500, 2500, 12_000, 20_000, 30_000) for _ in range(4)]
    for k, n in cases:
        assert binom_half_two_sided(k, n) == pytest.approx(binomtest(k, n, 0.5).pvalue, rel=1e-9, abs=1e-300)
