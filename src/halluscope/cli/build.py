"""'halluscope build spoken | judge | realworld': build a benchmark (Lost in Speech) into a run directory."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, List, Optional

import typer

from halluscope.cli.compat import App, legacy_run
from halluscope.cli.options import (
    AllowPartial,
    Json,
    LlmConfig,
    NewRun,
    Options,
    Retries,
    Run,
    VllmServe,
    model_with,
    with_executor,
)
from halluscope.core.executors import ExecutorOptions
from halluscope.core.records import LANGUAGES, SEVERITIES, TYPES
from halluscope.core.stages import console

if TYPE_CHECKING:
    from halluscope.spoken.build import BuildResult

app = App(help="Build a benchmark into a run directory.")

BUILT = Run("Run directory made by 'build spoken'.")
NEW = NewRun()


def choices(value: str, allowed: tuple[str, ...], name: str) -> tuple:
    """A comma-separated subset of ``allowed`` (each once) as a tuple; BadParameter naming ``name`` otherwise."""
    got = tuple(x.strip() for x in value.split(",") if x.strip())
    bad = [x for x in got if x not in allowed]
    if bad or not got:
        raise typer.BadParameter(
            f"{name} expects a comma-separated subset of {','.join(allowed)}, got '{value}'"
            + (f" ({', '.join(bad)} unknown)" if bad else "")
        )
    if len(set(got)) != len(got):
        dupes = sorted({x for x in got if got.count(x) > 1})
        raise typer.BadParameter(
            f"{name} expects each value once, got '{value}' ({', '.join(dupes)} repeated); "
            f"e.g. {name} {','.join(dict.fromkeys(got))}"
        )
    return got


def langs_of(value: str) -> tuple[str, ...]:
    return choices(value, LANGUAGES, "--langs")


def generator_with(spec: str, values: list[str]) -> str:
    """A --generator (or --judge) spec with the '-o' options on top; for 'en=...,ru=...' on every language's spec."""
    from halluscope.spoken.generate.perlang import is_per_language

    if not is_per_language(spec) or not values:
        return model_with(spec, values)  # type: ignore[return-value]
    parts = [p.partition("=") for p in spec.split(",") if p.strip()]
    return ",".join(f"{lang.strip()}={model_with(s.strip(), values)}" for lang, _, s in parts)


def show_notes(notes: tuple[str, ...]) -> None:
    for note in notes:
        console.print(f"[yellow]note:[/] {note}", soft_wrap=True)


def show_build(result: BuildResult) -> None:
    """What a build did, on stderr: corpus notes, the LLM generator's calls and cost, each stage's counts."""
    show_notes(result.notes)
    if result.generator_stats is not None:
        console.print(f"  {result.generator_spec}: {result.generator_stats.line()}", soft_wrap=True)
    from halluscope.core.keys import StageName

    groups: dict[str, list] = {}  # a kind's per-language stages (tts@en, tts@ru) under one total line
    for s in result.summaries:
        name = StageName.parse(s.stage)
        groups.setdefault(str(name.whole) if name is not None else s.stage, []).append((name, s))
    for kind, parts in groups.items():
        for label, group in [(kind, parts), *((f"  {n.language}", [(n, s)]) for n, s in parts if len(parts) > 1)]:
            failed = sum(len(s.failed) for _, s in group)
            note = f", [red]{failed} failed[/]" if failed else ""
            computed, reused = sum(s.computed for _, s in group), sum(s.reused for _, s in group)
            console.print(f"  {label:<9} {computed} computed, {reused} reused{note}")


