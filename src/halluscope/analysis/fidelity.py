"""Fidelity strata (issue 31, 2): is the spoken-vs-text gap caused by the hallucination or by bad speech?

Items with a transcript and predictions on both original text (O) and transcript (T) are binned by their ASR
item WER (App. A.4 cleaning; bins WER_BINS) and, where listeners rated the clip in the viewer, by the majority
intelligibility label (seed 000, 3.4). Per bin: accuracy on O and on T (unparsable = wrong) and the paired gap
O - T (the same items), each with a percentile bootstrap interval over source articles. The trend test regresses
the per-item gap (1 if only O was right, -1 if only T, else 0) on item WER: the OLS slope, its clustered
interval, and a one-sided permutation p-value for 'the gap grows with WER'.
"""

from __future__ import annotations

import math

from halluscope.analysis._common import (
    INTELLIGIBILITY,
    detect_runs,
    item_wer,
    listener_labels,
    mean_ci,
    scored,
    slope_test,
)
from halluscope.core.records import Variant
from halluscope.core.store import Store
from halluscope.report.sections import Section, register_section
from halluscope.report.table import Figure, Table

WER_BINS = (0.0, 0.1, 0.25, 0.5, math.inf)


def bin_of(wer: float, edges: tuple[float, ...] = WER_BINS) -> str:
    for lo, hi in zip(edges, edges[1:]):
        if lo <= wer < hi:
            return f"[{lo:g}, {hi:g})" if hi != math.inf else f">= {lo:g}"
    return f">= {edges[-2]:g}"


def paired_items(
    samples: dict[str, Variant], o: dict[str, str | None], t: dict[str, str | None], gold: dict[str, str]
) -> list[tuple[str, bool, bool]]:
    """(item, O correct, T correct) for items predicted on both inputs."""
    return [(i, o[i] == gold[i], t[i] == gold[i]) for i in sorted(o.keys() & t.keys())]


def strata_rows(
    samples: dict[str, Variant],
    pairs: dict[tuple[str, str], list[tuple[str, bool, bool]]],
    strata: dict[str, str],
    order: list[str],
    by: str,
) -> list[dict]:
    """One row per (detector, task) x stratum: n, O and T accuracy and the O - T gap with clustered intervals."""
    rows = []
    for (det, task), items in sorted(pairs.items()):
        for s in order:
            cell = [(i, co, ct) for i, co, ct in items if strata.get(i) == s]
            if not cell:
                continue
            cl = [samples[i].article_id for i, _, _ in cell]
            o, t = [float(co) for _, co, _ in cell], [float(ct) for _, _, ct in cell]
            gap = [a - b for a, b in zip(o, t)]
            rows.append(
                {
                    "detector": det,
                    "task": task,
                    "by": by,
                    "stratum": s,
                    "n": len(cell),
                    "O_acc": sum(o) / len(o),
                    "O_acc_ci": mean_ci(o, cl),
                    "T_acc": sum(t) / len(t),
                    "T_acc_ci": mean_ci(t, cl),
                    "gap": sum(gap) / len(gap),
                    "gap_ci": mean_ci(gap, cl),
                }
            )
    return rows


def trend_rows(
    samples: dict[str, Variant], pairs: dict[tuple[str, str], list[tuple[str, bool, bool]]], wer: dict[str, float]
) -> list[dict]:
    rows = []
    for (det, task), items in sorted(pairs.items()):
        cell = [(i, co, ct) for i, co, ct in items if i in wer]
        test = slope_test(
            [wer[i] for i, _, _ in cell],
            [float(co) - float(ct) for _, co, ct in cell],
            [samples[i].article_id for i, _, _ in cell],
        )
        rows.append({"detector": det, "task": task, "n": len(cell), **test})
    return rows


def fidelity_data(store: Store, build: object) -> tuple[dict, dict[str, float], dict[str, str]]:
    from halluscope.spoken.detect.run import gold

    samples, transcripts = build.samples, build.transcripts  # type: ignore[attr-defined]
    runs = detect_runs(store)
    pairs = {}
    for (det, task, inp), preds in runs.items():
        if inp != "text" or (det, task, "transcript") not in runs:
            continue
        o = {i: p.predicted for i, p in scored(preds, samples).items() if i in transcripts}
        t = {i: p.predicted for i, p in scored(runs[(det, task, "transcript")], samples).items()}
        g = {i: gold(samples[i], task) for i in o.keys() | t.keys()}  # type: ignore[arg-type]
        pairs[(det, task)] = paired_items(samples, o, t, g)
    wer = {i: item_wer(tr, samples[i].text) for i, tr in transcripts.items() if i in samples}
    return pairs, wer, listener_labels(store)


