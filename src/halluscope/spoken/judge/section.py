"""Report section: the judge tables written by 'build judge', embedded in the main report."""

from __future__ import annotations

import json
import re

from halluscope.spoken.build import BuildResult
from halluscope.core.errors import InputError
from halluscope.report.sections import Section, register_section
from halluscope.core.store import Store


@register_section
def judge_section(store: Store, build: BuildResult) -> Section | None:
    out = store.run_dir / "report" / "judge"
    md, page, tables = out / "judge.md", out / "judge.html", out / "tables.json"
    if not md.exists() or not page.exists():
        return None
    if not tables.exists():  # written by 'build judge' since tables.json exists
        raise InputError(f"tables.json is missing beside {page.name}: these judge tables predate it", file=str(tables),
                         fix=f"run 'halluscope build judge {store.run_dir} --judge ...' again "
                             "(answered from the store, no model call)")
    body = re.search(r"<body[^>]*>(.*)</body>", page.read_text(encoding="utf-8"), flags=re.S)
    return Section(
        title="LLM judges (seed 000, section 3.4 and App. A.2)",
        markdown=md.read_text(encoding="utf-8").replace("# Judge validation", "### Judge validation", 1)
        + "\nLaTeX tables and heatmaps: report/judge/\n",
        html=(body.group(1) if body else "") + '<p>LaTeX tables and heatmap PNGs: <code>report/judge/</code>.</p>',
        json=json.loads(tables.read_text(encoding="utf-8")),
    )
