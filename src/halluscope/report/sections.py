"""Extra report sections contributed by other parts of halluscope (zero-shot, real-world, judges, ...).

A section builder gets the open store and the build and returns a Section, or None when it has
nothing to show; write.py places every section after the core tables, in registration order.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from halluscope.spoken.build import BuildResult
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
SECTION_BUILDERS: list[SectionBuilder] = []


def register_section(builder: SectionBuilder) -> SectionBuilder:
    SECTION_BUILDERS.append(builder)
    return builder


# modules that contribute sections; imported when a report is built so their builders register
SECTION_MODULES: tuple[str, ...] = ("halluscope.spoken.generate.section", "halluscope.spoken.judge.section", "halluscope.report.paired",
                                  "halluscope.report.realworld", "halluscope.mishap.section", "halluscope.view.section")


def build_sections(store: Store, build: BuildResult) -> list[Section]:
    import importlib

    for name in SECTION_MODULES:
        importlib.import_module(name)
    return [s for b in SECTION_BUILDERS if (s := b(store, build)) is not None]
