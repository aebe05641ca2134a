"""'halluscope run closedform': an audio model on a closed-form set, written for 'halluscope score'."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import typer

from halluscope.cli.options import with_executor
from halluscope.core.executors import ExecutorOptions


def register(app: typer.Typer) -> None:
    """Add the 'run' command group (with 'closedform') to the main app."""
    run_app = typer.Typer(help="Run a model on a benchmark set and write its predictions.", no_args_is_help=True)
    app.add_typer(run_app, name="run")

    @run_app.command("closedform")
    @with_executor
    def run_closedform_cmd(
        inputs: list[Path] = typer.Argument(..., help="The set: HalluAudio or AHa-Bench JSONL(s), or a yes/no questions TSV."),
        model: str = typer.Option(..., "--model", help="Audio model spec: 'hf-audio/<dir>' (Qwen2-Audio, Qwen2.5-Omni "
                                  "thinker) or 'openai/<model>' (input_audio content parts)."),
        fmt: str = typer.Option(..., "--format", help="halluaudio | aha | yesno"),
        out: Path = typer.Option(..., "--out", help="Predictions file: JSONL (halluaudio, aha) or CSV (yesno)."),
        audio_root: Optional[Path] = typer.Option(None, help="Folder relative audio paths are under (default: the "
                                                  "input file's folder); yes/no: <audio_index>.wav in it."),
        audio_policy: str = typer.Option("truncate", help="Audio longer than the model's window: truncate | chunk | skip."),
        system: Optional[str] = typer.Option(None, help="System prompt."),
        max_new_tokens: int = typer.Option(256, help="New tokens per reply (greedy decoding)."),
        llm_config: Optional[Path] = typer.Option(None, help="LLM config (.toml/.json); default: $HALLUSCOPE_LLM_CONFIG."),
        store: Optional[Path] = typer.Option(None, help="Store directory for raw replies (default: OUT.store)."),
        option: list[str] = typer.Option([], "--option", "-o", help="Backend option KEY=VALUE, e.g. -o audio_window_s=30."),
        json_out: bool = typer.Option(False, "--json", help="Print the summary as JSON."),
        executor: ExecutorOptions = ExecutorOptions(),
    ) -> None:
        """Ask an audio model every question of a closed-form set; score the output with 'halluscope score'.

        Example: halluscope run closedform halluaudio.jsonl --model hf-audio/models/qwen2-audio --format halluaudio
        --audio-root clips/ --out preds/qwen2_audio.jsonl && halluscope score halluaudio preds/qwen2_audio.jsonl
        """
        from halluscope.closedform.run import run_closedform
        from halluscope.core.stages import console

        from halluscope.cli.options import parse_kv_options

        options = parse_kv_options(option)
        with executor.create(store or out.with_name(out.name + ".store")) as ex:
            summary = run_closedform(model, fmt, inputs, out=out, audio_root=audio_root, policy=audio_policy,
                                     system=system, max_new_tokens=max_new_tokens,
                                     llm_config=str(llm_config) if llm_config else None, store_dir=store,
                                     backend_options=options, quiet=json_out, executor=ex)
        if json_out:
            print(json.dumps(summary.as_dict(), indent=2, ensure_ascii=False))
            return
        d = summary.as_dict()
        console.print(f"[green]{d['answered']}[/] of {d['rows']} rows answered -> {out}; statuses {d['status']}; "
                      f"audio {d['audio']} (delivered {d['audio_delivered']}); {d['calls']} model calls, "
                      f"{d['from_store']} from the store ({d['store']})")
        console.print(f"score it: halluscope score {fmt} {'QUESTIONS.tsv ' if fmt == 'yesno' else ''}{out}")
