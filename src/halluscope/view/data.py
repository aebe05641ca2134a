"""What the viewer shows, read from a run through the Store: a compact index (one row per item, every field a
filter needs) and each item's detail, built on demand (a 12,000-item run is indexed, not rendered, at start).

Spoken items (seed 000): original and rewrite with every recorded edit located, self-assessment, judges' ratings,
the clip, the transcript aligned to the text word by word (jiwer.process_words on the App. A.4 normalised
strings, the same ones WER is computed on), and each detector run's prediction with its raw reply (calls table).
MISHAP items (seed 001): one per question, every model's answer with its decoding, verdict, stance, evidence and
human labels. Closed-form items: question, reply, strict and compat readings and why they differ.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote

from halluscope.core.errors import HalluscopeError
from halluscope.core.gctune import fewer_full_collections
from halluscope.core.keys import AudioKey, DetectRunKey
from halluscope.core.records import AudioRef, Change, Judgement, MishapClip, Prediction, RewriteLog, Transcript, Variant
from halluscope.core.store import R, Store, check_run_dir
from halluscope.view.closedform import load_closedform as load_closedform
from halluscope.view.text import _mark as _mark, alignment as alignment, reply_text as reply_text

PAGE = 50  # items per page in the list and per data chunk of an export


@dataclass
class ViewData:
    """The index, the detector runs, and item details on demand; ``audio`` maps audio keys to (path, sha256)."""

    run_dir: Path
    index: list[dict]
    runs: list[dict]
    judges: list[str]
    detail_of: Callable[[str], dict]
    audio: dict[str, tuple[str | Path, str | None]] = field(default_factory=dict)
    roots: list[Path] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    quality: dict[str, dict[str, dict]] = field(default_factory=dict)  # item -> annotator -> latest rating
    texts: dict[str, str] = field(default_factory=dict)  # item -> id, texts and replies (search, casefolded then)
    stale: list[dict] = field(default_factory=list)  # results the report leaves out, with their commands

    def __post_init__(self) -> None:
        self.position = {r["id"]: i for i, r in enumerate(self.index)}
        self._cache: dict[str, dict] = {}
        self._folded: dict[str, str] | None = None
        self._lock = threading.Lock()

    def detail(self, item_id: str) -> dict:
        with self._lock:
            if item_id not in self._cache:
                if item_id not in self.position:
                    raise KeyError(item_id)
                self._cache[item_id] = self.detail_of(item_id)
            return self._cache[item_id]

    def chunk(self, n: int) -> dict[str, dict]:
        """The details of the items at index positions [n * PAGE, (n + 1) * PAGE)."""
        return {r["id"]: self.detail(r["id"]) for r in self.index[n * PAGE : (n + 1) * PAGE]}

    def rated(self, row: dict) -> None:
        """A new speech-quality rating: the item's index row and detail show it."""
        self.quality.setdefault(row["item_id"], {})[row["annotator"]] = row
        with self._lock:
            self._cache.pop(row["item_id"], None)
        self.index[self.position[row["item_id"]]]["q"] = _quality_state(self.quality[row["item_id"]])

    def search(self, q: str) -> list[str]:
        """Ids of items whose id, text, transcript or answers contain every word of ``q`` (case-insensitive)."""
        words = q.casefold().split()
        with self._lock:
            if self._folded is None:  # folded at the first search, not at start (12,000 articles)
                self._folded = {k: v.casefold() for k, v in self.texts.items()}
        return [r["id"] for r in self.index if all(w in self._folded.get(r["id"], "") for w in words)]

    def wire_index(self) -> dict:
        """The index as it travels to the page: its keys once ("columns") and each item's values in their order
        ("rows"; null where an item's kind has no such key): half the bytes of a list of objects, so half the time
        to encode and to parse at 12,000 items. The page makes the objects again."""
        columns = list(dict.fromkeys(k for row in self.index for k in row))
        return {"columns": columns, "rows": [[row.get(c) for c in columns] for row in self.index]}

    def meta(self) -> dict:
        return {
            "run": str(self.run_dir),
            "n": len(self.index),
            "page": PAGE,
            "runs": self.runs,
            "judges": self.judges,
            "notes": self.notes,
            "stale": self.stale,
        }


