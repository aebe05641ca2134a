"""The validity study of groundedness judging (seed 001, section 4.1 and Figure 5).

Closed-form responses (HalluAudio, AHa-Bench, Kuan et al.) are imported into a run with the benchmark's own
verdict (its official scorer's reading: halluscope.closedform, compat mode) and a reference rubric derived from
the gold answer. The groundedness judge then judges them ('mishap validity judge'), people label them in the
annotation app ('mishap annotate' shows them beside any MISHAP answers), and 'mishap validity report' puts the
three side by side: hallucination rate per evaluator on the same responses, Cohen's kappa and agreement rate, a
Figure-5-style plot, and the judge ablation / sensitivity tables of halluscope.mishap.ablation.
"""

from __future__ import annotations

import json
import random
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from halluscope.core.errors import HalluscopeError, InputError
from halluscope.core.hashing import file_sha256
from halluscope.core.manifest import record_manifest
from halluscope.core.stages import Stage
from halluscope.core.store import Store
from halluscope.mishap.validity_items import (  # noqa: F401 - re-exported
    BENCHMARKS,
    IMPORT,
    NAMES,
    STAGE,
    Benchmark,
    ValidityItem,
    annotation_rows,
    load_validity,
)

# AHa-Bench types about spoken content (the rest are sound events)
_AHA_SPEECH = ("homophone", "asr", "prosodic", "polysemy", "knowledge", "overreliance", "inferredsound")


def derive_rubric(kind: str, reference: str, question: str) -> tuple[str, str]:
    """(description, rubric) from the gold answer. The rubric accepts what a correctness scorer misses (seed 001,
    4.1): stated uncertainty, a corrected premise, an incomplete but supported answer."""
    ref = " ".join(reference.split())
    accept = (
        "states that it cannot establish the answer from the audio, or corrects a misleading premise, "
        "without adding unsupported details about the clip."
    )
    if kind == "unanswerable":
        return (
            "The audio holds no content that can answer the question (noise or no speaker): the benchmark has no "
            "answer for it.",
            "Hallucinated if the response describes or asserts content (a speaker, words, gender, events) that the "
            "audio does not contain. Grounded if it says the requested content is absent or cannot be determined.",
        )
    if kind == "asr":
        return (
            f'The spoken words are: "{ref}".',
            f'Hallucinated if the transcript adds, replaces or invents words that are not in "{ref}". Grounded if '
            f"it reproduces the spoken words (small spelling or punctuation differences are fine), or it {accept}",
        )
    if kind == "binary":
        yes = ref.strip().lower() in ("yes", "是", "true")
        fact = "yes" if yes else "no"
        return (
            f'The correct answer to "{question}" is {fact}.',
            f"Hallucinated if the response answers {'no' if yes else 'yes'}, or asserts details about the clip that "
            f"this does not support. Grounded if it answers {fact}, or it {accept}",
        )
    return (
        f'The correct answer to "{question}" is: {ref}.',
        f'Hallucinated if the response asserts an answer other than "{ref}", or asserts details about the clip '
        f'that this does not support. Grounded if its answer agrees with "{ref}", or it {accept}',
    )


def _rows(benchmark: str, files: Sequence[Path], *, domain: str | None) -> tuple[list[dict], int]:
    """Each scored item of the files as plain fields, and how many input problems were left out."""
    from halluscope.closedform import loaders, score

    if benchmark == "halluaudio":
        loaded = loaders.load_halluaudio(files, domain=domain)
        res = score.score_halluaudio(loaded, mode="compat", bootstrap=0)
        pairs = [(it, s, it.prompt, it.domain, it.audio) for it, s in zip(loaded.items, res.items)]
    elif benchmark == "aha":
        loaded = loaders.load_aha(files)
        res = score.score_aha(loaded, mode="compat", bootstrap=0)
        pairs = [
            (it, s, it.question, "speech" if it.type.lower().startswith(_AHA_SPEECH) else "sound", it.audio_key)
            for it, s in zip(loaded.items, res.items)
        ]
    elif benchmark == "kuan":
        if len(files) != 2:
            raise InputError(
                f"Kuan et al. needs two files, the questions TSV and the predictions CSV; got {len(files)}",
                fix="give QUESTIONS.txt PREDICTIONS.csv",
            )
        loaded = loaders.load_yesno(files[0], files[1])
        res = score.score_yesno(loaded, mode="compat", bootstrap=0)
        pairs = [(it, s, it.prompt_text, "sound", it.audio_index) for it, s in zip(loaded.items, res.items)]
    else:
        raise InputError(
            f"unknown benchmark {benchmark!r}", field="benchmark", fix=f"use one of {', '.join(BENCHMARKS)}"
        )
    rows = []
    for _it, s, question, dom, audio in pairs:
        rows.append(
            {
                "item_id": s.id,
                "question": question,
                "response": s.reply,
                "reference": s.reference or "none",
                "kind": s.kind,
                "domain": dom,
                "audio": audio,
                "original": None if not s.compat_scored else ("grounded" if s.compat_correct else "hallucinated"),
                "original_rule": s.compat_rule if s.compat_scored else "skipped by the official scorer",
            }
        )
    return rows, len(loaded.problems)


