"""'halluscope view RUN': browse every item of a run (or export the viewer as static files)."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from halluscope.cli.compat import App
from halluscope.cli.options import NewRun, serve
from halluscope.core.stages import console

app = App()
VIEWED = NewRun("Run directory (a spoken build, a MISHAP run, or both).")


@app.command()
def view(
    run: VIEWED,
    export: Optional[Path] = typer.Option(
        None,
        help="Write the viewer as static files (data chunks, audio) into this "
        "folder instead of serving it; opens from file://. RUN/view makes the "
        "report's cell links work.",
    ),
    closedform: List[str] = typer.Option(
        [],
        "--closedform",
        help="Closed-form predictions to show too: "
        "halluaudio=FILE, aha=FILE or yesno=QUESTIONS.csv,PREDICTIONS.csv (repeatable).",
    ),
    drop_excluded: bool = typer.Option(
        False,
        help="Write RUN/dataset/samples.kept.parquet without the clips rated "
        "'excluded' (Lost in Speech, section 3.4) and exit.",
    ),
    host: str = typer.Option("127.0.0.1", help="Address to bind (loopback unless --allow-remote)."),
    port: int = typer.Option(0, help="Port (0 picks a free one)."),
    token: Optional[str] = typer.Option(None, help="Session token (default: random)."),
    allow_remote: bool = typer.Option(False, help="Allow a non-loopback --host (the token still applies)."),
    listen: Optional[int] = typer.Option(
        None,
        help="Draw a seeded listening set of N clips of --lang for the listener "
        "study (Lost in Speech (000), 3.4: 120 Kazakh clips), store it in the run and "
        "write RUN/listening/<lang>-<N>-seed<S>.csv; the same seed gives every listener "
        "the same clips. Exits after writing.",
    ),
    lang: str = typer.Option("kk", help="Language of the --listen set."),
    seed: int = typer.Option(0, help="Seed of the --listen draw."),
) -> None:
    """Browse every item of a run: original vs rewrite with the edits marked, the clip, the transcript aligned to
    the text, judges' ratings, each detector's prediction and raw reply; rate speech quality (Lost in Speech, section 3.4).

    Example: halluscope view runs/quickstart   |   halluscope view runs/quickstart --export runs/quickstart/view
    """
    if listen is not None:
        from halluscope.view.listen import listening_set

        path, chosen, drawn = listening_set(run, n=listen, language=lang, seed=seed)
        how = "drawn and stored" if drawn else "read back from the run (drawn before)"
        console.print(
            f"[green]listening set[/] {len(chosen.ids)} of {chosen.available} '{lang}' clips, seed {seed}, "
            f"{how}: {path}",
            soft_wrap=True,
        )
        return
    if drop_excluded:
        from halluscope.view.quality import drop_excluded as drop

        out, kept, dropped = drop(run)
        console.print(f"[green]wrote[/] {out}: {kept} samples kept, {dropped} excluded clip(s) dropped", soft_wrap=True)
        return
    if export is not None:
        from halluscope.view.server import export_view

        page, n, clips = export_view(run, export, closedform=closedform)
        console.print(f"[green]exported[/] {n} items and {clips} clips; open {page.resolve().as_uri()}", soft_wrap=True)
        return
    from halluscope.view.server import ViewServer

    srv = ViewServer(run, closedform=closedform, host=host, port=port, token=token, allow_remote=allow_remote)
    console.print(f"viewer for {run} ({len(srv.view.index)} items): open {srv.url}  (Ctrl-C stops it)", soft_wrap=True)
    serve(srv)
