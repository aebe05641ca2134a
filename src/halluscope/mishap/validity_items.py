"""The closed-form responses imported for the validity study (halluscope.mishap.validity): their record, and how
the annotation app and the judge configurations read them from the store. Below validity.py and ablation.py, so
neither imports the other for them."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field

from halluscope.core.records import Groundedness, MishapDomain, Record
from halluscope.core.store import Store

Benchmark = Literal["halluaudio", "aha", "kuan"]
BENCHMARKS: tuple[Benchmark, ...] = ("halluaudio", "aha", "kuan")
NAMES = {"halluaudio": "HalluAudio", "aha": "AHa-Bench", "kuan": "Kuan et al.", "mishap": "MISHAP-Bench"}
STAGE = "mishap.validity"
IMPORT = "mishap validity import"


class ValidityItem(Record):
    """One closed-form response prepared for the groundedness judge, with its benchmark's own verdict."""

    id: str = Field(description="'validity~<benchmark>~<model>~<item id>'.")
    benchmark: Benchmark
    model: str
    item_id: str = Field(description="The item's id in its benchmark file(s).")
    domain: MishapDomain
    question: str
    response: str
    reference: str = Field(description="The gold answer as the file gives it.")
    kind: str = Field(description="How the benchmark scores it: binary, count, choice, label, unanswerable, asr.")
    description: str = Field(description="The judge's evidence: the gold answer stated as a fact about the clip.")
    rubric: str = Field(description="'Hallucinated if ... Grounded if ...' derived from the gold answer.")
    original: Groundedness | None = Field(
        description="The benchmark scorer's verdict as a hallucination label "
        "(wrong = hallucinated); None where the official scorer skips the item."
    )
    original_rule: str = Field(description="Which official rule decided it.")
    audio: str | None = Field(default=None, description="The audio path or key the file gives.")


def load_validity(store: Store) -> dict[str, ValidityItem]:
    """Every imported item, by id (a later import of the same benchmark and model replaces the earlier one)."""
    from halluscope.core.runs import latest_runs

    out: dict[str, ValidityItem] = {}
    for r in latest_runs(store, IMPORT):  # identity: benchmark and model (core/runs.py ValidityImportConfig)
        out.update(store.results(STAGE, r.stages["validity"], ValidityItem))
    return out


def annotation_rows(run_dir: str | Path) -> list[dict]:
    """The imported responses as items of the annotation app (no clip audio: closed-form files carry keys)."""
    with Store(run_dir, create=False) as store:
        items = load_validity(store)
    return [
        {
            "id": v.id,
            "question_id": v.id,
            "clip_id": f"validity:{v.benchmark}:{v.audio or v.item_id}",
            "model": v.model,
            "domain": v.domain,
            "category": "context",
            "strategy": NAMES[v.benchmark],
            "question": v.question,
            "response": v.response,
            "description": v.description,
            "rubric": v.rubric,
        }
        for v in sorted(items.values(), key=lambda v: v.id)
    ]
