"""Judge reliability (issue 31, 4): can the judges be trusted, and are two judges really two?

- Krippendorff's alpha (the ``krippendorff`` package) over every rater of a dimension: the spoken judges'
  1-5 ratings per dimension and language (ordinal; seed 000, 3.4 and App. A.2) and the MISHAP groundedness
  verdicts of every judge and every human annotator (nominal; seed 001, 3.3 and App. B.5). An unscored reply
  is a missing rating. Alpha is given over judges and humans and over the judges alone.
- Pairwise judge error correlation: where humans labelled an answer (their strict majority is the reference),
  each judge's error indicator (wrong verdict, or unscored: an unparsable vote is never right) is correlated
  between judges over the answers both were asked (Pearson's r of 0/1 errors, the phi coefficient).
- The panel verdict: the label more than half of all k judges gave; an unscored vote counts against every label,
  so a panel with no strict majority of k is itself unscored. Shown beside each single judge.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from itertools import combinations

import numpy as np

from halluscope.core.records import LANGUAGES, GroundednessJudgement, Judgement
from halluscope.core.runs import Run, runs
from halluscope.core.store import Store
from halluscope.report.sections import Section, register_section
from halluscope.report.table import Figure, Table

VERDICTS = ("grounded", "hallucinated")


def alpha(ratings: Mapping[str, Mapping[str, object]], *, level: str, domain: Sequence[object]) -> float | None:
    """Krippendorff's alpha of rater -> item -> value (a missing item is a missing rating); None when it is
    undefined (fewer than two pairable ratings, or a single value in the data)."""
    import krippendorff

    raters = sorted(ratings)
    items = sorted({i for r in raters for i in ratings[r]})
    if len(raters) < 2 or not items:
        return None
    code = {v: float(k) for k, v in enumerate(domain)}
    data = np.array([[code[ratings[r][i]] if i in ratings[r] else np.nan for i in items] for r in raters])
    pairable = (np.sum(~np.isnan(data), axis=0) >= 2).sum()
    if pairable == 0 or len(np.unique(data[~np.isnan(data)])) < 2:
        return None
    with np.errstate(divide="ignore", invalid="ignore"):  # no expected disagreement among pairable values: nan
        value = krippendorff.alpha(reliability_data=data, level_of_measurement=level, value_domain=list(code.values()))
    return float(value) if np.isfinite(value) else None


def effective_judges(k: int, mean_r: float | None) -> float | None:
    """Effective number of independent judges, n_eff = k / (1 + (k - 1) * mean_r), clipped to [1, k].

    ``mean_r`` is the mean pairwise correlation of the judges' errors. This is the variance-equivalent count of k
    equicorrelated measurements: the mean of k errors with common correlation r has the variance of the mean of
    n_eff independent ones (Kish, *Survey Sampling*, 1965, the design effect 1 + (m - 1) rho; the same expression
    is the Spearman-Brown reliability of k raters). Uncorrelated errors give k; identical errors give 1."""
    if k < 1 or mean_r is None:
        return None
    return float(min(k, max(1.0, k / (1 + (k - 1) * mean_r))))


def majority(votes: Sequence[str | None], k: int) -> str | None:
    """The label given by more than k/2 of k judges (a missing or unscored vote counts against every label)."""
    c = Counter(v for v in votes if v is not None)
    for label, n in c.items():
        if n * 2 > k:
            return label
    return None


def human_reference(human: Mapping[tuple[str, str], str]) -> dict[str, str]:
    """answer id -> the humans' strict-majority label (ties left out)."""
    by: dict[str, list[str]] = {}
    for (aid, _who), label in human.items():
        by.setdefault(aid, []).append(label)
    return {a: lab for a, ls in by.items() if (lab := majority(ls, len(ls))) is not None}


def error_correlation(votes: Mapping[str, Mapping[str, str | None]], reference: Mapping[str, str]) -> list[dict]:
    """Per judge pair: Pearson's r of their 0/1 errors against ``reference`` over answers both were asked."""
    rows = []
    for a, b in combinations(sorted(votes), 2):
        both = sorted(i for i in reference if i in votes[a] and i in votes[b])
        ea = np.array([votes[a][i] != reference[i] for i in both], float)
        eb = np.array([votes[b][i] != reference[i] for i in both], float)
        r = float(np.corrcoef(ea, eb)[0, 1]) if len(both) > 1 and ea.std() > 0 and eb.std() > 0 else None
        rows.append(
            {
                "judge_a": a,
                "judge_b": b,
                "n": len(both),
                "errors_a": int(ea.sum()),
                "errors_b": int(eb.sum()),
                "both_wrong": int((ea * eb).sum()),
                "error_r": r,
            }
        )
    return rows


