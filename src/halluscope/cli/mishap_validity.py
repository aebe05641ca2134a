"""'halluscope mishap validity ...', 'mishap ablation' and 'mishap sources': the validity study, the judge ablation
(MISHAP-Bench, 4.1 / Figure 5, E.2 / Figure 13, E.3 / Tables 9 and 10) and clip manifests from the six sources (3.1)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, List, Optional

import typer

from halluscope.cli.compat import App
from halluscope.cli.options import AllowPartial, LlmConfig, NewRun, Options, Retries, Run, model_with
from halluscope.core.stages import console

if TYPE_CHECKING:
    from halluscope.mishap.ablation import ConfigRun

validity_app = App(
    help="Validity of groundedness judging (MISHAP-Bench, 4.1, Figure 5): closed-form responses "
    "judged for groundedness beside their benchmark's own scorer and human labels. Steps: "
    "import (per model) -> judge -> 'mishap annotate' -> report."
)
RUN = NewRun("Run directory: a MISHAP run or a new folder for the study.")
STEP_RUN = Run("Run directory with imported responses.")


@validity_app.command("import")
def import_cmd(
    run: RUN,
    files: List[Path] = typer.Argument(
        ..., help="HalluAudio or AHa-Bench prediction JSONL(s); for kuan: the questions TSV then the predictions CSV."
    ),
    benchmark: str = typer.Option(..., help="halluaudio, aha or kuan."),
    model: str = typer.Option(..., help="The model that wrote the responses (one import per model)."),
    domain: Optional[str] = typer.Option(None, help="HalluAudio: domain of subsets the scorer does not know."),
    sample: Optional[int] = typer.Option(
        None, help="Import a seeded sample of N responses (the paper: 1,000 per benchmark over eight models)."
    ),
    seed: int = typer.Option(0, help="Seed of the sample."),
) -> None:
    """Import one model's closed-form responses with the benchmark scorer's verdict and a rubric from the gold answer."""
    from collections import Counter

    from halluscope.mishap.validity import import_validity
    from halluscope.mishap.validity_items import NAMES

    done = import_validity(run, benchmark, files, model=model, domain=domain, sample=sample, seed=seed)
    orig = Counter(i.original for i in done.items)
    console.print(
        f"{len(done.items)} {NAMES[benchmark]} responses of {model} imported ({orig['hallucinated']} "
        f"hallucinated by the benchmark's scorer, {orig[None]} it skips; {done.problems} input problem(s) "
        "left out, see 'halluscope score')",
        soft_wrap=True,
        highlight=False,
    )


@validity_app.command("judge")
def judge_cmd(
    run: STEP_RUN,
    judge: str = typer.Option(..., help="Judge LLM: openai/<model> or hf/<dir>."),
    examples: Optional[Path] = typer.Option(None, help="In-context examples JSON (default: the packaged set)."),
    retries: Retries = 2,
    llm_config: LlmConfig = None,
    option: Options = [],  # noqa: B006 - the judge's options
    allow_partial: AllowPartial = False,
) -> None:
    """Judge every imported response with the full groundedness judge.

    A judge that judges nothing, or fails on more than the share --allow-partial names, exits 2 and the run is not
    recorded (its verdicts are kept in the store: a rerun asks only the failed ones)."""
    from halluscope.mishap.ablation import run_configs
    from halluscope.mishap.judge import FULL

    show_configs(
        run_configs(
            run,
            model_with(judge, option),
            (FULL,),
            items="validity",
            examples=examples,
            retries=retries,
            allow_partial=allow_partial,
        )
    )


@validity_app.command("report")
def report_cmd(
    run: STEP_RUN, out: Optional[Path] = typer.Option(None, help="Folder (default RUN/report/validity).")
) -> None:
    """Write the Figure-5 comparison, agreement and the ablation / sensitivity tables (validity.md, fig5.png, summary.json)."""
    from halluscope.mishap.ablation import ablation_tables
    from halluscope.mishap.validity import compare, write_validity_report

    folder = write_validity_report(run, out)
    for r in compare(run)["agreement"]:
        k = "-" if r["kappa"] is None else f"{r['kappa']:.3f}"
        a = "-" if r["agreement_rate"] is None else f"{r['agreement_rate']:.3f}"
        console.print(f"  {r['benchmark']}: {r['pair']}: kappa {k}, AGR {a} (n={r['n']})", highlight=False)
    tables = ablation_tables(run)
    if tables["ablation"]:
        print_table(tables["ablation"], "Judge ablation (judge vs humans, pooled)")
    console.print(f"report: {folder}")


def ablation_cmd(
    run: STEP_RUN,
    judge: str = typer.Option(..., help="Judge LLM: openai/<model> or hf/<dir>."),
    configs: List[str] = typer.Option(
        ["fig13"],
        "--configs",
        help="Preset (fig13: the E.2 ladder A-E; "
        "rubrics: rubric v1-v3; prompts: prompt v1/v3) or a JSON file of named "
        "configurations; repeat to run several.",
    ),
    evidence: Optional[Path] = typer.Option(None, help="Documents for the evidence search (knowledge questions)."),
    examples: Optional[Path] = typer.Option(None, help="In-context examples JSON (default: the packaged set)."),
    all_answers: bool = typer.Option(False, help="Judge every answer, not only those people labelled."),
    max_searches: int = typer.Option(3, help="Evidence searches per judgement (knowledge questions)."),
    retries: Retries = 2,
    llm_config: LlmConfig = None,
    option: Options = [],  # noqa: B006 - the judge's options
    allow_partial: AllowPartial = False,
) -> None:
    """Run named judge configurations on the same answers; print judge-human agreement per configuration.

    A configuration that judges nothing, or fails on more than the share --allow-partial names, exits 2 and the
    ablation is not recorded (its verdicts are kept in the store: a rerun asks only the failed ones)."""
    from halluscope.mishap.ablation import ablation_tables, load_configs, run_configs

    chosen = tuple(c for spec in configs for c in load_configs(spec))
    show_configs(
        run_configs(
            run,
            model_with(judge, option),
            chosen,
            examples=examples,
            evidence=evidence,
            all_answers=all_answers,
            max_searches=max_searches,
            retries=retries,
            allow_partial=allow_partial,
        )
    )
    print_table(ablation_tables(run)["ablation"], "Judge ablation (judge vs humans, pooled)")


def sources_cmd(
    source: str = typer.Argument(..., help="songdescriber, mridangam, clotho, fsd50k, librispeech or commonvoice."),
    root: Path = typer.Argument(..., help="The dataset folder as released (see halluscope.mishap.sources)."),
    out: Path = typer.Option(..., help="Manifest to write (JSON Lines), the --manifest of 'mishap clips'."),
    split: Optional[str] = typer.Option(
        None, help="clotho: development|validation|evaluation; fsd50k: dev|eval; commonvoice: validated|train|dev|test."
    ),
) -> None:
    """Write a clip manifest from one of MISHAP-Bench's six sources (Table 3), keeping source ids, licences and splits."""
    from halluscope.mishap.sources import write_source_manifest

    n = write_source_manifest(source, root, out, split=split)
    console.print(
        f"{n} {source} clips written to {out}; next: halluscope mishap clips RUN --manifest {out}",
        highlight=False,
        soft_wrap=True,
    )


def show_configs(runs: dict[str, ConfigRun]) -> None:
    """One line per judged configuration: judged, failed, and the items without its rubric version."""
    for name, r in runs.items():
        missing = f", {r.missing} without rubric version {r.config.rubric_version}" if r.missing else ""
        console.print(f"{name}: {len(r.judgements)} judged, {r.failed} failed{missing}", soft_wrap=True)


def print_table(rows: list[dict], title: str) -> None:
    """The judge-ablation table (configuration, settings, n, agreement rate, kappa) on the console."""
    from rich.table import Table

    t = Table("Configuration", "Settings", "n", "AGR", "kappa", title=title)
    for r in rows:
        t.add_row(
            r["config"],
            r["settings"],
            str(r["n"]),
            *("-" if r[k] is None else f"{r[k]:.3f}" for k in ("agreement_rate", "kappa")),
        )
    console.print(t)


def register(app: App) -> None:
    """'mishap validity ...', 'mishap ablation' and 'mishap sources' (the issue-16 commands)."""
    app.add_typer(validity_app, name="validity")
    app.command("ablation")(ablation_cmd)
    app.command("sources")(sources_cmd)
