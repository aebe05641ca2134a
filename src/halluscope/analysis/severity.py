"""Severity-resolved detection (issue 31, 1): how severe must a hallucination be before a binary detector catches
it, per type, language and input (original text O, ASR transcript T, audio)?

Per cell (detector x input x language x type x severity, seed 000's 3 x 3 grid, 3.1): the detection rate is the
share of the cell's rewrites predicted 'hallucinated' (an unparsable prediction is a miss); F1 is the hallucinated
class's F1 on those rewrites plus the same language's originals (the negatives every cell shares). Intervals:
percentile bootstrap over source articles. The minimum detectable severity at a rate r is the lowest severity
whose rate, and that of every more severe level present, is at least r ('-' when the most severe falls short); the
'confident' column asks the same of each interval's lower end.
"""

from __future__ import annotations

from halluscope.analysis._common import INPUT_NAMES, INPUT_ORDER, detect_runs, f1_parts, ratio, scored
from halluscope.core.records import LANGUAGES, SEVERITIES, TYPES, Variant
from halluscope.core.store import Store
from halluscope.metrics.bootstrap import ratio_ci
from halluscope.report.sections import Section, register_section
from halluscope.report.table import Figure, Table

RATE = 0.5  # the chosen detection rate of the minimum-detectable-severity table
ALL = "all"


def severity_rows(
    samples: dict[str, Variant], runs: dict[tuple[str, str], dict[str, str | None]], *, bootstrap: int = 1000
) -> list[dict]:
    """``runs``: (detector, input) -> item id -> predicted binary label (None: unparsable), on the scored items."""
    rows = []
    for (det, inp), pred in sorted(runs.items(), key=lambda kv: (kv[0][0], INPUT_ORDER.index(kv[0][1]))):
        items = [samples[i] for i in pred]
        langs = [lang for lang in LANGUAGES if any(v.language == lang for v in items)]
        for lang in [*langs, ALL]:
            in_lang = [v for v in items if lang == ALL or v.language == lang]
            originals = [v for v in in_lang if v.label == 0]
            cells: dict[tuple[str | None, str | None], list[Variant]] = {}  # (type or 'all', severity) -> rewrites
            for v in in_lang:
                if v.label == 1:
                    cells.setdefault((v.type, v.severity), []).append(v)
                    cells.setdefault((ALL, v.severity), []).append(v)
            for typ in [*TYPES, ALL]:
                for sev in SEVERITIES:
                    pos = cells.get((typ, sev))
                    if not pos:
                        continue
                    hit = [pred[v.id] == "hallucinated" for v in pos]
                    cell = pos + originals
                    num, den = f1_parts([v.label == 1 for v in cell], [pred[v.id] == "hallucinated" for v in cell])
                    clusters = [v.article_id for v in cell]
                    rows.append(
                        {
                            "detector": det,
                            "input": INPUT_NAMES[inp],
                            "language": lang,
                            "type": typ,
                            "severity": sev,
                            "n": len(pos),
                            "negatives": len(originals),
                            "detected": sum(hit),
                            "rate": sum(hit) / len(pos),
                            "rate_ci": ratio_ci(
                                numerator=[float(h) for h in hit],
                                denominator=[1.0] * len(pos),
                                clusters=[v.article_id for v in pos],
                                bootstrap=bootstrap,
                            ),
                            "f1": ratio(num, den),
                            "f1_ci": ratio_ci(numerator=num, denominator=den, clusters=clusters, bootstrap=bootstrap),
                        }
                    )
    return rows


def minimum_detectable(rows: list[dict], rate: float = RATE) -> list[dict]:
    """Per detector x input x language x type: the lowest severity detected at ``rate`` (estimate and interval)."""
    cells: dict[tuple, dict[str, dict]] = {}
    for r in rows:
        cells.setdefault((r["detector"], r["input"], r["language"], r["type"]), {})[r["severity"]] = r

    def lowest(by: dict[str, dict], value) -> str | None:  # type: ignore[no-untyped-def]
        best = None
        for sev in reversed(SEVERITIES):  # severe first: stop at the first level that falls short
            if sev not in by:  # no rewrite of this severity in the cell: no evidence either way
                continue
            if value(by[sev]) is None or value(by[sev]) < rate:
                break
            best = sev
        return best

    return [
        {
            "detector": d,
            "input": i,
            "language": lang,
            "type": t,
            "rate_target": rate,
            "mds": lowest(by, lambda r: r["rate"]),
            "mds_confident": lowest(by, lambda r: r["rate_ci"][0] if r["rate_ci"] else None),
            **{f"rate_{s}": by[s]["rate"] if s in by else None for s in SEVERITIES},
        }
        for (d, i, lang, t), by in cells.items()
    ]


