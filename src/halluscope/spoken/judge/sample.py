"""Stratified sample of n items per type x severity x language cell (seed 000, section 3.4: n = 8, 216 items)."""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from halluscope.core.hashing import derived_seed
from halluscope.core.records import LANGUAGES, SEVERITIES, TYPES, Variant

Cell = tuple[str, str, str]  # (type, severity, language)


@dataclass(frozen=True)
class Sample:
    """Chosen item ids, and per cell how many rewrites existed and how many were taken."""

    ids: tuple[str, ...]
    cells: dict[Cell, tuple[int, int]]
    per_cell: int

    @property
    def short_cells(self) -> dict[Cell, tuple[int, int]]:
        """Cells with fewer rewrites than asked for: (available, taken)."""
        return {c: (avail, taken) for c, (avail, taken) in self.cells.items() if taken < self.per_cell}


def stratified_sample(variants: Iterable[Variant], *, per_cell: int, seed: int) -> Sample:
    """Each cell is drawn on its own seeded shuffle, so adding items to one cell leaves the others unchanged."""
    by_cell: dict[Cell, list[str]] = defaultdict(list)
    langs = set()
    for v in variants:
        if v.label == 1 and v.type and v.severity:
            by_cell[(v.type, v.severity, v.language)].append(v.id)
            langs.add(v.language)
    chosen: list[str] = []
    cells: dict[Cell, tuple[int, int]] = {}
    for t in TYPES:
        for s in SEVERITIES:
            for lang in (lang for lang in LANGUAGES if lang in langs):
                ids = sorted(by_cell.get((t, s, lang), []))
                random.Random(derived_seed(seed, "judge-sample", t, s, lang)).shuffle(ids)
                take = ids[:per_cell]
                chosen += take
                cells[(t, s, lang)] = (len(ids), len(take))
    return Sample(ids=tuple(sorted(chosen)), cells=cells, per_cell=per_cell)
