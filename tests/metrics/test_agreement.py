"""Rating agreement against hand-computed values (seed 000, Table 9 definitions)."""

import math
import warnings

import pytest

from halluscope.core.errors import HalluscopeError
from halluscope.core.records import Judgement
from halluscope.metrics.agreement import cohen_kappa, rating_agreement, rating_agreement_rows


def test_near_perfect_agreement_by_hand():
    # quadratic weights (i-j)^2; observed: one (5,4) pair -> sum w*O = 1.
    # expected: rater a uses each label once, b = {1,2,3,4,4}; sum_ij (i-j)^2 a_i b_j / n
    #   = (30*1 + 15*1 + 10*1 + 15*2 + 10*0) / 5 = 17   ->  kappa = 1 - 1/17 = 16/17
    # Spearman: ranks b = 1,2,3,4.5,4.5 -> cov 9.5, var 10 and 9.5 -> rho = 9.5/sqrt(95) = sqrt(0.95)
    ag = rating_agreement(a=[1, 2, 3, 4, 5], b=[1, 2, 3, 4, 4])
    assert ag.n == 5
    assert ag.kappa_quadratic == pytest.approx(16 / 17)
    assert ag.spearman_rho == pytest.approx(math.sqrt(0.95))
    assert ag.within_one == 1.0 and ag.exact == 0.8


def test_opposite_raters_by_hand():
    # observed sum w*O = 4 * 16 = 64; marginals {1:2, 5:2} for both -> expected sum = 2*16*2*2/4 = 32 -> kappa = -1
    ag = rating_agreement(a=[1, 1, 5, 5], b=[5, 5, 1, 1])
    assert ag.kappa_quadratic == pytest.approx(-1.0) and ag.spearman_rho == pytest.approx(-1.0)
    assert ag.within_one == 0.0


def test_mixed_example_by_hand():
    # a = 2,3,4,4 ; b = 3,3,4,5: observed w: (2,3)=1, (4,5)=1 -> 2.
    # expected: a marginals {2:1,3:1,4:2}, b {3:2,4:1,5:1}; sum_ij (i-j)^2 a_i b_j / 4
    #   a=2: 2*1 + 1*4 + 1*9 = 15 ; a=3: 0 + 1*1 + 1*4 = 5 (x1) ; a=4: 2*1 + 0 + 1*1 = 3 (x2 = 6) -> 26/4 = 6.5
    #   kappa = 1 - 2/6.5 = 9/13
    ag = rating_agreement(a=[2, 3, 4, 4], b=[3, 3, 4, 5])
    assert ag.kappa_quadratic == pytest.approx(9 / 13)
    assert ag.within_one == 1.0 and ag.exact == 0.5


def test_undefined_statistics_are_none():
    ag = rating_agreement(a=[3, 3, 3], b=[3, 3, 3])  # no variance: kappa 0/0, rho undefined
    assert ag.kappa_quadratic is None and ag.spearman_rho is None and ag.within_one == 1.0
    assert rating_agreement(a=[], b=[]).n == 0
    with pytest.raises(HalluscopeError, match="paired"):
        rating_agreement(a=[1], b=[1, 2])
    with pytest.raises(HalluscopeError, match="1..5"):
        rating_agreement(a=[0], b=[1])


def test_rows_pair_judges_over_items_both_scored():
    def j(judge, item, status="ok", **scores):
        return Judgement(item_id=item, judge=judge, status=status, scores=scores)

    A = {
        "x": j("A", "x", FA=1, Fl=5),
        "y": j("A", "y", FA=2, Fl=4),
        "z": j("A", "z", FA=5, Fl=5),
        "w": j("A", "w", "unscored"),
    }
    B = {"x": j("B", "x", FA=1, Fl=4), "y": j("B", "y", FA=3, Fl=4), "w": j("B", "w", FA=5, Fl=5)}
    C = {"x": j("C", "x", FA=2, Fl=4)}
    judged = {"A": A, "B": B, "C": C}
    rows = rating_agreement_rows(
        {r: {k: v.scores for k, v in js.items() if v.status == "ok"} for r, js in judged.items()}, ["Fl", "FA"]
    )
    ab = {r["dimension"]: r for r in rows if (r["judge_a"], r["judge_b"]) == ("A", "B")}
    assert set(ab) == {"Fl", "FA"} and ab["FA"]["n"] == 2  # z: B missing; w: A unscored
    assert ab["FA"]["kappa_quadratic"] == pytest.approx(rating_agreement(a=[1, 2], b=[1, 3]).kappa_quadratic)
    assert [r["dimension"] for r in rows if r["judge_a"] == "A" and r["judge_b"] == "B"] == ["Fl", "FA"]
    assert {(r["judge_a"], r["judge_b"]) for r in rows} == {("A", "B"), ("A", "C"), ("B", "C")}


def test_cohen_kappa_by_hand_and_undefined_as_none():
    # p_o = 3/4; marginals a {x: 2, y: 2}, b {x: 1, y: 3}: p_e = (2*1 + 2*3) / 16 = 1/2 -> kappa = (3/4 - 1/2) / (1/2)
    assert cohen_kappa(["x", "x", "y", "y"], ["x", "y", "y", "y"], labels=["x", "y"]) == pytest.approx(0.5)
    assert cohen_kappa(["x", "x"], ["x", "x"], labels=["x", "y"]) is None  # p_e = 1
    assert cohen_kappa([], [], labels=["x", "y"]) is None
    with pytest.raises(HalluscopeError, match="paired"):
        cohen_kappa(["x"], [], labels=["x", "y"])


@pytest.mark.parametrize("weights", [None, "linear", "quadratic"])
def test_cohen_kappa_equals_scikit_learn_on_random_ratings(weights):
    # the numpy kappa (the report does not import scikit-learn) against cohen_kappa_score, exactly
    import random

    from sklearn.metrics import cohen_kappa_score

    rng = random.Random(7)
    for case in range(200):
        k = rng.randint(2, 6)
        labels = list(range(1, k + 1))
        n = rng.randint(1, 40)
        a = [rng.choice(labels) for _ in range(n)]
        b = [rng.choice(labels) if rng.random() < 0.6 else x for x in a]
        if case % 5 == 0:  # a value outside the labels: that pair is left out by both
            b[0] = k + 1
        ours = cohen_kappa(a, b, labels=labels, weights=weights)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            theirs = cohen_kappa_score(a, b, labels=labels, weights=weights)
        assert ours == (None if math.isnan(theirs) else theirs), (a, b, labels)