@app.command("spoken")
@legacy_run("--out")
@with_executor
def build_spoken_cmd(
    run: NEW,
    corpus: str = typer.Option(
        ..., help="Articles as .jsonl/.csv/.parquet with id, language, text[, url, outlet, date, topic], or 'demo'."
    ),
    langs: str = typer.Option(",".join(LANGUAGES), help="Languages to build, comma-separated."),
    generator: str = typer.Option(
        "rules",
        help="Rewrite generator spec: 'rules' (offline), 'openai/<model>' (any OpenAI-compatible server, App. A.1 prompts) or 'hf/<model dir>'; or one per language, as Lost in Speech (000) rewrote English with GPT and Russian/Kazakh with Gemini: 'en=openai/gpt-4,ru=openai/gemini-2.0-flash-lite,kk=openai/gemini-2.0-flash-lite' (each item records its generator).",
    ),
    tts: str = typer.Option(
        "espeak",
        help="TTS spec for every language, per language ('en=espeak/en-us,ru=festival/msu_ru_nsh_clunits,kk=espeak/kk') or the preset 'offline-best'. Engines: 'espeak' (a voice pool), 'espeak/<voice>', 'rhvoice' (a voice pool, en and ru), 'rhvoice/<voice>', 'festival/<voice>', 'hf-tts/<VITS dir or hub id>'.",
    ),
    asr: str = typer.Option(
        "whisper/base",
        help="ASR spec of the build's transcripts, per language too ('en=whisper/base,kk=hf-asr/<dir>') or 'offline-best'. Engines: 'whisper/base' (shipped weights), 'whisper/<ct2 dir>', 'hf-asr/<Whisper or wav2vec2-CTC dir or hub id>[?punct=hf-punct/<token-classification dir>]'.",
    ),
    compare_asr: List[str] = typer.Option(
        [],
        "--compare-asr",
        help="Another ASR system (same spec forms as --asr) to run on the same audio, a stage of its own; repeat it. The report's Table 7 puts them side by side; 'detect --transcripts SPEC' reads one.",
    ),
    seed: int = typer.Option(13, help="Seed for the rewrite plan, the rewrites and the voice choice."),
    rewrites_per_article: int = typer.Option(
        2, help="Hallucinated rewrites per article, over distinct type x severity cells (0-9)."
    ),
    articles_per_language: Optional[int] = typer.Option(
        None, help="Use only the first N articles (by id) per language."
    ),
    types: str = typer.Option(",".join(TYPES), help="Hallucination types to generate, comma-separated."),
    severities: str = typer.Option(",".join(SEVERITIES), help="Severity levels to generate, comma-separated."),
    llm_config: LlmConfig = None,
    option: Options = [],  # noqa: B006 - typer reads the default; options of the --generator
    json_out: Json = False,
    executor: ExecutorOptions = ExecutorOptions(),
    vllm_serve: VllmServe = None,
    allow_partial: AllowPartial = False,
) -> None:
    """Articles -> hallucinated rewrites -> speech -> ASR transcripts, resumable (Lost in Speech, sections 3.1 and 3.3).

    Every engine's options and weights are checked before any work. A stage that produces nothing, or fails on
    more than the share --allow-partial names, stops the build with exit 2 (what was done is kept).

    Example: halluscope build spoken runs/demo --corpus demo --langs en,kk [--executor ray --ray-workers 8]
    """
    from halluscope.backends.vllm import serving
    from halluscope.spoken.build import BuildConfig, build_spoken

    generator = generator_with(generator, option)  # type: ignore[assignment]
    cfg = BuildConfig(
        corpus=corpus,
        langs=langs_of(langs),
        generator=generator,
        tts=tts,
        asr=asr,
        compare_asr=tuple(compare_asr),
        seed=seed,
        rewrites_per_article=rewrites_per_article,
        articles_per_language=articles_per_language,
        types=choices(types, TYPES, "--types"),
        severities=choices(severities, SEVERITIES, "--severities"),
    )
    with executor.create(run) as ex, serving(generator, vllm_serve):
        result = build_spoken(run, cfg, executor=ex, quiet=json_out, allow_partial=allow_partial)
    dataset = run / "dataset" / "samples.parquet"
    if json_out:
        show_notes(result.notes)
        print(
            json.dumps(
                {
                    "run": str(run),
                    "samples": len(result.samples),
                    "transcripts": len(result.transcripts),
                    "failed": {k: len(v) for k, v in result.failures.items()},
                    "dataset": str(dataset),
                },
                indent=2,
            )
        )
        return
    show_build(result)
    console.print(
        f"[green]built[/] {len(result.samples)} samples, {len(result.transcripts)} transcripts in {run}"
        f" (dataset: {dataset})",
        soft_wrap=True,
    )