def gap_plot(rows: list[dict]) -> bytes | None:
    sub = [r for r in rows if r["by"] == "WER"]
    if not sub:
        return None
    import matplotlib.pyplot as plt

    from halluscope.report.plots import png

    bins = list(dict.fromkeys(bin_of(lo) for lo in WER_BINS[:-1]))
    fig, ax = plt.subplots(figsize=(5.6, 3.4))
    for key in dict.fromkeys((r["detector"], r["task"]) for r in sub):
        line = sorted((r for r in sub if (r["detector"], r["task"]) == key), key=lambda r: bins.index(r["stratum"]))
        xs, ys = [bins.index(r["stratum"]) for r in line], [r["gap"] for r in line]
        err = [
            [y - r["gap_ci"][0] if r["gap_ci"] else 0 for y, r in zip(ys, line)],
            [r["gap_ci"][1] - y if r["gap_ci"] else 0 for y, r in zip(ys, line)],
        ]
        ax.errorbar(xs, ys, yerr=err, marker="o", capsize=3, label=f"{key[0]} {key[1]}")
    ax.axhline(0, color="grey", linewidth=0.8)
    ax.set_xticks(range(len(bins)), bins)
    ax.set_xlabel("item WER of the transcript")
    ax.set_ylabel("accuracy O - T (95% CI)")
    ax.legend(fontsize=7)
    return png(fig)


COLS = [
    ("detector", "Detector"),
    ("task", "Task"),
    ("by", "Binned by"),
    ("stratum", "Bin"),
    ("n", "n"),
    ("O_acc", "O Acc"),
    ("O_acc_ci", "O 95% CI"),
    ("T_acc", "T Acc"),
    ("T_acc_ci", "T 95% CI"),
    ("gap", "O - T"),
    ("gap_ci", "gap 95% CI"),
]
TREND_COLS = [
    ("detector", "Detector"),
    ("task", "Task"),
    ("n", "n"),
    ("slope", "gap slope per WER"),
    ("slope_ci", "slope 95% CI"),
    ("p_grows", "p (gap grows)"),
]
NOTE = (
    "Items with predictions on both original text (O) and ASR transcript (T), binned by item WER "
    "(App. A.4 cleaning) and by the listeners' majority intelligibility label where the viewer has ratings "
    "(Lost in Speech, 000, 3.4). Accuracy counts unparsable predictions as wrong; CI: percentile bootstrap over "
    "source articles."
)


@register_section
def fidelity_section(store: Store) -> Section | None:
    from halluscope.spoken.build import load_build_or_none

    build = load_build_or_none(store)
    if build is None:
        return None
    pairs, wer, heard = fidelity_data(store, build)
    if not pairs:
        return None
    samples = build.samples  # type: ignore[attr-defined]
    bins = [bin_of(lo) for lo in WER_BINS[:-1]]
    rows = strata_rows(samples, pairs, {i: bin_of(w) for i, w in wer.items()}, bins, "WER")
    rows += strata_rows(samples, pairs, heard, list(INTELLIGIBILITY), "listeners")
    return Section(
        "Fidelity strata: detection by ASR error (Lost in Speech, 000)",
        [
            NOTE,
            Table("fidelity_strata", COLS, rows, title="O vs T by item WER and listener label"),
            Table(
                "fidelity_trend",
                TREND_COLS,
                trend_rows(samples, pairs, wer),
                title="Does the O - T gap grow with WER?",
                notes=(
                    "Per-item paired gap (O right and T wrong = 1, the reverse = -1) regressed on item WER; "
                    "slope CI: bootstrap over articles; p: one-sided permutation test (2000 shuffles).",
                ),
            ),
            Figure(gap_plot(rows), "O - T accuracy gap by item WER", file="fidelity_gap.png"),
            *([] if heard else ["No listener labels in this run (rate clips in 'halluscope view RUN')."]),
        ],
    )