class _Calls:
    """Raw replies by call key from a read-only, thread-safe Store (the viewer never writes the store through this)."""

    def __init__(self, run_dir: Path) -> None:
        self._store = Store(run_dir, create=False, readonly=True, threads=True)

    def latest(self, key: str | None) -> tuple[str | None, str | None]:
        found = self._store.latest_call(key) if key else None
        if found is None:
            return None, None
        return reply_text(found[0]), found[1]

    def labels(self) -> list:
        return self._store.labels()

    def result(self, stage: str, fingerprint: str, item_id: str, cls: type[R]) -> R | None:
        """One item's stored result of a stage (None when it has none)."""
        return self._store.result(stage, fingerprint, item_id, cls)


def _item_index(run_dir: str, stages: dict[str, str]) -> tuple[list, dict[str, tuple], list[dict]]:
    """What the index shows of a spoken build's predictions and clips, small to send back from a forked process:
    each detect run as the report labels it (display names, never a temporary path) as (row label, task, input,
    detect stage fingerprint, item -> (predicted, gold, status)); item -> (clip path, sha256). A detail reads its
    item's prediction and clip records whole; and the detect runs left out as stale (halluscope/current.py)."""
    from halluscope.current import stale_rows
    from halluscope.spoken import language_stages
    from halluscope.spoken.detect.runs import detect_runs

    with Store(run_dir, create=False, readonly=True) as store:  # its own connection: one must not cross a fork
        runs = [
            (
                d.key,
                d.task,
                d.input,
                d.run.stages["detect"],
                {k: (p.predicted, p.gold, p.status) for k, p in d.predictions.items()},
            )
            for d in detect_runs(store)
        ]
        clips = {k: (a.path, a.sha256) for k, a in language_stages.results(store, stages, "tts", AudioRef).items()}
        stale = stale_rows(store, "detect", "detect realworld")  # read with detect_runs' selection, at no cost
    return runs, clips, stale


