"""The detect runs a report table, a paired test or the viewer shows: one query (``halluscope.current.select``: per
config, the latest run consistent with the current build), one row label per run.

Every distinct config is its own run (two zero-shot runs differing in ``--system``, ``--audio-policy`` or
``-o subset`` are two rows); a run's ``label`` is the model's display name (``-o name=``, else a short name,
never a temporary path) plus, in brackets, what differs from the model's other runs. The decoding method
(seed 001, Table 2: W/O, AAD, VCD, MTI, DoLa) and the prompting have columns of their own; ``key`` joins them
to the label where one string must tell every run apart (the viewer's run filter, the paired tests).
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass, replace

from halluscope.core.records import Prediction
from halluscope.core.runs import Run, labelled_runs
from halluscope.core.store import Store


def method_label(detector: str, options: dict) -> str:
    """The decoding row label ('W/O', 'AAD (alpha=0.5)') of the detector spec with its options on top: one
    route, whether the method came as --mitigation, -o mitigation=... or glued into the spec."""
    from halluscope.core.spec import ModelSpec
    from halluscope.mitigation import method_label as label

    return label(ModelSpec.parse(detector, options))


def column_options() -> tuple[str, ...]:
    """Options shown in a column of their own, so not in the label: prompting and the mitigation's keys."""
    from halluscope.mitigation import FIELDS

    return ("task", "input", "prompting", "mitigation", *FIELDS)


@dataclass(frozen=True)
class DetectRun:
    label: str  # display name [what differs]
    method: str  # W/O or the mitigation
    prompting: str  # direct | cot
    run: Run
    predictions: dict[str, Prediction]

    @property
    def task(self) -> str:
        return self.run.config.task

    @property
    def input(self) -> str:
        return self.run.config.input

    @property
    def key(self) -> str:
        """The label with the method and prompting when not the defaults: unique per run of a task and input."""
        extra = [x for x in (self.method, self.prompting) if x not in ("W/O", "direct")]
        return " · ".join([self.label, *extra])


_READ: weakref.WeakKeyDictionary[Store, dict[tuple[str, str], tuple[tuple[int, int], list[DetectRun]]]] = (
    weakref.WeakKeyDictionary()
)


def detect_runs(store: Store, command: str = "detect", stage: str = "detect") -> list[DetectRun]:
    """Every distinct run of ``command`` with predictions, by key, task and input: read once per open store while
    nothing is written to it (every report section asks; a write by anyone reads again), each caller getting its
    own predictions dicts (the records themselves are frozen)."""
    version = store.version()
    per_store = _READ.setdefault(store, {})
    hit = per_store.get((command, stage))
    if hit is None or hit[0] != version:
        hit = per_store[(command, stage)] = (version, _read(store, command, stage))
    return [replace(d, predictions=dict(d.predictions)) for d in hit[1]]


def _read(store: Store, command: str, stage: str) -> list[DetectRun]:
    from halluscope.current import select

    # per config, the latest run that read what the build holds now (stale ones are listed by the report)
    chosen = list(select(store, command)[command].current.values())
    found = [(r, store.results(stage, r.stages[stage], Prediction)) for r in chosen]
    found = [(r, preds) for r, preds in found if preds]
    labels = labelled_runs([r for r, _ in found], skip=column_options())
    out = [
        DetectRun(
            label,
            method_label(r.config.detector, r.config.options),
            str(r.config.options.get("prompting", "direct")),
            r,
            preds,
        )
        for (label, r), (_, preds) in zip(labels, found)
    ]
    return sorted(out, key=lambda d: (d.key, d.task, d.input))
