"""AVHBench (Sung-Bin et al., ICLR 2025, github.com/kaist-ami/AVHBench) as released: one JSON array per video,
``[{video_id, task, text, label}, ...]``, with the model's reply added to each object under ``prediction`` (or
``pred`` / ``response`` / ``output``). Tasks: Audio-driven Video Hallucination, Video-driven Audio Hallucination and
AV Matching are yes/no (label Yes/No): accuracy, precision, recall, F1 (positive 'yes') and Yes %, in percent as the
leaderboard prints them, every reply read against its question; AV Captioning (label: the reference caption) is
scored with METEOR and CIDEr, the metrics the paper reports (computed with the COCO caption evaluation, pycocoevalcap; one
reference per video, CIDEr-D's document frequencies over the captions scored together; the raw scores, papers often
print them x100), with content-word overlap (unigram precision, recall and F1 after lower-casing) beside them as a
per-item figure that needs no Java.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

from halluscope.closedform.records import Loaded, LoadProblem
from halluscope.core.errors import InputError
from halluscope.metrics.captions import coco_caption_scores
from halluscope.reply.yesno import extract_yesno

BINARY_TASKS = ("Audio-driven Video Hallucination", "Video-driven Audio Hallucination", "AV Matching")
CAPTION_TASK = "AV Captioning"
REPLY_KEYS = ("prediction", "pred", "response", "output")
_STOP = {
    "a",
    "an",
    "the",
    "is",
    "are",
    "of",
    "and",
    "in",
    "on",
    "with",
    "to",
    "while",
    "by",
    "at",
    "as",
    "it",
    "its",
    "then",
    "followed",
    "there",
    "some",
    "be",
    "being",
    "from",
    "into",
    "for",
}


def load_avhbench(files: Sequence[str | Path]) -> Loaded[dict]:
    items, problems = [], []
    for f in map(Path, files):
        try:
            data = json.loads(f.read_text(encoding="utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise InputError(
                f"not a JSON array: {exc}", file=str(f), fix="pass AVHBench's {video_id}.json files as released"
            ) from exc
        if not isinstance(data, list):
            raise InputError(
                f"expected a JSON array of QA objects, got {type(data).__name__}",
                file=str(f),
                fix="pass AVHBench's {video_id}.json files as released",
            )
        for k, obj in enumerate(data):
            where = {"file": str(f), "row": k + 1}
            missing = [
                key
                for key in ("video_id", "task", "text", "label")
                if not isinstance(obj, dict) or not isinstance(obj.get(key), str)
            ]
            reply = next(
                (obj[key] for key in REPLY_KEYS if isinstance(obj, dict) and isinstance(obj.get(key), str)), None
            )
            if missing or reply is None:
                problems.append(
                    LoadProblem(
                        **where,
                        field=missing[0] if missing else "prediction",
                        message=f"object {k + 1}: expected text fields video_id, task, text, label and "
                        f"a reply ({' / '.join(REPLY_KEYS)})",
                        fix="add the model's reply to every object under 'prediction'",
                    )
                )
                continue
            if obj["task"] not in BINARY_TASKS + (CAPTION_TASK,):
                problems.append(
                    LoadProblem(
                        **where,
                        field="task",
                        message=f"unknown task {obj['task']!r}",
                        fix=f"one of {', '.join(BINARY_TASKS + (CAPTION_TASK,))}",
                    )
                )
                continue
            items.append(
                {
                    "id": f"{obj['video_id']}:{k + 1}",
                    "file": str(f),
                    **{x: obj[x] for x in ("video_id", "task", "text", "label")},
                    "reply": reply,
                }
            )
    return Loaded(tuple(items), tuple(problems), files=tuple(str(f) for f in files))


def _words(text: str) -> list[str]:
    return [w for w in re.findall(r"[a-z0-9']+", text.lower()) if w not in _STOP]


def caption_overlap(reference: str, hypothesis: str) -> dict:
    """Unigram precision / recall / F1 of content words (clipped counts)."""
    ref, hyp = _words(reference), _words(hypothesis)
    common = sum(min(ref.count(w), hyp.count(w)) for w in set(hyp))
    p = common / len(hyp) if hyp else 0.0
    r = common / len(ref) if ref else 0.0
    return {"precision": p, "recall": r, "f1": 2 * p * r / (p + r) if p + r else 0.0}


def score_avhbench(loaded: Loaded[dict]) -> dict:
    if not loaded.items:
        raise InputError(
            "no valid AVHBench objects to score",
            file=", ".join(loaded.files) or None,
            fix="add the model's reply to every object under 'prediction'",
        )
    by: dict[str, list[dict]] = defaultdict(list)
    rows = []
    for it in loaded.items:
        if it["task"] == CAPTION_TASK:
            row = {**it, **caption_overlap(it["label"], it["reply"]), "read": None}
        else:
            ex = extract_yesno(it["reply"], question=it["text"])
            row = {**it, "read": ex.label, "reason": ex.reason, "correct": ex.label == it["label"].strip().lower()}
        rows.append(row)
        by[it["task"]].append(row)
    tasks = {}
    for task, members in by.items():
        if task == CAPTION_TASK:
            n = len(members)
            coco = coco_caption_scores({m["id"]: [m["label"]] for m in members}, {m["id"]: m["reply"] for m in members})
            for m in members:
                m.update(coco["items"].get(m["id"], {"meteor": None, "cider": None}))
            tasks[task] = {
                "n": n,
                "meteor": coco["meteor"],
                "cider": coco["cider"],
                **{f"word_{k}": sum(m[k] for m in members) / n for k in ("precision", "recall", "f1")},
                "metric": "METEOR and CIDEr-D (COCO caption evaluation); word_*: content-word overlap",
                **({"metric_error": coco["error"]} if coco["error"] else {}),
            }
            continue
        ref = [m["label"].strip().lower() for m in members]
        hyp = [m["read"] for m in members]
        tp = sum(r == "yes" and h == "yes" for r, h in zip(ref, hyp))
        said_yes = sum(h == "yes" for h in hyp)
        pos = sum(r == "yes" for r in ref)
        p = tp / said_yes if said_yes else None
        r_ = tp / pos if pos else None
        f1 = 2 * p * r_ / (p + r_) if p and r_ else (0.0 if p == 0 or r_ == 0 else None)
        pct = lambda v: None if v is None else round(100 * v, 1)  # noqa: E731 - the leaderboard prints one decimal
        tasks[task] = {
            "n": len(members),
            "accuracy_percent": pct(sum(m["correct"] for m in members) / len(members)),
            "precision_percent": pct(p),
            "recall_percent": pct(r_),
            "f1_percent": pct(f1),
            "yes_percent": pct(said_yes / len(members)),
            "unscored": sum(h not in ("yes", "no") for h in hyp),
        }
    return {
        "benchmark": "avhbench",
        "files": list(loaded.files),
        "n_items": len(rows),
        "tasks": tasks,
        "problems": [p.text() for p in loaded.problems],
        "items": rows,
    }
