"""Metrics on hand-computed examples (the arithmetic is in the comments)."""

from __future__ import annotations

import pytest

from halluscope.closedform.compat import halluaudio_official_scores, kuan_official_scores
from halluscope.metrics.bootstrap import ratio_ci
from halluscope.metrics.classification import yesno_scores
from halluscope.metrics.rates import aha_scores, count_probe_scores, halluaudio_scores


def test_halluaudio_scores_by_hand() -> None:
    s = halluaudio_scores(
        reference=["yes", "yes", "no", "no", "3", "2", "none", "none"],
        hypothesis=["yes", "no", "yes", "refusal", "3", "unknown", "refusal", "unrelated"],
        kind=["binary", "binary", "binary", "binary", "count", "count", "unanswerable", "unanswerable"],
        bootstrap=0,
    )
    # P_d = the 6 answerable prompts; correct: item 1 (yes=yes) and item 5 (3=3) -> 2/6
    assert (s.n, s.n_answerable, s.n_correct) == (8, 6, 2)
    assert s.accuracy == pytest.approx(2 / 6)
    # P_binary = items 1-4; answered Yes: items 1 and 3 -> 2/4 (the refusal is in the denominator, not a 'no')
    assert s.yes_p_ratio == pytest.approx(0.5)
    # binary errors: items 2, 3, 4; affirmative among them: item 3 -> 1/3
    assert (s.n_binary_wrong, s.n_binary_wrong_yes) == (3, 1)
    assert s.unrelated_ratio == pytest.approx(1 / 3)
    # correct binary: item 1 -> 1/4
    assert s.conditional_accuracy == pytest.approx(0.25)
    # abstentions among answerable prompts: item 4 (refusal), item 6 (unknown) -> 2/6
    assert s.false_refusal_rate == pytest.approx(2 / 6)
    # invalid audio: item 7 abstains (right), item 8 answers something else (wrong) -> 1/2
    assert s.unanswerable_abstain_rate == pytest.approx(0.5)
    assert s.classes["refusal"] == 2 and s.ci["accuracy"] is None


def test_halluaudio_scores_empty_binary_set_is_none_not_zero() -> None:
    s = halluaudio_scores(reference=["3"], hypothesis=["3"], kind=["count"], bootstrap=0)
    assert s.yes_p_ratio is None and s.unrelated_ratio is None and s.conditional_accuracy is None
    assert s.accuracy == 1.0


def test_halluaudio_unrelated_ratio_undefined_without_errors() -> None:
    s = halluaudio_scores(reference=["yes", "no"], hypothesis=["yes", "no"], kind=["binary", "binary"], bootstrap=0)
    # no binary error: 0/0 is undefined, reported as None
    assert s.unrelated_ratio is None and s.yes_p_ratio == 0.5


def test_count_probe_scores_by_hand() -> None:
    s = count_probe_scores(reference=["1", "3", "2", "1"], hypothesis=["1", "3", "unrelated", "refusal"])
    # Yes = a count above one: only '3' -> 1/4; unrelated: 1/4; abstain: 1/4
    assert (s.n_yes, s.n_unrelated, s.n_abstain) == (1, 1, 1)
    assert s.yes_pred_ratio == 0.25 and s.unrelated_ratio == 0.25 and s.abstain_ratio == 0.25
    # answered with a number: 2, both right -> 2/2
    assert s.conditional_accuracy == 1.0


def test_halluaudio_official_scores_by_hand() -> None:
    s = halluaudio_official_scores(
        correct=[True, False, True, True],
        refusal=[False, False, True, False],
        subset=["single_music_count", "single_music_count", "x", "x"],
        probe=["No", "Unrelated", None, None],
    )
    # all rows are the denominator: 3/4 correct, 1/4 refusals
    assert s.accuracy == 0.75 and s.refusal_rate == 0.25
    # probe: 2 rows, 0 Yes, 1 Unrelated; correct 1 of the 2 - 1 related -> 1.0
    assert s.probes["single_music_count"] == {
        "n": 2,
        "yes_pred_ratio": 0.0,
        "unrelated_ratio": 0.5,
        "conditional_accuracy": 1.0,
    }


AHA = dict(
    reference=["yes", "no", "no", "asr", "yes", "no", "no", "asr"],
    hypothesis=["yes", "unknown", "no", "asr", "no", "no", "yes", "asr"],
    correct=[True, False, True, True, False, True, False, False],
    task=["existence", "existence", "existence", "asr"] * 2,
    audio=["60_0", "60_0", "60_1", "220_0"] * 2,
    run=["A"] * 4 + ["B"] * 4,
)


