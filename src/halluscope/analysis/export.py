"""The analyses' tables as LaTeX (booktabs, report/table.py's renderer) in RUN/report/analysis/ID.tex; Markdown,
CSV, HTML and JSON of the same tables are the report's own files (tables.md, ID.csv, report.html, headline.json)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from halluscope.core.fs import atomic_write
from halluscope.report.sections import Section

IDS = frozenset(
    {
        "severity_detection",
        "minimum_detectable_severity",
        "fidelity_strata",
        "fidelity_trend",
        "language_parity",
        "language_parity_tests",
        "judge_alpha",
        "judge_error_correlation",
        "judge_panel",
        "judge_panel_spoken",
    }
)


def write_analysis_latex(out: Path, sections: Sequence[Section]) -> list[Path]:
    tables = [t for s in sections for t in s.tables if t.id in IDS or t.id.startswith("mitigation_card_")]
    if not tables:
        return []
    out.mkdir(parents=True, exist_ok=True)
    return [atomic_write(out / f"{t.id}.tex", t.latex()) for t in tables]
