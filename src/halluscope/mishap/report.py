"""Step 7: MISHAP tables (Table 1: model x domain x category; Table 11: model x strategy), stance rates and a
Figure-6-style stance plot, judge-human and human-human agreement, written to RUN/report/mishap/ and
embedded in the main HTML report as a section."""

from __future__ import annotations

import json
from pathlib import Path

from halluscope.core.fs import atomic_write
from halluscope.core.records import MISHAP_CATEGORIES, MISHAP_DOMAINS, MISHAP_STRATEGIES, STANCES
from halluscope.core.store import Store
from halluscope.metrics.agreement import human_human_agreement, judge_human_agreement
from halluscope.metrics.rates import hallucination_rates, stance_rates
from halluscope.mitigation import model_and_method, model_order
from halluscope.report.sections import Section
from halluscope.report.table import Figure, Table

STRATEGY_ABBR = {
    "contradicted_premise": "CP",
    "absent_premise": "AP",
    "false_negation": "FN",
    "niche_specifics": "NS",
    "unknowable_provenance": "UP",
    "false_authority": "FA",
    "false_premise": "FP",
}
STANCE_COLORS = {"abstains": "#3182ce", "asserts": "#dd6b20", "endorses_false_premise": "#c53030"}


def _cell(r: dict | None) -> str:
    if r is None or r["rate"] is None:
        return "-"
    return f"{100 * r['rate']:.1f} [{100 * r['ci_low']:.1f}, {100 * r['ci_high']:.1f}]"


def collect(run_dir: str | Path) -> dict:
    """Every number of the MISHAP report, from the store (no model call)."""
    from halluscope.core.provenance import labels_of
    from halluscope.core.runs import config_of
    from halluscope.current import stale_rows
    from halluscope.mishap.answers import answer_failures, load_answers
    from halluscope.mishap.clips import COMMANDS, kept_clips
    from halluscope.mishap.judge import judgeable, load_judgements
    from halluscope.mishap.labels import human_labels
    from halluscope.mishap.questions import load_questions, strategy_counts

    with Store(run_dir) as store:
        clips_m = store.latest_manifest(COMMANDS["clips"])
        clips = list(kept_clips(store).values()) if clips_m else []
        questions, answers, judgements = load_questions(store), load_answers(store), load_judgements(store)
        answer_failed = answer_failures(store)
        judge_m = store.latest_manifest(COMMANDS["judge"])
        # what the tables leave out: answers apart, verdicts on re-made texts or missing, stale labels
        stale = stale_rows(store, "answers", "verdicts", "labels")
    rows = []
    for aid, a in answers.items():
        j = judgements.get(aid)
        q = questions.get(a.question_id)
        if q is None or j is None:
            continue
        rows.append(
            {
                "model": a.model,
                "question_id": q.id,
                "seed": a.seed,
                "domain": q.domain,
                "category": q.category,
                "strategy": q.strategy,
                "verdict": j.verdict if j.status == "ok" else None,
                "stance": j.stance if j.status == "ok" else None,
            }
        )
    long = hallucination_rates(rows, by=("model", "domain", "category"))
    by_dom = hallucination_rates(rows, by=("model", "domain"))
    by_cat = hallucination_rates(rows, by=("model", "category"))
    overall = hallucination_rates(rows, by=("model",))
    by_strat = hallucination_rates(rows, by=("model", "category", "strategy"))
    models = sorted({r["model"] for r in rows}, key=model_order)
    baselines = {model_and_method(m)[0] for m in models if model_and_method(m)[1] == "W/O"}
    # a method whose model has a plain-decoding run goes to Tables 2, 8 and 12; Tables 1 and 11 keep the rest
    models = [m for m in models if model_and_method(m)[1] == "W/O" or model_and_method(m)[0] not in baselines]
    table1, table11 = [], []
    for m in models:
        base, method = model_and_method(m)
        row: dict = {"model": base, "method": method}
        for d in MISHAP_DOMAINS:
            for c in MISHAP_CATEGORIES:
                row[f"{d}_{c}"] = _cell(
                    next((r for r in long if (r["model"], r["domain"], r["category"]) == (m, d, c)), None)
                )
            row[f"{d}_all"] = _cell(next((r for r in by_dom if (r["model"], r["domain"]) == (m, d)), None))
        for c in MISHAP_CATEGORIES:
            row[f"{c}_all"] = _cell(next((r for r in by_cat if (r["model"], r["category"]) == (m, c)), None))
        row["overall"] = _cell(next((r for r in overall if r["model"] == m), None))
        table1.append(row)
        row11: dict = {"model": base, "method": method}
        for c in MISHAP_CATEGORIES:
            for s in MISHAP_STRATEGIES[c]:
                row11[s] = _cell(next((r for r in by_strat if (r["model"], r["strategy"]) == (m, s)), None))
        table11.append(row11)
    stance = [
        {**r, "model": model_and_method(r["model"])[0], "method": model_and_method(r["model"])[1]}
        for r in stance_rates(rows, by=("model", "domain", "category"))
    ]  # labels as in every table
    # seed 001, 4.2: agreement on MISHAP-Bench's own answers only (provenance 'mishap answer'); labels of imported
    # validity responses are the validity study's (core/provenance.py)
    human = labels_of(human_labels(run_dir), set(answers))
    scored = {aid: j.verdict for aid, j in judgements.items() if j.status == "ok" and j.verdict and aid in answers}
    examples = config_of(judge_m).example_answer_ids if judge_m else []  # the judge's in-context examples
    agreement = (judge_human_agreement(scored, human, exclude=examples) + human_human_agreement(human)) if human else []
    counts = {
        "clips": len(config_of(clips_m).kept) if clips_m else 0,
        "dropped_clips": len(config_of(clips_m).dropped) if clips_m else 0,
        "questions": len(questions),
        "answers": len(answers),
        "answer_failures": len(answer_failed),
        "skipped_audio": sum(a.status == "skipped" for a in answers.values()),
        "not_judgeable": sum(not judgeable(a) for a in answers.values()),
        "judged": sum(j.status == "ok" for j in judgements.values()),
        "unscored": sum(j.status == "unscored" for j in judgements.values()),
        "human_labels": len(human),
        "annotators": len({w for _, w in human}),
        "judge": config_of(judge_m).judge if judge_m else None,
        "example_answers": len(examples),
        "stale": len(stale),
        "not_judged": sum(judgeable(a) and aid not in judgements for aid, a in answers.items()),
        "example_pairs_left_out": next(
            (r["examples_left_out"] for r in agreement if r["pair"] == "judge vs humans (pooled)"), 0
        ),
    }
    questions_m = None
    with Store(run_dir) as store:
        questions_m = store.latest_manifest("mishap questions")
    counts["writer"] = config_of(questions_m).generator if questions_m else None  # QuestionsConfig
    counts["strategy_counts"] = strategy_counts(questions.values())
    return {
        "table1": table1,
        "table11": table11,
        "answer_rows": rows,
        "clip_records": clips,
        "question_records": list(questions.values()),
        "rates_strategy": by_strat,
        "rates_domain_category": long,
        "stance": stance,
        "agreement": agreement,
        "balance": config_of(clips_m).balance if clips_m else [],
        "counts": counts,
        "stale": stale,
    }