@dataclass(frozen=True)
class ValidityImport:
    """What one import stored: its items and how many input rows were left out as problems."""

    items: list[ValidityItem]
    problems: int = 0


def import_validity(
    run_dir: str | Path,
    benchmark: str,
    files: Sequence[str | Path],
    *,
    model: str,
    domain: str | None = None,
    sample: int | None = None,
    seed: int = 0,
) -> ValidityImport:
    """Import one model's closed-form responses (optionally a seeded sample of them) into the run."""
    if not model.strip():
        raise InputError("the model name is empty", field="model", fix="name the model that wrote the responses")
    if sample is not None and sample < 1:
        raise InputError(f"expected a positive number of responses, got {sample}", field="sample")
    paths = [Path(f) for f in files]
    rows, problems = _rows(benchmark, paths, domain=domain)
    if sample is not None and sample < len(rows):
        rows = random.Random(seed).sample(rows, sample)
    items = []
    for r in sorted(rows, key=lambda r: r["item_id"]):
        desc, rubric = derive_rubric(r["kind"], r["reference"], r["question"])
        items.append(
            ValidityItem(
                id=f"validity~{benchmark}~{model}~{r['item_id']}",
                benchmark=benchmark,  # type: ignore[arg-type]
                model=model,  # type: ignore[arg-type]
                description=desc,
                rubric=rubric,
                **r,
            )
        )
    digests = [file_sha256(p, 16) for p in paths]
    config = {
        "benchmark": benchmark,
        "model": model,
        "files": [str(p) for p in paths],
        "sha256": digests,
        "domain": domain,
        "sample": sample,
        "seed": seed,
    }
    stage = Stage(STAGE, config)
    with Store(run_dir) as store:
        for it in items:
            store.put(STAGE, stage.fingerprint, it.id, it)
        record_manifest(
            store,
            command=IMPORT,
            config={**config, "n": len(items), "input_problems": problems},
            seeds={"sample": seed},
            stages={"validity": stage.fingerprint},
        )
    return ValidityImport(items, problems)


# ------------------------------------------------------------------------------------------------ the report
def _rate(labels: Sequence[str]) -> dict:
    from halluscope.metrics.rates import rate

    r = rate(k=sum(x == "hallucinated" for x in labels), n=len(labels))
    return {"n": r.n, "rate": r.rate, "ci_low": r.ci_low, "ci_high": r.ci_high}


