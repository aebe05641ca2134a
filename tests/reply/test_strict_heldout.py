"""The strict yes/no reader measured where it was not tuned.

strict_tune.jsonl was written first and the reader tuned on it (and on corpus/replies.jsonl). Two held-out sets
were written after tuning, in the way Qwen2-Audio, SALMONN and GPT-4o-audio answer (short and long; en, ru, kk),
with every misread class of the reply reader's issue, labelled by hand: strict_heldout.jsonl after strict-2.0
(measured once: 167/172; its misreads "belly" for "bell", "котёл" for "кот" and later "shipping" for "ship" were
then fixed, so it no longer counts as unseen) and strict_heldout2.jsonl after strict-2.1, never read while tuning. Labels: yes, no,
hedge, uncertain, refusal, other (no answer about the subject: other sounds, alternatives)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from halluscope.reply import extract_yesno

HERE = Path(__file__).with_name("corpus")
AS_LABEL = {"unknown": "uncertain", "ambiguous": "other", "unrelated": "other", "unparsable": "other"}
HELDOUT = ("strict_heldout2.jsonl", "strict_heldout.jsonl")


def _rows(name: str) -> list[dict]:
    return [json.loads(x) for x in (HERE / name).read_text(encoding="utf-8").splitlines() if x.strip()]


def _read(row: dict) -> str:
    ex = extract_yesno(row["reply"], subject=row.get("subject"), question=row["question"])
    assert ex.reason, ex
    return str(ex.value) if ex.is_answer else AS_LABEL.get(ex.status, ex.status)


READ = {name: {r["id"]: _read(r) for r in _rows(name)} for name in HELDOUT}


@pytest.mark.parametrize("name", HELDOUT)
def test_heldout_shape(name: str) -> None:
    rows = _rows(name)
    assert len(rows) >= 100 and len({r["id"] for r in rows}) == len(rows)
    assert {r["lang"] for r in rows} == {"en", "ru", "kk"}
    assert {r["style"] for r in rows} == {"qwen2-audio", "salmonn", "gpt-4o-audio"}
    classes = Counter(r["class"] for r in rows)
    for cls in ("perception_denial", "bare_denial", "label_inside_word", "hedge", "speech_description", "synonym"):
        assert classes[cls] >= 5, cls
    others = {r["id"] for n in ("strict_tune.jsonl", *HELDOUT) if n != name for r in _rows(n)}
    long = {r["reply"] for r in rows if len(r["reply"].split()) > 3}  # no sentence reused (short answers recur)
    assert not long & {r["reply"] for n in ("strict_tune.jsonl", *HELDOUT) if n != name for r in _rows(n)}
    assert not {r["id"] for r in rows} & others


@pytest.mark.parametrize("name", HELDOUT)
def test_heldout_agreement_at_least_95_percent(name: str) -> None:
    rows = _rows(name)
    wrong = [(r["id"], r["label"], READ[name][r["id"]]) for r in rows if READ[name][r["id"]] != r["label"]]
    assert (len(rows) - len(wrong)) / len(rows) >= 0.95, wrong


@pytest.mark.parametrize("name", HELDOUT)
def test_heldout_no_denial_or_hedge_read_as_yes(name: str) -> None:
    rows = _rows(name)
    wrong = [(r["id"], r["reply"]) for r in rows if r["label"] in ("no", "hedge") and READ[name][r["id"]] == "yes"]
    assert not wrong, wrong


@pytest.mark.parametrize("name", HELDOUT)
def test_heldout_no_other_subject_reply_read_as_yes(name: str) -> None:
    rows = _rows(name)
    wrong = [(r["id"], r["reply"]) for r in rows if r["label"] == "other" and READ[name][r["id"]] == "yes"]
    assert not wrong, wrong


def test_tuning_set_read_as_labelled() -> None:
    tune = _rows("strict_tune.jsonl")
    wrong = [(r["id"], r["label"], _read(r)) for r in tune if _read(r) != r["label"]]
    assert len(wrong) <= len(tune) * 0.05, wrong
