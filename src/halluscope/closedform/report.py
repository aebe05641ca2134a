"""Write a closed-form report directory: Markdown + CSV tables, summary JSON and a self-contained HTML page."""

from __future__ import annotations

import json
from pathlib import Path

from halluscope.closedform.plots import grouped_bars, yes_ratio_scatter
from halluscope.closedform.score import ScoreResult
from halluscope.core.fs import atomic_write
from halluscope.core.store import Store
from halluscope.report.links import closedform_item, item_href, view_cell_link
from halluscope.report.sections import Section, register_section
from halluscope.report.table import Figure, Table

# (key, title) of the headline columns per benchmark and mode
COLUMNS: dict[tuple[str, str], list[tuple[str, str]]] = {
    # seed 002: Accuracy's range is percent, the ratios are in [0, 1]
    ("halluaudio", "strict"): [
        ("n", "n"),
        ("accuracy_percent", "Accuracy %"),
        ("yes_p_ratio", "Yes-p ratio"),
        ("unrelated_ratio", "Unrelated ratio"),
        ("conditional_accuracy", "Cond. acc"),
        ("false_refusal_rate", "FRR"),
        ("n_abstain", "abstain"),
        ("unanswerable_abstain_rate", "invalid-audio abstain"),
    ],
    ("halluaudio", "compat"): [
        ("n", "n"),
        ("accuracy_percent", "Accuracy %"),
        ("false_refusal_rate", "Refusal rate"),
        ("n_refusal", "refusals"),
    ],
    ("aha", "strict"): [
        ("n_items", "n"),
        ("accuracy", "Accuracy"),
        ("bias", "Bias FNR-FPR"),
        ("consistency_true", "Cons. all right"),
        ("consistency_wrong", "Cons. all wrong"),
    ],
    ("yesno", "strict"): [
        ("n", "n"),
        ("accuracy", "Accuracy"),
        ("precision", "Precision"),
        ("recall", "Recall"),
        ("f1", "F1"),
        ("yes_rate", "Yes rate"),
        ("n_answered", "answered"),
    ],
    # the authors' evaluation.py prints percentages rounded to 2 decimals, F1 from the rounded precision and recall
    ("yesno", "compat"): [
        ("n", "n"),
        ("accuracy_percent", "Accuracy %"),
        ("precision_percent", "Precision % (no+)"),
        ("recall_percent", "Recall % (no+)"),
        ("f1_percent", "F1 % (no+)"),
        ("yes_rate_percent", "Yes rate %"),
    ],
}
COLUMNS[("aha", "compat")] = COLUMNS[("aha", "strict")]
SCATTER_NOTE = {
    "halluaudio": "Strict points: domains and binary subsets (yes-p ratio, conditional accuracy) and count probes; "
    "official points: count probes (yes-pred ratio, conditional accuracy).",
    "aha": "One point per task: share of 'yes' answers and accuracy.",
    "yesno": "One point per sampling strategy: yes rate and accuracy.",
}
DIFF_COLS = [
    ("id", "Item"),
    ("group", "Group"),
    ("reference", "Ref"),
    ("reply", "Reply"),
    ("strict", "Strict"),
    ("compat", "Official"),
    ("reason", "Why"),
]


def headline_rows(result: ScoreResult, mode: str) -> list[dict]:
    """One row per group (and 'all') of the given mode's metrics."""
    metrics = result.strict if mode == "strict" else result.compat
    rows = [
        {
            result.group_name: g,
            **{k: v for k, v in m.items() if not isinstance(v, dict)},
            **{f"{k}_percent": v for k, v in m.get("as_published_percent", {}).items()},
        }
        for g, m in metrics.items()
    ]
    if result.benchmark == "halluaudio":
        for row in rows:
            row["accuracy_percent"] = None if row.get("accuracy") is None else 100 * row["accuracy"]
    return rows


RECIPE_COLS = [
    ("accuracy_percent", "Accuracy %"),
    ("yes_ratio", "Yes-p ratio"),
    ("unrelated_ratio", "Unrelated ratio"),
    ("conditional_accuracy", "Cond. acc"),
    ("frr", "FRR"),
    ("n", "n"),
    ("n_binary", "binary"),
]


def recipe_rows(result: ScoreResult) -> list[dict]:
    """HalluAudio's scoring recipe (seed 002) per domain, on the official readings."""
    return [{result.group_name: g, **m["recipe"]} for g, m in result.compat.items() if "recipe" in m]