def panel_rows(
    votes: Mapping[str, Mapping[str, str | None]], reference: Mapping[str, str], *, positive: str = "hallucinated"
) -> list[dict]:
    """Each judge and the majority panel: answers, unscored, rate of ``positive`` among the scored, and
    accuracy against the human reference (unscored = wrong)."""
    judges = sorted(votes)
    items = sorted({i for j in judges for i in votes[j]})
    k = len(judges)
    panel = {i: majority([votes[j].get(i) for j in judges], k) for i in items}

    def row(name: str, v: Mapping[str, str | None]) -> dict:
        got = [v[i] for i in items if i in v]
        ok = [x for x in got if x is not None]
        ref = [i for i in reference if i in v]
        return {
            "judge": name,
            "answers": len(got),
            "unscored": len(got) - len(ok),
            "rate": sum(x == positive for x in ok) / len(ok) if ok else None,
            "n_reference": len(ref),
            "accuracy": sum(v[i] == reference[i] for i in ref) / len(ref) if ref else None,
        }

    return [*(row(j, votes[j]) for j in judges), *([row(f"panel (majority of {k})", panel)] if k > 1 else [])]


def spoken_panel_rows(judges: Mapping[str, Mapping[str, Judgement]], dims: Sequence[str]) -> list[dict]:
    """Per dimension, each spoken judge and the panel (the rating more than half of all k judges gave; an unscored
    reply counts against it) on the items any judge rated: items, unscored, mean rating (descriptive only)."""
    names, rows = sorted(judges), []
    items = sorted({i for js in judges.values() for i in js})
    for d in dims:
        votes = {n: {i: (j.scores.get(d) if j.status == "ok" else None) for i, j in judges[n].items()} for n in names}
        applies = [i for i in items if any(votes[n].get(i) is not None for n in names)]
        panel = {i: majority([votes[n].get(i) for n in names], len(names)) for i in applies}
        for name, v in [*((n, votes[n]) for n in names), (f"panel (majority of {len(names)})", panel)]:
            ok = [x for i in applies if (x := v.get(i)) is not None]
            rows.append(
                {
                    "dimension": d,
                    "judge": name,
                    "items": len(applies),
                    "unscored": len(applies) - len(ok),
                    "mean": sum(ok) / len(ok) if ok else None,
                }
            )
    return rows


# -- reading the store ------------------------------------------------------------------------------------------


def spoken_judgements(store: Store, build: object | None) -> dict[str, dict[str, Judgement]]:
    """judge -> item -> Judgement, the latest 'build judge' stage of each judge (a per-language judge's items from
    their languages' models)."""
    from halluscope.spoken.judge.run import stored_judgements

    lang_of = {i: v.language for i, v in build.samples.items()} if build is not None else {}  # type: ignore[attr-defined]
    return stored_judgements(store, lang_of)


def mishap_votes(store: Store) -> dict[str, dict[str, str | None]]:
    """judge spec -> answer id -> verdict (None: unscored), the latest 'mishap judge' run of each judge, on the answer
    texts in the tables only: a verdict on a text since re-made, or on an answer no table holds, is stale and left
    out (core/provenance.py's rule; a verdict stored before digests is upgraded by the answers stage its run read),
    and a judge with no verdict left is no rater."""
    from halluscope.core.errors import HalluscopeError
    from halluscope.core.keys import StageName
    from halluscope.core.provenance import answer_populations, differs, text_digest
    from halluscope.mishap.answers import load_answers

    try:
        answers = load_answers(store)
    except HalluscopeError:  # a validity-only run has no questions, so no answers
        answers = {}
    sets = answer_populations(store).current
    latest: dict[str, Run] = {}
    for r in runs(store, "mishap judge"):  # MishapJudgeConfig; a later run of a judge replaces an earlier one
        if "judge" in r.stages:
            latest[r.config.judge] = r

    def current(k: str, g: GroundednessJudgement, read: dict[str, str]) -> bool:
        a = answers.get(k)
        if a is None:
            return False
        if g.answer_sha256 is not None:
            return differs({"answer": g.answer_sha256}, {"answer": text_digest(a.text)}) is None
        return read.get(str(StageName("answers", subject=a.model))) == sets.get(a.model)

    out: dict[str, dict[str, str | None]] = {}
    for j, r in sorted(latest.items()):
        stages = r.stages
        votes: dict[str, str | None] = {
            k: (g.verdict if g.status == "ok" else None)
            for k, g in store.results("mishap.judge", stages["judge"], GroundednessJudgement).items()
            if current(k, g, stages)
        }
        if votes:  # a judge none of whose verdicts is current rates nothing shown
            out[j] = votes
    return out


