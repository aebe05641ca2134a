"""MISHAP-Bench's remaining artefacts (seed 001): Table 3 (source datasets), Fig. 3b and Fig. 11 (questions by
strategy, overall and per domain), Fig. 10 (clip durations per domain) and the mitigation Tables 2, 8 and 12
(the plain-decoding row as baseline, each method's rate with its change and a paired interval, the best per
column marked). Every table is a report Table (Markdown, CSV, LaTeX, HTML from one object)."""

from __future__ import annotations

import math
from collections import Counter, defaultdict

from halluscope.core.records import MISHAP_CATEGORIES, MISHAP_DOMAINS, MISHAP_STRATEGIES
from halluscope.report.table import Figure, Table

ABBR = {
    "contradicted_premise": "CP",
    "absent_premise": "AP",
    "false_negation": "FN",
    "niche_specifics": "NS",
    "unknowable_provenance": "UP",
    "false_authority": "FA",
    "false_premise": "FP",
}
STRATEGIES = [s for c in MISHAP_CATEGORIES for s in MISHAP_STRATEGIES[c]]
BEST = " *"  # the mark of the best (lowest) rate of a column within a model's rows
Z = 1.959964


# -- Table 3 -------------------------------------------------------------------------------------------------------
def table3(clips) -> Table:
    """Per source: its domain, clips, description kind(s), licence(s) and total duration (seed 001, Table 3)."""
    by: dict[tuple[str, str], list] = defaultdict(list)
    for c in clips:
        by[(c.domain, c.source)].append(c)
    rows = [
        {
            "domain": d,
            "source": s,
            "clips": len(cs),
            "description": ", ".join(sorted({c.description_kind for c in cs})),
            "license": ", ".join(sorted({c.license for c in cs if c.license})) or "not stated",
            "hours": round(sum(c.duration_s or 0 for c in cs) / 3600, 4),
        }
        for (d, s), cs in sorted(by.items())
    ]
    cols = [
        ("domain", "Domain"),
        ("source", "Source"),
        ("clips", "Clips"),
        ("description", "Description"),
        ("license", "Licence"),
        ("hours", "Hours"),
    ]
    return Table("mishap_table3", cols, rows, title="Table 3: source datasets", empty="no clips")


# -- Figs. 3b, 10, 11 ----------------------------------------------------------------------------------------------
def strategy_rows(questions) -> list[dict]:
    """Questions per domain and strategy (Fig. 11), with an 'all' row (Fig. 3b) and each row's max - min."""
    counts = Counter((q.domain, q.strategy) for q in questions)
    rows = []
    for d in (*MISHAP_DOMAINS, "all"):
        row: dict = {"domain": d}
        for s in STRATEGIES:
            row[s] = sum(n for (dd, ss), n in counts.items() if ss == s and d in (dd, "all"))
        per_cat = [[row[s] for s in MISHAP_STRATEGIES[c]] for c in MISHAP_CATEGORIES]
        row["spread"] = max(max(v) - min(v) for v in per_cat)  # within each category: max - min count
        row["total"] = sum(row[s] for s in STRATEGIES)
        rows.append(row)
    return rows


def strategy_table(questions) -> Table:
    cols = (
        [("domain", "Domain")]
        + [(s, ABBR[s]) for s in STRATEGIES]
        + [("total", "Total"), ("spread", "Max - min per category")]
    )
    return Table(
        "mishap_strategies",
        cols,
        strategy_rows(questions),
        title="Figs. 3b and 11: questions by strategy (the 'all' row is Fig. 3b)",
        notes=(
            "Strategies are dealt by a seeded quota (mishap.questions.quota_strategies): over the run "
            "each category's strategies differ by at most one ('all' row, last column).",
        ),
    )


def strategy_plot(questions) -> bytes | None:
    from halluscope.report.plots import plt, png

    rows = strategy_rows(questions)
    if not rows[-1]["total"]:
        return None
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.2))
    axes[0].bar(
        [ABBR[s] for s in STRATEGIES], [rows[-1][s] for s in STRATEGIES], color=["#3182ce"] * 3 + ["#dd6b20"] * 4
    )
    axes[0].set_title("Fig. 3b: questions per strategy")
    bottom = [0] * len(MISHAP_DOMAINS)
    for s in STRATEGIES:
        vals = [r[s] for r in rows[:-1]]
        axes[1].bar(list(MISHAP_DOMAINS), vals, bottom=bottom, label=ABBR[s])
        bottom = [b + v for b, v in zip(bottom, vals)]
    axes[1].set_title("Fig. 11: strategies per domain")
    axes[1].legend(fontsize=7, ncol=2)
    return png(fig)


