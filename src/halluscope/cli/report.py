"""'halluscope report RUN' (every section the run has) and 'halluscope project RUN' (wall time and cost at scale)."""

from __future__ import annotations

import json
from typing import Optional

import typer

from halluscope.cli.compat import App
from halluscope.cli.options import Json, Run
from halluscope.core.stages import console

app = App()
REPORTED = Run("Run directory.")
MEASURED = Run("Run directory to measure (a small build of your own corpus).")


@app.command()
def report(
    run: REPORTED,
    json_out: Json = False,
) -> None:
    """Write report/ (tables.md, a CSV per table, headline.json, report.html with plots) with every section the run
    has: spoken build, judges, detectors, zero-shot, real-world, MISHAP, closed-form; --json prints every table."""
    from halluscope.report import write_report

    summary = write_report(run, json_out=json_out)
    path = summary.html
    if json_out:
        print(json.dumps(summary.to_json(), indent=2, ensure_ascii=False))
    else:
        console.print(f"report: {path}", soft_wrap=True)


@app.command()
def project(
    run: MEASURED,
    samples: int = typer.Option(12_013, help="Corpus size to project to (the paper: 12,013 samples)."),
    audio_s: float = typer.Option(96.0, help="Audio seconds per sample (the paper's median: 96)."),
    workers: str = typer.Option("1,8,32", help="Worker counts to project speech stages on, comma-separated."),
    rate_limit: Optional[float] = typer.Option(None, help="API requests per minute allowed (API stages)."),
    concurrency: int = typer.Option(8, help="API calls in flight at once."),
    usd_per_mtok: Optional[float] = typer.Option(None, help="Price per million tokens, for a cost column."),
    json_out: Json = False,
) -> None:
    """Project wall time (and cost) of each stage to a paper-sized corpus from a run's stored timings."""
    from halluscope.spoken.project import project as run_project

    try:
        ws = tuple(int(w) for w in workers.split(",") if w.strip())
    except ValueError:
        raise typer.BadParameter(f"--workers expects comma-separated integers, got '{workers}'") from None
    p = run_project(
        run,
        samples=samples,
        audio_s=audio_s,
        workers=ws,
        rate_limit_per_min=rate_limit,
        concurrency=concurrency,
        usd_per_mtok=usd_per_mtok,
    )
    if json_out:
        print(json.dumps(p.to_json(), indent=2))
        return
    from rich.table import Table

    keys = list(dict.fromkeys(k for s in p.stages for k in s.wall_hours))
    table = Table(
        "stage",
        "measured",
        "per unit (s)",
        "per item (s)",
        "1-worker h",
        *[f"wall h, {k}" for k in keys],
        "USD",
        title=f"{p.samples:,} samples x {p.audio_s:g} s audio (measured on {p.run_dir})",
    )
    for s in p.stages:
        table.add_row(
            s.stage,
            str(s.measured_items),
            f"{s.per_unit_s:g} / {s.basis}",
            f"{s.per_item_s:g}",
            f"{s.total_hours:g}",
            *[f"{s.wall_hours[k]:g}" if k in s.wall_hours else "-" for k in keys],
            "-" if s.cost_usd is None else f"{s.cost_usd:g}",
        )
    console.print(table)
