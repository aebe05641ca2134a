"""Which step or import produced each response a MISHAP run holds, and the populations tables select by.

One run can hold MISHAP-Bench's (seed 001) own answers ('mishap answer', one model at a time) and closed-form
responses imported for the validity study ('mishap validity import': HalluAudio, AHa-Bench, ...); people label
both in one annotation app. Every agreement, ablation and validity table selects its responses and labels by
provenance explicitly (``population``) and states the n of that population, so imported responses never enter
MISHAP-Bench's agreement and the paper's answers never enter the validity study's.
"""

from __future__ import annotations

from collections.abc import Mapping

from halluscope.core.store import Store

ANSWERS = "mishap answer"  # MISHAP-Bench answers collected by 'halluscope mishap answer'
IMPORTED = "mishap validity import"  # responses imported by 'halluscope mishap validity import'


def provenance(store: Store) -> dict[str, str]:
    """response id -> what produced it: 'mishap answer <model>' or 'mishap validity import <benchmark>/<model>'."""
    from halluscope.core.errors import HalluscopeError
    from halluscope.mishap.answers import load_answers
    from halluscope.mishap.validity_items import load_validity

    out = {v.id: f"{IMPORTED} {v.benchmark}/{v.model}" for v in load_validity(store).values()}
    try:
        out.update({a.id: f"{ANSWERS} {a.model}" for a in load_answers(store).values()})
    except HalluscopeError:  # a validity-only run has no questions, so no answers
        pass
    return out


def population(store: Store, source: str) -> set[str]:
    """The ids of the responses ``source`` (ANSWERS or IMPORTED) produced."""
    return {k for k, p in provenance(store).items() if p.startswith(source + " ")}


def labels_of(human: Mapping[tuple[str, str], str], ids: set[str]) -> dict[tuple[str, str], str]:
    """The (response, annotator) labels of the responses in ``ids`` only."""
    return {k: v for k, v in human.items() if k[0] in ids}