def scatter_points(result: ScoreResult) -> list[dict]:
    """Yes ratio and accuracy per group (and per binary subset / count probe) in both modes."""
    pts: list[dict] = []
    for mode in ("strict", "compat"):
        metrics = result.strict if mode == "strict" else result.compat
        for g, m in metrics.items():
            if result.benchmark == "halluaudio":
                if mode == "strict":
                    pts.append(
                        {
                            "name": g,
                            "mode": mode,
                            "yes_ratio": m.get("yes_p_ratio"),
                            "accuracy": m.get("conditional_accuracy"),
                        }
                    )
                if g != "all":
                    for subset, p in m.get("count_probes", {}).items():
                        pts.append(
                            {
                                "name": subset,
                                "mode": mode,
                                "yes_ratio": p["yes_pred_ratio"],
                                "accuracy": p["conditional_accuracy"],
                            }
                        )
            elif result.benchmark == "aha":
                n = sum(m.get("classes", {}).values())
                yes = m.get("classes", {}).get("yes", 0)
                if n and g != "all" and "asr" not in g.lower():
                    pts.append({"name": g, "mode": mode, "yes_ratio": yes / n, "accuracy": m.get("accuracy")})
            else:
                pts.append({"name": g, "mode": mode, "yes_ratio": m.get("yes_rate"), "accuracy": m.get("accuracy")})
    if result.benchmark == "halluaudio":
        for row in result.tables.get("subsets", []):
            if row["kind"] == "binary":
                pts.append(
                    {
                        "name": row["subset"],
                        "mode": "strict",
                        "yes_ratio": row["yes_ratio_strict"],
                        "accuracy": row["accuracy_strict"],
                    }
                )
    return pts


def accuracy_bars(result: ScoreResult) -> bytes | None:
    groups = list(result.strict)
    series = {
        "strict": [result.strict[g].get("accuracy") for g in groups],
        "compat": [result.compat.get(g, {}).get("accuracy") for g in groups],
    }
    errors = None
    if result.benchmark in ("halluaudio", "yesno"):
        errors = {
            "strict": [
                tuple(result.strict[g]["ci95"]["accuracy"]) if result.strict[g]["ci95"]["accuracy"] else None
                for g in groups
            ]
        }
    return grouped_bars(groups, series, ylabel="accuracy (strict: 95% bootstrap CI)", errors=errors)


SUBSET_COLS = [
    ("domain", "domain"),
    ("subset", "subset"),
    ("kind", "kind"),
    ("n", "n"),
    ("accuracy_strict", "acc strict"),
    ("accuracy_compat", "acc official"),
    ("yes_ratio_strict", "yes ratio"),
    ("abstain_strict", "abstain"),
]


READER_COLS = [
    ("reader", "reader"),
    ("n", "n"),
    ("accuracy", "Accuracy"),
    ("yes_p_ratio", "Yes-p ratio"),
    ("frr", "FRR"),
    ("bias", "Bias FNR-FPR"),
    ("unscored", "unscored"),
    ("unread", "unread"),
]
READER_DIFF_COLS = [
    ("id", "Item"),
    ("group", "Group"),
    ("reference", "Ref"),
    ("reply", "Reply"),
    ("rules", "Rules"),
    ("llm", "LLM"),
    ("llm_raw", "LLM said"),
]


def reader_blocks(result: ScoreResult, prefix: str = "", view_page: str | None = None) -> list:
    """The reader-sensitivity table (rules vs the LLM reader on the binary items) and the items they read apart;
    with ``view_page`` (the viewer's index.html, relative to the report) each item links to its viewer page."""
    return reader_table_blocks(result.tables, result.benchmark, prefix, view_page)


def reader_table_blocks(tables: dict, benchmark: str, prefix: str = "", view_page: str | None = None) -> list:
    """reader_blocks for any scorer's reader tables (closedform/llmreader.py: compare)."""
    if not tables.get("reader_sensitivity"):
        return []
    s = tables["reader_summary"][0]
    diff = tables["reader_disagreements"]
    if view_page is not None:
        diff = [{**r, "view": item_href(closedform_item(benchmark, r.get("run"), r["id"]), view_page)} for r in diff]
    agreement = "-" if s["agreement"] is None else f"{s['agreement']:.3f}"
    return [
        Table(
            f"{prefix}reader_sensitivity",
            READER_COLS,
            tables["reader_sensitivity"],
            title=f"Reader sensitivity: rules vs {s['reader']}, agreement {agreement} ({s['agree']} of {s['n']})",
            notes=(
                "The same replies read by the rules (strict) and by an LLM given the question; published "
                "comparisons differ by up to 10 points for the reader alone.",
                f"The LLM reader read {s.get('read', s['n'])} of {s['n']} replies; structured output: "
                f"{s.get('structured', '-')}.",
            ),
        ),
        Table(
            f"{prefix}reader_disagreements",
            READER_DIFF_COLS,
            diff,
            link=view_cell_link if view_page else None,
            title=f"Items the two readers read differently: {s['n_disagree']}",
            empty="None.",
            notes=(
                "Each item opens its page in the viewer (question, reply, both modes' readings)." if view_page else "",
            ),
        ),
    ]


