"""The closed-form responses imported for the validity study (halluscope.mishap.validity): their record, and how
the annotation app and the judge configurations read them from the store. Below validity.py and ablation.py, so
neither imports the other for them."""

from __future__ import annotations

from pathlib import Path

from halluscope.core.provenance import IMPORTED as IMPORT
from halluscope.core.records import ValidityBenchmark as Benchmark, ValidityItem
from halluscope.core.store import Store

__all__ = ["BENCHMARKS", "IMPORT", "NAMES", "STAGE", "Benchmark", "ValidityItem", "annotation_rows", "load_validity"]

BENCHMARKS: tuple[Benchmark, ...] = ("halluaudio", "aha", "kuan")
NAMES = {"halluaudio": "HalluAudio", "aha": "AHa-Bench", "kuan": "Kuan et al.", "mishap": "MISHAP-Bench"}
STAGE = "mishap.validity"


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
