"""'halluscope mishap annotate | examples | disagreements': the human side of a MISHAP run (MISHAP-Bench, 3.3): the
annotation app, the judge's in-context examples drawn from its labels, and where judge and humans disagree."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import typer

from halluscope.cli.compat import App
from halluscope.cli.options import Json, Run, serve
from halluscope.core.stages import console

STEP_RUN = Run("Run directory made by 'mishap clips'.")


def disagreements_cmd(
    run: STEP_RUN,
    judge: Optional[str] = typer.Option(
        None, help="Whose verdicts (a judge spec that ran on this run); default: the latest judge run."
    ),
    json_out: Json = False,
) -> None:
    """Judge-human disagreements per category with the rubric and evidence (MISHAP-Bench, section 3.3): what drives a revised
    rubric formulation or judge prompt. Writes RUN/report/mishap/disagreements.{md,html,csv}."""
    from halluscope.mishap.disagreements import disagreements, summary, write

    rows = disagreements(run, judge_run=judge)
    if json_out:
        doc = {"summary": summary(rows, run, judge_run=judge), "disagreements": rows}
        print(json.dumps(doc, indent=2, ensure_ascii=False))
        return
    for r in summary(rows, run, judge_run=judge):
        console.print(
            f"{r['category']}: {r['disagreements']} disagreement(s) over {r['annotated_labels']} label(s) "
            f"(judge hallucinated {r['judge_hallucinated']}, grounded {r['judge_grounded']})",
            highlight=False,
            markup=False,
        )
    console.print(f"Written: {write(run, judge)}", highlight=False, soft_wrap=True)


def annotate_cmd(
    run: STEP_RUN,
    host: str = typer.Option("127.0.0.1", help="Bind address (loopback by default)."),
    port: int = typer.Option(8765, min=0, max=65535, help="Port (0: any free port)."),
    token: Optional[str] = typer.Option(
        None,
        help="Access token (default: random, printed in the link); "
        "reuse it to keep open pages working across a restart.",
    ),
    sample: Optional[int] = typer.Option(None, min=1, help="Annotate a seeded sample of N responses."),
    seed: int = typer.Option(0),
    allow_remote: bool = typer.Option(False, help="Allow a non-loopback --host."),
    export: Optional[Path] = typer.Option(None, help="Instead of serving: write the latest labels as CSV."),
) -> None:
    """Serve the annotation app (listen, read, label grounded/hallucinated, note; independent or side-by-side)."""
    from halluscope.mishap.annotate import AnnotationServer, export_labels

    if export:
        console.print(f"{export_labels(run, export)} labels written to {export}")
        return
    srv = AnnotationServer(run, host=host, port=port, token=token, sample=sample, seed=seed, allow_remote=allow_remote)
    console.print(
        f"{len(srv.items)} responses to annotate. Open: {srv.url}  (Ctrl-C to stop; the link is the "
        "password: do not share it)",
        highlight=False,
        soft_wrap=True,
    )
    serve(srv)


def examples_cmd(
    run: STEP_RUN,
    out: Path = typer.Option(..., help="JSON file to write (the --examples input of 'judge')."),
    seed: int = typer.Option(0, help="Seed of the draw."),
) -> None:
    """Draw the judge's fixed in-context examples from human annotations: three grounded and three
    hallucinated per category, among responses all annotators agree on (MISHAP-Bench, section 3.3)."""
    import json

    from halluscope.mishap.judge import examples_from_annotations

    examples, used = examples_from_annotations(run, seed=seed)
    out.write_text(
        json.dumps(
            {"_about": f"drawn from annotations of {run} (seed {seed})", **examples, "_answer_ids": used},
            ensure_ascii=False,
            indent=2,
        ),
        encoding="utf-8",
    )
    console.print(
        f"wrote {out}: 6 examples per category from {len(used)} annotated responses; "
        f"use with 'halluscope mishap judge {run} --examples {out}'"
    )


def register(app: App) -> None:
    """'mishap annotate', 'mishap examples' and 'mishap disagreements' on the mishap app."""
    app.command("annotate")(annotate_cmd)
    app.command("examples")(examples_cmd)
    app.command("disagreements")(disagreements_cmd)
