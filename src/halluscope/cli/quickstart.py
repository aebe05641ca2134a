"""'halluscope quickstart [RUN]': the whole chain offline on the embedded demo corpus.

A group whose default subcommand is 'spoken' ('halluscope quickstart [RUN]' = 'halluscope quickstart spoken
[RUN]'); other pipelines add their quickstart as a subcommand of ``app`` (e.g. 'quickstart mishap RUN')."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated, Optional

import typer

from halluscope.cli.build import langs_of, show_build
from halluscope.cli.compat import App, DefaultGroup, legacy_run
from halluscope.core.records import LANGUAGES, TASKS
from halluscope.core.stages import console

app = App(
    cls=DefaultGroup,
    no_args_is_help=False,
    help="The whole chain offline on the embedded demo corpus; 'halluscope quickstart [RUN]' runs the spoken "
    "benchmark's ('quickstart spoken').",
)
DEFAULT_QUICKSTART_DIR = Path("runs/quickstart")
QuickRun = Annotated[Path, typer.Argument(help="Run directory (an existing one is resumed).", metavar="RUN")]


@app.command("spoken")
@legacy_run("--out")
def quickstart(
    run: QuickRun = DEFAULT_QUICKSTART_DIR,
    articles_per_language: Optional[int] = typer.Option(
        8,
        help="Demo articles per language (the demo has 20: 20 gives tighter intervals but takes about "
        "2.5 times as long).",
    ),
    langs: str = typer.Option(",".join(LANGUAGES), help="Languages, comma-separated."),
    seed: int = typer.Option(13, help="Build seed."),
) -> None:
    """The whole chain offline on the embedded demo corpus: rewrites, speech, transcripts, WER/CER,
    TF-IDF detectors on O and T for all three tasks, and the report. Run it again to resume."""
    from halluscope.report import write_report
    from halluscope.spoken.build import BuildConfig, build_spoken
    from halluscope.spoken.detect import detect as run_detect
    from halluscope.spoken.detect.run import MIN_ARTICLES

    if articles_per_language is not None and articles_per_language < MIN_ARTICLES:
        # checked before the build: the article-level split needs train, dev and test articles per language
        raise typer.BadParameter(
            f"expected at least {MIN_ARTICLES} articles per language (one each for train, dev "
            f"and test), got {articles_per_language}",
            param_hint="--articles-per-language",
        )
    t0 = time.perf_counter()
    cfg = BuildConfig(
        corpus="demo",
        langs=langs_of(langs),
        seed=seed,
        articles_per_language=articles_per_language,
        tts="offline-best",
        asr="offline-best",
    )  # the best measured offline speech per language
    show_build(build_spoken(run, cfg, allow_partial=False))  # the outcome rule: a failing stage stops it
    for t in TASKS:
        for i in ("text", "transcript"):
            run_detect(run, task=t, input=i)  # type: ignore[arg-type]
    path = write_report(run).html
    console.print((Path(path).parent / "tables.md").read_text(encoding="utf-8"))
    console.print(f"[green]done[/] in {time.perf_counter() - t0:.0f} s. Report: {path}", soft_wrap=True)
    console.print(
        f"Browse the items: halluscope view {run}   (or --export {run / 'view'} for the report's cell links)",
        soft_wrap=True,
    )
