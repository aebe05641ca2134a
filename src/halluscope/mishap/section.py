"""Report section: the MISHAP tables and stance plot in the report of a run that has MISHAP judgements on its current
answers (with or without a spoken build): a run whose every verdict is stale shows none, as a run never judged does
(the report's stale listing names the judge command)."""

from __future__ import annotations

from halluscope.core.store import Store
from halluscope.report.sections import Section, register_section


@register_section
def mishap_section(store: Store) -> Section | None:
    from halluscope.mishap._common import COMMANDS
    from halluscope.mishap.judge import load_judgements
    from halluscope.mishap.report import collect, mishap_section

    if store.latest_manifest(COMMANDS["judge"]) is None or not load_judgements(store):
        return None
    return mishap_section(collect(store.run_dir))