def _columns1() -> list[tuple[str, str]]:
    cols = [("model", "Model"), ("method", "Decoding")]
    for d in MISHAP_DOMAINS:
        cols += [
            (f"{d}_context", f"{d.title()} Ctx"),
            (f"{d}_knowledge", f"{d.title()} Know"),
            (f"{d}_all", f"{d.title()} All"),
        ]
    return cols + [("context_all", "Context"), ("knowledge_all", "Knowledge"), ("overall", "Overall")]


COLS11 = [("model", "Model"), ("method", "Decoding")] + [
    (s, STRATEGY_ABBR[s]) for c in MISHAP_CATEGORIES for s in MISHAP_STRATEGIES[c]
]
STANCE_COLS = [
    ("model", "Model"),
    ("method", "Decoding"),
    ("domain", "Domain"),
    ("category", "Category"),
    ("n", "n"),
    ("abstains", "Abstains"),
    ("asserts", "Asserts"),
    ("endorses_false_premise", "Endorses false premise"),
    ("unscored", "No stance"),
]
AGREE_COLS = [
    ("pair", "Pair"),
    ("n", "n"),
    ("n_agree", "agree"),
    ("agreement_rate", "AGR"),
    ("kappa", "Cohen's kappa"),
    ("examples_left_out", "examples left out"),
]
BALANCE_COLS = [
    ("domain", "Domain"),
    ("source", "Source"),
    ("clips", "Clips"),
    ("kept", "Kept"),
    ("share_kept", "Share kept"),
]


def stance_plot(stance: list[dict], category: str = "knowledge") -> bytes | None:
    """Figure 6 style: per domain, the share of responses that abstain, assert or endorse a false premise, per model."""
    from halluscope.report.plots import plt, png

    rows = [r for r in stance if r["category"] == category and r["n"]]
    if not rows:
        return None
    label = {
        (r["model"], r.get("method", "W/O")): r["model"]
        + ("" if r.get("method", "W/O") == "W/O" else f" ({r['method']})")
        for r in rows
    }
    models = sorted(set(label.values()))
    fig, axes = plt.subplots(
        1, len(MISHAP_DOMAINS), figsize=(4.2 * len(MISHAP_DOMAINS), 0.5 + 0.45 * len(models) + 1.2), sharey=True
    )
    for ax, d in zip(axes, MISHAP_DOMAINS):
        sub = {label[(r["model"], r.get("method", "W/O"))]: r for r in rows if r["domain"] == d}
        ys = list(range(len(models)))
        for k, s in enumerate(STANCES):
            vals = [100 * (sub[m][s] or 0) if m in sub else 0 for m in models]
            ax.barh(
                [y + (k - 1) * 0.27 for y in ys], vals, height=0.26, color=STANCE_COLORS[s], label=s.replace("_", " ")
            )
        ax.set_yticks(ys, models)
        ax.set_xlim(0, 100)
        ax.set_title(d)
        ax.set_xlabel(f"% of {category} responses")
    axes[-1].legend(loc="lower right", fontsize=7)
    return png(fig)


