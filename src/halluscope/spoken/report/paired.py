"""Report section: paired tests for Table 2 (O vs T on the same test items; detector vs detector).

Accuracy: exact McNemar; macro-F1: paired approximate randomization (halluscope.metrics.paired). Only items
predicted under both conditions are paired, and that coverage is the n of each row.
"""

from __future__ import annotations

from collections import defaultdict
from itertools import combinations

from halluscope.core.records import Prediction
from halluscope.core.store import Store
from halluscope.report.sections import Section, register_section
from halluscope.report.table import Table
from halluscope.spoken.build import BuildResult, load_build_or_none
from halluscope.spoken.detect.runs import detect_runs

ROUNDS = 2000


def latest_detect_runs(
    store: Store, command: str = "detect", stage: str = "detect"
) -> dict[tuple[str, str, str], dict[str, Prediction]]:
    """(row key, task, input) -> predictions of the latest run of each distinct config (spoken/detect/runs.py)."""
    return {(d.key, d.task, d.input): d.predictions for d in detect_runs(store, command, stage)}


def _paired_row(labels: tuple[str, ...], a: dict[str, Prediction], b: dict[str, Prediction], ids: list[str]) -> dict:
    from halluscope.metrics.paired import mcnemar, paired_randomization

    ref = [a[i].gold for i in ids]
    ha, hb = [a[i].predicted for i in ids], [b[i].predicted for i in ids]
    mc = mcnemar(reference=ref, hypothesis_a=ha, hypothesis_b=hb)
    pr = paired_randomization(
        reference=ref, hypothesis_a=ha, hypothesis_b=hb, labels=labels, rounds=ROUNDS, bootstrap=0
    )
    return {
        "n": len(ids),
        "acc_a": mc.a_correct / mc.n,
        "acc_b": mc.b_correct / mc.n,
        "mcnemar_p": mc.p_value,
        "f1_a": pr.a,
        "f1_b": pr.b,
        "f1_delta": pr.difference,
        "randomization_p": pr.p_value,
    }


def paired_rows(store: Store, build: BuildResult) -> tuple[list[dict], list[dict]]:
    from halluscope.spoken.detect.run import LABELS

    runs = latest_detect_runs(store)
    test = {
        k: {i: p for i, p in preds.items() if p.split == "test" and i in build.samples} for k, preds in runs.items()
    }
    langs = sorted({v.language for v in build.samples.values()})
    o_vs_t, models = [], []
    for (det, task, inp), preds in test.items():
        if inp != "text" or (det, task, "transcript") not in test:
            continue
        other = test[(det, task, "transcript")]
        for lang in [*langs, "all"]:
            ids = sorted(i for i in preds if i in other and (lang == "all" or build.samples[i].language == lang))
            if ids:
                o_vs_t.append(
                    {"detector": det, "language": lang, "task": task, **_paired_row(LABELS[task], preds, other, ids)}
                )
    by_cell: dict[tuple[str, str], list[str]] = defaultdict(list)
    for det, task, inp in test:
        by_cell[(task, inp)].append(det)
    for (task, inp), dets in sorted(by_cell.items()):
        for da, db in combinations(sorted(dets), 2):
            a, b = test[(da, task, inp)], test[(db, task, inp)]
            for lang in [*langs, "all"]:
                ids = sorted(i for i in a if i in b and (lang == "all" or build.samples[i].language == lang))
                if ids:
                    models.append(
                        {
                            "detector_a": da,
                            "detector_b": db,
                            "task": task,
                            "input": inp,
                            "language": lang,
                            **_paired_row(LABELS[task], a, b, ids),
                        }
                    )
    return o_vs_t, models


O_T_COLS = [
    ("detector", "Detector"),
    ("language", "Lang"),
    ("task", "Task"),
    ("n", "n paired"),
    ("acc_a", "O Acc"),
    ("acc_b", "T Acc"),
    ("mcnemar_p", "McNemar p"),
    ("f1_a", "O F1"),
    ("f1_b", "T F1"),
    ("f1_delta", "F1 O-T"),
    ("randomization_p", "Rand. p (F1)"),
]
MODEL_COLS = [
    ("detector_a", "A"),
    ("detector_b", "B"),
    ("task", "Task"),
    ("input", "Input"),
    ("language", "Lang"),
    ("n", "n paired"),
    ("acc_a", "A Acc"),
    ("acc_b", "B Acc"),
    ("mcnemar_p", "McNemar p"),
    ("f1_a", "A F1"),
    ("f1_b", "B F1"),
    ("f1_delta", "F1 A-B"),
    ("randomization_p", "Rand. p (F1)"),
]
NOTE = (
    f"Paired on the test items predicted under both conditions (n). Accuracy: exact McNemar test; macro-F1: "
    f"paired approximate randomization ({ROUNDS} rounds, exact enumeration when at most 16 items differ). "
    "Missing predictions count as errors."
)


@register_section
def paired_section(store: Store) -> Section | None:
    build = load_build_or_none(store)
    if build is None:
        return None
    o_vs_t, models = paired_rows(store, build)
    if not o_vs_t and not models:
        return None
    return Section(
        "Table 2 paired tests",
        [
            NOTE,
            Table("table2_paired_o_vs_t", O_T_COLS, o_vs_t, title="O vs T (same detector)", shown=bool(o_vs_t)),
            Table(
                "paired_detectors", MODEL_COLS, models, title="Detector vs detector (same input)", shown=bool(models)
            ),
        ],
    )
