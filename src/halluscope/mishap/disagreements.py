"""The judge-human disagreements that drive a rubric or judge-prompt revision (seed 001, 3.3 and E.3): every
annotated answer whose human label differs from the judge's verdict, per category, with the question, response,
audio description (the evidence), the rubric the judge used, the judge's raw reply and each annotator's label.
'mishap disagreements RUN' prints the counts and writes the rows; the annotation app shows them (disagree_view)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from halluscope.core.store import Store

COLUMNS = [
    ("category", "Category"),
    ("strategy", "Strategy"),
    ("answer_id", "Answer"),
    ("judge", "Judge"),
    ("humans", "Humans"),
    ("question", "Question"),
    ("response", "Response"),
    ("rubric", "Rubric"),
    ("description", "Audio description"),
    ("judge_reply", "Judge reply"),
]


def _compared(run_dir: str | Path, judge_run: str | None) -> tuple[dict, dict[str, dict[str, str]], dict]:
    """(verdicts, answer id -> annotator -> label, answer id -> item) over one population: MISHAP-Bench's own answers
    (core/provenance.py; imported validity responses are the validity study's) that the judge scored and people
    labelled, on the texts the run holds now. The rows and their denominator both count this population."""
    from halluscope.core.provenance import ANSWERS
    from halluscope.current import population
    from halluscope.mishap.judge import load_judgements
    from halluscope.mishap.labels import annotation_items, human_labels
    from halluscope.mishap.rules import judge_runs

    items, _ = annotation_items(run_dir)
    by_id = {it["id"]: it for it in items}
    with Store(run_dir) as store:
        verdicts = judge_runs(store).get(judge_run, {}) if judge_run else load_judgements(store)
        own = population(store, ANSWERS)
    labels: dict[str, dict[str, str]] = {}
    for (answer_id, annotator), label in human_labels(run_dir).items():
        j = verdicts.get(answer_id)
        if answer_id in own and answer_id in by_id and j is not None and j.status == "ok":
            labels.setdefault(answer_id, {})[annotator] = label
    return verdicts, labels, by_id


def disagreements(run_dir: str | Path, *, judge_run: str | None = None) -> list[dict]:
    """One row per annotated answer where the judge's verdict differs from a human label (a majority label when
    annotators differ is not required: any annotator who disagrees counts), sorted by category and answer.
    ``judge_run``: the judge spec whose latest run is read (default: the run's latest judge)."""
    verdicts, labels, by_id = _compared(run_dir, judge_run)
    rows = []
    for answer_id, humans in sorted(labels.items()):
        j, it = verdicts[answer_id], by_id[answer_id]
        if all(v == j.verdict for v in humans.values()):
            continue
        rows.append(
            {
                "category": it["category"],
                "strategy": it["strategy"],
                "answer_id": answer_id,
                "judge": j.verdict,
                "judge_stance": j.stance,
                "humans": ", ".join(f"{a}: {v}" for a, v in sorted(humans.items())),
                "question": it["question"],
                "response": it["response"],
                "rubric": it["rubric"],
                "description": it["description"],
                "judge_reply": (j.raw_text or "")[:2000],
            }
        )
    return sorted(rows, key=lambda r: (r["category"], r["answer_id"]))


def summary(rows: list[dict], run_dir: str | Path, *, judge_run: str | None = None) -> list[dict]:
    """Per category: the labels compared (MISHAP-Bench answers the judge scored and people labelled: the population
    the rows come from), disagreements, and how many went each way."""
    _, labels, by_id = _compared(run_dir, judge_run)
    annotated = Counter(by_id[a]["category"] for a, humans in labels.items() for _ in humans)
    out = []
    for c in ("context", "knowledge"):
        mine = [r for r in rows if r["category"] == c]
        out.append(
            {
                "category": c,
                "annotated_labels": annotated.get(c, 0),
                "disagreements": len(mine),
                "judge_hallucinated": sum(r["judge"] == "hallucinated" for r in mine),
                "judge_grounded": sum(r["judge"] == "grounded" for r in mine),
            }
        )
    return out


def section(run_dir: str | Path, judge_run: str | None = None):
    from halluscope.report.sections import Section
    from halluscope.report.table import Table

    rows = disagreements(run_dir, judge_run=judge_run)
    return Section(
        "Judge-human disagreements (MISHAP-Bench, section 3.3)",
        [
            "Each annotated answer whose judge verdict differs from an annotator's label, with the rubric and the "
            "evidence: the material for a revised rubric formulation ('mishap rubrics --formulation') or judge prompt.",
            Table(
                "disagreement_counts",
                [
                    ("category", "Category"),
                    ("annotated_labels", "Labels"),
                    ("disagreements", "Disagreements"),
                    ("judge_hallucinated", "Judge: hallucinated"),
                    ("judge_grounded", "Judge: grounded"),
                ],
                summary(rows, run_dir, judge_run=judge_run),
                title="Per category",
            ),
            Table("disagreements", COLUMNS, rows, title="Disagreements", empty="no judge-human disagreement"),
        ],
    )


def write(run_dir: str | Path, judge_run: str | None = None) -> Path:
    """RUN/report/mishap/disagreements.{md,html,csv}; returns the HTML path."""
    from halluscope.report.page import write_folder

    return write_folder(
        Path(run_dir) / "report" / "mishap",
        [section(run_dir, judge_run)],
        title="MISHAP-Bench: judge-human disagreements",
        md_name="disagreements.md",
        html_name="disagreements.html",
        json_name=None,
    )
