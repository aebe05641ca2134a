"""Balanced subsets for zero-shot decoders (seed 000, Table 3: balanced binary and fine-grained subsets, e.g.
100/150 items per language = 50 per class, and a smaller audio subset).

A subset is drawn per (language, gold label) cell: ``per_class`` items each, seeded, from the items of the run
(for audio, only clips no longer than ``max_audio_s``, so every model hears its whole clip). The draw depends only
on the build, the task and these settings, never on the model, and the chosen ids are stored in the run
(stage ``detect.subset``), so every model, input and rerun sees the same items.
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Callable, Sequence

from pydantic import Field

from halluscope.core.errors import HalluscopeError
from halluscope.core.records import Record, Variant
from halluscope.core.stages import Stage
from halluscope.core.store import Store

STAGE = "detect.subset"
OPTIONS = ("subset", "subset_max_audio_s")  # -o keys of the zero-shot detectors


class Subset(Record):
    """The ids of one balanced subset and how many each (language, label) cell had to draw from."""

    task: str
    per_class: int
    seed: int
    max_audio_s: float | None = None
    ids: tuple[str, ...]
    cells: dict[str, dict[str, int]] = Field(description="'<language>/<label>' -> {'available', 'chosen'}.")


def balanced_subset(
    items: Sequence[Variant],
    gold: Callable[[Variant], str],
    *,
    per_class: int,
    seed: int,
    duration: Callable[[Variant], float | None] | None = None,
    max_audio_s: float | None = None,
) -> tuple[list[Variant], dict[str, dict[str, int]]]:
    """``per_class`` items of every (language, label) cell, seeded; a cell with fewer gives all it has (reported
    in the cells table, so an unbalanced subset is visible, as seed 000 reports its audio subsets)."""
    if per_class < 1:
        raise HalluscopeError(f"-o subset: expected a positive number of items per language and label, got {per_class}")
    pool = list(items)
    if max_audio_s is not None:
        if duration is None:
            raise HalluscopeError("-o subset_max_audio_s needs clip durations (a built run with audio)")
        pool = [v for v in pool if (d := duration(v)) is not None and d <= max_audio_s]
    cells: dict[tuple[str, str], list[Variant]] = defaultdict(list)
    for v in sorted(pool, key=lambda v: v.id):
        cells[(v.language, gold(v))].append(v)
    rng = random.Random(seed)
    chosen: list[Variant] = []
    table = {}
    for key in sorted(cells):
        members = cells[key]
        pick = members if len(members) <= per_class else rng.sample(members, per_class)
        chosen += pick
        table[f"{key[0]}/{key[1]}"] = {"available": len(members), "chosen": len(pick)}
    if not chosen:
        raise HalluscopeError(
            f"the balanced subset is empty: no item{' fits ' + str(max_audio_s) + ' s' if max_audio_s else ''}. "
            "Fix: raise -o subset_max_audio_s, or leave the subset options out"
        )
    return sorted(chosen, key=lambda v: v.id), table


def subset_items(
    store: Store,
    items: Sequence[Variant],
    gold: Callable[[Variant], str],
    *,
    task: str,
    per_class: int,
    seed: int,
    duration: Callable[[Variant], float | None] | None = None,
    max_audio_s: float | None = None,
) -> list[Variant]:
    """The run's balanced subset for these settings: drawn once, stored, and read back on every later call."""
    stage = Stage(
        STAGE,
        {
            "task": task,
            "per_class": per_class,
            "seed": seed,
            "max_audio_s": max_audio_s,
            "items": sorted(v.id for v in items),
        },
    )
    name = f"{task}:{per_class}:{seed}:{max_audio_s}"
    stored = store.results(STAGE, stage.fingerprint, Subset).get(name)
    if stored is None:
        chosen, cells = balanced_subset(
            items, gold, per_class=per_class, seed=seed, duration=duration, max_audio_s=max_audio_s
        )
        stored = Subset(
            task=task,
            per_class=per_class,
            seed=seed,
            max_audio_s=max_audio_s,
            ids=tuple(v.id for v in chosen),
            cells=cells,
        )
        store.put(STAGE, stage.fingerprint, name, stored)
    wanted = set(stored.ids)
    return [v for v in items if v.id in wanted]
