"""'halluscope mitigation sweep': a decoding-time mitigation at several strengths on the same MISHAP questions and
seeds, beside plain greedy and plain sampled decoding; the report shows it as a mitigation card (analysis/cards.py)."""

from __future__ import annotations

from typing import Optional

import typer

from halluscope.cli.compat import App
from halluscope.cli.options import AllowPartial, AudioPolicy, Json, LlmConfig, MaxTokens, Options, Run, model_with
from halluscope.core.stages import console

app = App(
    help="Decoding-time mitigation sweeps: one method over strengths and seeds beside plain greedy and sampled "
    "decoding on a MISHAP run's questions (MISHAP-Bench, 001, 3.4); the report shows the mitigation card."
)


def _numbers(value: str, what: str, cast: type) -> list:
    try:
        out = [cast(x) for x in value.split(",") if x.strip()]
    except ValueError:
        raise typer.BadParameter(
            f"expected comma-separated {what} such as {'0,0.5,1' if cast is float else '0,1,2'}, got '{value}'"
        ) from None
    if not out:
        raise typer.BadParameter(f"expected at least one {what[:-1]}")
    return out


@app.command("sweep")
def sweep_cmd(
    run: Run("MISHAP run directory with questions (and rubrics, for the judge)."),
    model: str = typer.Option(..., help="Plain local audio LM: hf-audio/<dir> (its logits are contrasted)."),
    method: str = typer.Option("aad", help="Mitigation: aad | vcd | mti | dola."),
    strength: str = typer.Option(
        "0,0.25,0.5,1", help="Contrast strengths alpha, comma-separated (0 decodes as plain)."
    ),
    seeds: str = typer.Option("0,1,2", help="Sampling seeds, comma-separated (every arm but plain greedy)."),
    judge: Optional[str] = typer.Option(
        None, help="Groundedness judge (openai/<model> or hf/<dir>); without it the card has no rates."
    ),
    judge_option: Options = [],  # noqa: B006 - the judge's options
    temperature: float = typer.Option(0.7, help="Sampling temperature of the sampled arms (the model card's)."),
    top_p: Optional[float] = typer.Option(None, help="top_p of the sampled arms."),
    max_tokens: MaxTokens = 64,
    audio_policy: AudioPolicy = "truncate",
    llm_config: LlmConfig = None,
    json_out: Json = False,
    allow_partial: AllowPartial = False,
) -> None:
    """Answer every question with plain greedy, plain sampled and each strength over every seed (stored: a rerun
    asks only what is missing), judge the answers, and record the sweep for the report's mitigation card.

    An arm or the judge that produces nothing, or fails on more than the share --allow-partial names, exits 2 and
    the sweep is not recorded (what was answered and judged is kept: a rerun asks only the rest)."""
    import json

    from halluscope.analysis.sweep import run_sweep

    cfg = run_sweep(
        run,
        model,
        method=method.lower(),
        strengths=_numbers(strength, "strengths", float),
        seeds=_numbers(seeds, "seeds", int),
        judge=model_with(judge, judge_option) if judge else None,
        temperature=temperature,
        top_p=top_p,
        max_tokens=max_tokens,
        audio_policy=audio_policy,
        quiet=json_out,
        allow_partial=allow_partial,
    )
    if json_out:
        print(json.dumps(cfg, indent=2, ensure_ascii=False))
        return
    for arm in cfg["arms"]:
        console.print(f"{arm['arm']}: answers stage {arm['answers'][:12]}", highlight=False)
    console.print(f"sweep recorded; 'halluscope report {run}' shows the mitigation card", soft_wrap=True)
