"""Metrics on hand-computed examples (App. B.4: kappa = (p_o - p_e) / (1 - p_e))."""

import pytest

from halluscope.core.errors import HalluscopeError
from halluscope.metrics.agreement import binary_agreement, human_human_agreement, judge_human_agreement
from halluscope.metrics.rates import hallucination_rates, rate, stance_rates

G, H = "grounded", "hallucinated"


def test_kappa_and_agr_by_hand():
    # p_o = 3/4; evaluator 1: pG = pH = 1/2; evaluator 2: pG = 1/4, pH = 3/4; p_e = 1/8 + 3/8 = 1/2; kappa = 1/2
    ag = binary_agreement(a=[G, G, H, H], b=[G, H, H, H])
    assert (ag.n, ag.n_agree, ag.agreement_rate, ag.kappa) == (4, 3, 0.75, pytest.approx(0.5))
    # p_o = 0.6, p_e = 0.6*0.4 + 0.4*0.6 = 0.48 -> kappa = 0.12 / 0.52
    ag = binary_agreement(a=[G, G, G, H, H], b=[G, H, H, G, H])
    assert ag.kappa == pytest.approx((0.4 - 0.48) / 0.52) and ag.agreement_rate == pytest.approx(0.4)
    assert binary_agreement(a=[H, H], b=[H, H]).kappa is None  # p_e = 1: undefined, not 0 or 1
    assert binary_agreement(a=[], b=[]).agreement_rate is None
    with pytest.raises(HalluscopeError, match="paired"):
        binary_agreement(a=[G], b=[])
    with pytest.raises(HalluscopeError, match="labels"):
        binary_agreement(a=["yes"], b=[G])


def test_rates_with_wilson_ci_and_unscored():
    r = rate(k=3, n=10)  # Wilson 95%: [0.1078, 0.6032]
    assert (
        r.rate == 0.3 and r.ci_low == pytest.approx(0.1078, abs=1e-4) and r.ci_high == pytest.approx(0.6032, abs=1e-4)
    )
    assert rate(k=0, n=0).rate is None
    rows = [{"model": "m", "domain": "music", "category": "context", "verdict": v} for v in (H, H, G, None)]
    rows += [{"model": "m", "domain": "speech", "category": "context", "verdict": G}]
    out = hallucination_rates(rows, by=("model", "domain"))
    assert [(o["domain"], o["n"], o["hallucinated"], o["unscored"]) for o in out] == [
        ("music", 3, 2, 1),
        ("speech", 1, 0, 0),
    ]
    assert out[0]["rate"] == pytest.approx(2 / 3)
    # a verdict outside the label space is an error, never silently counted as unscored
    with pytest.raises(HalluscopeError, match="verdicts must be one of"):
        hallucination_rates(
            rows + [{"model": "m", "domain": "music", "category": "context", "verdict": "yes"}], by=("model",)
        )


def test_wilson_interval_is_scipys_to_the_last_bit():
    # the 95% interval is computed without SciPy (a report imports it for nothing else): the same floats as
    # binomtest(k, n).proportion_ci(method="wilson") for every k of small n and a spread of large ones; other levels
    # go to SciPy itself
    from scipy.stats import binomtest

    cases = [(k, n) for n in range(1, 41) for k in range(n + 1)]
    cases += [(k, n) for n in (97, 1000, 12345, 10**6) for k in (0, 1, 2, n // 3, n // 2, n - 1, n)]
    for k, n in cases:
        ci = binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")
        assert (rate(k=k, n=n).ci_low, rate(k=k, n=n).ci_high) == (float(ci.low), float(ci.high)), (k, n)
    ci = binomtest(7, 20).proportion_ci(confidence_level=0.9, method="wilson")
    assert (rate(k=7, n=20, confidence=0.9).ci_low, rate(k=7, n=20, confidence=0.9).ci_high) == (ci.low, ci.high)


def test_stance_rates():
    rows = [{"model": "m", "stance": s} for s in ("abstains", "abstains", "asserts", "endorses_false_premise", None)]
    (o,) = stance_rates(rows, by=("model",))
    assert (o["n"], o["unscored"], o["abstains"], o["asserts"], o["endorses_false_premise"]) == (4, 1, 0.5, 0.25, 0.25)


def test_judge_human_and_human_human():
    judge = {"a": H, "b": G, "c": H, "d": G}
    human = {("a", "x"): H, ("b", "x"): G, ("c", "x"): G, ("d", "x"): G, ("a", "y"): H, ("b", "y"): H}
    jh = {r["pair"]: r for r in judge_human_agreement(judge, human)}
    assert jh["judge vs x"]["n"] == 4 and jh["judge vs x"]["agreement_rate"] == 0.75
    assert jh["judge vs humans (pooled)"]["n"] == 6 and jh["judge vs humans (pooled)"]["n_agree"] == 4
    hh = human_human_agreement(human)
    assert hh[0]["pair"] == "x vs y" and hh[0]["n"] == 2 and hh[0]["agreement_rate"] == 0.5


def test_judge_human_agreement_leaves_out_the_judges_examples():
    judge = {"a": H, "b": G, "c": H, "d": G}
    human = {("a", "x"): H, ("b", "x"): G, ("c", "x"): G, ("d", "x"): G, ("a", "y"): H, ("b", "y"): H}
    jh = {r["pair"]: r for r in judge_human_agreement(judge, human, exclude={"a", "b"})}
    # x keeps c (disagree) and d (agree); y labelled only examples: a row with n = 0 that says so
    assert (jh["judge vs x"]["n"], jh["judge vs x"]["n_agree"], jh["judge vs x"]["examples_left_out"]) == (2, 1, 2)
    assert (jh["judge vs y"]["n"], jh["judge vs y"]["agreement_rate"], jh["judge vs y"]["examples_left_out"]) == (
        0,
        None,
        2,
    )
    assert (jh["judge vs humans (pooled)"]["n"], jh["judge vs humans (pooled)"]["examples_left_out"]) == (2, 4)
    assert all(r["examples_left_out"] == 0 for r in judge_human_agreement(judge, human))
