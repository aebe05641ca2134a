"""CLI commands of the closed-form scorers, registered under 'halluscope score'."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import typer

BOOTSTRAP_HELP = "Bootstrap resamples for the 95% intervals (0 to skip)."
COMPAT_HELP = "Headline the official scorer's rules and denominators instead of strict extraction (both are always computed)."
REPORT_HELP = "Write report.html (plots), tables.md, CSVs and summary.json into this directory."


def _emit(result, *, json_out: bool, report: Optional[Path], max_diff_rows: int) -> None:
    from halluscope.closedform.report import COLUMNS, headline_rows, write_report
    from halluscope.core.stages import console

    if report is not None:
        path = write_report(result, report)
        console.print(f"report: {path}")
    data = result.as_dict(max_diff_rows=max_diff_rows)
    if data["problems"]["count"]:
        console.print(f"[yellow]{data['problems']['count']} input problem(s)[/]; those rows are not scored:")
        for p in data["problems"]["items"][:10]:
            console.print(f"  {p}", highlight=False, markup=False)
        if data["problems"]["count"] > 10:
            console.print(f"  ... and {data['problems']['count'] - 10} more (see --json or --report)")
    if json_out:
        print(json.dumps(data, indent=2, ensure_ascii=False))
        return
    from rich.table import Table

    cols = COLUMNS[(result.benchmark, result.mode)]
    table = Table(result.group_name, *[t for _, t in cols], title=f"{result.benchmark} ({result.mode} mode)")
    for row in headline_rows(result, result.mode):
        table.add_row(str(row[result.group_name]), *[f"{row.get(k):.3f}" if isinstance(row.get(k), float)
                                                     else ("-" if row.get(k) is None else str(row.get(k))) for k, _ in cols])
    console.print(table)
    cmp_ = data["comparison"]
    console.print(f"strict vs compatible: {cmp_['n_differ']} of {cmp_['n_scored_in_both']} items scored differently")
    for reason, n in cmp_["by_reason"].items():
        console.print(f"  {n:5d}  {reason}", highlight=False, markup=False)
    if cmp_["rules"]:
        console.print("the figures also differ by definition:")
        for rule in cmp_["rules"]:
            console.print(f"  - {rule}", highlight=False, markup=False)


def register(score_app: typer.Typer) -> None:
    """Add the closed-form 'score' subcommands to the given typer app."""

    @score_app.command("halluaudio")
    def score_halluaudio_cmd(
        files: list[Path] = typer.Argument(..., help="HalluAudio prediction JSONL(s): audio, prompt, reference, subset, pred."),
        compat: bool = typer.Option(False, "--compat", help=COMPAT_HELP),
        json_out: bool = typer.Option(False, "--json", help="Print JSON (the default output is a table)."),
        report: Optional[Path] = typer.Option(None, "--report", help=REPORT_HELP),
        domain: Optional[str] = typer.Option(None, help="Domain (speech|sound|music) for subsets the scorer does not know, "
                                                        "e.g. the binary files of one results folder."),
        bootstrap: int = typer.Option(1000, help=BOOTSTRAP_HELP),
        seed: int = typer.Option(0, help="Bootstrap seed."),
        max_diff_rows: int = typer.Option(50, help="Items shown in the strict-vs-compatible table of the JSON."),
    ) -> None:
        """Accuracy, Yes-p ratio, Unrelated ratio, conditional accuracy and FRR per domain (seed 002).

        Example: halluscope score halluaudio preds/qwen2_audio.jsonl --json --report out/halluaudio
        """
        from halluscope.closedform.loaders import load_halluaudio
        from halluscope.closedform.score import score_halluaudio

        result = score_halluaudio(load_halluaudio(files, domain=domain), mode="compat" if compat else "strict",
                                  bootstrap=bootstrap, seed=seed)
        _emit(result, json_out=json_out, report=report, max_diff_rows=max_diff_rows)

    @score_app.command("aha")
    def score_aha_cmd(
        files: list[Path] = typer.Argument(..., help="AHa-Bench prediction JSONLs, one per run of the same model."),
        compat: bool = typer.Option(False, "--compat", help=COMPAT_HELP),
        json_out: bool = typer.Option(False, "--json", help="Print JSON (the default output is a table)."),
        report: Optional[Path] = typer.Option(None, "--report", help=REPORT_HELP),
        judge_fallback: bool = typer.Option(True, "--judge-fallback/--no-judge-fallback",
                                            help="In strict mode, let the file's prediction_match decide replies the rules find no answer in."),
        bootstrap: int = typer.Option(1000, help=BOOTSTRAP_HELP),
        seed: int = typer.Option(0, help="Bootstrap seed."),
        max_diff_rows: int = typer.Option(50, help="Items shown in the strict-vs-compatible table of the JSON."),
    ) -> None:
        """Accuracy, yes/no bias (FNR - FPR) and per-audio consistency per task, averaged over runs.

        Example: halluscope score aha runs/qwen_aha_0.jsonl runs/qwen_aha_1.jsonl --json
        """
        from halluscope.closedform.loaders import load_aha
        from halluscope.closedform.score import score_aha

        result = score_aha(load_aha(files), mode="compat" if compat else "strict", bootstrap=bootstrap, seed=seed,
                           judge_fallback=judge_fallback)
        _emit(result, json_out=json_out, report=report, max_diff_rows=max_diff_rows)

    @score_app.command("yesno")
    def score_yesno_cmd(
        questions: Path = typer.Argument(..., help="Questions TSV as Kuan et al. release it ('#' comment lines, then a header): "
                                                   "entry_id, audio_index, prompt_text, object[, attribute], label, sampling."),
        predictions: Path = typer.Argument(..., help="Predictions CSV: entry_id, response[, audio_index, label, sampling or "
                                                     "sampling_method]; joined on (sampling, entry_id)."),
        compat: bool = typer.Option(False, "--compat", help=COMPAT_HELP),
        json_out: bool = typer.Option(False, "--json", help="Print JSON (the default output is a table)."),
        report: Optional[Path] = typer.Option(None, "--report", help=REPORT_HELP),
        positive: str = typer.Option("yes", help="Positive class of precision/recall/F1 in strict mode: yes (object present) or no."),
        sampling: Optional[str] = typer.Option(None, help="Sampling (random|popular|adversarial) of a file without a sampling column."),
        bootstrap: int = typer.Option(1000, help=BOOTSTRAP_HELP),
        seed: int = typer.Option(0, help="Bootstrap seed."),
        max_diff_rows: int = typer.Option(50, help="Items shown in the strict-vs-compatible table of the JSON."),
    ) -> None:
        """Object hallucination (Kuan et al. 2024): accuracy, precision, recall, F1, yes-rate per sampling strategy.

        --compat gives the authors' evaluation.py figures per strategy (percent, positive class 'no').
        Example: halluscope score yesno balanced_merged_test_2871.txt qwen_predictions.csv --compat
        """
        from halluscope.closedform.loaders import load_yesno
        from halluscope.closedform.score import score_yesno

        if positive not in ("yes", "no"):
            raise typer.BadParameter(f"expected 'yes' or 'no', got '{positive}'", param_hint="--positive")
        result = score_yesno(load_yesno(questions, predictions, sampling=sampling), mode="compat" if compat else "strict",
                             positive=positive, bootstrap=bootstrap, seed=seed)
        _emit(result, json_out=json_out, report=report, max_diff_rows=max_diff_rows)