def binary_runs(store: Store, samples: dict[str, Variant]) -> dict[tuple[str, str], dict[str, str | None]]:
    return {
        (det, inp): {i: p.predicted for i, p in scored(preds, samples).items()}
        for (det, task, inp), preds in detect_runs(store).items()
        if task == "binary"
    }


def severity_plot(rows: list[dict], language: str) -> bytes | None:
    """Detection rate against severity, one panel per type, a line per detector x input, 95% intervals."""
    sub = [r for r in rows if r["language"] == language]
    if not sub:
        return None
    import matplotlib.pyplot as plt

    from halluscope.report.plots import png

    types = [t for t in [*TYPES, ALL] if any(r["type"] == t for r in sub)]
    fig, axes = plt.subplots(1, len(types), figsize=(3.3 * len(types), 3.0), sharey=True, squeeze=False)
    for ax, t in zip(axes[0], types):
        for key in dict.fromkeys((r["detector"], r["input"]) for r in sub if r["type"] == t):
            line = sorted(
                (r for r in sub if r["type"] == t and (r["detector"], r["input"]) == key),
                key=lambda r: SEVERITIES.index(r["severity"]),
            )
            xs = [SEVERITIES.index(r["severity"]) for r in line]
            ys = [r["rate"] for r in line]
            err = [
                [y - r["rate_ci"][0] if r["rate_ci"] else 0 for y, r in zip(ys, line)],
                [r["rate_ci"][1] - y if r["rate_ci"] else 0 for y, r in zip(ys, line)],
            ]
            ax.errorbar(xs, ys, yerr=err, marker="o", capsize=3, label=f"{key[0]} {key[1]}")
        ax.axhline(RATE, color="grey", linestyle="dashed", linewidth=0.8)
        ax.set_xticks(range(len(SEVERITIES)), SEVERITIES)
        ax.set_ylim(-0.02, 1.02)
        ax.set_title(t.replace("_", " "), fontsize=9)
    axes[0][0].set_ylabel(f"detection rate, {language} (95% CI)")
    axes[0][-1].legend(fontsize=7)
    return png(fig)


COLS = [
    ("detector", "Detector"),
    ("input", "Input"),
    ("language", "Lang"),
    ("type", "Type"),
    ("severity", "Severity"),
    ("n", "n"),
    ("detected", "detected"),
    ("rate", "rate"),
    ("rate_ci", "rate 95% CI"),
    ("f1", "F1"),
    ("f1_ci", "F1 95% CI"),
]
MDS_COLS = [
    ("detector", "Detector"),
    ("input", "Input"),
    ("language", "Lang"),
    ("type", "Type"),
    *[(f"rate_{s}", s) for s in SEVERITIES],
    ("mds", "MDS"),
    ("mds_confident", "MDS (CI low)"),
]
NOTE = (
    "Binary detectors on the test split (zero-shot: every split). Rate: share of a cell's rewrites predicted "
    "hallucinated (unparsable = missed); F1: hallucinated-class F1 on the cell's rewrites plus the language's "
    "originals. Input O = original text, T = ASR transcript (Lost in Speech, 000). CI: percentile bootstrap over "
    "source articles."
)


@register_section
def severity_section(store: Store) -> Section | None:
    from halluscope.spoken.build import load_build_or_none

    build = load_build_or_none(store)
    if build is None:
        return None
    rows = severity_rows(build.samples, binary_runs(store, build.samples))  # type: ignore[attr-defined]
    if not rows:
        return None
    langs = [lang for lang in [*LANGUAGES, ALL] if any(r["language"] == lang for r in rows)]
    return Section(
        "Severity-resolved detection (Lost in Speech, 000)",
        [
            NOTE,
            Table("severity_detection", COLS, rows, title="Detection rate and F1 by severity"),
            Table(
                "minimum_detectable_severity",
                MDS_COLS,
                minimum_detectable(rows),
                title=f"Minimum detectable severity at rate {RATE}",
                notes=(
                    "MDS: the lowest severity whose rate (and every more severe level's) reaches the target; "
                    "'-': not even severe rewrites reach it. MDS (CI low): the same on each interval's lower end.",
                ),
            ),
            *[
                Figure(severity_plot(rows, lang), f"Detection rate by severity ({lang})", file=f"severity_{lang}.png")
                for lang in langs
            ],
        ],
    )
