"""The 'halluscope' command line."""

from __future__ import annotations

import json
import os
import sqlite3
import sys
import time
from pathlib import Path
from typing import List, Optional

import typer

from halluscope.cli.options import existing_run, with_executor
from halluscope.core.executors import ExecutorOptions
from halluscope.core.errors import HalluscopeError
from halluscope.core.records import LANGUAGES, SEVERITIES, TASKS, TYPES
from halluscope.core.stages import console

app = typer.Typer(
    help="Build, run and score hallucination benchmarks for speech and audio language models.\n\n"
    "Start with 'halluscope quickstart': it builds a small trilingual spoken benchmark offline "
    "(rules rewrites -> the 'offline-best' speech preset: Festival for Russian, espeak-ng for English and Kazakh -> "
    "Whisper base), trains TF-IDF detectors on original text (O) and "
    "transcripts (T), and writes an HTML report.",
    no_args_is_help=True,
    rich_markup_mode="rich",
)
build_app = typer.Typer(help="Build a benchmark into a run directory.", no_args_is_help=True)
score_app = typer.Typer(help="Score predictions or transcripts on their own.", no_args_is_help=True)
corpus_app = typer.Typer(help="Inspect and validate corpora.", no_args_is_help=True)
app.add_typer(build_app, name="build")
app.add_typer(score_app, name="score")
app.add_typer(corpus_app, name="corpus")

from halluscope.cli.closedform import register as _register_closedform  # noqa: E402

_register_closedform(score_app)
from halluscope.cli.run import register as _register_run  # noqa: E402
_register_run(app)  # 'run closedform': an audio model on a closed-form set
from halluscope.cli.mishap import mishap_app  # noqa: E402
app.add_typer(mishap_app, name="mishap")
from halluscope.backends.audio_lm.table8 import register as _register_models  # noqa: E402
_register_models(app)  # 'models': Table 8 from the adapter registry

DEFAULT_QUICKSTART_DIR = Path("runs/quickstart")
DETECTORS_TRAINED = frozenset({"tfidf", "encoder"})  # trained kinds take no prompt


def _langs(value: str) -> tuple[str, ...]:
    return _choices(value, LANGUAGES, "--langs")


def _choices(value: str, allowed: tuple[str, ...], name: str) -> tuple:
    got = tuple(x.strip() for x in value.split(",") if x.strip())
    bad = [x for x in got if x not in allowed]
    if bad or not got:
        raise typer.BadParameter(f"{name} expects a comma-separated subset of {','.join(allowed)}, got '{value}'"
                                 + (f" ({', '.join(bad)} unknown)" if bad else ""))
    if len(set(got)) != len(got):
        dupes = sorted({x for x in got if got.count(x) > 1})
        raise typer.BadParameter(f"{name} expects each value once, got '{value}' ({', '.join(dupes)} repeated); "
                                 f"e.g. {name} {','.join(dict.fromkeys(got))}")
    return got