def mishap_humans(store: Store) -> dict[tuple[str, str], str]:
    """(response, annotator) -> the latest label on the response text shown now (halluscope/current.py)."""
    from halluscope.current import select

    labels: dict = select(store, "labels")["labels"].current  # keyed by (response id, annotator)
    return {k: a.label for k, a in labels.items()}


def alpha_rows(store: Store, build: object | None) -> list[dict]:
    from halluscope.prompts.protocol import DIMENSION_ORDER

    rows = []
    judges = spoken_judgements(store, build)
    if judges and build is not None:
        lang_of = {i: v.language for i, v in build.samples.items()}  # type: ignore[attr-defined]
        dims = [d for d in DIMENSION_ORDER if any(d in j.scores for js in judges.values() for j in js.values())]
        for d in dims:
            for lang in [*LANGUAGES, "all"]:
                ratings = {
                    name: {
                        i: j.scores[d]
                        for i, j in js.items()
                        if j.status == "ok" and d in j.scores and (lang == "all" or lang_of.get(i) == lang)
                    }
                    for name, js in judges.items()
                }
                items = {i for r in ratings.values() for i in r}
                if not items:
                    continue
                unscored = sum(
                    j.status != "ok"
                    for js in judges.values()
                    for i, j in js.items()
                    if lang == "all" or lang_of.get(i) == lang
                )
                a = alpha(ratings, level="ordinal", domain=range(1, 6))
                rows.append(
                    {
                        "benchmark": "Lost in Speech",
                        "dimension": d,
                        "slice": lang,
                        "judges": len(ratings),
                        "humans": 0,
                        "items": len(items),
                        "unscored": unscored,
                        "alpha": a,
                        "alpha_judges": a,
                        "level": "ordinal",
                    }
                )
    votes, human = mishap_votes(store), mishap_humans(store)
    if votes or human:
        ratings: dict[str, dict[str, str]] = {
            j: {i: v for i, v in vs.items() if v is not None} for j, vs in votes.items()
        }
        humans: dict[str, dict[str, str]] = {}
        for (aid, who), label in human.items():
            humans.setdefault(f"human:{who}", {})[aid] = label
        everyone = {**ratings, **humans}
        rows.append(
            {
                "benchmark": "MISHAP-Bench",
                "dimension": "groundedness",
                "slice": "all",
                "judges": len(ratings),
                "humans": len(humans),
                "items": len({i for r in everyone.values() for i in r}),
                "unscored": sum(v is None for vs in votes.values() for v in vs.values()),
                "alpha": alpha(everyone, level="nominal", domain=VERDICTS),
                "alpha_judges": alpha(ratings, level="nominal", domain=VERDICTS),
                "level": "nominal",
            }
        )
    return rows


def alpha_plot(rows: list[dict]) -> bytes | None:
    pts = [r for r in rows if r["alpha"] is not None and r["slice"] in ("all", *LANGUAGES)]
    if not pts:
        return None
    import matplotlib.pyplot as plt

    from halluscope.report.plots import png

    labels = [f"{r['dimension']} {r['slice']}" for r in pts]
    fig, ax = plt.subplots(figsize=(max(4.0, 0.35 * len(pts) + 1.5), 3.2))
    xs = np.arange(len(pts))
    ax.bar(xs - 0.18, [r["alpha"] for r in pts], width=0.34, label="judges + humans", color="#2b6cb0")
    ax.bar(
        xs + 0.18,
        [r["alpha_judges"] if r["alpha_judges"] is not None else 0 for r in pts],
        width=0.34,
        label="judges only",
        color="#dd6b20",
    )
    ax.axhline(0.667, color="grey", linestyle="dashed", linewidth=0.8)
    ax.set_xticks(xs, labels, rotation=60, ha="right", fontsize=7)
    ax.set_ylabel("Krippendorff's alpha")
    ax.legend(fontsize=7)
    return png(fig)


