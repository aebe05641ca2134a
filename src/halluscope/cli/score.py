"""'halluscope score asr | halluaudio | aha | yesno | audiotrust | avhbench | captions': score transcripts or closed-form predictions on their own.

The scorers read files and write no run: --report DIR names a folder of rendered tables (like 'view --export'),
not a run directory; 'score asr' keeps its LLM cleaner's calls in a run, its optional second positional RUN."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Optional

import typer

from halluscope.cli.compat import App, legacy_run
from halluscope.cli.options import Json, LlmConfig, Options, model_with
from halluscope.cli.score_output import emit, metrics_report, print_metrics
from halluscope.cli.score_reader import Reader, ReaderStore, llm_reader, print_reader
from halluscope.core.stages import console

app = App(help="Score predictions or transcripts on their own.")

BOOTSTRAP_HELP = "Bootstrap resamples for the 95% intervals (0 to skip)."
COMPAT_HELP = (
    "Headline the official scorer's rules and denominators instead of strict extraction (both are always computed)."
)
Report = Annotated[
    Optional[Path],
    typer.Option(
        "--report",
        help="Write report.html (plots), tables.md, CSVs and "
        "summary.json into this folder (not a run: it holds no store).",
    ),
]
Compat = Annotated[bool, typer.Option("--compat", help=COMPAT_HELP)]
Bootstrap = Annotated[int, typer.Option("--bootstrap", help=BOOTSTRAP_HELP)]
Seed = Annotated[int, typer.Option("--seed", help="Bootstrap seed.")]
MaxDiffRows = Annotated[
    int, typer.Option("--max-diff-rows", help="Items shown in the strict-vs-compatible table of the JSON.")
]


@app.command("halluaudio")
def score_halluaudio_cmd(
    files: list[Path] = typer.Argument(
        ..., help="HalluAudio prediction JSONL(s): audio, prompt, reference, subset, pred."
    ),
    compat: Compat = False,
    json_out: Json = False,
    report: Report = None,
    domain: Optional[str] = typer.Option(
        None,
        help="Domain (speech|sound|music) for subsets the scorer does not know, "
        "e.g. the binary files of one results folder.",
    ),
    bootstrap: Bootstrap = 1000,
    seed: Seed = 0,
    reader: Reader = "rules",
    reader_store: ReaderStore = None,
    max_diff_rows: MaxDiffRows = 50,
) -> None:
    """Accuracy, Yes-p ratio, Unrelated ratio, conditional accuracy and FRR per domain (HalluAudio).

    Example: halluscope score halluaudio preds/qwen2_audio.jsonl --json --report out/halluaudio
    """
    from halluscope.closedform.loaders import load_halluaudio
    from halluscope.closedform.score import score_halluaudio

    rd = llm_reader(reader, reader_store, files[0])
    result = score_halluaudio(
        load_halluaudio(files, domain=domain),
        mode="compat" if compat else "strict",
        bootstrap=bootstrap,
        seed=seed,
        reader=rd,
    )
    emit(
        result,
        json_out=json_out,
        report=report,
        max_diff_rows=max_diff_rows,
        reader=rd,
    )


@app.command("aha")
def score_aha_cmd(
    files: list[Path] = typer.Argument(..., help="AHa-Bench prediction JSONLs, one per run of the same model."),
    compat: Compat = False,
    json_out: Json = False,
    report: Report = None,
    judge_fallback: bool = typer.Option(
        True,
        "--judge-fallback/--no-judge-fallback",
        help="In strict mode, let the file's prediction_match decide replies the rules find no answer in.",
    ),
    bootstrap: Bootstrap = 1000,
    seed: Seed = 0,
    reader: Reader = "rules",
    reader_store: ReaderStore = None,
    max_diff_rows: MaxDiffRows = 50,
) -> None:
    """Accuracy, yes/no bias (FNR - FPR) and per-audio consistency per task, averaged over runs.

    Example: halluscope score aha runs/qwen_aha_0.jsonl runs/qwen_aha_1.jsonl --json
    """
    from halluscope.closedform.loaders import load_aha
    from halluscope.closedform.score import score_aha

    rd = llm_reader(reader, reader_store, files[0])
    result = score_aha(
        load_aha(files),
        mode="compat" if compat else "strict",
        bootstrap=bootstrap,
        seed=seed,
        judge_fallback=judge_fallback,
        reader=rd,
    )
    emit(
        result,
        json_out=json_out,
        report=report,
        max_diff_rows=max_diff_rows,
        reader=rd,
    )


@app.command("yesno")
def score_yesno_cmd(
    questions: Path = typer.Argument(
        ...,
        help="Questions TSV as Kuan et al. release it ('#' comment lines, then a header): "
        "entry_id, audio_index, prompt_text, object[, attribute], label, sampling.",
    ),
    predictions: Path = typer.Argument(
        ...,
        help="Predictions CSV: entry_id, response[, audio_index, label, sampling or "
        "sampling_method]; joined on (sampling, entry_id).",
    ),
    compat: Compat = False,
    json_out: Json = False,
    report: Report = None,
    positive: str = typer.Option(
        "yes", help="Positive class of precision/recall/F1 in strict mode: yes (object present) or no."
    ),
    sampling: Optional[str] = typer.Option(
        None, help="Sampling (random|popular|adversarial) of a file without a sampling column."
    ),
    bootstrap: Bootstrap = 1000,
    seed: Seed = 0,
    reader: Reader = "rules",
    reader_store: ReaderStore = None,
    max_diff_rows: MaxDiffRows = 50,
) -> None:
    """Object hallucination (Kuan et al. 2024): accuracy, precision, recall, F1, yes-rate per sampling strategy.

    --compat gives the authors' evaluation.py figures per strategy (percent, positive class 'no').
    Example: halluscope score yesno balanced_merged_test_2871.txt qwen_predictions.csv --compat
    """
    from halluscope.closedform.loaders import load_yesno
    from halluscope.closedform.score import score_yesno

    if positive not in ("yes", "no"):
        raise typer.BadParameter(f"expected 'yes' or 'no', got '{positive}'", param_hint="--positive")
    rd = llm_reader(reader, reader_store, predictions)
    result = score_yesno(
        load_yesno(questions, predictions, sampling=sampling),
        mode="compat" if compat else "strict",
        positive=positive,
        bootstrap=bootstrap,
        seed=seed,
        reader=rd,
    )
    emit(
        result,
        json_out=json_out,
        report=report,
        max_diff_rows=max_diff_rows,
        reader=rd,
    )


@app.command("audiotrust")
def score_audiotrust_cmd(
    files: list[Path] = typer.Argument(
        ...,
        help="AudioTrust hallucination subset JSONLs as released (content_mismatc, "
        "label_mismatch, logical_violation, physical_violation).",
    ),
    judge: Optional[str] = typer.Option(
        None,
        "--judge",
        help="AudioTrust's 0-10 LLM judge: a chat backend spec, e.g. openai/gpt-4o (or llm:<spec>); needs --prompts.",
    ),
    prompts: Optional[Path] = typer.Option(
        None, "--prompts", help="AudioTrust's halucination_prompts.yaml (the judge's evaluation prompt per subset)."
    ),
    judge_store: Optional[Path] = typer.Option(
        None, "--judge-store", help="Run directory for the judge's calls (default: <first file>.judge/)."
    ),
    llm_config: LlmConfig = None,
    option: Options = [],  # noqa: B006 - options of the --judge model
    json_out: Json = False,
    report: Report = None,
    reader: Reader = "rules",
    reader_store: ReaderStore = None,
) -> None:
    """AudioTrust hallucination: refusals and match stance by the rules per subset, and with --judge AudioTrust's own
    0-10 judge score (rubric from each row's overall_description). --reader llm:<spec> reads the mismatch subsets'
    stance a second time (AudioTrust gives no yes/no answer key: the two readers are compared on agreement).

    Example: halluscope score audiotrust content_mismatc.jsonl label_mismatch.jsonl --judge llm:openai/gpt-4o --prompts halucination_prompts.yaml
    """
    from halluscope.closedform.audiotrust import AudioTrustJudge, load_audiotrust, score_audiotrust
    from halluscope.core.errors import InputError

    jc = None
    if judge is not None:
        spec = judge[4:] if judge.startswith("llm:") else judge
        if "/" not in spec or prompts is None or not prompts.is_file():
            raise InputError(
                f"got --judge {judge!r} with --prompts {prompts}",
                field="--judge",
                fix="use --judge openai/<model> --prompts halucination_prompts.yaml (AudioTrust's registry file)",
            )
        if llm_config is not None:  # the judge backend reads its config from $HALLUSCOPE_LLM_CONFIG
            import os

            from halluscope.backends.llm import CONFIG_ENV

            os.environ[CONFIG_ENV] = str(llm_config)
        jc = AudioTrustJudge(
            model_with(spec, option), prompts, judge_store or files[0].with_name(files[0].name + ".judge")
        )
    rd = llm_reader(reader, reader_store, files[0])
    loaded = load_audiotrust(files)
    result = score_audiotrust(loaded, judge=jc)
    if rd is not None:
        from halluscope.closedform.llmreader import audiotrust_items, read_items

        result["reader"] = read_items(rd, audiotrust_items(loaded, result))
    metrics_report(result, report, "subsets")
    if json_out:
        print(json.dumps(result, indent=2, ensure_ascii=False))
        return
    from rich.table import Table

    table = Table(
        "subset",
        "n",
        "match accuracy",
        "refusal rate",
        "stance (rules)",
        "judge mean 0-10",
        "judged",
        title="AudioTrust hallucination",
    )
    for name, m in result["subsets"].items():
        table.add_row(
            name,
            str(m["n"]),
            "-" if m["match_accuracy"] is None else f"{m['match_accuracy']:.3f}",
            f"{m['refusal_rate']:.3f}",
            ", ".join(f"{k} {v}" for k, v in m["stance"].items()),
            "-" if m["judge_mean_score"] is None else f"{m['judge_mean_score']:.2f}",
            str(m["judge_scored"]),
        )
    console.print(table)
    console.print(result["reply_reader"]["line"], highlight=False, markup=False)
    print_reader(result.get("reader", {}))


@app.command("avhbench")
def score_avhbench_cmd(
    files: list[Path] = typer.Argument(
        ...,
        help="AVHBench JSON arrays as released, each object with the model's reply under 'prediction': the "
        "per-video {video_id}.json files (v0 task names) or qa_final_single_filtered.json (v1 task names).",
    ),
    json_out: Json = False,
    report: Report = None,
    reader: Reader = "rules",
    reader_store: ReaderStore = None,
) -> None:
    """AVHBench (ICLR 2025): accuracy, precision, recall, F1 and Yes % per yes/no task (percent, as the leaderboard),
    METEOR and CIDEr-D for AV Captioning (the COCO caption evaluation; needs java), content-word overlap beside them.
    Every object is counted: scored, or a problem listed and totalled by kind.

    Example: halluscope score avhbench qa_final_single_filtered.json --json
    """
    from halluscope.closedform.avhbench import load_avhbench, score_avhbench

    rd = llm_reader(reader, reader_store, files[0])
    result = score_avhbench(load_avhbench(files))
    if rd is not None:
        from halluscope.closedform.llmreader import avhbench_items, read_items

        result["reader"] = read_items(rd, avhbench_items(result))
    metrics_report(result, report, "tasks")
    if not json_out:
        console.print(
            f"{result['n_objects']} object(s) in {len(result['files'])} file(s): {result['n_items']} scored, "
            f"{result['n_problems']} problem(s)",
            highlight=False,
            markup=False,
        )
    print_metrics(result, "tasks", json_out)
    if not json_out:
        for note in result["notes"]:
            console.print(f"note: {note}", highlight=False, markup=False)
        print_reader(result.get("reader", {}))


@app.command("captions")
def score_captions_cmd(
    metadata: Path = typer.Argument(
        ..., help="Kuan et al.'s generative_data_metadata.csv (youtube_id, caption, label)."
    ),
    predictions: Path = typer.Argument(
        ..., help='The generation output JSON: {youtube_id: {prompt: {"prediction": ...}}}.'
    ),
    extractor: str = typer.Option(
        "vocabulary",
        "--extractor",
        help="How objects are found in a caption: 'vocabulary' "
        "(the file's label names as words, offline; ECHO a lower bound) or 'llm:<spec>' (any "
        "chat backend lists them, as the paper does; calls kept in --extractor-store and "
        "answered from there on a rerun).",
    ),
    extractor_store: Optional[Path] = typer.Option(
        None,
        "--extractor-store",
        help="Run directory that keeps the LLM extractor's calls (default: <predictions>.extractor/ beside it).",
    ),
    compat: Annotated[
        bool,
        typer.Option(
            "--compat",
            help="Headline the authors' per-caption averages (their evaluation.py, in percent) instead of the pooled "
            "figures (both are always computed).",
        ),
    ] = False,
    ontology: Optional[Path] = typer.Option(
        None,
        "--ontology",
        help="AudioSet's ontology.json (github.com/audioset/ontology): an "
        "object is grounded by a label it is less or more specific than ('engine' for Idling, 'bark' for Dog).",
    ),
    json_out: Json = False,
    report: Report = None,
) -> None:
    """Kuan et al. (Interspeech 2024) generative captions: ECHO_I, ECHO_S and Cover per prompt (CHAIR-style object
    hallucination), each beside its human floor (the clips' AudioCaps reference captions scored the same way); the
    output names the extractor that found the objects.

    Example: halluscope score captions generative_data_metadata.csv qwen_generative.json --extractor llm:openai/gpt-4o
    """
    from halluscope.closedform.kuan_captions import VOCABULARY, score_kuan_captions

    ex = None
    if extractor != VOCABULARY:
        if not extractor.startswith("llm:") or len(extractor) <= 4:
            from halluscope.core.errors import InputError

            raise InputError(
                f"got --extractor {extractor!r}",
                field="--extractor",
                fix="use --extractor vocabulary, or --extractor llm:<spec> such as llm:openai/gpt-4o",
            )
        from halluscope.closedform.llmextract import LLMExtractor

        ex = LLMExtractor(extractor[4:], extractor_store or predictions.with_name(predictions.name + ".extractor"))
    result = score_kuan_captions(metadata, predictions, extractor=ex, ontology=ontology)
    if report is not None:
        from halluscope.closedform.captions_report import write_captions_report

        write_captions_report(result, report)
    if json_out:
        print(json.dumps(result, indent=2, ensure_ascii=False))
        return
    print_metrics({**result, "metrics": {}}, "metrics", json_out)  # the input problems
    from halluscope.closedform.captions_report import text_lines

    for line in text_lines(result, compat=compat):
        console.print(line, highlight=False, markup=False)
    unread = [r for r in result["items"] if r["status"] != "scored"]
    if unread:
        console.print(f"{len(unread)} caption(s) unscored: {unread[0]['reason']}", highlight=False, markup=False)
    if report is not None:
        console.print(f"report: {report / 'report.html'}", highlight=False, markup=False)


@app.command("asr")
@legacy_run("--store", position="last")
def score_asr_cmd(
    pairs: Path = typer.Argument(..., help='JSONL, one {"reference", "hypothesis", "language"} per line.'),
    run: Optional[Path] = typer.Argument(
        None,
        metavar="RUN",
        show_default=False,
        help="Run directory whose store keeps every cleaner call (default: PAIRS.cleaner/ beside the file).",
    ),
    cleaner: str = typer.Option(
        "rules", help="'rules' (App. A.4's rules in code) or 'llm' (App. A.4's LLM cleaner, needs --model)."
    ),
    model: Optional[str] = typer.Option(None, help="The cleaner LLM for --cleaner llm: openai/<model> or hf/<dir>."),
    batch_size: int = typer.Option(16, min=1, help="Transcripts per batched cleaner call (split on a parse failure)."),
    llm_config: LlmConfig = None,
    option: Options = [],  # noqa: B006 - options of the cleaner --model
    json_out: Json = False,
) -> None:
    """Corpus-level WER/CER per language and overall, with the spec's normalisation (Lost in Speech, App. A.4);
    every figure names its cleaner. With --cleaner llm, a reply that is not a cleaning of its text is replaced by
    the rules cleaner's output, and each figure counts those texts (cleaner_fallbacks)."""
    from halluscope.core.errors import InputError
    from halluscope.metrics.scoring import score_asr_file

    if cleaner not in ("rules", "llm") or (cleaner == "llm") != (model is not None):
        raise InputError(
            f"got --cleaner {cleaner} with --model {model}",
            field="--cleaner",
            fix="use --cleaner rules (no --model), or --cleaner llm --model openai/<model>",
        )
    if not pairs.is_file():
        raise InputError(
            "file not found", file=str(pairs), fix="pass a JSONL file with reference, hypothesis, language"
        )
    if cleaner == "llm":
        from halluscope.backends.llm import create_backend
        from halluscope.core.store import Store
        from halluscope.spoken.asr_clean import LLMCleaner

        with Store(run or pairs.with_name(pairs.name + ".cleaner")) as store:
            llm = LLMCleaner(create_backend(model_with(model, option)), store, batch_size=batch_size)
            result = score_asr_file(pairs, cleaner=llm)
        sys.stderr.write(
            f"cleaner {llm.name}: {llm.stats.batches} batched, {llm.stats.splits} split on a parse failure, "
            f"{llm.stats.singles} single-item, {llm.stats.fallbacks} reply(ies) not a cleaning of their text "
            f"(cleaned by the rules instead); {llm.calls.line()}; calls kept in {store.path}\n"
        )
        for text, why in list(llm.fallbacks.items())[:5]:
            sys.stderr.write(f"  rules used for {text[:60]!r}: the reply {why}\n")
    else:
        result = score_asr_file(pairs)
    if json_out:
        print(json.dumps(result, indent=2, ensure_ascii=False))
        return
    from rich.table import Table

    table = Table("language", "WER", "CER", "n", "cleaner")
    for lang, r in result.items():
        table.add_row(
            lang,
            f"{r['wer']:.4f}" if r["wer"] is not None else "-",
            f"{r['cer']:.4f}" if r["cer"] is not None else "-",
            str(r["n"]),
            r["cleaner"] + (f" ({r['cleaner_fallbacks']} text(s) by rules)" if r.get("cleaner_fallbacks") else ""),
        )
    console.print(table)
