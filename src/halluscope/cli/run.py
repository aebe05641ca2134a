"""'halluscope run closedform RUN INPUTS...': an audio model on a closed-form set, written for 'halluscope score'.

RUN keeps the model's raw replies (its store; run it again to resume); the predictions file the scorers read is
``--out FILE`` (default RUN/predictions/<format>-<model>.jsonl, or .csv for yesno): a file, not a run."""

from __future__ import annotations

import json
import re
from pathlib import Path, PurePosixPath
from typing import Optional

import typer

from halluscope.cli.canary import CANARY_HELP
from halluscope.cli.compat import App, legacy_run
from halluscope.cli.options import (
    AllowPartial,
    AudioPolicy,
    AudioRoot,
    Json,
    LlmConfig,
    MaxTokens,
    NewRun,
    Options,
    System,
    flag_options,
    model_spec,
    with_executor,
)
from halluscope.core.executors import ExecutorOptions
from halluscope.core.spec import ModelSpec

app = App(help="Run a model on a benchmark set and write its predictions.")
REPLIES = NewRun("Run directory keeping the raw replies (created; an existing one is resumed).")


def _old_call(options: dict[str, str], positionals: list[str]) -> Optional[str]:
    """The run of a call written before RUN existed ('run closedform INPUTS --out FILE [--store DIR]'): its
    first positional is an input file; the run was --store DIR, else OUT.store beside the predictions."""
    if not positionals or not Path(positionals[0]).is_file() or "--out" not in options:
        return None
    out = Path(options["--out"])
    return str(out.with_name(out.name + ".store"))


def predictions_path(run: Path, fmt: str, model: ModelSpec | str) -> Path:
    spec = ModelSpec.parse(model)
    slug = re.sub(r"[^A-Za-z0-9._-]+", "_", PurePosixPath(spec.model.rstrip("/")).name or spec.provider) or "model"
    return run / "predictions" / f"{fmt}-{slug}.{'csv' if fmt == 'yesno' else 'jsonl'}"


@app.command("closedform")
@legacy_run("--store", default=_old_call)
@with_executor
def run_closedform_cmd(
    run: REPLIES,
    inputs: list[Path] = typer.Argument(
        ..., help="The set: HalluAudio or AHa-Bench JSONL(s), or a yes/no questions TSV."
    ),
    model: str = typer.Option(
        ...,
        "--model",
        help="Audio model spec: 'hf-audio/<dir>' (Qwen2-Audio, Qwen2.5-Omni "
        "thinker) or 'openai/<model>' (input_audio content parts).",
    ),
    fmt: str = typer.Option(..., "--format", help="halluaudio | aha | yesno"),
    out: Optional[Path] = typer.Option(
        None,
        "--out",
        help="Predictions file: JSONL (halluaudio, aha) or CSV (yesno); "
        "default RUN/predictions/<format>-<model>.<jsonl|csv>.",
    ),
    audio_root: AudioRoot = None,  # yes/no: <audio_index>.wav in it
    audio_policy: AudioPolicy = "truncate",
    system: System = None,
    max_tokens: MaxTokens = 256,
    llm_config: LlmConfig = None,
    option: Options = [],  # noqa: B006 - typer reads the default
    json_out: Json = False,
    executor: ExecutorOptions = ExecutorOptions(),
    canary: int = typer.Option(0, "--canary", help=CANARY_HELP),
    allow_partial: AllowPartial = False,
) -> None:
    """Ask an audio model every question of a closed-form set; score the output with 'halluscope score'.

    Example: halluscope run closedform runs/qwen2 halluaudio.jsonl --model hf-audio/models/qwen2-audio --format
    halluaudio --audio-root clips/ && halluscope score halluaudio runs/qwen2/predictions/halluaudio-qwen2-audio.jsonl
    """
    from halluscope.closedform.run import run_closedform
    from halluscope.core.stages import console

    spec = model_spec(model)  # parsed once (-o KEY=VALUE are backend options, below); its text is what is stored
    options = flag_options(option, max_tokens=None, audio_policy=None, system=None)
    max_tokens = int(options.pop("max_tokens", max_tokens))
    audio_policy = str(options.pop("audio_policy", audio_policy))
    system = options.pop("system", system)
    out = out or predictions_path(run, fmt, spec)
    out.parent.mkdir(parents=True, exist_ok=True)
    from halluscope.cli.canary import canary_closedform, record_closedform, show

    asked = {
        "model": model,
        "format": fmt,
        "inputs": [str(p.resolve()) for p in inputs],
        "audio_policy": audio_policy,
        "audio_root": str(audio_root.resolve()) if audio_root else None,
        "system": system,
        "max_tokens": max_tokens,
        "options": options,
        "llm_config": str(llm_config) if llm_config else None,
    }
    with executor.create(run) as ex:
        summary = run_closedform(
            spec,
            fmt,
            inputs,
            out=out,
            audio_root=audio_root,
            audio_policy=audio_policy,
            system=system,
            max_tokens=max_tokens,
            store_dir=run,
            backend_options=options,
            quiet=json_out,
            executor=ex,
            allow_partial=allow_partial,
        )
    record_closedform(run, asked)  # what 'halluscope canary RUN' asks again
    results = (
        [
            canary_closedform(
                run,
                model,
                **{k: v for k, v in asked.items() if k not in ("model", "format")},
                fmt=fmt,
                n=canary,
                quiet=json_out,
                allow_partial=allow_partial,
                command="run closedform",
            )
        ]
        if canary
        else []
    )
    if json_out:
        print(json.dumps(summary.as_dict(), indent=2, ensure_ascii=False))
        show(results)  # on stderr
        return
    d = summary.as_dict()
    console.print(
        f"[green]{d['answered']}[/] of {d['rows']} rows answered -> {out}; statuses {d['status']}; "
        f"audio {d['audio']} (delivered {d['audio_delivered']}); {d['calls']} model calls, "
        f"{d['from_store']} from the store ({d['store']})",
        soft_wrap=True,
    )
    console.print(f"score it: halluscope score {fmt} {'QUESTIONS.tsv ' if fmt == 'yesno' else ''}{out}", soft_wrap=True)
    show(results)