def compare(run_dir: str | Path) -> dict:
    """Figure 5's numbers per benchmark: hallucination rate by the original scorer, the humans and the judge on
    the responses people labelled (pooled over annotators), each evaluator's rate on all it scored, and agreement
    (Cohen's kappa, AGR) of judge vs humans, original vs humans and judge vs original."""
    from halluscope.core.runs import config_of
    from halluscope.metrics.agreement import binary_agreement, judge_human_agreement
    from halluscope.mishap.ablation import FULL_NAME, config_judgements
    from halluscope.mishap.judge import load_judgements
    from halluscope.mishap.labels import human_labels

    with Store(run_dir, create=False) as store:
        items = load_validity(store)
        validity_j = config_judgements(store, "validity").get(FULL_NAME, {})
        try:
            mishap_j = load_judgements(store)
        except HalluscopeError:
            mishap_j = {}
        judge_m = store.latest_manifest("mishap judge")
    human = human_labels(run_dir)
    examples = set(config_of(judge_m).example_answer_ids) if judge_m else set()
    groups: dict[str, dict[str, dict]] = defaultdict(lambda: {"judge": {}, "original": {}})
    for v in items.values():
        g = groups[v.benchmark]
        if v.original is not None:
            g["original"][v.id] = v.original
        j = validity_j.get(v.id)
        if j is not None and j.status == "ok" and j.verdict:
            g["judge"][v.id] = j.verdict
    for aid, j in mishap_j.items():
        if j.status == "ok" and j.verdict and aid not in examples:
            groups["mishap"]["judge"][aid] = j.verdict
    rows, agreement = [], []
    for bench in [b for b in (*BENCHMARKS, "mishap") if b in groups]:
        g = groups[bench]
        ids = g["judge"].keys() | g["original"].keys()
        hum = {k: v for k, v in human.items() if k[0] in ids}
        labelled = sorted({a for a, _ in hum})
        row: dict = {
            "benchmark": NAMES[bench],
            "responses": len(ids),
            "labelled": len(labelled),
            "human_labels": len(hum),
        }
        # the bars compare one population: the labelled responses every evaluator present here scored, one entry
        # per human label so every bar weighs responses alike (the same n for the human, original and judge bars)
        both_scored = [k for k in sorted(hum) if all(k[0] in g[who] for who in ("original", "judge") if g[who])]
        row["compared_labels"] = len(both_scored)
        row["human"] = _rate([hum[k] for k in both_scored])
        for who in ("original", "judge"):
            row[who] = _rate([g[who][a] for a, _ in both_scored]) if g[who] else None
            row[f"{who}_all"] = _rate(list(g[who].values())) if g[who] else None
        rows.append(row)
        for who in ("judge", "original"):
            if g[who]:
                pooled = judge_human_agreement(g[who], hum)[-1]
                agreement.append(
                    {
                        "benchmark": NAMES[bench],
                        "pair": f"{who} vs humans",
                        **{k: pooled[k] for k in ("n", "n_agree", "agreement_rate", "kappa")},
                    }
                )
        both = sorted(g["judge"].keys() & g["original"].keys())
        if both:
            ag = binary_agreement(a=[g["judge"][a] for a in both], b=[g["original"][a] for a in both])
            agreement.append({"benchmark": NAMES[bench], "pair": "judge vs original", **ag.as_dict()})
    return {"rates": rows, "agreement": agreement}


def fig5_plot(rows: list[dict]) -> bytes | None:
    """Grouped bars: hallucination rate per benchmark by original scorer, humans and judge (95% Wilson CIs)."""
    from halluscope.report.plots import plt, png

    rows = [r for r in rows if r["labelled"]]
    if not rows:
        return None
    fig, ax = plt.subplots(figsize=(1.9 * len(rows) + 2.4, 3.4))
    xs = list(range(len(rows)))
    for offset, key, color in ((-0.27, "original", "#a0aec0"), (0.0, "human", "#2f855a"), (0.27, "judge", "#2b6cb0")):
        for x, r in zip(xs, rows):
            c = r.get(key)
            if not c or c["rate"] is None:  # no such evaluator here (MISHAP-Bench has no original scorer): no bar
                ax.text(x + offset, 2, "n/a", ha="center", fontsize=7, color="#4a5568")
                continue
            v = c["rate"]
            ax.bar(
                [x + offset],
                [100 * v],
                width=0.26,
                color=color,
                capsize=3,
                yerr=[[100 * (v - c["ci_low"])], [100 * (c["ci_high"] - v)]],
            )
    from matplotlib.patches import Patch

    ax.set_xticks(xs, [r["benchmark"] for r in rows])
    ax.set_xlim(-0.5, len(rows) - 0.5)
    ax.set_ylabel("hallucination rate (%)")
    ax.set_ylim(0, 100)
    ax.legend(
        handles=[
            Patch(color=c, label=n)
            for c, n in (
                ("#a0aec0", "original scorer"),
                ("#2f855a", "human annotators"),
                ("#2b6cb0", "groundedness judge"),
            )
        ],
        fontsize=8,
        loc="upper center",
        bbox_to_anchor=(0.5, -0.1),
        ncol=3,
        frameon=False,
    )
    ax.set_title("Original scorer vs humans vs groundedness judge (labelled responses)", fontsize=9)
    return png(fig)


def _pct(c: dict | None) -> str:
    if not c or c["rate"] is None:
        return "-"
    return f"{100 * c['rate']:.1f} [{100 * c['ci_low']:.1f}, {100 * c['ci_high']:.1f}] (n={c['n']})"


def _num(x: float | None) -> str:
    return "-" if x is None else f"{x:.3f}"


