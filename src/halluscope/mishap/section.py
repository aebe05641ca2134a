"""Report section: the MISHAP tables and stance plot in the report of a run that has MISHAP judgements (with or
without a spoken build)."""

from __future__ import annotations

from halluscope.core.store import Store
from halluscope.report.sections import Section, register_section


@register_section
def mishap_section(store: Store) -> Section | None:
    from halluscope.mishap._common import COMMANDS
    from halluscope.mishap.report import collect, mishap_section

    if store.latest_manifest(COMMANDS["judge"]) is None:
        return None
    return mishap_section(collect(store.run_dir))