@app.command("judge")
def build_judge_cmd(
    run: BUILT,
    judge: List[str] = typer.Option(
        ...,
        "--judge",
        help="Judge spec, e.g. openai/deepseek-chat or hf/<dir>, or one model per language ('en=openai/gpt-4o,ru=openai/deepseek-chat,kk=openai/deepseek-chat': each item is rated by its language's model and records it); repeat it: two or more judges give the agreement table.",
    ),
    per_cell: int = typer.Option(
        8, help="Rewrites sampled per type x severity x language cell (Lost in Speech: 8, 216 items)."
    ),
    seed: int = typer.Option(0, help="Seed of the stratified sample."),
    retries: Retries = 3,
    llm_config: LlmConfig = None,
    option: Options = [],  # noqa: B006 - options of every --judge
    json_out: Json = False,
    allow_partial: AllowPartial = False,
) -> None:
    """Rate a stratified sample of a run's rewrites with LLM judges (Lost in Speech, 3.4 and App. A.2), resumable.

    Writes RUN/report/judge/: Table 9 (quadratic-weighted kappa, Spearman rho, share within one point, per dimension), Table 10 (mean rating by type x severity x language, per judge) and heatmaps, as Markdown, CSV and LaTeX. Keys come from the environment (OPENAI_API_KEY unless the config names another variable). App. A.2: 3 retries.

    A judge that rates nothing, or fails on more than the share --allow-partial names, exits 2 before any table is written or the run recorded (its ratings are kept: a rerun asks only the rest).

    Example: halluscope build judge runs/demo --judge openai/anthropic/claude-haiku-4.5 --judge openai/deepseek-chat --llm-config llm.toml
    """
    from rich.table import Table

    from halluscope.spoken.judge import build_judge

    judge = [generator_with(j, option) for j in judge]  # type: ignore[misc]
    result = build_judge(
        run, judge, per_cell=per_cell, seed=seed, retries=retries, quiet=json_out, allow_partial=allow_partial
    )
    tables = run / "report" / "judge" / "judge.md"
    show_notes(result.notes)  # the outcome rule was applied before the tables were written
    if json_out:
        print(
            json.dumps(
                {
                    "items": len(result.sample.ids),
                    "judges": result.summary(),
                    "agreement": result.agreement,
                    "tables": str(tables),
                },
                indent=2,
                ensure_ascii=False,
            )
        )
        return
    table = Table("judge", "scored", "unscored", "failed", "model calls", "from store")
    for r in result.summary():
        table.add_row(r["judge"], *(str(r[k]) for k in ("scored", "unscored", "failed", "calls", "from_store")))
    console.print(table)
    if result.agreement:
        agree = Table("judges", "dim", "n", "kappa (quadratic)", "Spearman rho", "within 1")
        for r in result.agreement:
            agree.add_row(
                f"{r['judge_a']} / {r['judge_b']}",
                r["dimension"],
                str(r["n"]),
                *("-" if r[k] is None else f"{r[k]:.3f}" for k in ("kappa_quadratic", "spearman_rho", "within_one")),
            )
        console.print(agree)
    console.print(f"[green]judged[/] {len(result.sample.ids)} items; tables: {tables}", soft_wrap=True)


def _split_langs(value: str) -> tuple[str, ...]:
    return tuple(x.strip().lower() for x in value.split(",") if x.strip())


@app.command("realworld")
def build_realworld_cmd(
    run: BUILT,
    fakes: Path = typer.Option(
        ...,
        help="Fact-checked fakes (.jsonl/.csv/.parquet): id, language (ru|kk), text[, "
        "native_language, translated, pair_id, near_parallel, url, date, topic].",
    ),
    langs: str = typer.Option("ru,kk", help="Languages of the split, comma-separated (ru, kk)."),
    faithful: Optional[str] = typer.Option(
        None,
        help="LLM generator for faithful rewrites of the negatives "
        "(provenance analysis, Table 5), e.g. openai/gemini-2.0-flash-lite.",
    ),
    faithful_langs: str = typer.Option("ru", help="Languages to make faithful rewrites in (the spec: ru)."),
    text_weight: float = typer.Option(
        0.0,
        help="Add this multiple of the texts' TF-IDF cosine to the "
        "topic+period similarity when matching (0: topic and period only).",
    ),
    corpus: Optional[str] = typer.Option(None, help="The corpus the run was built from, if it moved."),
    llm_config: LlmConfig = None,
    option: Options = [],  # noqa: B006 - options of the --faithful generator
    json_out: Json = False,
    allow_partial: AllowPartial = False,
) -> None:
    """Real-world split (Lost in Speech, 3.2): match each fake to a truthful original by greedy TF-IDF cosine over topic
    and period (one each, without replacement) and render all new items through the run's TTS -> ASR.

    The faithful rewrites, then the speech, are checked before the split is recorded: a step that produces nothing,
    or fails on more than the share --allow-partial names, exits 2 (what was done is kept; a rerun retries the rest).

    Then: halluscope detect RUN --detector encoder/<path> --input all -o realworld=true; halluscope report RUN
    """
    from halluscope.spoken.realworld import build_realworld

    split = build_realworld(
        run,
        fakes,
        langs=_split_langs(langs),
        faithful=model_with(faithful, option),
        faithful_langs=_split_langs(faithful_langs),
        text_weight=text_weight,
        corpus=corpus,
        quiet=json_out,
        allow_partial=allow_partial,
    )
    failed = sum(len(f) for f in split.failures.values())
    counts = {
        "fakes": len(split.fakes),
        "matched_negatives": len(split.matches),
        "faithful": len(split.faithful),
        "transcripts": len(split.transcripts),
        "failed": failed,
    }
    show_notes(split.notes)
    if json_out:
        print(json.dumps(counts, indent=2))
        return
    console.print(
        f"  real-world: {len(split.fakes)} fakes, {len(split.matches)} negatives, {len(split.faithful)} "
        f"faithful rewrites, {len(split.transcripts)} transcripts"
    )
    console.print(
        f"[green]built[/] real-world split: {len(split.fakes)} fakes, {len(split.matches)} matched negatives, "
        f"{len(split.faithful)} faithful rewrites, {len(split.transcripts)} transcripts"
        + (f", [red]{failed} failed[/]" if failed else "")
    )