def _spoken(
    store: Store,
    calls: _Calls,
    index: list[dict],
    details: dict[str, Callable[[], dict]],
    texts: dict[str, str],
    audio: dict[str, tuple[str | Path, str | None]],
    runs: list[dict],
    judges: list[str],
    quality: dict[str, dict[str, dict]],
    audio_src: Callable[[str], str],
    stale: list[dict],
) -> None:
    from halluscope.core.forked import in_fork
    from halluscope.spoken import language_stages
    from halluscope.spoken.detect.splits import split_by_article
    from halluscope.spoken.generate.llm import LOG_STAGE

    manifest = store.latest_manifest("build spoken")
    if manifest is None:
        return
    st, run_dir = dict(manifest.stages), str(store.run_dir)
    with in_fork(_item_index, run_dir, st) as later:  # the samples here, the rest on the other core meanwhile
        samples = {
            **store.results("ingest", st["ingest"], Variant),
            **store.results("generate", st["generate"], Variant),
        }
        heard = language_stages.results(store, st, "asr", Transcript)
        found, clips, stale_runs = later.result() if later is not None else _item_index(run_dir, st)
    stale.extend(stale_runs)
    from halluscope.core.runs import latest_run
    from halluscope.core.spec import display_name

    preds: dict[str, dict[str, tuple]] = {}  # run key -> item -> (predicted, gold, status)
    stage_of: dict[str, str] = {}  # run key -> its detect stage's fingerprint (a detail reads its predictions)
    for det, task, input_, fingerprint, per_item in found:
        key = str(DetectRunKey(det, task, input_))
        preds[key], stage_of[key] = per_item, fingerprint
        runs.append({"key": key, "detector": det, "task": task, "input": input_, "n": len(per_item)})
    judged: dict[str, dict[str, Judgement]] = {}
    from halluscope.spoken.judge.run import stored_judgements

    for spec, js in stored_judgements(store, {i: v.language for i, v in samples.items()}, latest_run=True).items():
        judges.append(spec)  # the key of the judge's ratings (display: display_name in the page)
        for k, j in js.items():
            judged.setdefault(k, {})[spec] = j
    log_key = (LOG_STAGE, st["generate"])  # each item's RewriteLog is read with its detail, not at start
    last = latest_run(store, "detect")
    splits = split_by_article(samples.values(), seed=last.config.seed) if last else {}  # train items: no prediction

    for k in sorted(samples, key=lambda k: (samples[k].language, samples[k].article_id, k)):
        v = samples[k]
        a, t = clips.get(k), heard.get(k)  # (path, sha256), Transcript
        outcome, status, split = {}, {}, splits.get(v.article_id)
        for rk, ps in preds.items():
            if (got := ps.get(k)) is not None:
                predicted, gold, status[rk] = got
                outcome[rk] = "none" if predicted is None else ("correct" if predicted == gold else "wrong")
        if a is not None:
            audio[f"spoken:{k}"] = (os.path.join(run_dir, a[0]), a[1])  # a str: 12,000 Paths cost 0.2 s
        index.append(
            {
                "id": k,
                "kind": "spoken",
                "lang": v.language,
                "type": v.type,
                "severity": v.severity,
                "label": v.label,
                "split": split,
                "wer": t.wer if t else None,
                "audio": a is not None,
                "transcript": t is not None,
                "outcome": outcome,
                "status": status,
                "models": [],
                "judged": k in judged,
                "q": _quality_state(quality.get(k)),
                "title": v.text[:90],
            }
        )
        texts[k] = f"{k}\n{v.text}\n{t.text if t else ''}"

        def detail(v: Variant = v, t: Transcript | None = t) -> dict:
            src = samples.get(v.article_id) if v.label == 1 else None
            clip = language_stages.part_for(st, "tts", v.language) if v.id in clips else None
            a = calls.result(*clip, v.id, AudioRef) if clip else None
            changes: tuple[Change, ...] = v.changes
            rewrite, miss_after = _mark(v.text, [(i, c.after) for i, c in enumerate(changes)])
            original, miss_before = _mark(src.text, [(i, c.before) for i, c in enumerate(changes)]) if src else ([], [])
            log = calls.result(*log_key, v.id, RewriteLog)
            sa = log.self_assessment if log else None
            predictions = []
            for rk, ps in preds.items():
                p = calls.result("detect", stage_of[rk], v.id, Prediction) if v.id in ps else None
                if p is None:
                    continue
                raw, call_status = calls.latest(p.call_key)
                predictions.append(
                    {
                        "run": rk,
                        "detector": DetectRunKey.decode(rk).detector,
                        "task": p.task,
                        "input": p.input,
                        "split": p.split,
                        "gold": p.gold,
                        "predicted": p.predicted,
                        "status": p.status,
                        "answer": p.answer,
                        "reason": p.reason,
                        "raw": raw,
                        "call_status": call_status,
                        "outcome": "none" if p.predicted is None else ("correct" if p.predicted == p.gold else "wrong"),
                    }
                )
            return {
                "id": v.id,
                "kind": "spoken",
                "article_id": v.article_id,
                "language": v.language,
                "label": v.label,
                "type": v.type,
                "severity": v.severity,
                "generator": v.generator,
                "checks": v.checks,
                "text": v.text,
                "rewrite": rewrite,
                "original": original,
                "edits": [
                    {**c.model_dump(), "located": i not in miss_after and i not in miss_before}
                    for i, c in enumerate(changes)
                ],
                "self_assessment": sa.model_dump() if sa else None,
                "judges": [
                    {
                        "judge": display_name(j.spec),
                        "status": j.status,
                        "scores": j.scores,
                        "reason": j.unscored_reason,
                        "raw": j.raw_text,
                    }
                    for j in judged.get(v.id, {}).values()
                ],
                "audio": None
                if a is None
                else {
                    "src": audio_src(str(AudioKey("spoken", v.id))),
                    "voice": a.voice,
                    "duration_s": a.duration_s,
                    "engine": a.engine,
                },
                "transcript": None
                if t is None
                else {"text": t.text, "asr": t.asr, "wer": t.wer, "cer": t.cer, "alignment": alignment(v.text, t.text)},
                "predictions": predictions,
                "quality": list(quality.get(v.id, {}).values()),
            }

        details[k] = detail