def closedform_section(
    result: ScoreResult,
    *,
    prefix: str = "",
    title: str | None = None,
    max_diff_rows: int = 500,
    view_page: str | None = None,
) -> Section:
    """Both modes' headline tables, the accuracy and yes-ratio plots, subsets, extraction classes, the items the
    modes score differently, problems and notes; every table id starts with ``prefix`` (unique within a report)."""
    d = result.as_dict(max_diff_rows=max_diff_rows)
    cmp_ = d["comparison"]
    g = result.group_name
    problems = [p.model_dump() for p in result.loaded.problems]
    blocks: list = [
        f"Files: {', '.join(d['files'])}; {d['n_items']} items; headline mode: {result.mode}. {d['reply_reader']['line']}.",
        Table(
            f"{prefix}metrics_strict",
            [(g, g), *COLUMNS[(result.benchmark, "strict")]],
            headline_rows(result, "strict"),
            title="Strict mode (word-level extraction, spec metrics)",
            notes=(
                "Word-level answer extraction; refusals, uncertainty, hedges, ambiguous and unrelated replies are "
                "counted apart and never read as yes or no.",
            ),
        ),
        Table(
            f"{prefix}metrics_compat",
            [(g, g), *COLUMNS[(result.benchmark, "compat")]],
            headline_rows(result, "compat"),
            title="Compatibility mode (official scorer rules)",
            notes=("The official scorers' substring rules and denominators, to compare with published numbers.",),
        ),
        Figure(accuracy_bars(result), "accuracy per group, strict vs compat", file=f"{prefix}accuracy.png"),
        f"Yes ratio against accuracy: a high yes ratio is a bias, not skill. {SCATTER_NOTE.get(result.benchmark, '')} "
        "Dashed line: accuracy equal to the yes ratio.",
        Figure(yes_ratio_scatter(scatter_points(result)), "yes ratio vs accuracy", file=f"{prefix}yes_ratio.png"),
    ]
    if recipe_rows(result):
        blocks.append(
            Table(
                f"{prefix}recipe",
                [(g, g), *RECIPE_COLS],
                recipe_rows(result),
                title="HalluAudio scoring recipe (seed 002), official readings",
                notes=(
                    "compute_metrics() as the recipe gives it: Unrelated ratio 0 when there is no binary "
                    "error; FRR counts replies that are exactly 'refuse', 'cannot answer' or 'i dont know'.",
                ),
            )
        )
    blocks += reader_blocks(result, prefix, view_page)
    if result.tables.get("subsets"):
        blocks.append(Table(f"{prefix}subsets", SUBSET_COLS, result.tables["subsets"], title="Per subset"))
    blocks += [
        Table(
            f"{prefix}extraction",
            [("class", "class"), ("n", "n")],
            [{"class": k, "n": v} for k, v in d["extraction"]["classes"].items()],
            title="Extraction classes (strict)",
        ),
        Table(
            f"{prefix}diff_reasons",
            [("reason", "reason"), ("n", "n")],
            [{"reason": k, "n": v} for k, v in cmp_["by_reason"].items()],
            title=f"Strict vs compatible: {cmp_['n_differ']} of {cmp_['n_scored_in_both']} items scored differently",
            notes=tuple(f"The figures also differ by definition: {r}" for r in cmp_["rules"]),
        ),
        Table(
            f"{prefix}diff_shown", DIFF_COLS, cmp_["rows"], title=f"Items scored differently (first {max_diff_rows})"
        ),
        Table(f"{prefix}items", [], [i.as_row() for i in result.items], title="Every item, both modes", shown=False),
        Table(
            f"{prefix}diff",
            [],
            [{**i.as_row(), "reason": i.category} for i in result.items if i.differs],
            title="Every item the modes score differently",
            shown=False,
        ),
        Table(
            f"{prefix}problems",
            [("file", "file"), ("row", "line"), ("field", "field"), ("message", "problem")],
            problems,
            title=f"Problems in the input: {d['problems']['count']}",
            empty="None.",
        ),
    ]
    if d["notes"]:
        blocks.append("Notes: " + " ".join(d["notes"]))
    return Section(title or f"Closed-form: {result.benchmark}", blocks)


