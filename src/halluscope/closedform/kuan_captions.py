"""Kuan et al.'s generative task (Interspeech 2024): object hallucination in free captions.

Input as released: ``generative_data_metadata.csv`` (``youtube_id, caption, label``; caption and label are Python
list literals: the AudioCaps captions and the clip's AudioSet labels) and the authors' generation output, a JSON
object ``{youtube_id: {prompt: {"prediction": ...}}}`` (five prompts per clip: "Describe the audio.", "What do you
hear?", ...).

Metrics (C.-Y. Kuan, W.-P. Huang, H.-y. Lee, "Understanding Sounds, Missing the Questions: The Challenge of Object
Hallucination in Large Audio-Language Models", Interspeech 2024, section 3; adapted from CHAIR, A. Rohrbach et al.,
"Object Hallucination in Image Captioning", EMNLP 2018), per prompt and overall, over the objects a caption names:

* ECHO_I (instance level) = hallucinated objects / all objects named, over all captions;
* ECHO_S (sentence level) = captions naming at least one hallucinated object / captions;
* Cover = objects of the clip's labels that the caption names / the clip's label objects.

An object is *named* when one of the file's label names (the vocabulary of every clip's labels, matched as words with
the closed-form label reader, longest first, negated mentions dropped) occurs in the caption, and *hallucinated* when
it is not one of the clip's labels. The paper extracts objects with an LLM; word matching against the label
vocabulary finds only objects named by a label, so ECHO here is a lower bound and says so in its notes.
"""

from __future__ import annotations

import ast
import csv
import json
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

from halluscope.core.errors import InputError
from halluscope.reply.free import _label_index, _label_pattern, _mentions_of, _negated, normalize_label
from halluscope.reply.normal import normalize_reply


def _list(value: str, *, file: Path, row: int, field: str) -> list[str]:
    try:
        out = ast.literal_eval(value) if value.strip().startswith("[") else [value]
    except (ValueError, SyntaxError) as exc:
        raise InputError(f"expected a list literal, got {value[:60]!r}", file=str(file), row=row, field=field,
                         fix="keep the released form, e.g. ['Speech', 'Dog']") from exc
    return [str(x) for x in out]


def load_metadata(path: str | Path) -> dict[str, dict]:
    path = Path(path)
    with path.open(encoding="utf-8", newline="") as fh:
        reader = csv.DictReader(fh)
        missing = {"youtube_id", "caption", "label"} - set(reader.fieldnames or [])
        if missing:
            raise InputError(f"missing column(s) {sorted(missing)}", file=str(path), row=1,
                             fix="pass generative_data_metadata.csv as released (youtube_id, caption, label)")
        return {r["youtube_id"]: {"captions": _list(r["caption"], file=path, row=k, field="caption"),
                                  "labels": _list(r["label"], file=path, row=k, field="label")}
                for k, r in enumerate(reader, start=2)}


def named_objects(text: str, vocabulary: Sequence[str]) -> set[str]:
    """The vocabulary's labels a caption names as words (longest first, negated mentions dropped)."""
    norm = normalize_reply(text)
    index, rank = _label_index(tuple(vocabulary))
    words = set(norm.replace("_", " ").split()) | {w.strip(".,;:!?\"'()") for w in norm.split()}
    words |= {w[:-k] for w in list(words) for k in (1, 2) if len(w) > k and w.endswith("es"[2 - k:])}
    cands = sorted((kv for w in words | {""} for kv in index.get(w, ())), key=lambda kv: rank[kv[0]])
    found = _mentions_of(norm, {orig: _label_pattern(key) for key, orig in cands})
    return {normalize_label(opt) for a, b, opt in found if not _negated(norm, a, b)}


def score_kuan_captions(metadata: str | Path, predictions: str | Path) -> dict:
    meta = load_metadata(metadata)
    try:
        preds = json.loads(Path(predictions).read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise InputError(f"not JSON: {exc.msg}", file=str(predictions), row=exc.lineno,
                         fix="pass the generation output: {youtube_id: {prompt: {\"prediction\": ...}}}") from exc
    vocab = sorted({lab for m in meta.values() for lab in m["labels"]})
    problems, rows = [], []
    for yid, by_prompt in preds.items():
        if yid not in meta:
            problems.append(f"{predictions}: clip '{yid}' is not in {metadata}")
            continue
        truth = {normalize_label(x) for x in meta[yid]["labels"]}
        for prompt, rec in (by_prompt or {}).items():
            text = rec.get("prediction") if isinstance(rec, dict) else rec
            if not isinstance(text, str):
                problems.append(f"{predictions}: clip '{yid}', prompt {prompt!r}: no 'prediction' text")
                continue
            named = named_objects(text, vocab)
            rows.append({"youtube_id": yid, "prompt": prompt, "prediction": text, "named": sorted(named),
                         "hallucinated": sorted(named - truth), "covered": sorted(named & truth), "n_truth": len(truth)})
    if not rows:
        raise InputError("no prediction could be scored", file=str(predictions),
                         fix="the JSON's clip ids must be the metadata's youtube_id values")

    def figures(members: list[dict]) -> dict:
        named = sum(len(r["named"]) for r in members)
        return {"n_captions": len(members),
                "echo_i": sum(len(r["hallucinated"]) for r in members) / named if named else None,
                "echo_s": sum(bool(r["hallucinated"]) for r in members) / len(members),
                "cover": sum(len(r["covered"]) for r in members) / max(1, sum(r["n_truth"] for r in members)),
                "objects_named": named}

    by = defaultdict(list)
    for r in rows:
        by[r["prompt"]].append(r)
    return {"benchmark": "kuan_generative", "metrics": {**{p: figures(m) for p, m in by.items()}, "all": figures(rows)},
            "vocabulary": len(vocab), "problems": problems, "items": rows,
            "notes": ["objects are the file's label names found as words in the caption (the paper extracts them "
                      "with an LLM): ECHO is a lower bound, Cover counts label names only"]}
