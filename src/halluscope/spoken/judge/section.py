"""Report section: the judge tables written by 'build judge' (RUN/report/judge/tables.json), in the main report."""

from __future__ import annotations

import json

from halluscope.core.errors import InputError
from halluscope.core.store import Store
from halluscope.report.sections import Section, register_section


@register_section
def judge_section(store: Store) -> Section | None:
    from halluscope.spoken.judge.tables import judge_section_from

    tables = store.run_dir / "report" / "judge" / "tables.json"
    if not tables.exists():
        return None
    doc = json.loads(tables.read_text(encoding="utf-8"))
    if "tables" not in doc or "summary" not in doc:  # written by 'build judge' in this layout since the Table type
        raise InputError(
            f"{tables.name} predates this report layout",
            file=str(tables),
            fix=f"run 'halluscope build judge {store.run_dir} --judge ...' again "
            "(answered from the store, no model call)",
        )
    section = judge_section_from(doc)
    section.blocks.append("LaTeX tables and heatmap PNGs: report/judge/.")
    return section