ALPHA_COLS = [
    ("benchmark", "Benchmark"),
    ("dimension", "Dim"),
    ("slice", "Lang"),
    ("judges", "judges"),
    ("humans", "humans"),
    ("items", "items"),
    ("unscored", "unscored"),
    ("alpha", "α (all raters)"),
    ("alpha_judges", "α (judges)"),
    ("level", "level"),
]
CORR_COLS = [
    ("judge_a", "Judge A"),
    ("judge_b", "Judge B"),
    ("n", "n"),
    ("errors_a", "A wrong"),
    ("errors_b", "B wrong"),
    ("both_wrong", "both wrong"),
    ("error_r", "error r"),
]
SPOKEN_PANEL_COLS = [
    ("dimension", "Dim"),
    ("judge", "Judge"),
    ("items", "items"),
    ("unscored", "unscored / no majority"),
    ("mean", "mean rating"),
]
PANEL_COLS = [
    ("judge", "Judge"),
    ("answers", "answers"),
    ("unscored", "unscored"),
    ("rate", "halluc. rate"),
    ("n_reference", "n human ref"),
    ("accuracy", "agreement with humans"),
]


@register_section
def reliability_section(store: Store) -> Section | None:
    from halluscope.spoken.build import load_build_or_none

    build = load_build_or_none(store)
    rows = [r for r in alpha_rows(store, build) if r["judges"] + r["humans"] >= 2]  # one rater: nothing to agree
    if not rows:
        return None
    votes, human = mishap_votes(store), mishap_humans(store)
    ref = human_reference(human)
    corr = error_correlation(votes, ref) if ref else []
    rs = [r["error_r"] for r in corr if r["error_r"] is not None]
    n_eff = effective_judges(len(votes), float(np.mean(rs)) if rs else (0.0 if corr else None))
    blocks: list = [
        "Krippendorff's alpha over every rater (unscored replies are missing ratings); alpha >= 0.667 is the usual "
        "floor for tentative conclusions (dashed line).",
        Table("judge_alpha", ALPHA_COLS, rows, title="Krippendorff's alpha per dimension and language"),
        Figure(alpha_plot(rows), "Krippendorff's alpha", file="judge_alpha.png"),
    ]
    spoken = spoken_judgements(store, build)
    if len(spoken) > 1:
        from halluscope.prompts.protocol import DIMENSION_ORDER

        dims = [d for d in DIMENSION_ORDER if any(d in j.scores for js in spoken.values() for j in js.values())]
        blocks.append(
            Table(
                "judge_panel_spoken",
                SPOKEN_PANEL_COLS,
                spoken_panel_rows(spoken, dims),
                title="Panel rating beside each judge (spoken, 000)",
                notes=(
                    "No human ratings of these dimensions exist here, so no error correlation; the "
                    "panel's rating is the one more than half of all judges gave.",
                ),
            )
        )
    if votes:
        blocks += [
            Table(
                "judge_error_correlation",
                CORR_COLS,
                corr,
                title="Pairwise judge error correlation (MISHAP)",
                empty="no human labels to define errors against: label answers in 'halluscope mishap annotate'",
                notes=(
                    f"Errors against the humans' strict-majority label (unscored = wrong). Effective number of "
                    f"independent judges k / (1 + (k - 1) mean r) (Kish 1965): "
                    f"{'-' if n_eff is None else f'{n_eff:.2f}'} of {len(votes)}.",
                ),
            ),
            Table(
                "judge_panel",
                PANEL_COLS,
                panel_rows(votes, ref),
                title="Panel verdict beside each judge (MISHAP)",
                notes=("Panel: the verdict more than half of all judges gave; unscored votes count against it.",),
            ),
        ]
    return Section("Judge reliability (Lost in Speech 000, MISHAP-Bench 001)", blocks)
