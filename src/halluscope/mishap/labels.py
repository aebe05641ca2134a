"""MISHAP-Bench human labels: the append-only label table the annotation app writes (``Annotations``), the
answers offered for annotation (``annotation_items``), and the latest label per (answer, annotator)
(``human_labels``), the input of every agreement metric. Below the app (mishap/annotate.py) and the analyses that
read labels (judge agreement, disagreements, ablation, validity), so none of them imports the web app."""

from __future__ import annotations

import random
import time
from collections.abc import Sequence
from pathlib import Path

from halluscope.core.errors import HalluscopeError
from halluscope.core.records import MishapAnnotation, MishapClip
from halluscope.core.store import STORE_NAME, Store


def _store_file(run_dir: str | Path) -> Path:
    """RUN/halluscope.sqlite, which must exist: reading labels never creates a run directory."""
    path = Path(run_dir) / STORE_NAME
    if not path.is_file():
        what = "does not exist" if not Path(run_dir).exists() else f"has no {STORE_NAME}"
        raise HalluscopeError(
            f"{run_dir} is not a run directory ({what}); expected the folder that 'halluscope mishap "
            "clips' created. Fix: check the path, or run the earlier steps first"
        )
    return path


class Annotations:
    """The append-only label table (the Store's label methods); the latest row per (answer, annotator) counts."""

    def __init__(self, run_dir: str | Path, *, busy_s: float = 30.0) -> None:
        _store_file(run_dir)
        # the app runs beside other commands; a save waits ``busy_s`` for another process's lock, then StoreBusy
        self._store = Store(run_dir, create=False, lock=False, threads=True, busy_s=busy_s)
        self._reader: Store | None = None
        self._current: dict[str, str] | None = None
        try:
            self._store.labels()  # the table exists (made on first use) and reads
            # reads on their own connection (WAL): a save waiting for a lock never holds up a label read
            self._reader = Store(run_dir, create=False, readonly=True, threads=True)
        except HalluscopeError:
            self._store.close()
            raise

    def close(self) -> None:
        self._store.close()
        if self._reader is not None:
            self._reader.close()

    def add(
        self,
        *,
        answer_id: str,
        annotator: str,
        label: str,
        note: str = "",
        mode: str = "independent",
        save_id: str | None = None,
        response: str | None = None,
    ) -> MishapAnnotation:
        return self.save(
            answer_id=answer_id,
            annotator=annotator,
            label=label,
            note=note,
            mode=mode,
            save_id=save_id,
            response=response,
        )[0]

    def save(
        self,
        *,
        answer_id: str,
        annotator: str,
        label: str,
        note: str = "",
        mode: str = "independent",
        save_id: str | None = None,
        response: str | None = None,
    ) -> tuple[MishapAnnotation, bool]:
        """Store one label; with a ``save_id`` already stored, return that row and False (a retry stores nothing).
        The label keeps the digest of the response text labelled (``response``: the text shown; None: the run's
        current text of that response), so a label on a text since re-made is told apart (core/provenance.py)."""
        from halluscope.core.provenance import text_digest

        if response is None:
            response = self._texts().get(answer_id)
        a = MishapAnnotation(
            answer_id=answer_id,
            annotator=annotator,
            label=label,  # type: ignore[arg-type]
            note=note,
            mode=mode,  # type: ignore[arg-type]
            created=time.time(),
            answer_sha256=None if response is None else text_digest(response),
        )
        return self._store.save_label(a, save_id)

    def _texts(self) -> dict[str, str]:
        """Response id -> the run's current text (MISHAP answers and imported validity responses), read once."""
        if self._current is None:
            self._current = {it["id"]: it["response"] or "" for it in annotation_items(self._store.run_dir)[0]}
        return self._current

    def all(self) -> list[MishapAnnotation]:
        return (self._reader or self._store).labels()

    def latest(self) -> dict[tuple[str, str], MishapAnnotation]:
        return (self._reader or self._store).latest_labels()


def annotation_items(
    run_dir: str | Path, *, sample: int | None = None, seed: int = 0
) -> tuple[list[dict], dict[str, MishapClip]]:
    """The responses to annotate and clip id -> clip record: every judgeable MISHAP answer and every imported
    closed-form response (the validity study, halluscope.mishap.validity), or a seeded sample of N spread
    evenly across models (seed 001, 3.3: "approximately evenly across models")."""
    from halluscope.mishap._common import COMMANDS
    from halluscope.mishap.answers import judgeable, load_answers
    from halluscope.mishap.clips import kept_clips
    from halluscope.mishap.questions import load_questions
    from halluscope.mishap.rubrics import current_rubrics
    from halluscope.mishap.validity_items import annotation_rows

    if sample is not None and sample < 1:
        raise HalluscopeError(
            f"sample: expected a positive number of responses, got {sample}. "
            "Fix: give a sample of N >= 1, or none to annotate every response"
        )
    _store_file(run_dir)
    items: list[dict] = []
    clips: dict[str, MishapClip] = {}
    with Store(run_dir) as store:
        has_mishap = store.latest_manifest(COMMANDS["questions"]) is not None  # a validity-only run has none
        if has_mishap:
            questions, clips, rubrics = load_questions(store), kept_clips(store), current_rubrics(store)
            answers = sorted(
                (a for a in load_answers(store).values() if judgeable(a) and a.question_id in questions),
                key=lambda a: a.id,
            )
    if has_mishap:
        for a in answers:
            q = questions[a.question_id]
            clip = clips[q.clip_id]
            items.append(
                {
                    "id": a.id,
                    "question_id": q.id,
                    "clip_id": clip.id,
                    "model": a.model,
                    "domain": q.domain,
                    "category": q.category,
                    "strategy": q.strategy,
                    "question": q.text,
                    "response": a.text,
                    "description": clip.description,
                    "rubric": rubrics[q.id].text if q.id in rubrics else None,
                }
            )
    items += annotation_rows(run_dir)
    if sample is not None and sample < len(items):
        items = sorted(sample_by_model(items, sample, seed=seed), key=lambda it: it["id"])
    return items, dict(clips)


def sample_by_model(items: Sequence[dict], n: int, *, seed: int = 0) -> list[dict]:
    """A seeded sample of ``n`` items spread as evenly as the models allow: models take turns (in a seeded
    order), each giving its next item in a seeded shuffle; a model with fewer items gives all it has."""
    rng = random.Random(seed)
    by_model: dict[str, list[dict]] = {}
    for it in sorted(items, key=lambda it: it["id"]):
        by_model.setdefault(it["model"], []).append(it)
    queues = [by_model[m] for m in sorted(by_model)]
    for q in queues:
        rng.shuffle(q)
    rng.shuffle(queues)
    out: list[dict] = []
    while len(out) < n:
        for q in queues:
            if q and len(out) < n:
                out.append(q.pop())
    return out


def human_labels(run_dir: str | Path) -> dict[tuple[str, str], str]:
    """(answer id, annotator) -> latest label, on the response text the run holds now: the input of the agreement
    metrics. A label on a text since re-made is stale (halluscope/current.py ``select(store, "labels")`` lists it)."""
    from halluscope.current import select

    Annotations(run_dir).close()  # the label table exists (made on first use)
    with Store(run_dir, create=False, readonly=True) as store:
        return {k: a.label for k, a in select(store, "labels")["labels"].current.items()}
