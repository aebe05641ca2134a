"""The reply reader pinned on a golden table of real-shaped replies (tests/reply/golden.jsonl), read through the
call sites that production uses: zero-shot detection, quality judges, self-assessment, MISHAP verdict / stance /
checks, closed-form yes/no (with the asked subject), numbers, choices, labels and option letters."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from halluscope.closedform.extract import extract_choice, extract_label, extract_number, extract_option, extract_yesno
from halluscope.mishap.judge import parse_verdict
from halluscope.reply import BOOLEAN, read_check, read_key
from halluscope.spoken.detect.zeroshot_parse import KEY_ALIASES, KEYS, SCALES, parse_reply
from halluscope.spoken.generate.llm import parse_self_assessment
from halluscope.spoken.judge import parse_judgement

GOLDEN = Path(__file__).with_name("golden.jsonl")


def _rows() -> list[dict]:
    lines = GOLDEN.read_text(encoding="utf-8").splitlines()
    return [json.loads(ln) for ln in lines if ln.strip() and not ln.startswith("#")]


ROWS = _rows()


def _read(row: dict) -> tuple[str, object, dict]:
    """(status, value, extra) as the production call site reads the row's reply."""
    use, reply = row["use"], row["reply"]
    if use.startswith("zs_"):
        task = use[3:]
        r = read_key(reply, KEYS[task], SCALES[task], aliases=KEY_ALIASES[task])
        p = parse_reply(reply, task)  # the zero-shot status is the reading's, folded to ok / refusal / unparsable
        assert p.status == {"answer": "ok", "refusal": "refusal"}.get(r.status, "unparsable") and p.answer == (
            r.value if r.is_answer else None
        ), (p, r)
        return r.status, r.value, {}
    if use == "judge":
        scores, why = parse_judgement(reply, row["type"])
        return ("answer", scores, {}) if why is None else ("unparsable", None, {})
    if use == "self":
        sa = parse_self_assessment(
            reply, item_id="x", generator="g", language=row["language"], type=row["type"], severity="mild"
        )
        return ("answer" if not sa.unrated else "unparsable"), dict(sa.ratings), {}
    if use == "verdict":
        verdict, stance, why = parse_verdict(reply)
        return ("answer" if why is None else "unparsable"), verdict, {"stance": stance}
    if use == "check":
        ok, why = read_check(reply, row["key"])
        r = read_key(reply, row["key"], BOOLEAN)
        assert (ok is None) == (not r.is_answer) and (ok is None or str(ok).lower() == r.value), (ok, why, r)
        return r.status, r.value, {}
    if use == "yesno":
        r = extract_yesno(reply, subject=row.get("subject"))
    elif use == "number":
        r = extract_number(reply)
    elif use == "choice":
        r = extract_choice(reply)
    elif use == "label":
        r = extract_label(reply, labels=row["labels"])
    elif use == "option":
        r = extract_option(reply, options=row["options"])
    else:
        raise AssertionError(f"unknown use {use!r} in {GOLDEN}")
    assert r.reason, r  # every reading says why
    return r.status, r.value, {}


@pytest.mark.parametrize("row", ROWS, ids=[f"{i}-{r['use']}-{r['lang']}" for i, r in enumerate(ROWS)])
def test_golden_reading(row: dict) -> None:
    status, value, extra = _read(row)
    got = {"status": status, "value": value if status == "answer" or row["use"] == "self" else None, **extra}
    want = {"status": row["status"], "value": row["value"], **({"stance": row["stance"]} if "stance" in row else {})}
    assert got == want, f"{row['reply']!r}"


def test_golden_table_covers_every_use_and_language() -> None:
    assert len(ROWS) >= 150
    uses = Counter(r["use"] for r in ROWS)
    assert set(uses) == {
        "zs_binary",
        "zs_type",
        "zs_severity",
        "judge",
        "self",
        "verdict",
        "check",
        "yesno",
        "number",
        "choice",
        "label",
        "option",
    }
    for use in ("zs_binary", "yesno"):
        assert {r["lang"] for r in ROWS if r["use"] == use} == {"en", "ru", "kk"}
    assert {r["status"] for r in ROWS} >= {"answer", "unknown", "refusal", "ambiguous", "unrelated", "unparsable"}
