"""AVHBench (Sung-Bin et al., ICLR 2025, github.com/kaist-ami/AVHBench) as released, with the model's reply added to
each object under ``prediction`` (or ``pred`` / ``response`` / ``output``). Two released shapes, both a JSON array of
``{video_id, task, text, label}`` objects:

* v0, one ``{video_id}.json`` per video (``AVHBench_v0/json/``), tasks named as on the leaderboard:
  "Video-driven Audio Hallucination", "Audio-driven Video Hallucination", "AV Matching", "AV Captioning";
* v1, one QA file for every video (``qa_final_single_filtered.json``, 9,837 objects), tasks named
  "AV Hallucination (Audio)", "AV Hallucination (Video)", their unimodal variants "AV Hallucination (Audio_only)" /
  "(Video_only)" (the same questions, asked with only the audio or only the video), "AV Matching", "AV Captioning".

Both sets of names map onto the tasks below (``TASKS``); the result keeps the released names beside them. The
yes/no tasks (label Yes/No) give accuracy, precision, recall, F1 (positive 'yes') and Yes %, in percent as the
leaderboard prints them, every reply read by the strict reader against its question; a reply it cannot read as yes
or no counts as wrong and is counted apart. AVHBench releases no scorer for them, so there is no compat mode. AV
Captioning (label: the reference caption) is scored with METEOR and CIDEr, the metrics the paper reports (the COCO
caption evaluation, pycocoevalcap; one reference per video, CIDEr-D's document frequencies over the captions scored
together; the raw scores, papers often print them x100), with content-word overlap (unigram precision, recall and
F1 after lower-casing) beside them as a per-item figure that needs no Java.

Every object is counted: it is scored, or it is a problem (no reply, an unknown task, a label that is not Yes/No)
listed with its file and position and totalled by kind; ``n_objects == n_items + n_problems``.
"""

from __future__ import annotations

import json
import re
from collections import Counter, defaultdict
from collections.abc import Sequence
from pathlib import Path

from halluscope.closedform.records import Loaded, LoadProblem
from halluscope.core.errors import InputError
from halluscope.metrics.captions import coco_caption_scores
from halluscope.reply.yesno import extract_yesno, reader_summary

AUDIO, VIDEO = "Video-driven Audio Hallucination", "Audio-driven Video Hallucination"
AUDIO_ONLY, VIDEO_ONLY = "Audio Hallucination (audio only)", "Video Hallucination (video only)"
MATCHING, CAPTION_TASK = "AV Matching", "AV Captioning"
# released task name -> the task it scores; v0: the per-video files and the leaderboard, v1: the QA file
TASKS = {
    AUDIO: AUDIO,
    VIDEO: VIDEO,
    "AV Hallucination (Audio)": AUDIO,
    "AV Hallucination (Video)": VIDEO,
    "AV Hallucination (Audio_only)": AUDIO_ONLY,
    "AV Hallucination (Video_only)": VIDEO_ONLY,
    # the names the authors' fine-tuning loader gives the unimodal questions (audio-only / video-only prompt)
    "Audio Hallucination": AUDIO_ONLY,
    "Video Hallucination": VIDEO_ONLY,
    MATCHING: MATCHING,
    CAPTION_TASK: CAPTION_TASK,
}
BINARY_TASKS = (VIDEO, AUDIO, MATCHING, AUDIO_ONLY, VIDEO_ONLY)
REPLY_KEYS = ("prediction", "pred", "response", "output")
FIELDS = ("video_id", "task", "text", "label")
_FIX_SHAPE = "pass AVHBench's {video_id}.json files or its qa_final_single_filtered.json as released"
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


def _problem(f: Path, k: int, field: str | None, message: str, fix: str) -> LoadProblem:
    # ``row`` is the object's 1-based position in the array; the message names it too
    return LoadProblem(file=str(f), row=k, field=field, message=f"object {k}: {message}", fix=fix)


def _read_object(f: Path, k: int, obj: object) -> dict | LoadProblem:
    """One released object with its reply as an item, or the problem that keeps it out of the score."""
    if not isinstance(obj, dict):
        return _problem(f, k, None, f"expected a JSON object, got {type(obj).__name__}", _FIX_SHAPE)
    fields: dict[str, str] = {}
    for key in FIELDS:
        value = obj.get(key)
        if key == "video_id" and isinstance(value, int) and not isinstance(value, bool):
            value = f"{value:05d}"  # a file re-saved with numeric ids
        if not isinstance(value, str) or not value.strip():
            return _problem(
                f,
                k,
                key,
                f"expected a text field '{key}'",
                "every object needs video_id, task, text and label, as released",
            )
        fields[key] = value
    task = TASKS.get(fields["task"].strip())
    if task is None:
        return _problem(
            f,
            k,
            "task",
            f"unknown task {fields['task']!r}",
            f"use one of the released task names: {', '.join(TASKS)}",
        )
    label = fields["label"].strip()
    if task != CAPTION_TASK and label.lower() not in ("yes", "no"):
        return _problem(f, k, "label", f"a yes/no task needs label Yes or No, got {label[:40]!r}", _FIX_SHAPE)
    reply = next((obj[key] for key in REPLY_KEYS if isinstance(obj.get(key), str)), None)
    if reply is None:
        return _problem(
            f,
            k,
            "prediction",
            f"no reply: expected the model's reply as text under {' / '.join(REPLY_KEYS)}",
            "add the model's reply to every object under 'prediction' (\"\" for an empty reply)",
        )
    return {
        "id": f"{fields['video_id']}:{k}" if f.stem == fields["video_id"] else f"{f.stem}:{k}",
        "file": str(f),
        "position": k,
        "video_id": fields["video_id"],
        "task": task,
        "released_task": fields["task"],
        "text": fields["text"],
        "label": label,
        "reply": reply,
    }