def duration_table(clips) -> Table:
    rows = []
    for d in MISHAP_DOMAINS:
        ds = sorted(c.duration_s for c in clips if c.domain == d and c.duration_s is not None)
        rows.append(
            {
                "domain": d,
                "clips": len(ds),
                "min_s": ds[0] if ds else None,
                "median_s": ds[len(ds) // 2] if ds else None,
                "max_s": ds[-1] if ds else None,
                "mean_s": sum(ds) / len(ds) if ds else None,
            }
        )
    cols = [
        ("domain", "Domain"),
        ("clips", "Clips"),
        ("min_s", "Min s"),
        ("median_s", "Median s"),
        ("mean_s", "Mean s"),
        ("max_s", "Max s"),
    ]
    return Table("mishap_durations", cols, rows, title="Fig. 10: clip durations per domain")


def duration_plot(clips) -> bytes | None:
    from halluscope.report.plots import plt, png

    data = [[c.duration_s for c in clips if c.domain == d and c.duration_s is not None] for d in MISHAP_DOMAINS]
    if not any(data):
        return None
    fig, ax = plt.subplots(figsize=(5, 3))
    ax.boxplot([x or [0] for x in data])
    ax.set_xticks(range(1, len(MISHAP_DOMAINS) + 1), list(MISHAP_DOMAINS))
    ax.set_ylabel("duration (s)")
    ax.set_title("Fig. 10: clip durations")
    return png(fig)


def figures(clips, questions) -> list:
    return [
        duration_table(clips),
        Figure(duration_plot(clips), "clip durations per domain", file="mishap_fig10.png"),
        strategy_table(questions),
        Figure(strategy_plot(questions), "questions per strategy and domain", file="mishap_fig11.png"),
    ]


# -- Tables 2, 8, 12 -----------------------------------------------------------------------------------------------
def paired_change(pairs: list[tuple[int, int]]) -> tuple[float, float, float] | None:
    """Mean change (method - baseline, hallucinated = 1) over paired answers with a 95% paired Wald interval."""
    n = len(pairs)
    if not n:
        return None
    d = [m - b for b, m in pairs]
    mean = sum(d) / n
    sd = math.sqrt(sum((x - mean) ** 2 for x in d) / (n - 1)) if n > 1 else 0.0
    half = Z * sd / math.sqrt(n)
    return mean, max(-1.0, mean - half), min(1.0, mean + half)


GROUPS = {  # table -> (id, title, [(column key, column title, predicate on a row)])
    "table2": [(f"{c}", c.title(), (lambda c: lambda r: r["category"] == c)(c)) for c in MISHAP_CATEGORIES]
    + [("overall", "Overall", lambda r: True)],
    "table8": [
        (
            f"{d}_{c}",
            f"{d.title()} {c[:4].title()}",
            (lambda d, c: lambda r: r["domain"] == d and r["category"] == c)(d, c),
        )
        for d in MISHAP_DOMAINS
        for c in MISHAP_CATEGORIES
    ]
    + [("overall", "Overall", lambda r: True)],
    "table12": [(s, ABBR[s], (lambda s: lambda r: r["strategy"] == s)(s)) for s in STRATEGIES],
}
TITLES = {
    "table2": "Table 2: hallucination rate (%) under mitigation, by category",
    "table8": "Table 8: hallucination rate (%) under mitigation, by domain and category",
    "table12": "Table 12: hallucination rate (%) under mitigation, by strategy",
}


def mitigation_tables(rows: list[dict]) -> list[Table]:
    """Tables 2, 8, 12 from judged answer rows (model, domain, category, strategy, verdict, question_id, seed):
    per base model, its plain-decoding (W/O) row, then each method's rate and change against W/O on the same
    (question, seed) with a 95% paired interval; the lowest rate of each column within a model is marked."""
    from halluscope.mitigation import model_and_method, model_order

    judged = [r for r in rows if r["verdict"] in ("grounded", "hallucinated")]
    models = sorted({r["model"] for r in judged}, key=model_order)
    by_base: dict[str, dict[str, str]] = defaultdict(dict)  # base -> method label -> model spec
    for m in models:
        base, method = model_and_method(m)
        by_base[base][method] = m
    out = []
    for key, groups in GROUPS.items():
        table_rows = []
        for base, methods in by_base.items():
            if "W/O" not in methods or len(methods) < 2:
                continue  # a mitigation table needs the plain-decoding baseline and at least one method
            block = []
            for method, spec in methods.items():
                row: dict = {"model": base, "method": method}
                for col, _, pred in groups:
                    mine = {
                        (r["question_id"], r["seed"]): int(r["verdict"] == "hallucinated")
                        for r in judged
                        if r["model"] == spec and pred(r)
                    }
                    rate = sum(mine.values()) / len(mine) if mine else None
                    row[f"{col}_rate"], row[f"{col}_n"] = rate, len(mine)
                    if method != "W/O" and mine:
                        base_of = {
                            (r["question_id"], r["seed"]): int(r["verdict"] == "hallucinated")
                            for r in judged
                            if r["model"] == methods["W/O"] and pred(r)
                        }
                        ch = paired_change([(base_of[k], v) for k, v in mine.items() if k in base_of])
                        row[f"{col}_change"] = ch
                    row[col] = "-" if rate is None else f"{100 * rate:.1f}"
                    if method != "W/O" and row.get(f"{col}_change"):
                        c, lo, hi = row[f"{col}_change"]
                        row[col] += f" ({100 * c:+.1f} [{100 * lo:+.1f}, {100 * hi:+.1f}])"
                block.append(row)
            for col, _, _ in groups:
                rates = [r[f"{col}_rate"] for r in block if r[f"{col}_rate"] is not None]
                for r in block:
                    if rates and r[f"{col}_rate"] == min(rates):
                        r[col] += BEST
            table_rows += block
        cols = [("model", "Model"), ("method", "Method")] + [(g[0], g[1]) for g in groups]
        out.append(
            Table(
                f"mishap_{key}",
                cols,
                table_rows,
                title=TITLES[key],
                notes=(
                    "W/O is plain decoding. A method's cell: its rate (%), then its change against W/O "
                    "in points on the same (question, seed) with a 95% paired Wald interval. "
                    f"'{BEST.strip()}' marks the lowest rate of the column within a model.",
                ),
                empty="no model with both plain decoding and a mitigation method in this run",
            )
        )
    return out
