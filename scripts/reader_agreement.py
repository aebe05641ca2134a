"""How well an LLM reads yes/no replies: the LLM reader (closedform/llmreader.py) on a seeded, label-stratified
sample of the hand-labelled reply corpus (tests/reply/corpus/replies.jsonl), against the hand labels.

Prints how many replies the reader read (parsed into a class), its agreement with the hand labels, and the rules'
agreement on the same sample. Example (SmolLM2-135M, offline, about a minute of CPU per 40 replies):

    .venv/bin/python scripts/reader_agreement.py hf/smollm2-135m-instruct --n 40
    .venv/bin/python scripts/reader_agreement.py hf/smollm2-135m-instruct --n 40 --no-schema   # the prompt alone
"""

from __future__ import annotations

import argparse
import json
import random
import tempfile
from collections import Counter, defaultdict
from pathlib import Path

from halluscope.closedform.llmreader import LLMReader
from halluscope.reply.yesno import extract_yesno

CORPUS = Path(__file__).resolve().parents[1] / "tests" / "reply" / "corpus" / "replies.jsonl"
HAND = {"uncertain": "unknown", "other": "unrelated"}  # the corpus's label names -> the readers' classes


def sample(n: int, seed: int) -> list[dict]:
    """``n`` rows, each hand label's share as in the corpus (at least one of each), drawn with ``seed``."""
    rows = [json.loads(line) for line in CORPUS.read_text(encoding="utf-8").splitlines() if line.strip()]
    by: dict[str, list[dict]] = defaultdict(list)
    for r in rows:
        by[r["label"]].append(r)
    rng = random.Random(seed)
    quota = {lab: max(1, round(n * len(m) / len(rows))) for lab, m in by.items()}
    while sum(quota.values()) > n:
        quota[max(quota, key=quota.get)] -= 1
    while sum(quota.values()) < n:
        quota[max(quota, key=lambda k: len(by[k]) / quota[k])] += 1
    return [r for lab in sorted(by) for r in rng.sample(sorted(by[lab], key=lambda r: r["id"]), quota[lab])]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("spec", help="the reader's chat backend, e.g. hf/smollm2-135m-instruct or openai/<model>")
    ap.add_argument("--n", type=int, default=40)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--no-schema", action="store_true", help="ask without the JSON schema (the prompt alone)")
    ap.add_argument("--store", type=Path, help="run directory for the calls (default: a temporary one)")
    args = ap.parse_args()
    rows = sample(args.n, args.seed)
    store = args.store or Path(tempfile.mkdtemp(prefix="reader-agreement-"))
    reader = LLMReader(args.spec, store, use_schema=not args.no_schema)
    readings = reader.read([(r["question"], r["reply"]) for r in rows])
    hand = [HAND.get(r["label"], r["label"]) for r in rows]
    llm = [x.label for x in readings]
    rules = [extract_yesno(r["reply"], question=r["question"]).label for r in rows]
    read = sum(lab != "unparsable" for lab in llm)
    agree = sum(a == b for a, b in zip(hand, llm))
    print(f"reader llm:{args.spec} ({reader.structured}) on {len(rows)} hand-labelled replies (seed {args.seed})")
    print(f"  read: {read} of {len(rows)}; shapes: {dict(Counter(x.how for x in readings if x.how))}")
    print(f"  agreement with the hand labels: {agree} of {len(rows)} ({agree / len(rows):.3f})")
    print(f"  its classes: {dict(Counter(llm))}; hand: {dict(Counter(hand))}")
    rules_agree = sum(a == b for a, b in zip(hand, rules))
    print(f"  the rules on the same replies: {rules_agree} of {len(rows)} ({rules_agree / len(rows):.3f})")
    print(f"  calls kept in {store}")


if __name__ == "__main__":
    main()
