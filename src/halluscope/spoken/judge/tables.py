"""Table 9 (cross-judge agreement), Table 10 (mean quality by type x severity x language) and the heatmap.

One report section (report/table.py renders it): written by 'build judge' under RUN/report/judge/ as Markdown, CSV,
LaTeX, a PNG heatmap per judge, judge.html and tables.json, and read back into the main report. Means of an ordinal scale are descriptive only (seed 000, section 3.4).
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Mapping
from pathlib import Path

from halluscope.core.fs import atomic_write
from halluscope.core.records import LANGUAGES, SEVERITIES, TYPES
from halluscope.prompts.protocol import DIMENSION_ORDER, DIMENSIONS
from halluscope.report.plots import png
from halluscope.report.sections import Section
from halluscope.report.table import Figure, Table
from halluscope.spoken.report.tables import TYPE_ABBR

AGREEMENT_COLS = [
    ("judge_a", "Judge A"),
    ("judge_b", "Judge B"),
    ("dimension", "Dim"),
    ("n", "n"),
    ("kappa_quadratic", "κ (quadratic)"),
    ("spearman_rho", "Spearman ρ"),
    ("within_one", "within ±1"),
    ("exact", "exact"),
]
QUALITY_COLS = [
    ("type", "Type"),
    ("severity", "Severity"),
    ("language", "Lang"),
    ("n", "n"),
    *[(d, d) for d in DIMENSION_ORDER],
]
DIM_NAMES = {d.abbr: d.name for dims in DIMENSIONS.values() for d in dims}
DIM_NAMES["Co"], DIM_NAMES["Re"] = "Coherence / Overall Coherence", "Relevance (to Original News)"
DIM_NAMES["Sa"], DIM_NAMES["AT"] = "Satisfaction (with level)", "Adequacy of Type"


def mean_rows(scored: Iterable[tuple[str, str, str, Mapping[str, int]]]) -> list[dict]:
    """Table 10: mean rating per dimension for each (type, severity, language) cell."""
    cells: dict[tuple[str, str, str], list[Mapping[str, int]]] = defaultdict(list)
    for t, s, lang, scores in scored:
        cells[(t, s, lang)].append(scores)
    rows = []
    for t in TYPES:
        for s in SEVERITIES:
            for lang in LANGUAGES:
                group = cells.get((t, s, lang))
                if not group:
                    continue
                row: dict = {"type": t, "severity": s, "language": lang, "n": len(group)}
                for d in DIMENSION_ORDER:
                    vals = [g[d] for g in group if d in g]
                    row[d] = round(sum(vals) / len(vals), 2) if vals else None
                rows.append(row)
    return rows


def heatmap(rows: list[dict], title: str) -> bytes | None:
    """Mean rating per cell (rows) and dimension (columns), 1 = Very Low ... 5 = Very High."""
    if not rows:
        return None
    import matplotlib.pyplot as plt
    import numpy as np

    data = np.array([[np.nan if r[d] is None else r[d] for d in DIMENSION_ORDER] for r in rows], dtype=float)
    fig, ax = plt.subplots(figsize=(7.5, 0.28 * len(rows) + 1.6))
    im = ax.imshow(np.ma.masked_invalid(data), cmap="RdYlGn", vmin=1, vmax=5, aspect="auto")
    ax.set_xticks(range(len(DIMENSION_ORDER)), DIMENSION_ORDER)
    ax.set_yticks(
        range(len(rows)), [f"{TYPE_ABBR[r['type']]} {r['severity']} {r['language']}" for r in rows], fontsize=7
    )
    for i in range(data.shape[0]):
        for j in range(data.shape[1]):
            if not np.isnan(data[i, j]):
                ax.text(j, i, f"{data[i, j]:.1f}", ha="center", va="center", fontsize=6)
    ax.set_title(f"{title} (C contradiction, F fabrication, I context inconsistency)", fontsize=8)
    fig.colorbar(im, ax=ax, fraction=0.04, label="mean rating (1-5)")
    return png(fig)


STALE_PATTERNS = ("table9_*", "table10_*", "heatmap_*.png", "self_assessment.csv", "unscored.csv")


def agreement_gap(counts: dict[str, dict]) -> str:
    """Why Table 9 has no rows."""
    if len(counts) < 2:
        return f"Table 9 needs two or more judges; this run has {len(counts)} (pass --judge twice or more)."
    scored = ", ".join(
        f"{j}: {c['scored']} scored, {c['unscored']} unscored, {c['failed']} failed" for j, c in counts.items()
    )
    return f"Table 9 is empty: no item was scored by two judges ({scored})."


def file_stem(spec: str) -> str:
    return re.sub(r"[^\w.-]+", "_", spec).strip("_")


JUDGE_COLS = [
    ("judge", "Judge"),
    ("scored", "scored"),
    ("unscored", "unscored"),
    ("failed", "failed"),
    ("calls", "model calls"),
    ("from_store", "from store"),
]
UNSCORED_COLS = [("judge", "Judge"), ("item_id", "Item"), ("reason", "Reason")]
TITLE = "LLM judges (Lost in Speech section 3.4 and App. A.2)"
DIMS_NOTE = "Dimensions: " + ", ".join(f"{k} = {v}" for k, v in DIM_NAMES.items()) + "."


def judge_section(
    *,
    agreement: list[dict],
    quality: dict[str, list[dict]],
    self_assessment: list[dict],
    summary: dict,
    unscored: list[dict],
) -> Section:
    """Judges, Table 9, Table 10 (and heatmap) per judge, the self-assessment and the unscored items; an empty
    table says why it is empty."""
    counts = {j["judge"]: j for j in summary["judges"]}
    blocks: list = [
        f"Judge validation: {summary['sampled']} items, {summary['per_cell']} per type x severity x "
        "language cell. Ratings Very Low (1) ... Very High (5); means of an ordinal scale are descriptive "
        "only. " + DIMS_NOTE
    ]
    if summary.get("short_cells"):
        blocks.append("Cells with fewer rewrites than asked for: " + ", ".join(summary["short_cells"]) + ".")
    blocks += [
        Table("judge_calls", JUDGE_COLS, summary["judges"], title="Judges"),
        Table(
            "table9_agreement",
            AGREEMENT_COLS,
            agreement,
            title="Table 9: cross-judge agreement",
            notes=("Quadratic-weighted Cohen's kappa, Spearman's rho and the share within one point, per dimension.",),
            empty=agreement_gap(counts),
        ),
    ]
    for judge, rows in quality.items():
        c = counts.get(judge, {})
        blocks.append(
            Table(
                f"table10_{file_stem(judge)}",
                QUALITY_COLS,
                rows,
                title=f"Table 10: mean ratings by {judge}",
                empty=f"No scored items by {judge} ({c.get('unscored', 0)} unscored, {c.get('failed', 0)} "
                "failed; see 'Unscored and failed items').",
            )
        )
        if rows:
            blocks.append(
                Figure(
                    heatmap(rows, f"{judge}: mean rating"),
                    f"{judge} mean rating heatmap",
                    file=f"heatmap_{file_stem(judge)}.png",
                )
            )
    blocks += [
        Table(
            "self_assessment",
            QUALITY_COLS,
            self_assessment,
            shown=bool(self_assessment),
            title="Generator self-assessment (in-prompt report, all accepted rewrites)",
        ),
        Table("unscored", UNSCORED_COLS, unscored, title="Unscored and failed items", empty="None."),
    ]
    return Section(TITLE, blocks)


def write_tables(
    out: Path,
    *,
    agreement: list[dict],
    quality: dict[str, list[dict]],
    self_assessment: list[dict],
    summary: dict,
    unscored: list[dict],
) -> list[Path]:
    """RUN/report/judge/: every table as CSV (a header even without rows), Tables 9 and 10 as LaTeX when they have
    rows, heatmaps as PNG, judge.md, judge.html and tables.json (the report document, which the main report's
    judge section reads back); returns the paths written. Files an earlier judge run left (other judges' tables
    and heatmaps) are removed first."""
    from halluscope.report.page import write_folder

    out.mkdir(parents=True, exist_ok=True)
    for pattern in STALE_PATTERNS:
        for old in out.glob(pattern):
            old.unlink()
    section = judge_section(
        agreement=agreement, quality=quality, self_assessment=self_assessment, summary=summary, unscored=unscored
    )
    written = [
        write_folder(
            out,
            [section],
            title="Judge validation",
            md_name="judge.md",
            html_name="judge.html",
            extra={"summary": summary, "judges": list(quality)},
        )
    ]
    for b in section.blocks:
        if isinstance(b, Table):
            written.append(out / f"{b.id}.csv")
            if b.rows and b.id.startswith(("table9_", "table10_")):
                written.append(atomic_write(out / f"{b.id}.tex", b.latex()))
        elif isinstance(b, Figure) and b.png and b.file:
            written.append(out / b.file)
    return [*written, out / "judge.md", out / "tables.json"]


def judge_section_from(doc: dict) -> Section:
    """The judge section again from the tables.json that write_tables wrote (no model call, no recomputation)."""
    rows = {k: t["rows"] for k, t in doc["tables"].items()}
    return judge_section(
        agreement=rows["table9_agreement"],
        self_assessment=rows["self_assessment"],
        quality={j: rows[f"table10_{file_stem(j)}"] for j in doc["judges"]},
        summary=doc["summary"],
        unscored=rows["unscored"],
    )
