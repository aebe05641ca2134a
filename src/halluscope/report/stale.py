"""The report's list of stale results: every derived record a table leaves out because it was computed from inputs
the run no longer holds (or, for answers re-made with other options, a population of its own), each with why and
the exact command that refreshes it (halluscope/current.py ``select``). Nothing listed here is in any other table."""

from __future__ import annotations

from halluscope.core.store import Store
from halluscope.report.sections import Section, register_section
from halluscope.report.table import Table

TITLE = "Stale results (left out of every table)"
COLS = [("table", "Table"), ("record", "Record"), ("kind", "Kind"), ("why", "Why"), ("command", "Refresh with")]
KINDS = (
    "changed: computed from an input that has changed since; unknown: stored before input digests were kept and "
    "not upgradable; missing: no result yet for a current input (e.g. an answer not judged); apart: a population "
    "of its own (answers re-made with other options), used only after the command shown."
)


def stale_table(rows: list[dict], table_id: str = "stale") -> Table:
    return Table(table_id, COLS, rows, title="Stale results", notes=(KINDS,), empty="nothing is stale")


@register_section
def stale_section(store: Store) -> Section | None:
    from halluscope.current import stale_rows

    rows = stale_rows(store)
    if not rows:
        return None
    return Section(
        TITLE,
        [
            f"{len(rows)} result(s) are not shown in the tables below: each was computed from inputs this run no "
            "longer holds, or is a population of its own. Run the command beside it to refresh it, then "
            "'halluscope report' again.",
            stale_table(rows),
        ],
    )