def _md(rows: list[dict], cols: list[tuple[str, str]]) -> str:
    out = ["| " + " | ".join(t for _, t in cols) + " |", "|" + "---|" * len(cols)]
    for r in rows:
        out.append("| " + " | ".join(str(r.get(k, "")) for k, _ in cols) + " |")
    return "\n".join(out)


def write_validity_report(run_dir: str | Path, out: str | Path | None = None) -> Path:
    """RUN/report/validity/: validity.md, summary.json, fig5.png (when people have labelled responses) and the
    ablation / sensitivity tables (when 'mishap ablation' has run)."""
    from halluscope.core.fs import atomic_write
    from halluscope.mishap.ablation import ablation_tables

    data = compare(run_dir)
    tables = ablation_tables(run_dir)
    if not data["rates"] and not any(tables.values()):
        raise HalluscopeError(
            f"{run_dir} has nothing to compare yet. Fix: import closed-form responses with "
            f"'halluscope mishap validity import {run_dir} ...', judge them with 'mishap validity "
            "judge', label them with 'mishap annotate'; or run 'mishap ablation'"
        )
    folder = Path(out) if out is not None else Path(run_dir) / "report" / "validity"
    folder.mkdir(parents=True, exist_ok=True)
    rate_rows = [
        {
            "benchmark": r["benchmark"],
            "responses": r["responses"],
            "labelled": r["labelled"],
            "original": _pct(r["original"]),
            "human": _pct(r["human"]),
            "judge": _pct(r["judge"]),
            "original_all": _pct(r["original_all"]),
            "judge_all": _pct(r["judge_all"]),
        }
        for r in data["rates"]
    ]
    agree_rows = [
        {**r, "agreement_rate": _num(r["agreement_rate"]), "kappa": _num(r["kappa"])} for r in data["agreement"]
    ]
    parts = [
        "# Validity of groundedness-based evaluation (MISHAP-Bench section 4.1, Figure 5)",
        "",
        "Hallucination rate (%) with 95% Wilson intervals. 'original', 'human' and 'judge' are on the responses "
        "people labelled (one entry per human label); '... all' on every response that evaluator scored. The "
        "original scorer counts a wrong answer as hallucinated; MISHAP-Bench has no original scorer.",
        "",
        _md(
            rate_rows,
            [
                ("benchmark", "Benchmark"),
                ("responses", "Responses"),
                ("labelled", "Labelled"),
                ("original", "Original scorer"),
                ("human", "Humans"),
                ("judge", "Judge"),
                ("original_all", "Original (all)"),
                ("judge_all", "Judge (all)"),
            ],
        ),
        "",
        "## Agreement (Cohen's kappa, agreement rate)",
        "",
        _md(
            agree_rows,
            [
                ("benchmark", "Benchmark"),
                ("pair", "Pair"),
                ("n", "n"),
                ("n_agree", "Agree"),
                ("agreement_rate", "AGR"),
                ("kappa", "kappa"),
            ],
        ),
    ]
    for key, title in (
        ("ablation", "## Judge ablation (MISHAP-Bench, E.2, Figure 13): judge-human agreement per configuration"),
        ("rubric", "## Sensitivity to the reference rubric (MISHAP-Bench, E.3, Table 9)"),
        ("prompt", "## Sensitivity to the judge prompt (MISHAP-Bench, E.3, Table 10)"),
    ):
        if tables.get(key):
            rows = [{**r, "agreement_rate": _num(r["agreement_rate"]), "kappa": _num(r["kappa"])} for r in tables[key]]
            parts += [
                "",
                title,
                "",
                "Population: the MISHAP-Bench answers people labelled (provenance 'mishap answer'; "
                "imported validity responses are not counted); n = (answer, annotator) pairs.",
                "",
                _md(
                    rows,
                    [
                        ("config", "Configuration"),
                        ("settings", "Settings"),
                        ("n", "n"),
                        ("agreement_rate", "AGR"),
                        ("kappa", "kappa"),
                        ("unscored", "Unscored"),
                        ("examples_left_out", "Example pairs left out"),
                    ],
                ),
            ]
    plot = fig5_plot(data["rates"])
    if plot:
        atomic_write(folder / "fig5.png", plot)
        parts += ["", "![Figure 5](fig5.png)"]
    atomic_write(folder / "validity.md", "\n".join(parts) + "\n")
    atomic_write(folder / "summary.json", json.dumps({**data, "ablation": tables}, indent=2, ensure_ascii=False))
    return folder