@build_app.command("spoken")
@with_executor
def build_spoken_cmd(
    corpus: str = typer.Option(..., help="Articles as .jsonl/.csv/.parquet with id, language, text[, url, outlet, date, topic], or 'demo'."),
    out: Path = typer.Option(..., help="Run directory (created; an existing one is resumed)."),
    langs: str = typer.Option(",".join(LANGUAGES), help="Languages to build, comma-separated."),
    generator: str = typer.Option("rules", help="Rewrite generator spec: 'rules' (offline), 'openai/<model>' (any OpenAI-compatible server, App. A.1 prompts) or 'hf/<model dir>'. LLM options: $HALLUSCOPE_LLM_CONFIG."),
    tts: str = typer.Option("espeak", help="TTS spec for every language, per language ('en=espeak/en-us,ru=festival/msu_ru_nsh_clunits,kk=espeak/kk') or the preset 'offline-best'. Engines: 'espeak' (a voice pool), 'espeak/<voice>', 'festival/<voice>', 'hf-tts/<VITS dir or hub id>'."),
    asr: str = typer.Option("whisper/base", help="ASR spec of the build's transcripts, per language too ('en=whisper/base,kk=hf-asr/<dir>') or 'offline-best'. Engines: 'whisper/base' (shipped weights), 'whisper/<ct2 dir>', 'hf-asr/<Whisper or wav2vec2-CTC dir or hub id>[?punct=hf-punct/<token-classification dir>]'."),
    compare_asr: List[str] = typer.Option([], "--compare-asr", help="Another ASR system (same spec forms as --asr) to run on the same audio, a stage of its own; repeat it. The report's Table 7 puts them side by side; 'detect --transcripts SPEC' reads one."),
    seed: int = typer.Option(13, help="Seed for the rewrite plan, the rewrites and the voice choice."),
    rewrites_per_article: int = typer.Option(2, help="Hallucinated rewrites per article, over distinct type x severity cells (0-9)."),
    articles_per_language: Optional[int] = typer.Option(None, help="Use only the first N articles (by id) per language."),
    types: str = typer.Option(",".join(TYPES), help="Hallucination types to generate, comma-separated."),
    severities: str = typer.Option(",".join(SEVERITIES), help="Severity levels to generate, comma-separated."),
    executor: ExecutorOptions = ExecutorOptions(),
    vllm_serve: Optional[Path] = typer.Option(None, help="Start 'vllm serve' for this local model as the --generator "
                                              "'openai/<name>' and stop it at the end (needs vLLM; unverified here)."),
) -> None:
    """Articles -> hallucinated rewrites -> speech -> ASR transcripts, resumable (seed 000, sections 3.1 and 3.3).

    Example: halluscope build spoken --corpus demo --out runs/demo --langs en,kk [--executor ray --ray-workers 8]
    """
    from halluscope.spoken.build import BuildConfig, build_spoken

    cfg = BuildConfig(corpus=corpus, langs=_langs(langs), generator=generator, tts=tts, asr=asr,
                      compare_asr=tuple(compare_asr), seed=seed,
                      rewrites_per_article=rewrites_per_article, articles_per_language=articles_per_language,
                      types=_choices(types, TYPES, "--types"), severities=_choices(severities, SEVERITIES, "--severities"))
    from halluscope.backends.vllm import serving

    with executor.create(out) as ex, serving(generator, vllm_serve):
        result = build_spoken(out, cfg, executor=ex)
    console.print(f"[green]built[/] {len(result.samples)} samples, {len(result.transcripts)} transcripts in {out}"
                  f" (dataset: {out / 'dataset' / 'samples.parquet'})")


@build_app.command("judge")
def build_judge_cmd(
    run: Path = typer.Argument(..., help="Run directory made by 'build spoken'.", callback=existing_run),
    judge: List[str] = typer.Option(..., "--judge", help="Judge spec, e.g. openai/deepseek-chat or hf/<dir>; repeat it: two or more judges give the agreement table."),
    per_cell: int = typer.Option(8, help="Rewrites sampled per type x severity x language cell (seed 000: 8, 216 items)."),
    seed: int = typer.Option(0, help="Seed of the stratified sample."),
    retries: int = typer.Option(3, help="Retries when a reply holds no readable JSON object (App. A.2: 3)."),
    llm_config: Optional[Path] = typer.Option(None, help="LLM config (.toml/.json): base URLs, key variable names, decoding params, cost table. Default: $HALLUSCOPE_LLM_CONFIG."),
) -> None:
    """Rate a stratified sample of a run's rewrites with LLM judges (seed 000, 3.4 and App. A.2), resumable.

    Writes RUN/report/judge/: Table 9 (quadratic-weighted kappa, Spearman rho, share within one point, per dimension), Table 10 (mean rating by type x severity x language, per judge) and heatmaps, as Markdown, CSV and LaTeX. Keys come from the environment (OPENAI_API_KEY unless the config names another variable).

    Example: halluscope build judge runs/demo --judge openai/anthropic/claude-haiku-4.5 --judge openai/deepseek-chat --llm-config llm.toml
    """
    from rich.table import Table

    from halluscope.spoken.judge import build_judge
    from halluscope.backends.llm import load_llm_config

    result = build_judge(run, judge, per_cell=per_cell, seed=seed, retries=retries,
                         config=load_llm_config(llm_config))
    table = Table("judge", "scored", "unscored", "failed", "model calls", "from store")
    for r in result.summary():
        table.add_row(r["judge"], *(str(r[k]) for k in ("scored", "unscored", "failed", "calls", "from_store")))
    console.print(table)
    if result.agreement:
        agree = Table("judges", "dim", "n", "kappa (quadratic)", "Spearman rho", "within 1")
        for r in result.agreement:
            agree.add_row(f"{r['judge_a']} / {r['judge_b']}", r["dimension"], str(r["n"]),
                          *("-" if r[k] is None else f"{r[k]:.3f}" for k in ("kappa_quadratic", "spearman_rho", "within_one")))
        console.print(agree)
    console.print(f"[green]judged[/] {len(result.sample.ids)} items; tables: {run / 'report' / 'judge' / 'judge.md'}")


