"""The strict yes/no reader's agreement with the hand labels, per labelled file of tests/reply/corpus/ (the tuning
set, the held-out sets, the 306-reply corpus on its current and its earlier labels), and on Kuan et al.'s real
Qwen2.5-Omni replies against the official rules' reading when ../shared/realdata is there. The figures the README and
the closed-form tutorial quote come from this script:

    .venv/bin/python scripts/strict_agreement.py            # add -v to list every disagreement
"""

from __future__ import annotations

import argparse
import csv
import json
from pathlib import Path

from halluscope.reply.yesno import READER_VERSION, extract_yesno

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "tests" / "reply" / "corpus"
KUAN = ROOT.parent / "shared" / "realdata" / "kuan_object_hallucination"
AS_LABEL = {"unknown": "uncertain", "ambiguous": "other", "unrelated": "other", "unparsable": "other"}


def read(row: dict) -> str:
    ex = extract_yesno(row["reply"], subject=row.get("subject") if "lang" in row else None, question=row["question"])
    return str(ex.value) if ex.is_answer else AS_LABEL.get(ex.status, ex.status)


def agreement(name: str, key: str, verbose: bool) -> None:
    rows = [json.loads(x) for x in (CORPUS / name).read_text(encoding="utf-8").splitlines() if x.strip()]
    got = {r["id"]: read(r) for r in rows}
    wrong = [r for r in rows if got[r["id"]] != r.get(key, r["label"])]
    right = len(rows) - len(wrong)
    yes = sum(r["label"] in ("no", "hedge", "other") and got[r["id"]] == "yes" for r in rows)
    print(f"{name} ({key}): {right}/{len(rows)} = {right / len(rows):.3f}; no/hedge/other read yes: {yes}")
    for r in wrong if verbose else []:
        print(f"  {r['id']}: label {r.get(key, r['label'])}, read {got[r['id']]}: {r['reply'][:100]!r}")


def kuan() -> None:
    from halluscope.closedform import compat

    lines = [x for x in (KUAN / "balanced_merged_test_2871.txt").read_text(encoding="utf-8").splitlines()]
    lines = [x for x in lines if x.strip() and not x.startswith("#")]
    header = lines[0].split("\t")
    asked = {(r["sampling"], r["entry_id"]): r for r in (dict(zip(header, x.split("\t"))) for x in lines[1:])}
    with (KUAN / "qwen25omni_predictions_balanced_merged_2871_cosine_lambda0.05.csv").open(encoding="utf-8") as fh:
        preds = list(csv.DictReader(fh))
    same = 0
    for p in preds:
        q = asked[(p["sampling_method"], p["entry_id"])]
        strict = extract_yesno(p["response"], subject=q["object"], question=q["prompt_text"]).label
        same += strict == compat.kuan_item(p["response"], q["label"]).label
    print(f"Kuan et al. Qwen2.5-Omni replies: strict reads as the official rules on {same}/{len(preds)}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-v", "--verbose", action="store_true", help="list every disagreement")
    args = ap.parse_args()
    print(f"reply reader {READER_VERSION}")
    for name in ("strict_tune.jsonl", "strict_heldout2.jsonl", "strict_heldout.jsonl"):
        agreement(name, "label", args.verbose)
    agreement("replies.jsonl", "label", args.verbose)
    agreement("replies.jsonl", "label_before", args.verbose)
    if KUAN.is_dir():
        kuan()


if __name__ == "__main__":
    main()
