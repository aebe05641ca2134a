"""The report's sections, each contributed by the pipeline that owns its data (SECTION_MODULES: the one place they
are listed; plug-ins add builders through the entry-point group 'halluscope.report_sections').

A section builder gets the open store alone and returns a Section (or a list of them), or None when the run
has nothing for it; a builder that needs the spoken build reads it with ``spoken.build.load_build_or_none(store)``
(read once per store, so once per report). Sections are placed in SECTION_MODULES order, the same for a run holding only MISHAP results, only closed-form predictions or all three.
"""

from __future__ import annotations

import html
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from halluscope.core.registry import Registry
from halluscope.core.store import Store
from halluscope.report.table import Figure, Table, tables_of


@dataclass
class Section:
    """A titled part of a report: ``blocks`` are paragraphs (str), Tables and Figures, rendered in order; every
    Table is also a CSV and a JSON entry (report/table.py)."""

    title: str
    blocks: list = field(default_factory=list)

    @property
    def tables(self) -> list[Table]:
        return tables_of(self.blocks)

    def table(self, table_id: str) -> Table:
        return next(t for t in self.tables if t.id == table_id)

    def rows(self, table_id: str) -> list[dict]:
        return self.table(table_id).rows

    @property
    def markdown(self) -> str:
        parts = (
            b.markdown() if isinstance(b, (Table, Figure)) else b
            for b in self.blocks
            if not (isinstance(b, Table) and not b.shown)
        )
        return "\n\n".join(p for p in parts if p)

    @property
    def html(self) -> str:
        return "".join(
            b.html() if isinstance(b, (Table, Figure)) else f"<p>{html.escape(b)}</p>"
            for b in self.blocks
            if not (isinstance(b, Table) and not b.shown)
        )


# built from the store alone; a builder may return a list of Sections
SectionBuilder = Callable[[Store], "Section | list[Section] | None"]
# section builders by 'module.function', in registration order; plug-ins add builders through the entry-point
# group 'halluscope.report_sections' (placed after halluscope's own)
SECTIONS: Registry[SectionBuilder] = Registry("report section", "halluscope.report_sections")


def register_section(builder: SectionBuilder) -> SectionBuilder:
    SECTIONS.register(f"{builder.__module__}.{builder.__qualname__}", builder)
    return builder


# modules that contribute sections; imported when a report is built so their builders register
# and placed in this order whatever imported them first (plug-ins after, in their registry order)
SECTION_MODULES: tuple[str, ...] = (
    "halluscope.spoken.report.spoken",  # Lost in Speech's core tables first: Table 1, ASR error, Table 7, Table 2
    "halluscope.spoken.report.zeroshot",
    "halluscope.spoken.generate.section",
    "halluscope.spoken.judge.section",
    "halluscope.spoken.report.paired",
    "halluscope.spoken.report.realworld",
    "halluscope.mishap.section",
    "halluscope.view.section",
    "halluscope.closedform.report",
    "halluscope.canary.section",
    "halluscope.analysis.severity",
    "halluscope.analysis.fidelity",
    "halluscope.analysis.parity",
    "halluscope.analysis.reliability",
    "halluscope.analysis.cards",
)
# 'module:function's given every section once they are built: each returns sections that summarise the others
# (the paper's tables as printed), placed last
FINISHERS: tuple[str, ...] = ("halluscope.spoken.report.paper:paper_sections",)
# 'folder', 'module:function': extra files each writes from the sections into report/<folder>/
WRITERS: tuple[tuple[str, str], ...] = (
    ("paper", "halluscope.spoken.report.paper:write_paper_tables"),
    ("analysis", "halluscope.analysis.export:write_analysis_latex"),
)


def _named(ref: str) -> Callable:
    import importlib

    module, name = ref.split(":")
    return getattr(importlib.import_module(module), name)


def build_sections(store: Store) -> list[Section]:
    import importlib

    for name in SECTION_MODULES:
        importlib.import_module(name)

    def rank(name: str) -> int:
        return next((i for i, m in enumerate(SECTION_MODULES) if name.startswith(f"{m}.")), len(SECTION_MODULES))

    out: list[Section] = []
    for _, b in sorted(SECTIONS.items(), key=lambda kv: rank(kv[0])):  # stable: a module's builders keep their order
        s = b(store)  # a Section, a list of them (one per predictions file, ...) or None
        out += s if isinstance(s, list) else [] if s is None else [s]
    for ref in FINISHERS:
        out += _named(ref)(out)
    return out


def write_extras(report_dir: Path, sections: list[Section]) -> None:
    """The WRITERS' files: each in its own folder of the report."""
    for folder, ref in WRITERS:
        _named(ref)(report_dir / folder, sections)