@build_app.command("realworld")
def build_realworld_cmd(
    run: Path = typer.Argument(..., help="Run directory made by 'build spoken'.", callback=existing_run),
    fakes: Path = typer.Option(..., help="Fact-checked fakes (.jsonl/.csv/.parquet): id, language (ru|kk), text[, "
                               "native_language, translated, pair_id, near_parallel, url, date, topic]."),
    langs: str = typer.Option("ru,kk", help="Languages of the split, comma-separated (ru, kk)."),
    faithful: Optional[str] = typer.Option(None, help="LLM generator for faithful rewrites of the negatives "
                                           "(provenance analysis, Table 5), e.g. openai/gemini-2.0-flash-lite."),
    faithful_langs: str = typer.Option("ru", help="Languages to make faithful rewrites in (the spec: ru)."),
    text_weight: float = typer.Option(0.0, help="Add this multiple of the texts' TF-IDF cosine to the "
                                      "topic+period similarity when matching (0: topic and period only)."),
    corpus: Optional[str] = typer.Option(None, help="The corpus the run was built from, if it moved."),
    llm_config: Optional[Path] = typer.Option(None, help="LLM config for --faithful. Default: $HALLUSCOPE_LLM_CONFIG."),
) -> None:
    """Real-world split (seed 000, 3.2): match each fake to a truthful original by greedy TF-IDF cosine over topic
    and period (one each, without replacement) and render all new items through the run's TTS -> ASR.

    Then: halluscope detect RUN --detector encoder/<path> --input all -o realworld=true; halluscope report RUN
    """
    from halluscope.backends.llm import load_llm_config
    from halluscope.spoken.realworld import build_realworld

    split = build_realworld(run, fakes, langs=_split_langs(langs), faithful=faithful,
                            faithful_langs=_split_langs(faithful_langs), text_weight=text_weight, corpus=corpus,
                            llm_config=load_llm_config(llm_config) if faithful else None)
    failed = sum(len(f) for f in split.failures.values())
    console.print(f"[green]built[/] real-world split: {len(split.fakes)} fakes, {len(split.matches)} matched negatives, "
                  f"{len(split.faithful)} faithful rewrites, {len(split.transcripts)} transcripts"
                  + (f", [red]{failed} failed[/]" if failed else ""))


def _split_langs(value: str) -> tuple[str, ...]:
    return tuple(x.strip().lower() for x in value.split(",") if x.strip())