def _quality_state(rows: dict[str, dict] | None) -> str:
    if not rows:
        return ""
    return "excluded" if any(r["excluded"] for r in rows.values()) else "rated"


def _mishap(
    store: Store,
    calls: _Calls,
    index: list[dict],
    details: dict[str, Callable[[], dict]],
    texts: dict[str, str],
    audio: dict[str, tuple[str | Path, str | None]],
    audio_src: Callable[[str], str],
) -> list[Path]:
    from halluscope.mishap.annotate import audio_roots
    from halluscope.mishap.answers import load_answers
    from halluscope.mishap.clips import kept_clips
    from halluscope.mishap.judge import load_judgements
    from halluscope.mishap.questions import load_questions
    from halluscope.mishap.rubrics import current_rubrics

    clips: dict[str, MishapClip] = kept_clips(store)
    try:
        questions = load_questions(store)
    except HalluscopeError:  # clips only so far
        questions = {}
    rubrics = current_rubrics(store) if questions else {}
    answers = load_answers(store) if questions else {}
    verdicts = load_judgements(store) if questions else {}
    human: dict[str, dict[str, dict]] = {}
    from halluscope.current import select

    # the latest label per annotator on the text shown now; labels on a text since re-made are listed as stale
    for (aid, who), a in select(store, "labels")["labels"].current.items():
        human.setdefault(aid, {})[who] = {"annotator": who, "label": a.label, "note": a.note}

    def label(model: str) -> str:  # the report's row label: display name, then the decoding method
        from halluscope.core.spec import display_name
        from halluscope.mitigation import method_label

        method = method_label(model)
        return display_name(model) + ("" if method == "W/O" else f" · {method}")

    by_q: dict[str, list] = {}
    for a in sorted(answers.values(), key=lambda a: (a.model, a.seed is not None, a.seed or 0)):
        by_q.setdefault(a.question_id, []).append(a)
    for c in clips.values():
        audio[f"clip:{c.id}"] = (Path(c.audio), c.sha256)
    for qid in sorted(questions):
        q = questions[qid]
        clip = clips.get(q.clip_id)
        ans = by_q.get(qid, [])
        index.append(
            {
                "id": qid,
                "kind": "mishap",
                "lang": None,
                "type": q.strategy,
                "severity": q.category,
                "domain": q.domain,
                "label": None,
                "split": None,
                "wer": None,
                "audio": clip is not None,
                "transcript": False,
                "outcome": {},
                "status": {label(a.model): a.status for a in ans},
                "verdicts": sorted({v.verdict for a in ans if (v := verdicts.get(a.id)) and v.verdict}),
                "models": sorted({label(a.model) for a in ans}),
                "judged": any(a.id in verdicts for a in ans),
                "q": "",
                "title": q.text[:90],
            }
        )
        texts[qid] = "\n".join([qid, q.text, *(a.text or "" for a in ans)])

        def detail(q=q, clip=clip, ans=ans) -> dict:  # type: ignore[no-untyped-def]
            rows = []
            for a in ans:
                v = verdicts.get(a.id)
                rows.append(
                    {
                        "id": a.id,
                        "model": label(a.model),
                        "spec": a.model,
                        "decoding": "greedy" if a.seed is None else f"sampled (seed {a.seed})",
                        "status": a.status,
                        "text": a.text,
                        "error": a.error,
                        "verdict": v.verdict if v else None,
                        "stance": v.stance if v else None,
                        "judge": v.judge if v else None,
                        "judge_status": v.status if v else None,
                        "judge_reason": v.unscored_reason if v else None,
                        "judge_raw": v.raw_text if v else None,
                        "evidence": [s.model_dump() for s in v.searches] if v else [],
                        "human": list(human.get(a.id, {}).values()),
                    }
                )
            r = rubrics.get(q.id)
            return {
                "id": q.id,
                "kind": "mishap",
                "domain": q.domain,
                "category": q.category,
                "strategy": q.strategy,
                "question": q.text,
                "invented_source": q.invented_source,
                "rubric": r.text if r else None,
                "rubric_version": r.version if r else None,
                "clip": None
                if clip is None
                else {
                    "id": clip.id,
                    "description": clip.description,
                    "description_kind": clip.description_kind,
                    "source": clip.source,
                    "duration_s": clip.duration_s,
                    "src": audio_src(str(AudioKey("clip", clip.id))),
                },
                "answers": rows,
            }

        details[qid] = detail
    return audio_roots(store.run_dir)


