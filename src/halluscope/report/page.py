"""Write a report folder from sections: one Markdown file, one self-contained HTML page, a CSV per table and a JSON
document holding every table; and ``write_report``, the one 'halluscope report RUN' for every kind of run."""

from __future__ import annotations

import html
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from halluscope.core.fs import atomic_write
from halluscope.core.gctune import fewer_full_collections
from halluscope.report.sections import Section
from halluscope.report.table import Figure, Table

STYLE = """body { font-family: system-ui, sans-serif; margin: 2rem auto; max-width: 1100px; color: #1a202c; }
table { border-collapse: collapse; margin: 0.5rem 0 1.5rem; font-size: 0.9rem; }
th, td { border: 1px solid #cbd5e0; padding: 0.25rem 0.5rem; text-align: right; vertical-align: top; }
th { background: #edf2f7; } td:first-child, th:first-child { text-align: left; }
img { max-width: 100%; } pre { background: #f7fafc; padding: 1rem; overflow-x: auto; font-size: 0.8rem; }"""


def document(sections: Sequence[Section], **extra: object) -> dict:
    """The JSON of a report: ``extra`` keys, the sections with their table ids, and every table by id."""
    tables = [t for s in sections for t in s.tables]
    ids = [t.id for t in tables]
    if len(ids) != len(set(ids)):
        raise ValueError(f"two report tables share an id: {sorted({i for i in ids if ids.count(i) > 1})}")
    return {
        **extra,
        "sections": [{"title": s.title, "tables": [t.id for t in s.tables]} for s in sections],
        "tables": {t.id: t.to_json() for t in tables},
    }


def markdown(title: str, sections: Sequence[Section], intro: Sequence[str] = ()) -> str:
    parts = [f"# {title}", *intro]
    for s in sections:
        parts += [f"## {s.title}", s.markdown]
    return "\n\n".join(p for p in parts if p) + "\n"


def html_page(title: str, sections: Sequence[Section], intro: Sequence[str] = (), tail: str = "") -> str:
    body = "".join(f"<p>{html.escape(p)}</p>" for p in intro)
    body += "".join(f"<h2>{html.escape(s.title)}</h2>{s.html}" for s in sections)
    return (
        f'<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}</title>\n'
        f"<style>\n{STYLE}\n</style></head><body>\n<h1>{html.escape(title)}</h1>\n{body}\n{tail}</body></html>\n"
    )


def write_folder(
    out: Path,
    sections: Sequence[Section],
    *,
    title: str,
    md_name: str = "tables.md",
    html_name: str = "report.html",
    json_name: str | None = "tables.json",
    intro: Sequence[str] = (),
    file_name: Callable[[str], str] = str,
    extra: dict | None = None,
    html_tail: str = "",
    doc: dict | None = None,
) -> Path:
    """Every table as CSV (a header even without rows), figures with a ``file`` as PNG, the Markdown, the JSON
    document (``extra`` keys first) and the HTML page; returns the HTML path. ``file_name`` maps the name of each
    CSV (ID.csv) and PNG to the file written; ``doc``: the JSON document when the caller has made it already."""
    out.mkdir(parents=True, exist_ok=True)
    for s in sections:
        for b in s.blocks:
            if isinstance(b, Table):
                b.write_csv(out / file_name(f"{b.id}.csv"))
            elif isinstance(b, Figure) and b.file and b.png:
                atomic_write(out / file_name(b.file), b.png)
    atomic_write(out / md_name, markdown(title, sections, intro))
    if json_name:
        doc = doc if doc is not None else document(sections, **(extra or {}))
        atomic_write(out / json_name, json.dumps(doc, indent=2, ensure_ascii=False))
    return atomic_write(out / html_name, html_page(title, sections, intro, html_tail))


@dataclass
class ReportSummary:
    """What 'halluscope report' wrote: the HTML page, the section titles, the table count; ``document`` is the
    JSON of every table (headline.json, 'report --json')."""

    html: Path
    sections: list[str]
    document: dict = field(repr=False, default_factory=dict)
    json_out: bool = False

    def to_json(self) -> dict:
        if self.json_out:
            return self.document
        return {"report": str(self.html), "sections": self.sections, "tables": len(self.document.get("tables", {}))}


@fewer_full_collections()  # every record of the run alive at once: core/gctune.py
def write_report(run_dir: str | Path, *, json_out: bool = False) -> ReportSummary:
    """RUN/report/: tables.md, a CSV per table, headline.json (every table) and report.html, with every section the
    run has (report/sections.py: spoken build, judges, detectors, zero-shot, real-world, MISHAP, closed-form,
    audio reliance, analyses), from the store alone; the same page for every kind of run."""
    from halluscope.core.errors import HalluscopeError
    from halluscope.core.store import Store
    from halluscope.report.sections import build_sections, write_extras

    run = Path(run_dir)
    with Store(run) as store:
        sections = build_sections(store)
        manifest = store.latest_manifest("build spoken")
    if not sections:
        raise HalluscopeError(
            f"{run} holds nothing to report: no spoken build, MISHAP judgements or closed-form predictions"
        )
    shown = html.escape(json.dumps(manifest.model_dump(), indent=2, ensure_ascii=False)) if manifest else ""
    doc = document(sections, run_dir=str(run))  # once: headline.json and the summary
    path = write_folder(
        run / "report",
        sections,
        title="halluscope report",
        json_name="headline.json",
        intro=[f"Run directory: {run}"],
        html_tail=f"<h2>Manifest</h2>\n<pre>{shown}</pre>\n" if shown else "",
        doc=doc,
    )
    write_extras(run / "report", sections)  # the paper's tables (report/paper/), the analyses' LaTeX (report/analysis/)
    return ReportSummary(path, [s.title for s in sections], doc, json_out)