@app.command()
@with_executor
def detect(
    run: Path = typer.Argument(..., help="Run directory made by 'build spoken'.", callback=existing_run),
    detector: str = typer.Option("tfidf", help="Detector spec: 'tfidf' (offline TF-IDF + logistic regression); "
                                 "other kinds ('encoder/<path>', 'openai/<model>', 'hf/<path>', 'hf-audio/<path>') "
                                 "are available when their modules are installed."),
    task: str = typer.Option("binary", help="binary | type | severity | all"),
    input: str = typer.Option("text", help="text (O: original text) | transcript (T: ASR transcript) | audio | all "
                              "(all = text and transcript)"),
    seed: int = typer.Option(0, help="Seed of the article-level train/dev/test split and the detector."),
    prompting: Optional[str] = typer.Option(None, help="Zero-shot detectors: direct | cot (seed 000, App. A.3); "
                                            "the same as -o prompting=..."),
    option: list[str] = typer.Option([], "--option", "-o", help="Detector option KEY=VALUE (repeatable); "
                                     "values are parsed as JSON when they can be, e.g. -o prompting=\"cot\". "
                                     "-o realworld=true makes the dedicated real-world run (after 'build realworld'): "
                                     "the matched truthful negatives move to test, fakes are predicted too."),
    vllm_serve: Optional[Path] = typer.Option(None, help="Start 'vllm serve' for this local model as the --detector "
                                              "'openai/<name>' and stop it at the end (needs vLLM; unverified here)."),
    executor: ExecutorOptions = ExecutorOptions(),
    transcripts: Optional[str] = typer.Option(None, help="Which ASR system's transcripts to read: a --compare-asr "
                                              "spec of the build (default: the build's own --asr)."),
) -> None:
    """Run a detector on a built benchmark for a task and input; predictions are stored and the report picks
    them up. Trainable detectors fit on the train split, choose hyper-parameters on dev and predict dev and
    test; all inputs use identical item ids.

    Example: halluscope detect runs/quickstart --detector tfidf --task all --input all
    On Ray: halluscope detect RUN --detector encoder/<dir> --executor ray --ray-resources encoder:cpus=1
    """
    from halluscope.spoken.detect import detect as run_detect

    from halluscope.cli.options import parse_kv_options

    options = parse_kv_options(option)
    if prompting is not None:
        if prompting not in ("direct", "cot"):
            raise typer.BadParameter(f"--prompting expects direct or cot, got '{prompting}'")
        if detector.partition("/")[0] in DETECTORS_TRAINED:
            raise typer.BadParameter(f"--prompting applies to zero-shot detectors, not '{detector}'")
        options["prompting"] = prompting
    tasks = list(TASKS) if task == "all" else [task]
    if options.pop("realworld", False) in (True, "true", "1", 1):
        # the dedicated real-world run (seed 000, Table 4): matched negatives held out of train and dev
        from halluscope.spoken.realworld import detect_realworld as run_detect  # type: ignore[assignment]

        if transcripts:
            raise typer.BadParameter("the real-world run reads the build's own transcripts; drop --transcripts")

        tasks = ["binary"] if task == "all" else tasks
    inputs = ["text", "transcript"] if input == "all" else [input]
    from halluscope.backends.vllm import serving

    with executor.create(run) as ex, serving(detector, vllm_serve):
        for t in tasks:
            for i in inputs:
                res = run_detect(run, detector=detector, task=t, input=i, seed=seed, options=options,  # type: ignore[arg-type]
                                 executor=ex, **({"transcripts": transcripts} if transcripts else {}))
                n_test = sum(p.split == "test" for p in res.predictions.values())
                console.print(f"detect {detector} task={t} input={i}: {len(res.predictions)} predictions "
                              f"({n_test} on the test split) stored")


@app.command()
def project(
    run: Path = typer.Argument(..., help="Run directory to measure (a small build of your own corpus).",
                               callback=existing_run),
    samples: int = typer.Option(12_013, help="Corpus size to project to (the paper: 12,013 samples)."),
    audio_s: float = typer.Option(96.0, help="Audio seconds per sample (the paper's median: 96)."),
    workers: str = typer.Option("1,8,32", help="Worker counts to project speech stages on, comma-separated."),
    rate_limit: Optional[float] = typer.Option(None, help="API requests per minute allowed (API stages)."),
    concurrency: int = typer.Option(8, help="API calls in flight at once."),
    usd_per_mtok: Optional[float] = typer.Option(None, help="Price per million tokens, for a cost column."),
    json_out: bool = typer.Option(False, "--json", help="Print JSON instead of the table."),
) -> None:
    """Project wall time (and cost) of each stage to a paper-sized corpus from a run's stored timings."""
    from halluscope.spoken.project import print_table
    from halluscope.spoken.project import project as run_project

    try:
        ws = tuple(int(w) for w in workers.split(",") if w.strip())
    except ValueError:
        raise typer.BadParameter(f"--workers expects comma-separated integers, got '{workers}'") from None
    p = run_project(run, samples=samples, audio_s=audio_s, workers=ws, rate_limit_per_min=rate_limit,
                    concurrency=concurrency, usd_per_mtok=usd_per_mtok)
    if json_out:
        print(json.dumps(p.to_json(), indent=2))
    else:
        print_table(p)


@app.command()
def report(
    run: Path = typer.Argument(..., help="Run directory.", callback=existing_run),
    json_out: bool = typer.Option(False, "--json", help="Print the headline tables as JSON on stdout."),
) -> None:
    """Write report/ (tables.md, CSVs, headline.json, report.html with plots) for a run directory."""
    from halluscope.report import collect, write_report

    data = collect(run)
    path = write_report(data)
    if json_out:
        print(json.dumps(data.headline(), indent=2, ensure_ascii=False))
    else:
        console.print(f"report: {path}")


