"""Extra report sections contributed by other parts of halluscope (zero-shot, real-world, judges, ...).

A section builder gets the open store and the build and returns a Section, or None when it has
nothing to show; write.py places every section after the core tables, in registration order.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from halluscope.spoken.build import BuildResult
from halluscope.core.registry import Registry
from halluscope.core.store import Store


@dataclass
class Section:
    """``json``: every table the section's HTML shows, as rows, for 'report --json' (default: its ``csvs``)."""

    title: str
    markdown: str
    html: str
    csvs: dict[str, list[dict]] = field(default_factory=dict)
    json: dict | None = None

    def tables(self) -> dict:
        return self.json if self.json is not None else dict(self.csvs)


SectionBuilder = Callable[[Store, BuildResult], "Section | None"]
# section builders by 'module.function', in registration order; plug-ins add builders through the entry-point
# group 'halluscope.report_sections' (placed after halluscope's own)
SECTIONS: Registry[SectionBuilder] = Registry("report section", "halluscope.report_sections")


def register_section(builder: SectionBuilder) -> SectionBuilder:
    SECTIONS.register(f"{builder.__module__}.{builder.__qualname__}", builder)
    return builder


# modules that contribute sections; imported when a report is built so their builders register
SECTION_MODULES: tuple[str, ...] = ("halluscope.spoken.generate.section", "halluscope.spoken.judge.section", "halluscope.report.paired",
                                  "halluscope.report.realworld", "halluscope.mishap.section", "halluscope.view.section")


def build_sections(store: Store, build: BuildResult) -> list[Section]:
    import importlib

    for name in SECTION_MODULES:
        importlib.import_module(name)
    return [s for b in SECTIONS.values() if (s := b(store, build)) is not None]
