"""Typed keys (core/keys.py): each decodes what it encodes for any ids, separators included; each writes the
strings stored before the types existed byte for byte; the keys of a stored run decode."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from hypothesis import given, strategies as st

from halluscope.core.errors import HalluscopeError
from halluscope.core.keys import STAGE_MARKS, AnswerKey, DetectRunKey, StageName, YesNoItemKey
from halluscope.core.records import RunManifest
from halluscope.core.spec import ModelSpec

OLD = Path(__file__).parent / "data" / "store_before_renames" / "run" / "halluscope.sqlite"
SEPARATORS = "~|:[]@%/?=&, "
text = st.text(alphabet=st.characters(codec="utf-8") | st.sampled_from(SEPARATORS), max_size=40)
nonempty = text.filter(bool)
kinds = st.text(alphabet=st.characters(codec="utf-8", exclude_characters=STAGE_MARKS), min_size=1, max_size=20)
languages = st.none() | st.from_regex(r"[a-z]{2,3}", fullmatch=True)


@given(kinds, languages, st.none() | text)
def test_stage_name_round_trip(kind, language, subject):
    name = StageName(kind, language, subject)
    assert StageName.decode(name.encode()) == name


@given(nonempty, nonempty, st.none() | st.integers(-(2**40), 2**40))
def test_answer_key_round_trip(question, model, seed):
    key = AnswerKey(question, model, seed)
    assert AnswerKey.decode(key.encode()) == key


@given(nonempty, text.filter(lambda t: t and "|" not in t), st.none() | text.filter(lambda t: t and "|" not in t))
def test_detect_run_key_round_trip(detector, task, input_):
    key = DetectRunKey(detector, task, input_)
    assert DetectRunKey.decode(key.encode()) == key


@given(nonempty.filter(lambda t: ":" not in t), text)
def test_yes_no_item_key_round_trip(sampling, entry):
    key = YesNoItemKey(sampling, entry)
    assert YesNoItemKey.decode(key.encode()) == key


plain = text.filter(lambda t: not t.startswith("%"))


@given(plain, plain.filter(lambda t: "~" not in t), st.none() | st.integers(0, 10**6))
def test_answer_ids_are_the_ones_stored_before(question, model, seed):
    # the formula mishap/answers.py wrote ids with before the key type (every model spec without '~')
    assert AnswerKey(question, model, seed).encode() == f"{question}~{model}~{'greedy' if seed is None else f's{seed}'}"


@given(text, plain.filter(lambda t: "|" not in t))
def test_stage_names_and_run_keys_are_the_ones_stored_before(subject, detector):
    assert StageName("asr", subject=subject).encode() == f"asr[{subject}]"
    assert StageName("judge", subject=subject).encode() == f"judge:{subject}"
    assert StageName("answers", subject=subject).encode() == f"answers:{subject}"
    assert DetectRunKey(detector, "binary", "text").encode() == f"{detector}|binary|text"
    assert DetectRunKey(detector, "strict").encode() == f"{detector}|strict"


def test_a_model_spec_round_trips_through_an_answer_key():
    spec = ModelSpec.parse("hf-audio/~/models/qwen2-audio", {"mitigation": "aad", "alpha": 0.5, "name": "a~b"})
    from halluscope.mishap.answers import answer_id

    key = AnswerKey.decode(answer_id("clip-1~open~0", spec, None))  # the id 'mishap answer' stores
    assert key.spec == spec and key.question == "clip-1~open~0" and key.seed is None
    assert answer_id("c~open~0", "hf/x", 3) == "c~open~0~hf/x~s3"  # a spec without '~': the stored form


def test_bad_keys_are_refused_with_what_was_expected():
    with pytest.raises(HalluscopeError, match="expected 'greedy' or 's<seed>'"):
        AnswerKey.decode("q~m~sampled")
    with pytest.raises(HalluscopeError, match="<question id>~<model>~greedy"):
        AnswerKey.decode("q-greedy")
    with pytest.raises(HalluscopeError, match=r"asr\[<subject>\]"):
        StageName.decode("asr:x")
    with pytest.raises(HalluscopeError, match="language code"):
        StageName.decode("tts@EN")
    with pytest.raises(HalluscopeError, match="without"):
        StageName("a[b")
    with pytest.raises(HalluscopeError, match=r"<detector>\|<task>"):
        DetectRunKey.decode("only-a-detector")
    assert StageName.parse("tts@EN") is None


def test_the_keys_of_a_stored_run_decode():
    """store_before_renames (written by the code of an earlier release): every stage name its results and manifests
    hold decodes and encodes back to the same bytes; its detect run's page key does too."""
    with sqlite3.connect(OLD) as db:
        names = {r[0] for r in db.execute("SELECT DISTINCT stage FROM results")}
        manifests = [RunManifest.model_validate_json(r[0]) for r in db.execute("SELECT payload FROM manifests")]
    names |= {k for m in manifests for k in m.stages}
    assert {"tts", "asr", "detect", "generate"} <= names
    for name in names:
        assert StageName.decode(name).encode() == name
    detect = next(m for m in manifests if m.command == "detect").config
    key = DetectRunKey(detect["detector"], detect["task"], detect["input"])
    assert DetectRunKey.decode(key.encode()) == key and key.encode().startswith(detect["detector"] + "|")
