"""'halluscope mishap': one subcommand per step over one run directory, and 'all' to chain them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import List, Optional

import typer

from halluscope.cli.canary import CANARY_HELP
from halluscope.cli.compat import App
from halluscope.cli.options import (
    AllowPartial,
    AudioPolicy,
    AudioRoot,
    Json,
    LlmConfig,
    MaybeMaxTokens,
    Mitigation,
    NewRun,
    Options,
    Retries,
    Run,
    System,
    flag_options,
    mitigation_options,
    model_spec,
    model_with,
    with_executor,
)
from halluscope.core.executors import ExecutorOptions
from halluscope.core.stages import console

app = App(
    help="MISHAP-Bench: adversarial open-ended questions over audio clips, a groundedness judge, "
    "rates, stance and human agreement (MISHAP-Bench). Steps: clips -> questions -> rubrics -> answer "
    "-> judge -> annotate -> report, or 'all'. LLM options: --llm-config or $HALLUSCOPE_LLM_CONFIG; keys "
    "from the environment."
)

RUN = NewRun("Run directory (created by 'clips'; later steps resume it).")
STEP_RUN = Run("Run directory made by 'mishap clips'.")


def _show(summary, what: str, json_out: bool = False) -> None:
    """A step's summary (halluscope.backends.runner.CallSummary): its counts line, then its warnings (--json: them as
    one JSON object on stdout, with the failures by item). The one rule of core/outcome.py was applied by the step
    itself (``allow_partial``), before it recorded the step: a failed step exits 2 and is not recorded."""
    if json_out:
        print(
            json.dumps(
                {"step": what, **summary.counts(), "failed_items": summary.failed, "notes": summary.notes},
                indent=2,
                ensure_ascii=False,
            )
        )
    else:
        console.print(summary.line(what), highlight=False, soft_wrap=True)
        for note in summary.notes:
            console.print(f"[yellow]warning:[/] {note}", highlight=False, soft_wrap=True)


def _seeds(value: Optional[str]) -> Optional[list[int]]:
    if not value:
        return None
    try:
        return [int(x) for x in value.split(",") if x.strip()]
    except ValueError:
        raise typer.BadParameter(f"expected comma-separated integers such as 0,1,2, got '{value}'") from None


@app.command("clips")
def clips_cmd(
    run: RUN,
    manifest: Path = typer.Option(
        ..., help=".jsonl/.csv with id, domain (music|sound|speech), source, audio, description[, description_kind]."
    ),
    filter_llm: Optional[str] = typer.Option(
        None, help="LLM for the informativeness filter (App. A.1), e.g. openai/<model>; none: keep every clip."
    ),
    per_domain: Optional[int] = typer.Option(
        None,
        help="Keep at most N clips per domain after the filter (the paper: 1,000), taken from its sources in turn.",
    ),
    per_source: Optional[List[str]] = typer.Option(
        None, help="Keep at most N clips per source after the filter: N for every source, or SOURCE=N (repeat)."
    ),
    seed: int = typer.Option(0, help="Seed of the quota draws."),
    audio_root: AudioRoot = None,
    llm_config: LlmConfig = None,
    option: Options = [],  # noqa: B006 - options of the --filter-llm
    allow_partial: AllowPartial = False,
) -> None:
    """Import clips and descriptions, filter uninformative descriptions, enforce domain / source quotas, report balance.

    A --filter-llm that cannot be used (no API key, a key refused) stops the command at its first call, before any
    clip is filtered; one whose calls fail on more than the share --allow-partial names fails it (exit 2)."""
    from halluscope.mishap.clips import import_clips

    quota: Optional[int | dict[str, int]] = None
    for v in per_source or []:
        src, sep, n = v.rpartition("=")
        if (
            not n.strip().isdigit()
            or (sep and not src.strip())
            or (quota is not None and isinstance(quota, int) != (not sep))
        ):
            raise typer.BadParameter(
                f"expected N for every source or SOURCE=N (not both), got '{v}'", param_hint="--per-source"
            )
        if not sep:
            quota = int(n)
        else:
            quota = {**(quota or {}), src.strip(): int(n)}  # type: ignore[dict-item]
    r = import_clips(
        run,
        manifest,
        filter_llm=model_with(filter_llm, option),
        per_domain=per_domain,
        per_source=quota,
        seed=seed,
        audio_root=audio_root,
        allow_partial=allow_partial,
    )
    if r.filter_failed:  # fewer than the share allows (or --allow-partial): said, not fatal
        console.print(
            f"[yellow]note:[/] the informativeness filter failed on {len(r.filter_failed)} clip(s), dropped; a rerun "
            "retries them",
            highlight=False,
            soft_wrap=True,
        )
    for line in r.lines():
        console.print(line, highlight=False, soft_wrap=True)
    for row in r.balance:
        if row["source"] == "(all)":
            console.print(f"  {row['domain']}: {row['kept']} kept of {row['clips']}")


@app.command("questions")
def questions_cmd(
    run: STEP_RUN,
    generator: str = typer.Option(
        ..., "--generator", help="Question writer: openai/<model>, hf/<dir> or hf-audio/<dir>."
    ),
    checker: str = typer.Option(
        "same", help="Strategy-adherence checker: 'same' (the writer), another spec, or 'none'."
    ),
    per_category: int = typer.Option(2, help="Questions per category per clip (the spec: 2, so 4 per clip)."),
    real_sources: Optional[Path] = typer.Option(
        None,
        help="More real source names, one per line, added to the shipped list (mishap/data/real_sources.tsv, each name with its source and licence): invented false-authority names must not collide with them.",
    ),
    shipped_sources: bool = typer.Option(
        True,
        "--shipped-sources/--no-shipped-sources",
        help="Check invented names against the shipped real-source list too.",
    ),
    with_audio: Optional[bool] = typer.Option(
        None,
        "--with-audio/--no-audio",
        help="Attach the clip to the writer's request; default: when the writer is an hf-audio/ model (an openai/ writer needs --with-audio and a server that takes audio).",
    ),
    retries: Retries = 2,
    seed: int = typer.Option(0, help="Seed of the strategy assignment and generation."),
    llm_config: LlmConfig = None,
    option: Options = [],  # noqa: B006 - the writer's options
    json_out: Json = False,
    allow_partial: AllowPartial = False,
) -> None:
    """Write adversarial questions: 3 context and 4 knowledge strategies, checked and regenerated."""
    from halluscope.mishap.questions import make_questions

    _show(
        make_questions(
            run,
            model_with(generator, option),
            checker=checker,
            per_category=per_category,
            real_sources=real_sources,
            shipped_sources=shipped_sources,
            with_audio=with_audio,
            retries=retries,
            seed=seed,
            quiet=json_out,
            allow_partial=allow_partial,
        ),
        "questions",
        json_out,
    )


@app.command("rubrics")
def rubrics_cmd(
    run: STEP_RUN,
    generator: Optional[str] = typer.Option(None, "--generator", help="Rubric writer (generate)."),
    export: Optional[Path] = typer.Option(None, "--export", help="Write the current rubrics as JSONL to edit."),
    import_: Optional[Path] = typer.Option(None, "--import", help="Append edited rubrics as new versions."),
    author: str = typer.Option("", help="Who edited (required with --import)."),
    formulation: Optional[str] = typer.Option(
        None,
        help="With --generator: regenerate every rubric from this formulation (v1, v2, v3 or a template file; MISHAP-Bench, App. E.3), appended as each question's next version.",
    ),
    llm_config: LlmConfig = None,
    option: Options = [],  # noqa: B006 - the writer's options
    allow_partial: AllowPartial = False,
) -> None:
    """Generate 'Hallucinated if ... Grounded if ...' rubrics, regenerate them from a named formulation, or
    export / import edits (versioned, append-only)."""
    from halluscope.mishap.rubrics import export_rubrics, import_rubrics, make_rubrics, regenerate_rubrics

    if not (generator or export or import_):
        raise typer.BadParameter("give --generator to generate, --export FILE or --import FILE --author NAME")
    if formulation and not generator:
        raise typer.BadParameter("--formulation needs --generator (the LLM that writes the rubrics)")
    if generator and formulation:
        _show(
            regenerate_rubrics(run, model_with(generator, option), formulation, allow_partial=allow_partial),
            f"rubrics ({formulation})",
        )
    elif generator:
        _show(
            make_rubrics(run, model_with(generator, option), allow_partial=allow_partial),
            "rubrics",
        )
    if import_:
        new = import_rubrics(run, import_, author=author)
        console.print(f"{len(new)} rubric(s) changed: new versions stored")
    if export:
        console.print(f"{export_rubrics(run, export)} rubrics written to {export}")


@app.command("answer")
@with_executor
def answer_cmd(
    run: STEP_RUN,
    model: str = typer.Option(..., help="Audio LM: openai/<model> (audio parts) or hf-audio/<dir>."),
    seeds: Optional[str] = typer.Option(
        None, help="Sampled decoding over these seeds (e.g. 0,1,2); none: greedy once."
    ),
    temperature: Optional[float] = typer.Option(
        None, help="Sampling temperature from the model card (with --seeds); default 0 (greedy)."
    ),
    top_p: Optional[float] = typer.Option(None, help="top_p from the model card (with --seeds)."),
    top_k: Optional[int] = typer.Option(None, "--top-k", help="top_k from the model card (with --seeds; 0: off)."),
    repetition_penalty: Optional[float] = typer.Option(
        None, "--repetition-penalty", help="Repetition penalty from the model card (greedy or sampled)."
    ),
    preset: Optional[str] = typer.Option(
        None,
        help="Per-model decoding preset (MISHAP-Bench, Table 5; 'halluscope mishap presets' lists them with their sources): fills every control not given.",
    ),
    preset_file: Optional[Path] = typer.Option(
        None, help="More presets (JSON, the shape of mishap/data/decoding_presets.json)."
    ),
    max_tokens: MaybeMaxTokens = None,  # default 512, or the preset's
    audio_policy: AudioPolicy = "truncate",
    system: System = None,
    mitigation: Mitigation = None,
    option: Options = [],  # noqa: B006
    llm_config: LlmConfig = None,
    json_out: Json = False,
    executor: ExecutorOptions = ExecutorOptions(),
    canary: int = typer.Option(0, "--canary", help=CANARY_HELP),
    allow_partial: AllowPartial = False,
    replace: bool = typer.Option(
        False,
        help="These answers replace the model's in the tables (else a re-answer with other options is kept apart).",
    ),
) -> None:
    """Collect one model's answers (raw text, call key, audio sent/heard); an hf-audio model can generate on Ray
    workers (--executor ray --ray-gpus-per-worker 1): one model load per worker, the same answers."""
    from halluscope.mishap.answers import collect_answers

    options = flag_options(option, max_tokens=None, audio_policy=None, system=None)
    max_tokens = int(options.pop("max_tokens")) if "max_tokens" in options else max_tokens
    audio_policy = str(options.pop("audio_policy", audio_policy))
    system = options.pop("system", system)
    name = options.pop("name", None)  # the display name in reports (not a backend option)
    # one route for the method: --mitigation and -o mitigation=... both name the model (its own row)
    mitigation = mitigation_options(mitigation, options) or options.pop("mitigation", None)
    if mitigation:
        if not model.startswith("hf-audio/"):
            raise typer.BadParameter("--mitigation needs a local hf-audio/<dir> model (it changes the decoding loop)")
        from halluscope.core.spec import ModelSpec

        # the mitigation and its -o parameters name the model (its own row in the report), as 'aad&alpha=0.5' did
        model, options = str(ModelSpec.parse(model, {**options, "mitigation": mitigation})), {}

    if name:  # the display name travels in the spec (display only: backends never see it)
        from halluscope.core.spec import ModelSpec

        model = str(ModelSpec.parse(model, {"name": name}))
    spec = model_spec(model)  # parsed once; the answers' records carry it
    with executor.create(run) as ex:
        _show(
            collect_answers(
                run,
                spec,
                seeds=_seeds(seeds),
                temperature=temperature,
                top_p=top_p,
                top_k=top_k,
                repetition_penalty=repetition_penalty,
                preset=preset,
                preset_file=preset_file,
                max_tokens=max_tokens,
                audio_policy=audio_policy,
                system=system,
                backend_options=options,
                quiet=json_out,
                executor=ex,
                replace=replace,
                allow_partial=allow_partial,
            ),
            f"answers of {model}",
            json_out,
        )
    if canary:  # greedy requests (sampled answers differ without any ablation); greedy real calls come from the store
        from halluscope.cli.canary import canary_mishap, show

        show(
            [
                canary_mishap(
                    run,
                    model,
                    options=options,
                    llm_config=str(llm_config) if llm_config else None,
                    n=canary,
                    quiet=json_out,
                    allow_partial=allow_partial,
                    command="mishap answer",
                )
            ]
        )  # the decoding the answers were asked with (its manifest)


@app.command("presets")
def presets_cmd(
    preset_file: Optional[Path] = typer.Option(None, help="More presets (JSON) shown over the shipped ones."),
    json_out: Json = False,
) -> None:
    """The per-model decoding presets (MISHAP-Bench, Table 5): every value with its source, or why none is recorded."""
    from halluscope.mishap.presets import presets_rows

    rows = presets_rows(preset_file)
    if json_out:
        print(json.dumps(rows, indent=2, ensure_ascii=False))
        return
    for r in rows:
        console.print(
            f"{r['preset']:<24} {r['key']:<19} {json.dumps(r['value']):<10} {r['source']}",
            highlight=False,
            soft_wrap=True,
            markup=False,
        )


@app.command("judge")
def judge_cmd(
    run: STEP_RUN,
    judge: str = typer.Option(..., help="Judge LLM: openai/<model> or hf/<dir>."),
    evidence: Optional[Path] = typer.Option(
        None, help="Local documents for the evidence tool (folder of .txt/.md or .jsonl); knowledge questions only."
    ),
    examples: Optional[Path] = typer.Option(
        None, help="In-context examples (3 grounded + 3 hallucinated per category, JSON)."
    ),
    max_searches: int = typer.Option(3, help="Evidence searches per judgement (knowledge questions)."),
    retries: Retries = 2,
    llm_config: LlmConfig = None,
    option: Options = [],  # noqa: B006 - the judge's options
    json_out: Json = False,
    allow_partial: AllowPartial = False,
) -> None:
    """Judge every answer as grounded or hallucinated (with stance), against the current rubrics."""
    from halluscope.mishap.judge import run_judge

    _show(
        run_judge(
            run,
            model_spec(judge, option),
            examples=examples,
            evidence=evidence,
            max_searches=max_searches,
            retries=retries,
            quiet=json_out,
            allow_partial=allow_partial,
        ),
        "judgements",
        json_out,
    )


@app.command("report")
def report_cmd(run: STEP_RUN) -> None:
    """Write RUN/report/mishap/: Tables 1 and 11, stance (Figure 6 style), agreement."""
    from halluscope.mishap.report import write_mishap_report

    console.print(f"report: {write_mishap_report(run)}")


@app.command("all")
@with_executor
def all_cmd(
    run: RUN,
    manifest: Path = typer.Option(..., help="Clip manifest (see 'mishap clips')."),
    audio_root: AudioRoot = None,
    generator: str = typer.Option(..., "--generator", help="LLM for the filter, questions, checks and rubrics."),
    model: List[str] = typer.Option(..., help="Audio LM(s) to evaluate (repeat the option)."),
    judge: str = typer.Option(..., help="Judge LLM."),
    filter_clips: bool = typer.Option(True, help="Run the informativeness filter with --generator."),
    per_category: int = typer.Option(2),
    real_sources: Optional[Path] = typer.Option(None),
    seeds: Optional[str] = typer.Option(None),
    temperature: float = typer.Option(0.0),
    audio_policy: AudioPolicy = "truncate",
    evidence: Optional[Path] = typer.Option(None),
    llm_config: LlmConfig = None,
    executor: ExecutorOptions = ExecutorOptions(),
    allow_partial: AllowPartial = False,
) -> None:
    """clips -> questions -> rubrics -> answer (each model) -> judge -> report, resuming whatever is done;
    --executor ray puts hf-audio answering on Ray workers."""
    from halluscope.mishap.answers import collect_answers
    from halluscope.mishap.clips import import_clips
    from halluscope.mishap.judge import run_judge
    from halluscope.mishap.questions import make_questions
    from halluscope.mishap.report import write_mishap_report
    from halluscope.mishap.rubrics import make_rubrics

    for line in import_clips(
        run,
        manifest,
        filter_llm=generator if filter_clips else None,
        audio_root=audio_root,
        allow_partial=allow_partial,
    ).lines():
        console.print(line, highlight=False, soft_wrap=True)
    _show(
        make_questions(
            run, generator, per_category=per_category, real_sources=real_sources, allow_partial=allow_partial
        ),
        "questions",
    )
    _show(make_rubrics(run, generator, allow_partial=allow_partial), "rubrics")
    with executor.create(run) as ex:
        for m in model:
            _show(
                collect_answers(
                    run,
                    m,
                    seeds=_seeds(seeds),
                    temperature=temperature,
                    audio_policy=audio_policy,
                    executor=ex,
                    allow_partial=allow_partial,
                ),
                f"answers of {m}",
            )
    _show(run_judge(run, judge, evidence=evidence, allow_partial=allow_partial), "judgements")
    console.print(f"report: {write_mishap_report(run)}\nannotate: halluscope mishap annotate {run}")


from halluscope.cli.mishap_human import register as _register_human  # noqa: E402
from halluscope.cli.mishap_validity import register as _register_validity  # noqa: E402

_register_human(app)  # 'mishap annotate|examples|disagreements'
_register_validity(app)  # 'mishap validity import|judge|report' and 'mishap ablation'
