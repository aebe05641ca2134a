"""Official-scorer rules (compatibility mode) and the items where they misfire against strict extraction."""

from __future__ import annotations

import pytest

from halluscope.closedform import compat as cp
from halluscope.closedform.extract import extract_choice, extract_number, extract_yesno


@pytest.mark.parametrize(
    "reply,reference,official,strict",
    [
        ("I can see its eyes.", "yes", True, "unrelated"),  # 'yes' inside 'eyes'
        ("I don't know.", "no", True, "unknown"),  # 'no' inside 'know'
        ("The answer is unknown.", "no", True, "unrelated"),  # 'no' inside 'unknown'
        ("I cannot tell.", "no", True, "unknown"),  # 'no' inside 'cannot'
        ("Yes and no.", "yes", True, "ambiguous"),  # both substrings: credited for either reference
        ("Yes and no.", "no", True, "ambiguous"),
        ("Nothing like that.", "no", True, "no"),  # right for the wrong reason; strict agrees on the class
        ("Sí, hay un perro.", "yes", False, "yes"),  # another language: the substring rule misses
        ("是的", "yes", False, "yes"),
    ],
)
def test_halluaudio_binary_misfires(reply: str, reference: str, official: bool, strict: str) -> None:
    assert cp.halluaudio_binary(reply, reference).correct is official
    assert extract_yesno(reply).label == strict


def test_misfire_reason_names_the_word() -> None:
    assert "eyes" in cp.halluaudio_binary("I can see its eyes.", "yes").misfire
    assert "know" in cp.halluaudio_binary("I don't know.", "no").misfire
    assert "both" in cp.halluaudio_binary("Yes and no", "no").misfire
    assert cp.halluaudio_binary("Yes.", "yes").misfire is None


@pytest.mark.parametrize(
    "text,official",
    [
        ("None of them.", 1),  # 'one' inside 'none'
        ("Listen carefully.", 10),  # 'ten' inside 'listen'
        ("Eighteen strokes.", 8),  # 'eight' is tried before 'eighteen'
        ("3 or 4", 3),
        ("Someone plays it.", 1),
        ("No number here.", None),
    ],
)
def test_halluaudio_probe_number_substring_rule(text: str, official: int | None) -> None:
    assert cp.halluaudio_probe_number(text) == official


def test_probe_number_strict_differs() -> None:
    assert extract_number("None of them.").label == "0"
    assert extract_number("Eighteen strokes.").label == "18"
    assert extract_number("3 or 4").label == "ambiguous"


def test_word_count_rule_uses_word_boundaries() -> None:
    assert cp.halluaudio_word_count_number("There are seven words.") == 7
    assert cp.halluaudio_word_count_number("Someone speaks.") is None
    assert cp.halluaudio_word_count_number("Around 12 words, maybe three more") == 12


def test_choice_rule_never_credits_a_comparison() -> None:
    reply = "The first clip is louder than the second."
    assert cp.halluaudio_choice(reply, "first").correct is False
    assert extract_choice(reply).label == "first"
    assert cp.halluaudio_choice("The second.", "second").correct is True


def test_invalid_audio_keyword_rule() -> None:
    assert cp.halluaudio_unanswerable("Sorry, the speaker is male.").correct is True  # 'sorry' credits any answer
    assert cp.halluaudio_unanswerable("There is no speech, only noise.").correct is False
    assert extract_yesno("There is no speech, only noise.").label == "no"  # strict: absence stated -> right


def test_refusal_regex() -> None:
    assert cp.halluaudio_is_refusal("") and cp.halluaudio_is_refusal(None)
    assert cp.halluaudio_is_refusal("I'm not able to do that.")
    assert cp.halluaudio_is_refusal("As a language model I cannot hear audio.")
    assert not cp.halluaudio_is_refusal("I don't know.")  # uncertainty is not in the official refusal set


def test_label_rule_is_a_substring() -> None:
    d = cp.halluaudio_label("An electric guitar riff.", "Guitar")
    assert d.correct and d.misfire is None
    d2 = cp.halluaudio_label("Musical instruments.", "music")
    assert d2.correct and "musical" in d2.misfire


@pytest.mark.parametrize(
    "judge,official", [("Yes", "yes"), ("No", "no"), ("Unknown", "no"), ("是", "yes"), ("Maybe", "maybe")]
)
def test_aha_normalize(judge: str, official: str) -> None:
    assert cp.aha_normalize(judge) == official


def test_aha_item_uses_judge_and_flags_unknown() -> None:
    d = cp.aha_item("No", "I am not sure.", "Unknown", asr=False)
    assert d.correct and "unknown" in d.misfire
    assert cp.aha_item("hello world", "hello world", None, asr=True).correct
    assert not cp.aha_item(
        "Hello world, how are you?", "hello world how are you", None, asr=True
    ).correct  # raw WER 0.4


@pytest.mark.parametrize(
    "reply,parsed",
    [
        ("Yes, there is.", "yes"),
        ("The eyes...", "yes"),
        ("yesterday there was no dog", "yes"),
        ("No.", "no"),
        ("Nobody barks.", "no"),
        ("no, there isn't", ""),  # lower-case 'no' is not a rule
        ("there is no dog", "no"),
        ("It doesn't contain a dog.", "no"),
        ("It contains a dog.", "yes"),
        ("I'm unable to tell.", "no"),
        ("I don't know.", ""),
        ("Maybe.", ""),
    ],
)
def test_kuan_parse(reply: str, parsed: str) -> None:
    assert cp.kuan_parse(reply)[0] == parsed


def test_kuan_item_misfires() -> None:
    assert cp.kuan_item("no, there isn't", "no").correct is False
    assert extract_yesno("no, there isn't").label == "no"
    assert "inside" in cp.kuan_item("Her eyes are closed.", "no").misfire
    assert cp.kuan_item("I don't know.", "no").misfire == "unparsed reply counted as a negative answer"
