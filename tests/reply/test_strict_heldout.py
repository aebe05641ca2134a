"""The strict yes/no reader measured where it was not tuned.

strict_tune.jsonl was written first and the reader tuned on it (and on corpus/replies.jsonl); strict_heldout.jsonl
was written after tuning, in the way Qwen2-Audio, SALMONN and GPT-4o-audio answer (short and long; en, ru, kk), with
every misread class of the reply reader's issue, labelled by hand, and never read while tuning. Labels: yes, no,
hedge, uncertain, refusal, other (no answer about the subject: other sounds, alternatives)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from halluscope.reply import extract_yesno

HERE = Path(__file__).with_name("corpus")
AS_LABEL = {"unknown": "uncertain", "ambiguous": "other", "unrelated": "other", "unparsable": "other"}


def _rows(name: str) -> list[dict]:
    return [json.loads(x) for x in (HERE / name).read_text(encoding="utf-8").splitlines() if x.strip()]


def _read(row: dict) -> str:
    ex = extract_yesno(row["reply"], subject=row.get("subject"), question=row["question"])
    assert ex.reason, ex
    return str(ex.value) if ex.is_answer else AS_LABEL.get(ex.status, ex.status)


HELD = _rows("strict_heldout.jsonl")
READ = {r["id"]: _read(r) for r in HELD}


def test_heldout_shape() -> None:
    assert len(HELD) >= 150 and len({r["id"] for r in HELD}) == len(HELD)
    assert {r["lang"] for r in HELD} == {"en", "ru", "kk"}
    assert {r["style"] for r in HELD} == {"qwen2-audio", "salmonn", "gpt-4o-audio"}
    classes = Counter(r["class"] for r in HELD)
    for name in (
        "perception_denial",
        "bare_denial",
        "label_inside_word",
        "hedge",
        "speech_description",
        "synonym",
        "other_subject",
    ):
        assert classes[name] >= 5, name
    assert not {r["id"] for r in HELD} & {r["id"] for r in _rows("strict_tune.jsonl")}


def test_heldout_agreement_at_least_95_percent() -> None:
    right = sum(READ[r["id"]] == r["label"] for r in HELD)
    wrong = [(r["id"], r["label"], READ[r["id"]]) for r in HELD if READ[r["id"]] != r["label"]]
    assert right / len(HELD) >= 0.95, wrong


def test_heldout_no_denial_or_hedge_read_as_yes() -> None:
    wrong = [(r["id"], r["reply"]) for r in HELD if r["label"] in ("no", "hedge") and READ[r["id"]] == "yes"]
    assert not wrong, wrong


@pytest.mark.xfail(
    strict=True,
    reason="measured after tuning: 3 label-inside-word replies read yes ('belly' for 'bell', 'shipping' for 'ship', "
    "'котёл' for 'кот'); the held-out figure is reported as measured, not tuned away",
)
def test_heldout_no_other_subject_reply_read_as_yes() -> None:
    wrong = [(r["id"], r["reply"]) for r in HELD if r["label"] == "other" and READ[r["id"]] == "yes"]
    assert not wrong, wrong


def test_tuning_set_read_as_labelled() -> None:
    tune = _rows("strict_tune.jsonl")
    wrong = [(r["id"], r["label"], _read(r)) for r in tune if _read(r) != r["label"]]
    assert len(wrong) <= len(tune) * 0.05, wrong
