"""Both modes on small files: the numbers, and the items strict and compatible scoring disagree on, with reasons."""

from __future__ import annotations

from pathlib import Path

import pytest

from halluscope.closedform.loaders import load_aha, load_halluaudio, load_yesno
from halluscope.closedform.score import score_aha, score_halluaudio, score_yesno


def test_halluaudio_strict_and_compat(halluaudio_file: Path) -> None:
    r = score_halluaudio(load_halluaudio([halluaudio_file]), bootstrap=0)
    sound = r.strict["sound"]
    # 4 binary: right = s1 only; 'I don't know' is unknown, 'eyes' is unrelated, s4 says yes on a no -> 1/4
    assert sound["accuracy"] == 0.25 and sound["yes_p_ratio"] == 0.5
    # errors: s2, s3, s4; affirmative: s4 -> 1/3; abstain: s2 -> FRR 1/4
    assert sound["unrelated_ratio"] == pytest.approx(1 / 3) and sound["false_refusal_rate"] == 0.25
    speech = r.strict["speech"]
    # answerable speech: word count (right), comparison (right) -> 2/2; invalid audio: p4 states absence (right),
    # p2 answers 'male' (wrong) -> 1/2
    assert speech["accuracy"] == 1.0 and speech["unanswerable_abstain_rate"] == 0.5
    # official: every row counts; sound: s1 yes, s2 'know' has 'no', s3 'eyes' has 'yes', s4 wrong -> 3/4
    assert r.compat["sound"]["accuracy"] == 0.75
    # official speech: word count right, 'sorry' credits p2, comparison names both clips (wrong), p4 no keyword -> 2/4
    assert r.compat["speech"]["accuracy"] == 0.5
    assert r.compat["music"]["count_probes"]["single_music_count"]["yes_pred_ratio"] == 0.0  # 'none' read as 1
    cmp_ = r.comparison()
    diff = {row["id"].split(":")[-1]: row["reason"] for row in cmp_["rows"]}
    assert diff == {
        "2": "abstention read as an answer by the official rules",
        "3": "substring inside another word",
        "6": "invalid audio: official keyword list vs abstention or stated absence",
        "7": "comparison names both clips: the official rule never credits it",
        "8": "invalid audio: official keyword list vs abstention or stated absence",
        "9": "substring inside another word",
    }
    assert cmp_["n_differ"] == 6 and cmp_["n_scored_in_both"] == 11
    assert r.as_dict()["problems"]["count"] == 1  # the broken JSON line


def test_halluaudio_mode_switches_headline(halluaudio_file: Path) -> None:
    loaded = load_halluaudio([halluaudio_file])
    strict = score_halluaudio(loaded, bootstrap=0)
    compat = score_halluaudio(loaded, mode="compat", bootstrap=0)
    assert strict.as_dict()["metrics"] == strict.strict and compat.as_dict()["metrics"] == compat.compat
    assert compat.as_dict()["other_mode"]["metrics"] == strict.strict


def test_aha_strict_and_compat(aha_files: list[Path]) -> None:
    r = score_aha(load_aha(aha_files), bootstrap=0)
    ex = r.strict["existence"]
    # run 0: yes ok, 'not sure' unknown (wrong), 'no car' ok -> 2/3; run 1: 1/3 -> 0.5
    assert ex["accuracy"] == pytest.approx(0.5) and ex["bias"] == pytest.approx(0.25)
    # official: the judge's 'Unknown' normalises to 'no' (right) -> run 0 3/3, run 1 1/3 -> 2/3
    assert r.compat["existence"]["accuracy"] == pytest.approx(2 / 3)
    # strict ASR (punctuation removed): run 0 WER 0 (right), run 1 'word' (1 of 5 wrong, 0.2) -> 0.5;
    # official raw WER: 'world,' != 'world' -> both wrong
    assert r.strict["asr"]["accuracy"] == 0.5 and r.compat["asr"]["accuracy"] == 0.0
    # the two 40_10_3 items are skipped by the official scorer only
    assert "inferred sound" in r.strict and "inferred sound" not in r.compat
    cmp_ = r.comparison()
    assert cmp_["n_skipped_by_official"] == 2 and cmp_["n_differ"] == 2
    assert set(cmp_["by_reason"]) == {
        "abstention read as an answer by the official rules",
        "ASR: text normalisation / CER for Chinese vs raw WER",
    }


def test_aha_judge_fallback_only_for_unclassified(tmp_path: Path, write_jsonl) -> None:
    f = write_jsonl(
        tmp_path / "r.jsonl",
        [
            {
                "index": "60_0_1",
                "type": "existence",
                "question": "?",
                "answer": "Yes",
                "prediction": "Street ambience with traffic.",
                "prediction_match": "Yes",
            },
            {
                "index": "60_0_2",
                "type": "existence",
                "question": "?",
                "answer": "No",
                "prediction": "I don't know.",
                "prediction_match": "No",
            },
        ],
    )
    with_judge = score_aha(load_aha([f]), bootstrap=0)
    assert [(i.strict, i.via) for i in with_judge.items] == [("yes", "fallback"), ("unknown", "rules")]
    assert with_judge.extraction_counts()["decided_by_fallback"] == 1
    without = score_aha(load_aha([f]), bootstrap=0, judge_fallback=False)
    assert [i.strict for i in without.items] == ["unrelated", "unknown"]


def test_yesno_strict_and_compat(yesno_files: tuple[Path, Path]) -> None:
    r = score_yesno(load_yesno(*yesno_files), bootstrap=0)
    allm = r.strict["all"]
    # strict: r1 yes ok, r2 'no, there isn't' no ok, a1 ok, a2 'there is no music' no ok, a3 unknown, a4 'Sí' yes ok
    assert allm["accuracy"] == pytest.approx(5 / 6) and allm["positive"] == "yes"
    # positive yes: TP r1 a1 a4 = 3, FP 0, FN 0; the unknown a3 is on a 'no' item -> precision 1, recall 1
    assert allm["precision"] == 1.0 and allm["recall"] == 1.0 and allm["yes_rate"] == pytest.approx(3 / 6)
    assert r.strict["random"]["accuracy"] == 1.0
    # official: r2 lower-case 'no' unparsed (wrong), a2 'eyes' -> yes (wrong), a3 unparsed (counted negative but
    # not 'no': wrong), a4 'Sí' unparsed (wrong) -> right r1, a1 = 2/6
    c = r.compat["all"]
    assert c["accuracy"] == pytest.approx(2 / 6) and c["positive_class"] == "no"
    cmp_ = r.comparison()
    # a3 is wrong in both modes but listed: the official rules count its unparsed reply as a 'no' answer
    assert cmp_["n_differ"] == 4 and cmp_["strict_correct_only"] == 3 and cmp_["read_differently_only"] == 1
    assert cmp_["by_reason"] == {
        "phrasing the official rules miss (negation, other language, number word)": 2,
        "substring inside another word": 1,
        "no answer in either mode; the official rules count it as a 'no' answer (precision denominator)": 1,
    }
