"""Report section: the MISHAP tables and stance plot in the main 'halluscope report' of a run that has them."""

from __future__ import annotations

from halluscope.report.sections import Section, register_section
from halluscope.core.store import Store


@register_section
def mishap_section(store: Store, build: object) -> Section | None:
    from halluscope.mishap._common import COMMANDS
    from halluscope.mishap.report import collect, html_body, markdown, stance_plot

    if store.latest_manifest(COMMANDS["judge"]) is None:
        return None
    data = collect(store.run_dir)
    return Section(title="MISHAP-Bench (seed 001)", markdown=markdown(data).replace("# MISHAP-Bench\n", "", 1),
                   html=html_body(data, stance_plot(data["stance"])),
                   csvs={"mishap_table1.csv": data["table1"], "mishap_table11.csv": data["table11"],
                         "mishap_stance.csv": data["stance"], "mishap_agreement.csv": data["agreement"]},
                   json={k: data[k] for k in ("counts", "balance", "table1", "table11", "stance", "agreement")})