def _examples_note(c: dict) -> str:
    if not c["example_answers"]:
        return "The judge's in-context examples are not drawn from this run's answers: every labelled answer counts."
    return (
        f"{c['example_answers']} answers of this run were the judge's in-context examples: their "
        f"{c['example_pairs_left_out']} (answer, annotator) pair(s) are left out of judge-human agreement."
    )


TITLE = "MISHAP-Bench (seed 001)"


def mishap_section(data: dict) -> Section:
    """Counts, domain balance, Tables 1 and 11, stance (Figure 6 style) and agreement, as one report section."""
    from halluscope.mishap.tables import figures, mitigation_tables, table3

    c = data["counts"]
    return Section(
        TITLE,
        [
            f"{c['clips']} clips ({c['dropped_clips']} dropped by the informativeness filter), {c['questions']} questions, "
            f"{c['answers']} answers ({c['answer_failures']} failed calls, {c['skipped_audio']} skipped by the audio policy, "
            f"{c['not_judgeable']} without text), judged by {c['judge']}: {c['judged']} verdicts, {c['unscored']} unscored "
            "(left out of every rate). Rates are % hallucinated with 95% Wilson intervals."
            + (
                f" {c['stale']} stale result(s) are left out of every table ({c['not_judged']} answer(s) not "
                "judged): see Stale results for each and the command that refreshes it."
                if c.get("stale")
                else ""
            ),
            Table("mishap_balance", BALANCE_COLS, data["balance"], title="Domain balance"),
            Table(
                "mishap_table1",
                _columns1(),
                data["table1"],
                title="Table 1: hallucination rate (%) by domain and category",
            ),
            Table(
                "mishap_table11",
                COLS11,
                data["table11"],
                title="Table 11: hallucination rate (%) by strategy",
                notes=(
                    "CP contradicted premise, AP absent premise, FN false negation (context); NS niche specifics, "
                    "UP unknowable provenance, FA false authority, FP false premise (knowledge).",
                ),
            ),
            *mitigation_tables(data["answer_rows"]),
            table3(data["clip_records"]),
            *figures(data["clip_records"], data["question_records"]),
            Figure(stance_plot(data["stance"]), "stance by domain and model", file="mishap_stance.png"),
            Table("mishap_stance", STANCE_COLS, data["stance"], title="Stance (knowledge questions, Figure 6 style)"),
            Table(
                "mishap_agreement",
                AGREE_COLS,
                data["agreement"],
                title="Agreement (Cohen's kappa, agreement rate)",
                notes=(
                    "Population: the MISHAP-Bench answers people labelled (provenance 'mishap answer'), "
                    f"{c['human_labels']} (answer, annotator) labels; imported validity responses are the validity "
                    "study's. n: the pairs each row compares.",
                    _examples_note(c),
                ),
                empty="no human labels yet: run `halluscope mishap annotate`",
            ),
            Table("mishap_counts", [], [c], title="Counts", shown=False),
            Table(
                "mishap_rates_strategy",
                [],
                data["rates_strategy"],
                title="Rates by model x category x strategy",
                shown=False,
            ),
            Table(
                "mishap_rates_domain_category",
                [],
                data["rates_domain_category"],
                title="Rates by model x domain x category",
                shown=False,
            ),
        ],
    )


def write_mishap_report(run_dir: str | Path, extra: tuple = ()) -> Path:
    """RUN/report/mishap/ (mishap.md, mishap.html, a CSV and a LaTeX file per table, the figures, summary.json):
    the MISHAP section of the run's report on its own, then the ``extra`` sections; returns the HTML path."""
    from halluscope.report.page import write_folder
    from halluscope.report.stale import stale_table

    data = collect(run_dir)
    out = Path(run_dir) / "report" / "mishap"
    section = mishap_section(data)
    if data["stale"]:  # the run's report lists them in its own section; this folder stands alone
        section.blocks.insert(1, stale_table(data["stale"], "mishap_stale"))
    path = write_folder(
        out,
        [section, *extra],
        title="MISHAP-Bench",
        md_name="mishap.md",
        html_name="mishap.html",
        json_name=None,
        file_name=lambda n: n.removeprefix("mishap_"),
    )
    for t in (t for s in (section, *extra) for t in s.tables):  # LaTeX (booktabs) beside each shown table's CSV
        if t.shown:
            atomic_write(out / f"{t.id.removeprefix('mishap_')}.tex", t.latex())
    atomic_write(out / "summary.json", json.dumps(data["counts"], indent=2))
    return path