@app.command()
def view(
    run: Path = typer.Argument(..., help="Run directory (a spoken build, a MISHAP run, or both)."),
    export: Optional[Path] = typer.Option(None, help="Write the viewer as static files (data chunks, audio) into this "
                                          "folder instead of serving it; opens from file://. RUN/view makes the "
                                          "report's cell links work."),
    closedform: List[str] = typer.Option([], "--closedform", help="Closed-form predictions to show too: "
                                         "halluaudio=FILE, aha=FILE or yesno=QUESTIONS.csv,PREDICTIONS.csv (repeatable)."),
    drop_excluded: bool = typer.Option(False, help="Write RUN/dataset/samples.kept.parquet without the clips rated "
                                       "'excluded' (seed 000, 3.4) and exit."),
    host: str = typer.Option("127.0.0.1", help="Address to bind (loopback unless --allow-remote)."),
    port: int = typer.Option(0, help="Port (0 picks a free one)."),
    token: Optional[str] = typer.Option(None, help="Session token (default: random)."),
    allow_remote: bool = typer.Option(False, help="Allow a non-loopback --host (the token still applies)."),
) -> None:
    """Browse every item of a run: original vs rewrite with the edits marked, the clip, the transcript aligned to
    the text, judges' ratings, each detector's prediction and raw reply; rate speech quality (seed 000, 3.4).

    Example: halluscope view runs/quickstart   |   halluscope view runs/quickstart --export runs/quickstart/view
    """
    if drop_excluded:
        from halluscope.view.quality import drop_excluded as drop

        out, kept, dropped = drop(run)
        console.print(f"[green]wrote[/] {out}: {kept} samples kept, {dropped} excluded clip(s) dropped")
        return
    if export is not None:
        from halluscope.view.server import export_view

        page, n, clips = export_view(run, export, closedform=closedform)
        console.print(f"[green]exported[/] {n} items and {clips} clips; open {page.resolve().as_uri()}")
        return
    from halluscope.view.server import ViewServer

    srv = ViewServer(run, closedform=closedform, host=host, port=port, token=token, allow_remote=allow_remote)
    console.print(f"viewer for {run} ({len(srv.view.index)} items): open {srv.url}  (Ctrl-C stops it)", soft_wrap=True)
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        srv.stop()


@score_app.command("asr")
def score_asr_cmd(
    pairs: Path = typer.Argument(..., help="JSONL, one {\"reference\", \"hypothesis\", \"language\"} per line."),
    json_out: bool = typer.Option(False, "--json", help="Print JSON (the default output is a table)."),
    cleaner: str = typer.Option("rules", help="'rules' (App. A.4's rules in code) or 'llm' (App. A.4's LLM cleaner, needs --model)."),
    model: Optional[str] = typer.Option(None, help="The cleaner LLM for --cleaner llm: openai/<model> or hf/<dir>."),
    store_dir: Optional[Path] = typer.Option(None, "--store", help="Run directory whose store keeps every cleaner call "
                                             "(default: PAIRS.cleaner/ beside the file)."),
    batch_size: int = typer.Option(16, min=1, help="Transcripts per batched cleaner call (split on a parse failure)."),
) -> None:
    """Corpus-level WER/CER per language and overall, with the spec's normalisation (seed 000, App. A.4);
    every figure names its cleaner."""
    from halluscope.core.errors import InputError
    from halluscope.metrics.scoring import score_asr_file

    if cleaner not in ("rules", "llm") or (cleaner == "llm") != (model is not None):
        raise InputError(f"got --cleaner {cleaner} with --model {model}", field="--cleaner",
                         fix="use --cleaner rules (no --model), or --cleaner llm --model openai/<model>")
    if not pairs.is_file():
        raise InputError("file not found", file=str(pairs), fix="pass a JSONL file with reference, hypothesis, language")
    if cleaner == "llm":
        from halluscope.backends.llm import create_backend
        from halluscope.metrics.asr_clean import LLMCleaner
        from halluscope.core.store import Store

        with Store(store_dir or pairs.with_name(pairs.name + ".cleaner")) as store:
            llm = LLMCleaner(create_backend(model), store, batch_size=batch_size)
            result = score_asr_file(pairs, cleaner=llm)
        sys.stderr.write(f"cleaner {llm.name}: {llm.stats.batches} batched, {llm.stats.splits} split on a parse failure, "
                         f"{llm.stats.singles} single-item; {llm.calls.line()}; calls kept in {store.path}\n")
    else:
        result = score_asr_file(pairs)
    if json_out:
        print(json.dumps(result, indent=2, ensure_ascii=False))
        return
    from rich.table import Table

    table = Table("language", "WER", "CER", "n", "cleaner")
    for lang, r in result.items():
        table.add_row(lang, f"{r['wer']:.4f}" if r["wer"] is not None else "-",
                      f"{r['cer']:.4f}" if r["cer"] is not None else "-", str(r["n"]), r["cleaner"])
    console.print(table)


