"""Table 9 (cross-judge agreement), Table 10 (mean quality by type x severity x language) and the heatmap.

Written as Markdown, CSV and LaTeX, plus a PNG heatmap per judge, a small HTML page and tables.json
(every table as rows), under RUN/report/judge/. Means of an ordinal scale are descriptive only (seed 000, section 3.4).
"""

from __future__ import annotations

import html
import json
import re
from collections import defaultdict
from collections.abc import Iterable, Mapping
from pathlib import Path

from halluscope.prompts.protocol import DIMENSION_ORDER, DIMENSIONS
from halluscope.core.records import LANGUAGES, SEVERITIES, TYPES
from halluscope.report.plots import png
from halluscope.report.tables import TYPE_ABBR
from halluscope.report.write import html_table, img, md_table, write_csv

AGREEMENT_COLS = [("judge_a", "Judge A"), ("judge_b", "Judge B"), ("dimension", "Dim"), ("n", "n"),
                  ("kappa_quadratic", "κ (quadratic)"), ("spearman_rho", "Spearman ρ"), ("within_one", "within ±1"),
                  ("exact", "exact")]
QUALITY_COLS = [("type", "Type"), ("severity", "Severity"), ("language", "Lang"), ("n", "n"),
                *[(d, d) for d in DIMENSION_ORDER]]
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


def latex_table(rows: list[dict], columns: list[tuple[str, str]], *, caption: str, label: str) -> str:
    """A booktabs tabular; None prints as '--'."""
    def cell(x: object) -> str:
        if x is None:
            return "--"
        if isinstance(x, float):
            return f"{x:.3f}" if abs(x) < 1 else f"{x:.2f}"
        return re.sub(r"([&%$#_{}])", r"\\\1", str(x))

    head = " & ".join(cell(title) for _, title in columns)
    body = "\n".join(" & ".join(cell(r.get(k)) for k, _ in columns) + r" \\" for r in rows)
    return (f"\\begin{{table}}[t]\n\\centering\n\\small\n\\begin{{tabular}}{{{'l' * 3 + 'r' * (len(columns) - 3)}}}\n"
            f"\\toprule\n{head} \\\\\n\\midrule\n{body}\n\\bottomrule\n\\end{{tabular}}\n"
            f"\\caption{{{caption}}}\n\\label{{{label}}}\n\\end{{table}}\n")


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
    ax.set_yticks(range(len(rows)), [f"{TYPE_ABBR[r['type']]} {r['severity']} {r['language']}" for r in rows], fontsize=7)
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
    scored = ", ".join(f"{j}: {c['scored']} scored, {c['unscored']} unscored, {c['failed']} failed"
                       for j, c in counts.items())
    return f"Table 9 is empty: no item was scored by two judges ({scored})."


def file_stem(spec: str) -> str:
    return re.sub(r"[^\w.-]+", "_", spec).strip("_")


