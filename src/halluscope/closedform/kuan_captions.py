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

Two extractors find the objects a caption names; the result and its notes say which produced the figures:

* ``vocabulary`` (the default, offline): one of the file's label names (the vocabulary of every clip's labels,
  matched as words with the closed-form label reader, longest first, negated mentions dropped) occurs in the caption;
  it is *hallucinated* when it is not one of the clip's labels. Only objects a label names are found, so ECHO is a
  lower bound.
* ``llm:<spec>`` (as the paper does): an LLM lists the caption's sound sources (closedform.llmextract, calls stored
  and resumable); a phrase is grounded when it names one of the clip's labels or a label names it, else hallucinated.
"""

from __future__ import annotations

import ast
import csv
import json
import re
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

from halluscope.core.errors import InputError
from halluscope.reply.free import _label_index, _label_pattern, _mentions_of, _negated, normalize_label
from halluscope.reply.normal import normalize_reply

_QUALIFIER = re.compile(r"\s*\([^)]*\)")


def _list(value: str, *, file: Path, row: int, field: str) -> list[str]:
    try:
        out = ast.literal_eval(value) if value.strip().startswith("[") else [value]
    except (ValueError, SyntaxError) as exc:
        raise InputError(
            f"expected a list literal, got {value[:60]!r}",
            file=str(file),
            row=row,
            field=field,
            fix="keep the released form, e.g. ['Speech', 'Dog']",
        ) from exc
    return [str(x) for x in out]


def load_metadata(path: str | Path) -> dict[str, dict]:
    path = Path(path)
    with path.open(encoding="utf-8", newline="") as fh:
        reader = csv.DictReader(fh)
        missing = {"youtube_id", "caption", "label"} - set(reader.fieldnames or [])
        if missing:
            raise InputError(
                f"missing column(s) {sorted(missing)}",
                file=str(path),
                row=1,
                fix="pass generative_data_metadata.csv as released (youtube_id, caption, label)",
            )
        return {
            r["youtube_id"]: {
                "captions": _list(r["caption"], file=path, row=k, field="caption"),
                "labels": _list(r["label"], file=path, row=k, field="label"),
            }
            for k, r in enumerate(reader, start=2)
        }


def named_objects(text: str, vocabulary: Sequence[str]) -> set[str]:
    """The vocabulary's labels a caption names as words (longest first, negated mentions dropped); a label's
    parenthesised qualifier may be left out ("frying" names "Frying (food)", as "fire truck" names "Fire truck (siren)")."""
    norm = normalize_reply(text)
    names = {lab: lab for lab in vocabulary}
    names.update(
        {
            short: lab
            for lab in vocabulary
            if (short := _QUALIFIER.sub(" ", lab).strip()) and short != lab and short not in names
        }
    )
    index, rank = _label_index(tuple(names))
    words = set(re.findall(r"[^\W_]+", norm))
    words |= {w[:-k] for w in list(words) for k in (1, 2) if len(w) > k and w.endswith("es"[2 - k :])}
    cands = sorted((kv for w in words | {""} for kv in index.get(w, ())), key=lambda kv: rank[kv[0]])
    found = _mentions_of(norm, {orig: _label_pattern(key) for key, orig in cands})
    return {normalize_label(names[opt]) for a, b, opt in found if not _negated(norm, a, b)}


def grounded_labels(phrase: str, labels: Sequence[str]) -> set[str]:
    """The clip labels (normalised) an extracted object phrase names, or that name it ("dog barking" and "Dog")."""
    hit = named_objects(phrase, labels)
    return hit | {normalize_label(lab) for lab in labels if named_objects(lab, [phrase])}


VOCABULARY = "vocabulary"
NOTES = {
    VOCABULARY: "objects are the file's label names found as words in the caption (the paper extracts them with an "
    "LLM: --extractor llm:<spec>): ECHO is a lower bound, Cover counts label names only",
    "llm": "objects are the phrases the LLM extracted from each caption, each grounded when it names one of the "
    'clip\'s labels or a label names it; a synonym no label spells ("automobile" for Car) counts as '
    "hallucinated, so ECHO here is an upper bound where the vocabulary extractor's is a lower one",
}


def score_kuan_captions(metadata: str | Path, predictions: str | Path, *, extractor=None) -> dict:
    """ECHO_I, ECHO_S and Cover per prompt and overall; ``extractor``: None (the label vocabulary, offline) or an
    LLMExtractor (``--extractor llm:<spec>``). The result names the extractor that produced its figures."""
    meta = load_metadata(metadata)
    try:
        preds = json.loads(Path(predictions).read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise InputError(
            f"not JSON: {exc.msg}",
            file=str(predictions),
            row=exc.lineno,
            fix='pass the generation output: {youtube_id: {prompt: {"prediction": ...}}}',
        ) from exc
    if not isinstance(preds, dict):
        raise InputError(
            f"expected a JSON object, got {type(preds).__name__}",
            file=str(predictions),
            fix='pass the generation output: {youtube_id: {prompt: {"prediction": ...}}}',
        )
    vocab = sorted({lab for m in meta.values() for lab in m["labels"]})
    problems, rows = [], []
    for yid, by_prompt in preds.items():
        if yid not in meta:
            problems.append(f"{predictions}: clip '{yid}' is not in {metadata}")
            continue
        for prompt, rec in (by_prompt if isinstance(by_prompt, dict) else {}).items():
            text = rec.get("prediction") if isinstance(rec, dict) else rec
            if not isinstance(text, str):
                problems.append(f"{predictions}: clip '{yid}', prompt {prompt!r}: no 'prediction' text")
                continue
            rows.append({"youtube_id": yid, "prompt": prompt, "prediction": text})
    if not rows:
        raise InputError(
            "no prediction could be scored",
            file=str(predictions),
            fix="the JSON's clip ids must be the metadata's youtube_id values",
        )
    extractions = extractor.extract([r["prediction"] for r in rows]) if extractor is not None else None
    for k, r in enumerate(rows):
        labels = meta[r["youtube_id"]]["labels"]
        truth = {normalize_label(x) for x in labels}
        r["n_truth"] = len(truth)
        if extractions is None:
            named = named_objects(r["prediction"], vocab)
            r.update(
                status="scored", named=sorted(named), hallucinated=sorted(named - truth), covered=sorted(named & truth)
            )
            continue
        ex = extractions[k]
        r.update(extractor_raw=ex.raw)
        if ex.objects is None:
            r.update(status="unscored", reason=ex.error, named=[], hallucinated=[], covered=[])
            continue
        hits = {o: grounded_labels(o, labels) for o in ex.objects}
        r.update(
            status="scored",
            named=list(ex.objects),
            hallucinated=[o for o, h in hits.items() if not h],
            covered=sorted(set().union(*hits.values()) if hits else set()),
        )

    def figures(members: list[dict]) -> dict:
        scored = [r for r in members if r["status"] == "scored"]
        named = sum(len(r["named"]) for r in scored)
        return {
            "n_captions": len(members),
            "unscored": len(members) - len(scored),
            "echo_i": sum(len(r["hallucinated"]) for r in scored) / named if named else None,
            "echo_s": sum(bool(r["hallucinated"]) for r in scored) / len(scored) if scored else None,
            "cover": sum(len(r["covered"]) for r in scored) / max(1, sum(r["n_truth"] for r in scored))
            if scored
            else None,
            "objects_named": named,
        }

    by = defaultdict(list)
    for r in rows:
        by[r["prompt"]].append(r)
    name = VOCABULARY if extractor is None else extractor.name
    return {
        "benchmark": "kuan_generative",
        "extractor": name,
        "metrics": {**{p: figures(m) for p, m in by.items()}, "all": figures(rows)},
        "vocabulary": len(vocab),
        "problems": problems,
        "items": rows,
        "notes": [f"extractor: {name}; " + NOTES[VOCABULARY if extractor is None else "llm"]],
    }
