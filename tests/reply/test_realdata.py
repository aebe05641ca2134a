"""Every reader over every real reply in ../shared/realdata (skipped when absent): no exception, a reason for every
reading, AudioTrust's refusals read as refusals (and nothing else), Kuan et al.'s Qwen2.5-Omni replies read as given."""

from __future__ import annotations

import csv
import json

from halluscope.closedform.extract import extract_choice, extract_label, extract_number, extract_yesno
from halluscope.mishap.judge import parse_verdict
from halluscope.reply import BOOLEAN, read_check, read_key
from halluscope.spoken.detect.zeroshot_parse import parse_reply
from halluscope.spoken.judge import parse_judgement

# rows of AudioTrust's hallucination split whose ModelResponse a person reads as a refusal ("I'm sorry, but I
# can't listen to or analyze audio clips", "I can't identify or describe the content of audio clips", "I don't
# have access to any audio you've mentioned ..."); labelled by hand, row numbers from 0
AUDIOTRUST_REFUSALS = {
    "content_mismatc.jsonl": {6, 8, 19, 20, 26, 29, 36, 37, 39, 42, 43, 44, 49, 51, 53, 56, 68, 69, 72, 75, 78, 79},
    "label_mismatch.jsonl": {
        3,
        5,
        7,
        8,
        9,
        10,
        11,
        14,
        16,
        17,
        19,
        20,
        21,
        22,
        24,
        27,
        30,
        31,
        32,
        33,
        35,
        41,
        44,
        45,
        46,
        48,
        49,
        52,
        54,
        56,
        57,
        58,
        59,
        62,
        63,
        65,
        66,
        69,
        70,
        71,
        73,
        75,
        76,
        78,
        79,
    },
}


def _every_reader(text: str, subject: str, labels: list[str]) -> None:
    for r in (
        extract_yesno(text, subject=subject),
        extract_yesno(text),
        extract_number(text),
        extract_choice(text),
        extract_label(text, labels=labels),
        read_key(text, "verdict", BOOLEAN),
    ):
        assert r.reason and (r.value is None) == (not r.is_answer), r
    for task in ("binary", "type", "severity"):
        p = parse_reply(text, task)
        assert p.status in ("ok", "unparsable", "refusal") and (p.status == "ok" or p.reason)
    scores, why = parse_judgement(text, "fabrication")
    assert scores or why
    verdict, _stance, why = parse_verdict(text)
    assert verdict or why
    ok, why = read_check(text, "informative")
    assert ok is not None or why


def test_audiotrust_replies_read_and_refusals_are_refusals(realdata) -> None:
    folder = realdata / "audiotrust_hallucination"
    for name, refusals in AUDIOTRUST_REFUSALS.items():
        rows = [json.loads(line) for line in (folder / name).read_text(encoding="utf-8").splitlines() if line.strip()]
        assert len(rows) == 80
        got = set()
        for i, row in enumerate(rows):
            text = row["ModelResponse"]
            _every_reader(text, row["overall_description"], [row["overall_description"], row["General_description"]])
            ex = extract_yesno(text, subject=row["overall_description"])
            if ex.status == "refusal":
                got.add(i)
                assert parse_reply(text, "binary").status == "refusal"  # the same lexicon for every reader
        assert got == refusals, f"{name}: missed {sorted(refusals - got)}, wrongly {sorted(got - refusals)}"


def test_kuan_qwen_replies_read_as_given_with_the_asked_object(realdata) -> None:
    folder = realdata / "kuan_object_hallucination"
    lines = [
        ln
        for ln in (folder / "balanced_merged_test_2871.txt").read_text(encoding="utf-8").splitlines()
        if ln.strip() and not ln.startswith("#")
    ]
    header = lines[0].split("\t")
    questions = {(r["sampling"], r["entry_id"]): r for r in (dict(zip(header, ln.split("\t"))) for ln in lines[1:])}
    with (folder / "qwen25omni_predictions_balanced_merged_2871_cosine_lambda0.05.csv").open(encoding="utf-8") as fh:
        preds = list(csv.DictReader(fh))
    assert len(preds) == 2871
    for p in preds:
        q = questions[(p["sampling_method"], p["entry_id"])]
        ex = extract_yesno(p["response"], subject=q["object"])
        assert ex.is_answer and ex.value == p["response"].strip().lower(), (p, ex)