@fewer_full_collections()  # every item of the run held at once: core/gctune.py
def load_view(
    run_dir: str | Path, *, closedform: Sequence[str] = (), audio_src: Callable[[str], str] | None = None
) -> ViewData:
    """Index a run (a spoken build, a MISHAP run, or both) plus closed-form prediction files."""
    from halluscope.view.quality import latest_quality

    run_dir = check_run_dir(run_dir).resolve()  # once: relative, ~ and symlinked RUN paths give one real folder
    src = audio_src or (lambda key: f"/audio/{quote(key, safe='')}")
    index: list[dict] = []
    details: dict[str, Callable[[], dict]] = {}
    audio: dict[str, tuple[str | Path, str | None]] = {}
    runs: list[dict] = []
    judges: list[str] = []
    roots = [run_dir.resolve()]
    notes: list[str] = []
    texts: dict[str, str] = {}
    quality = latest_quality(run_dir)
    calls = _Calls(run_dir)
    with Store(run_dir, create=False, lock=False) as store:
        from halluscope.current import stale_rows

        stale: list[dict] = []  # what the report leaves out (halluscope/current.py), listed on the page
        if store.latest_manifest("build spoken") is not None:
            _spoken(store, calls, index, details, texts, audio, runs, judges, quality, src, stale)
        stale += stale_rows(store, "answers", "verdicts", "labels")
        if store.latest_manifest("mishap clips") is not None:
            roots = _mishap(store, calls, index, details, texts, audio, src)
    for row, detail in load_closedform(closedform):
        index.append(row)
        details[row["id"]] = detail
        texts[row["id"]] = f"{row['id']}\n{row['title']}"
        for k in row["outcome"]:
            if not any(r["key"] == k for r in runs):
                run = DetectRunKey.decode(k)
                runs.append({"key": k, "detector": run.detector, "task": run.task, "input": "closed-form", "n": 0})
    if not index:
        raise HalluscopeError(
            f"{run_dir} holds no items to view: no 'build spoken' and no 'mishap clips' run, and no "
            "closed-form predictions file. Fix: build the run first, or give closed-form predictions FORMAT=FILE"
        )
    seen: set[str] = set()
    for r in index:
        if r["id"] in seen:
            raise HalluscopeError(
                f"item id {r['id']!r} appears twice (a spoken sample and a MISHAP question share it); "
                "expected ids unique across the run. Fix: view them from separate run folders"
            )
        seen.add(r["id"])
    return ViewData(
        run_dir=run_dir,
        index=index,
        runs=runs,
        judges=judges,
        detail_of=lambda k: details[k](),
        audio=audio,
        roots=roots,
        notes=notes,
        stale=stale,
        quality=quality,
        texts=texts,
    )