def write_metrics_report(result: dict, report: str | Path, *, groups: str) -> Path:
    """The report of a published-set scorer's result dict (AudioTrust: ``groups='subsets'``, AVHBench: 'tasks'):
    its figures per group, the LLM reader's tables (``result['reader']``), the input problems and every item as
    tables.md, CSVs and report.html, and the whole result as summary.json, in the folder ``report``."""
    from halluscope.report.page import write_folder

    out = Path(report)
    rows = [
        {groups[:-1]: name, **{k: v for k, v in m.items() if not isinstance(v, (dict, list))}}
        for name, m in result[groups].items()
    ]
    problems = [{"problem": p} for p in result.get("problems", [])]
    blocks: list = [
        f"Files: {', '.join(result['files'])}; {result['n_items']} items scored.",
        Table(
            "metrics",
            [(k, k) for k in dict.fromkeys(k for r in rows for k in r)],
            rows,
            title=f"{result['benchmark']}: figures per {groups[:-1]}",
        ),
        *reader_table_blocks(result.get("reader", {}), result["benchmark"]),
        Table(
            "problems",
            [("problem", "problem")],
            problems,
            title=f"Problems in the input: {len(problems)}",
            empty="None.",
        ),
        Table("items", [], list(result["items"]), title="Every item", shown=False),
    ]
    section = Section(f"Closed-form: {result['benchmark']}", blocks)
    path = write_folder(out, [section], title=f"halluscope closed-form report: {result['benchmark']}", json_name=None)
    atomic_write(out / "summary.json", json.dumps(result, indent=2, ensure_ascii=False, default=str))
    return path


def write_score_report(result: ScoreResult, report: str | Path, *, view_page: str | None = None) -> Path:
    """The report of one scored predictions file ('halluscope score ... --report DIR'; a run's report is
    halluscope.report.write_report(RUN), where each predictions file is a section). Write tables.md,
    metrics_strict.csv, metrics_compat.csv, items.csv, diff.csv, problems.csv (subsets.csv), the plots,
    summary.json and report.html into the folder ``report``; returns the HTML path. ``view_page``: the viewer's
    index.html relative to ``report`` (the items of the reader-sensitivity table link there)."""
    from halluscope.report.page import write_folder

    out = Path(report)
    section = closedform_section(result, view_page=view_page)
    path = write_folder(out, [section], title=f"halluscope closed-form report: {result.benchmark}", json_name=None)
    atomic_write(out / "summary.json", json.dumps(result.as_dict(max_diff_rows=1000), indent=2, ensure_ascii=False))
    return path


RUN_SECTION_NOTE = (
    "The yes/no set's predictions (predictions/yesno-*.csv) need their questions file to be scored: "
    "'halluscope score yesno QUESTIONS.tsv PREDICTIONS.csv --report DIR'."
)


@register_section
def closedform_run_sections(store: Store) -> list[Section] | None:
    """The closed-form predictions 'run closedform RUN' wrote into RUN/predictions/, each file scored (strict and
    official modes) as its own section; table ids are prefixed with the file's stem."""
    from halluscope.closedform import loaders
    from halluscope.closedform.score import score_aha, score_halluaudio
    from halluscope.core.errors import HalluscopeError

    folder = Path(store.run_dir) / "predictions"
    sections = []
    for path in sorted(folder.glob("*.jsonl")) if folder.is_dir() else []:
        fmt = path.name.split("-", 1)[0]
        if fmt not in ("halluaudio", "aha"):
            continue
        try:
            result = (
                score_halluaudio(loaders.load_halluaudio([path]), bootstrap=200)
                if fmt == "halluaudio"
                else score_aha(loaders.load_aha([path]), bootstrap=200)
            )
        except HalluscopeError as exc:  # nothing scorable in the file: say so instead of failing the whole report
            sections.append(Section(f"Closed-form: {path.name}", [f"Not scored: {exc}"]))
            continue
        sections.append(closedform_section(result, prefix=f"{path.stem}_", title=f"Closed-form: {path.name}"))
    if sections and any(folder.glob("yesno-*.csv")):
        sections[-1].blocks.append(RUN_SECTION_NOTE)
    return sections or None