def write_tables(out: Path, *, agreement: list[dict], quality: dict[str, list[dict]], self_assessment: list[dict],
                 summary: dict, unscored: list[dict]) -> list[Path]:
    """Every table in Markdown, CSV and LaTeX, heatmaps as PNG, and judge.html; returns the paths written.

    Files an earlier judge run left (other judges' tables and heatmaps) are removed first; a table without rows
    is still written as a CSV header, and the Markdown/HTML say why it is empty.
    """
    out.mkdir(parents=True, exist_ok=True)
    for pattern in STALE_PATTERNS:
        for old in out.glob(pattern):
            old.unlink()
    written: list[Path] = []
    counts = {j["judge"]: j for j in summary["judges"]}

    def put(name: str, text: str | bytes) -> None:
        path = out / name
        path.write_bytes(text) if isinstance(text, bytes) else path.write_text(text, encoding="utf-8")
        written.append(path)

    dims_note = "Dimensions: " + ", ".join(f"{k} = {v}" for k, v in DIM_NAMES.items()) + "."
    md = [f"# Judge validation: {summary['sampled']} items, {summary['per_cell']} per type x severity x language cell",
          "Ratings Very Low (1) ... Very High (5); means of an ordinal scale are descriptive only. " + dims_note]
    if summary.get("short_cells"):
        md.append("Cells with fewer rewrites than asked for: " + ", ".join(summary["short_cells"]) + ".")
    md.append("## Judges\n\n" + md_table(summary["judges"], [("judge", "Judge"), ("scored", "scored"),
                                                                ("unscored", "unscored"), ("failed", "failed"),
                                                                ("calls", "model calls"), ("from_store", "from store")]))
    html_parts = [f"<h1>Judge validation</h1><p>{html.escape(md[0][2:])}. {html.escape(dims_note)}</p>",
                  html_table(summary["judges"], [("judge", "Judge"), ("scored", "scored"), ("unscored", "unscored"),
                                                  ("failed", "failed"), ("calls", "model calls"), ("from_store", "from store")])]
    write_csv(out / "table9_agreement.csv", agreement, [k for k, _ in AGREEMENT_COLS])
    written.append(out / "table9_agreement.csv")
    if not agreement:
        md += ["## Table 9: cross-judge agreement", agreement_gap(counts)]
        html_parts += ["<h2>Table 9: cross-judge agreement</h2>", f"<p>{html.escape(agreement_gap(counts))}</p>"]
    if agreement:
        put("table9_agreement.tex", latex_table(agreement, AGREEMENT_COLS, label="tab:judge-agreement",
                                                caption="Cross-judge agreement per dimension: quadratic-weighted Cohen's kappa, Spearman's rho, share within one point."))
        md += ["## Table 9: cross-judge agreement", md_table(agreement, AGREEMENT_COLS)]
        html_parts += ["<h2>Table 9: cross-judge agreement</h2>", html_table(agreement, AGREEMENT_COLS)]
    for judge, rows in quality.items():
        stem = file_stem(judge)
        write_csv(out / f"table10_{stem}.csv", rows, [k for k, _ in QUALITY_COLS])
        written.append(out / f"table10_{stem}.csv")
        if not rows:
            c = counts.get(judge, {})
            why = (f"No scored items by {judge} ({c.get('unscored', 0)} unscored, {c.get('failed', 0)} failed; "
                   "see 'Unscored and failed items').")
            md += [f"## Table 10: mean ratings by {judge}", why]
            html_parts += [f"<h2>Table 10: mean ratings by {html.escape(judge)}</h2>", f"<p>{html.escape(why)}</p>"]
            continue
        put(f"table10_{stem}.tex", latex_table(rows, QUALITY_COLS, label=f"tab:quality-{stem}",
                                               caption=f"Mean {judge} ratings by type, severity and language."))
        png = heatmap(rows, f"{judge}: mean rating")
        if png:
            put(f"heatmap_{stem}.png", png)
        md += [f"## Table 10: mean ratings by {judge}", md_table(rows, QUALITY_COLS)]
        if png:  # only a heatmap that was written is linked
            md.append(f"![heatmap](heatmap_{stem}.png)")
        html_parts += [f"<h2>Table 10: mean ratings by {html.escape(judge)}</h2>", html_table(rows, QUALITY_COLS),
                       img(png, f"{judge} mean rating heatmap")]
    write_csv(out / "self_assessment.csv", self_assessment, [k for k, _ in QUALITY_COLS])
    written.append(out / "self_assessment.csv")
    if self_assessment:
        md += ["## Generator self-assessment (in-prompt report, all accepted rewrites)", md_table(self_assessment, QUALITY_COLS)]
        html_parts += ["<h2>Generator self-assessment</h2>", html_table(self_assessment, QUALITY_COLS)]
    unscored_cols = [("judge", "Judge"), ("item_id", "Item"), ("reason", "Reason")]
    write_csv(out / "unscored.csv", unscored, [k for k, _ in unscored_cols])
    written.append(out / "unscored.csv")
    md += ["## Unscored and failed items", md_table(unscored, unscored_cols) if unscored else "None."]
    html_parts += ["<h2>Unscored and failed items</h2>", html_table(unscored, unscored_cols) if unscored else "<p>None.</p>"]
    # every table above as rows: the judge section of 'halluscope report --json'
    put("tables.json", json.dumps({"judges": summary["judges"], "table9_agreement": agreement,
                                   "table10_quality": quality, "self_assessment": self_assessment, "unscored": unscored},
                                  indent=2, ensure_ascii=False))
    put("judge.md", "\n\n".join(md) + "\n")
    put("judge.html", "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>halluscope judges</title>"
                      "<style>body{font-family:system-ui,sans-serif;margin:2rem auto;max-width:1100px}"
                      "table{border-collapse:collapse;margin:.5rem 0 1.5rem;font-size:.85rem}"
                      "th,td{border:1px solid #cbd5e0;padding:.2rem .45rem;text-align:right}th{background:#edf2f7}"
                      "img{max-width:100%}</style></head><body>" + "\n".join(html_parts) + "</body></html>\n")
    return written