def load_avhbench(files: Sequence[str | Path]) -> Loaded[dict]:
    """Every object of the given arrays: an item (with its reply) or a problem, none dropped silently."""
    items: list[dict] = []
    problems: list[LoadProblem] = []
    names: Counter[str] = Counter()
    for f in map(Path, files):
        try:
            data = json.loads(f.read_text(encoding="utf-8"))
        except FileNotFoundError as exc:
            raise InputError("file not found", file=str(f), fix=_FIX_SHAPE) from exc
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise InputError(f"not a JSON array: {exc}", file=str(f), fix=_FIX_SHAPE) from exc
        if not isinstance(data, list):
            raise InputError(
                f"expected a JSON array of QA objects, got {type(data).__name__}", file=str(f), fix=_FIX_SHAPE
            )
        for k, obj in enumerate(data, start=1):
            item = _read_object(f, k, obj)
            if isinstance(item, LoadProblem):
                problems.append(item)
                continue
            names[item["released_task"]] += 1
            items.append(item)
    notes = [f"task {name!r}: {n} object(s) scored as {TASKS[name]!r}" for name, n in sorted(names.items())]
    repeated = Counter((i["video_id"], i["task"], i["text"]) for i in items)
    twice = {key for key, n in repeated.items() if n > 1}
    if twice:
        labels: defaultdict[tuple, set[str]] = defaultdict(set)
        for i in items:
            if (i["video_id"], i["task"], i["text"]) in twice:
                labels[(i["video_id"], i["task"], i["text"])].add(i["label"].lower())
        clash = sum(len(v) > 1 for v in labels.values())
        notes.append(
            f"{len(twice)} question(s) appear more than once for the same video and task "
            f"({clash} with different labels); each object is scored as released"
        )
    return Loaded(tuple(items), tuple(problems), tuple(notes), files=tuple(str(f) for f in files))


def _words(text: str) -> list[str]:
    return [w for w in re.findall(r"[a-z0-9']+", text.lower()) if w not in _STOP]


def caption_overlap(reference: str, hypothesis: str) -> dict:
    """Unigram precision / recall / F1 of content words (clipped counts)."""
    ref, hyp = _words(reference), _words(hypothesis)
    common = sum(min(ref.count(w), hyp.count(w)) for w in set(hyp))
    p = common / len(hyp) if hyp else 0.0
    r = common / len(ref) if ref else 0.0
    return {"precision": p, "recall": r, "f1": 2 * p * r / (p + r) if p + r else 0.0}


def problem_totals(problems: Sequence[LoadProblem]) -> dict[str, int]:
    """Problems by kind (the message without its object number), most frequent first."""
    kinds = Counter(re.sub(r"^object \d+: ", "", p.message) for p in problems)
    return dict(kinds.most_common())


def _yesno_figures(members: list[dict]) -> dict:
    ref = [m["label"].lower() for m in members]
    hyp = [m["read"] for m in members]
    tp = sum(r == "yes" and h == "yes" for r, h in zip(ref, hyp))
    said_yes = sum(h == "yes" for h in hyp)
    pos = sum(r == "yes" for r in ref)
    p = tp / said_yes if said_yes else None
    r_ = tp / pos if pos else None
    f1 = 2 * p * r_ / (p + r_) if p and r_ else (0.0 if p == 0 or r_ == 0 else None)
    pct = lambda v: None if v is None else round(100 * v, 1)  # noqa: E731 - the leaderboard prints one decimal
    return {
        "n": len(members),
        "accuracy_percent": pct(sum(m["correct"] for m in members) / len(members)),
        "precision_percent": pct(p),
        "recall_percent": pct(r_),
        "f1_percent": pct(f1),
        "yes_percent": pct(said_yes / len(members)),
        "unscored": sum(h not in ("yes", "no") for h in hyp),
        "released_as": dict(Counter(m["released_task"] for m in members).most_common()),
    }


def score_avhbench(loaded: Loaded[dict]) -> dict:
    if not loaded.items:
        raise InputError(
            f"no AVHBench object could be scored ({len(loaded.problems)} problem(s); first: "
            f"{loaded.problems[0].text() if loaded.problems else 'the arrays are empty'})",
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
            row = {**it, "read": ex.label, "reason": ex.reason, "correct": ex.label == it["label"].lower()}
        rows.append(row)
        by[it["task"]].append(row)
    tasks = {}
    for task in [t for t in (*BINARY_TASKS, CAPTION_TASK) if t in by]:
        members = by[task]
        if task != CAPTION_TASK:
            tasks[task] = _yesno_figures(members)
            continue
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
    return {
        "benchmark": "avhbench",
        "files": list(loaded.files),
        "n_objects": len(rows) + len(loaded.problems),
        "n_items": len(rows),
        "n_problems": len(loaded.problems),
        "tasks": tasks,
        "reply_reader": reader_summary([r["read"] for r in rows if r["read"] is not None]),
        "problem_totals": problem_totals(loaded.problems),
        "problems": [p.text() for p in loaded.problems],
        "notes": list(loaded.notes),
        "items": rows,
    }