@corpus_app.command("check")
def corpus_check(corpus: str = typer.Argument(..., help="Corpus file or 'demo'.")) -> None:
    """Validate a corpus file and print counts per language and topic."""
    from collections import Counter

    from halluscope.spoken.corpus import load_articles

    arts = load_articles(corpus)
    console.print(f"[green]ok[/]: {len(arts)} articles")
    for (lang, topic), n in sorted(Counter((a.language, a.topic or "-") for a in arts).items()):
        console.print(f"  {lang} {topic}: {n}")


@app.command()
def quickstart(
    out: Path = typer.Option(DEFAULT_QUICKSTART_DIR, help="Run directory (an existing one is resumed)."),
    articles_per_language: Optional[int] = typer.Option(
        8, help="Demo articles per language (the demo has 20: 20 gives tighter intervals but takes about "
        "2.5 times as long)."),
    langs: str = typer.Option(",".join(LANGUAGES), help="Languages, comma-separated."),
    seed: int = typer.Option(13, help="Build seed."),
) -> None:
    """The whole chain offline on the embedded demo corpus: rewrites, speech, transcripts, WER/CER,
    TF-IDF detectors on O and T for all three tasks, and the report. Run it again to resume."""
    from halluscope.spoken.build import BuildConfig, build_spoken
    from halluscope.spoken.detect import detect as run_detect
    from halluscope.report import collect, write_report

    from halluscope.spoken.detect.run import MIN_ARTICLES

    if articles_per_language is not None and articles_per_language < MIN_ARTICLES:
        # checked before the build: the article-level split needs train, dev and test articles per language
        raise typer.BadParameter(f"expected at least {MIN_ARTICLES} articles per language (one each for train, dev "
                                 f"and test), got {articles_per_language}", param_hint="--articles-per-language")
    t0 = time.perf_counter()
    cfg = BuildConfig(corpus="demo", langs=_langs(langs), seed=seed, articles_per_language=articles_per_language,
                      tts="offline-best", asr="offline-best")  # the best measured offline speech per language
    build_spoken(out, cfg)
    for t in TASKS:
        for i in ("text", "transcript"):
            run_detect(out, task=t, input=i)  # type: ignore[arg-type]
    data = collect(out)
    path = write_report(data)
    console.print((Path(path).parent / "tables.md").read_text(encoding="utf-8"))
    console.print(f"[green]done[/] in {time.perf_counter() - t0:.0f} s. Report: {path}")
    console.print(f"Browse the items: halluscope view {out}   (or --export {out / 'view'} for the report's cell links)")


def main() -> None:
    from pydantic import ValidationError

    try:
        app()
    except HalluscopeError as exc:
        from rich.markup import escape

        # soft_wrap: a path or message is never broken across lines; escape: '[music]' in a message is not markup
        console.print(f"[red]error:[/] {escape(str(exc))}", highlight=False, soft_wrap=True)
        sys.exit(2)
    except ValidationError as exc:
        # option values checked by the pydantic config models: one line per problem, named by option
        lines = [f"--{'-'.join(str(p) for p in e['loc']).replace('_', '-')}: {e['msg']} (got {e.get('input')!r})"
                 for e in exc.errors()]
        console.print("[red]error:[/] invalid options:\n  " + "\n  ".join(lines), highlight=False)
        sys.exit(2)
    except (OSError, sqlite3.Error) as exc:
        # the machine said no (disk full, permission denied, a folder where a file should be, a locked store)
        from rich.markup import escape

        console.print(f"[red]error:[/] {escape(f'{type(exc).__name__}: {exc}')}. Fix: check the path, its "
                      "permissions and free disk space, then run the command again (finished work is kept)",
                      highlight=False, soft_wrap=True)
        sys.exit(2)
    except Exception as exc:  # noqa: BLE001 - a bug: one line here, the traceback in a file
        import tempfile
        import traceback

        fd, log = tempfile.mkstemp(prefix="halluscope-traceback-", suffix=".txt")
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(" ".join(sys.argv) + "\n\n" + traceback.format_exc())
        first = (str(exc).splitlines() or [""])[0][:500]
        print(f"internal error: {type(exc).__name__}: {first} (full traceback: {log}; please report it)",
              file=sys.stderr)
        sys.exit(1)
