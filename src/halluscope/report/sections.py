"""The report's sections, each contributed by the pipeline that owns its data (SECTION_MODULES: the one place they
are listed; plug-ins add builders through the entry-point group 'halluscope.report_sections').

A section builder gets the open store alone and returns a Section (or a list of them), or None when the run
has nothing for it; a builder that needs the spoken build reads it with ``spoken.build.load_build_or_none(store)``
(read once per store, so once per report). Sections are placed in SECTION_MODULES order, the same for a run holding only MISHAP results, only closed-form predictions or all three.
"""

from __future__ import annotations

import contextlib
import html
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

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
    "halluscope.report.stale",  # what the tables leave out (halluscope/current.py), with the commands that refresh it
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


# the builders of these modules run in a second process (forked, its own read-only store) while the first
# builds the rest, so that a 12,000-item report uses two cores (issue 27); the page is the same.
# Chosen to balance the two (each builder timed at 12,000 items, `bench_report.py --keep DIR`): the first builds the
# Lost in Speech tables, parity, paired tests, fidelity and reliability (sharing their reads of the detections), the
# second the zero-shot, judge and MISHAP sections and the severity curves (its 288 bootstrap intervals and 4 plots)
SECOND_PROCESS: tuple[str, ...] = (
    "halluscope.spoken.report.zeroshot.",
    "halluscope.spoken.judge.section.",
    "halluscope.mishap.section.",
    "halluscope.analysis.severity.",
    "halluscope.analysis.cards.",
)
# 'module:function's of the store read before the second process starts, so that both share what they read
SHARED_READS: tuple[str, ...] = ("halluscope.spoken.build:load_build_or_none",)


def build_sections(store: Store) -> list[Section]:
    import importlib

    for name in SECTION_MODULES:
        importlib.import_module(name)

    def rank(name: str) -> int:
        return next((i for i, m in enumerate(SECTION_MODULES) if name.startswith(f"{m}.")), len(SECTION_MODULES))

    named = sorted(SECTIONS.items(), key=lambda kv: rank(kv[0]))  # stable: a module's builders keep their order
    second = [i for i, (n, _) in enumerate(named) if n.startswith(SECOND_PROCESS)]
    with contextlib.ExitStack() as stack:
        pool, later = _second_process(store, [named[i][0] for i in second], stack)
        built = _build(store, named, second, pool, later)
    out: list = []
    for s in built:
        out += s if isinstance(s, list) else [] if s is None else [s]
    for ref in FINISHERS:
        out += _named(ref)(out)
    return out


def _build(store: Store, named: list, second: list[int], pool: Any, later: Any) -> list:
    built: list = [None] * len(named)
    try:
        for i, (_, b) in enumerate(named):
            if pool is None or i not in second:
                built[i] = b(store)  # a Section, a list of them (one per predictions file, ...) or None
        if pool is not None:
            try:
                done = later.result()
            except Exception:  # noqa: BLE001  # built again here: a builder's own error is raised as in one process
                done = [named[i][1](store) for i in second]
            for i, s in zip(second, done):
                built[i] = s
    finally:
        if pool is not None:
            pool.shutdown(cancel_futures=True)
            _forget_parent()
    return built


def _second_process(store: Store, names: list[str], stack: contextlib.ExitStack) -> tuple[Any, Any]:
    """(pool, future of the named builders' results), or (None, None) where a second process does not pay or is not
    safe: no builders, one core, other threads running (fork is safe only in a single-threaded process), or no
    fork (the builders and what the first process has read travel by fork, not by pickling). With two processes
    the BLAS library runs one thread in each until ``stack`` closes (its threads per core in both processes made
    every matrix product of the report slower, measured at 12,000 items)."""
    from threadpoolctl import threadpool_limits

    from halluscope.core.forked import fork_pays, fork_pool

    if not names or not fork_pays():
        return None, None
    stack.enter_context(threadpool_limits(limits=1, user_api="blas"))  # the forked process inherits the limit
    global _PARENT
    _PARENT = store
    for ref in SHARED_READS:
        _named(ref)(store)
    pool = fork_pool()
    return pool, pool.submit(_build_named, str(store.run_dir), names)


_PARENT: Store | None = None


def _forget_parent() -> None:
    global _PARENT
    _PARENT = None


def _build_named(run_dir: str, names: list[str]) -> list:
    """In the second process: the named builders over the run, on a store of its own (a connection must not cross
    a fork) that starts from what the first process had read (Store.memo)."""
    builders = dict(SECTIONS.items())
    with Store(run_dir, readonly=True) as store:
        if _PARENT is not None:
            store.memo = dict(_PARENT.memo)
        return [builders[n](store) for n in names]


def write_extras(report_dir: Path, sections: list[Section]) -> None:
    """The WRITERS' files: each in its own folder of the report."""
    for folder, ref in WRITERS:
        _named(ref)(report_dir / folder, sections)