def test_aha_scores_by_hand() -> None:
    s = aha_scores(**AHA, bootstrap=0)
    ex = s.tasks["existence"]
    # accuracy: run A 2/3, run B 1/3 -> mean 0.5
    assert ex.accuracy == pytest.approx(0.5)
    # FNR: A 0/1, B 1/1 -> 0.5; FPR: A 0/2 (the 'unknown' is not a false positive), B 1/2 -> 0.25
    assert ex.fnr == pytest.approx(0.5) and ex.fpr == pytest.approx(0.25)
    # bias per run: A 0 - 0 = 0, B 1 - 0.5 = 0.5 -> mean 0.25
    assert ex.bias == pytest.approx(0.25)
    # consistency: A: audio 60_0 mixed, 60_1 all right -> 1/2 true, 0 wrong; B: 60_0 mixed, 60_1 all wrong -> 0, 1/2
    assert ex.consistency_true == pytest.approx(0.25) and ex.consistency_wrong == pytest.approx(0.25)
    asr = s.tasks["asr"]
    assert asr.accuracy == 0.5 and asr.bias is None
    # overall accuracy: pooled per run (A 3/4, B 1/4) then averaged -> 0.5; bias: macro over tasks with a bias -> 0.25
    assert s.accuracy == pytest.approx(0.5) and s.bias == pytest.approx(0.25)
    # consistency macro over tasks: (0.25 + 0.5) / 2
    assert s.consistency_true == pytest.approx(0.375) and s.consistency_wrong == pytest.approx(0.375)


def test_aha_undefined_rates() -> None:
    args = dict(reference=["no"], hypothesis=["no"], correct=[True], task=["t"], audio=["1_1"], run=["A"], bootstrap=0)
    # no gold 'yes': FNR undefined -> None in strict, 0 in the official convention (bias = 0 - 0)
    assert aha_scores(**args).tasks["t"].bias is None
    assert aha_scores(**args, undefined_as_zero=True).tasks["t"].bias == 0.0


def test_yesno_scores_by_hand() -> None:
    s = yesno_scores(
        reference=["yes", "yes", "yes", "no", "no", "no"],
        hypothesis=["yes", "no", "refusal", "yes", "no", "no"],
        bootstrap=0,
    )
    # positive 'yes': TP 1, FP 1, FN 2 (the 'no' and the refusal), TN 2
    assert (s.tp, s.fp, s.fn, s.tn) == (1, 1, 2, 2)
    assert s.precision == pytest.approx(1 / 2) and s.recall == pytest.approx(1 / 3)
    # F1 = 2TP / (2TP + FP + FN) = 2 / 5
    assert s.f1 == pytest.approx(0.4)
    assert s.accuracy == pytest.approx(3 / 6) and s.yes_rate == pytest.approx(2 / 6)
    # answered (yes/no) 5, right 3 -> 3/5
    assert s.n_answered == 5 and s.accuracy_answered == pytest.approx(3 / 5)
    neg = yesno_scores(
        reference=["yes", "yes", "yes", "no", "no", "no"],
        hypothesis=["yes", "no", "refusal", "yes", "no", "no"],
        positive="no",
        bootstrap=0,
    )
    # positive 'no': TP 2 (items 5, 6), FP 1 (item 2), FN 1 (item 4) -> P 2/3, R 2/3
    assert neg.precision == pytest.approx(2 / 3) and neg.recall == pytest.approx(2 / 3)


def test_kuan_official_scores_by_hand() -> None:
    s = kuan_official_scores(
        reference=["yes", "yes", "yes", "no", "no", "no"], parsed=["yes", "no", "", "yes", "no", "no"]
    )
    # positive class 'no'. right: items 1, 5, 6 -> 3/6. said 'no' or nothing: 4; right 'no': 2 -> P = 2/4
    assert s.accuracy == 0.5 and s.precision == 0.5
    # gold 'no': 3 -> R = 2/3; F1 = 2 * 0.5 * 0.6667 / 1.1667 = 0.5714
    assert s.recall == pytest.approx(2 / 3) and s.f1 == pytest.approx(4 / 7)
    # published: percent, 2 decimals, F1 from the rounded P and R: 2*50*66.67/116.67 = 57.14
    assert s.published == {"accuracy": 50.0, "precision": 50.0, "recall": 66.67, "f1": 57.14, "yes_rate": 33.33}


def test_ratio_ci_is_seeded_and_brackets_the_estimate() -> None:
    num = [1, 0, 1, 1, 0, 1, 1, 0, 1, 1]
    a = ratio_ci(numerator=num, denominator=[1] * 10, bootstrap=500, seed=3)
    b = ratio_ci(numerator=num, denominator=[1] * 10, bootstrap=500, seed=3)
    assert a == b and a[0] <= 0.7 <= a[1] and a[0] < a[1]
    assert ratio_ci(numerator=[1, 1], denominator=[1, 1], bootstrap=200) == (1.0, 1.0)
    assert ratio_ci(numerator=num, denominator=[1] * 10, bootstrap=0) is None
    clustered = ratio_ci(numerator=num, denominator=[1] * 10, clusters=list("aabbccddee"), bootstrap=500, seed=3)
    assert clustered[0] <= 0.7 <= clustered[1]


def test_length_mismatch_is_an_error() -> None:
    with pytest.raises(ValueError, match="differ in length"):
        halluaudio_scores(reference=["yes"], hypothesis=[], kind=["binary"])
    with pytest.raises(ValueError, match="empty"):
        yesno_scores(reference=[], hypothesis=[])
