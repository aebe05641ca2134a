"""Mitigation cards (issue 31, 5): does a mitigation really help? One card per 'mitigation sweep' (latest per model
and method; MISHAP-Bench 001, 3.4).

Per arm: answers, verdicts, unscored, the hallucination rate (hallucinated / scored) with an interval; for the
mitigated arms and plain greedy, against plain sampled decoding on the same (question, seed) pairs (greedy:
its one answer against every seed's): the rate change (mean of mitigated minus plain per pair scored in both,
a percentile bootstrap interval resampling questions with all their seeds), the agreement (share of pairs whose
answer text is identical after stripping), and the per-token cost measured in the run: stored call latency over
completion tokens, and its ratio to plain sampled. Answers served from the store cost nothing new and are timed
by their first call.
"""

from __future__ import annotations

from halluscope.analysis._common import mean_ci
from halluscope.analysis.sweep import COMMAND
from halluscope.core.records import GroundednessJudgement, MishapAnswer
from halluscope.core.runs import SweepConfig, latest_runs
from halluscope.core.store import Store
from halluscope.report.sections import Section, register_section
from halluscope.report.table import Figure, Table

BASELINE = "plain sampled"


def call_costs(store: Store, keys: set[str]) -> dict[str, tuple[float, int]]:
    """call key -> (latency s, completion tokens) of its first ok call with both known."""
    out: dict[str, tuple[float, int]] = {}
    for c in store.calls():
        if c["key"] not in keys or c["key"] in out or c["status"] != "ok" or c["latency_s"] is None:
            continue
        import json

        resp = json.loads(c["response"]) if isinstance(c["response"], str) else (c["response"] or {})
        resp = resp or {}
        tokens = resp.get("completion_tokens", (resp.get("usage") or {}).get("completion_tokens"))
        if tokens:
            out[c["key"]] = (float(c["latency_s"]), int(tokens))
    return out


def pair_key(a: MishapAnswer) -> tuple[str, int | None]:
    return a.question_id, a.seed


def card_rows(
    arms: list[dict],
    answers: dict[str, dict[str, MishapAnswer]],
    verdicts: dict[str, str | None],
    costs: dict[str, tuple[float, int]],
) -> list[dict]:
    """``arms``: the manifest's arms; ``answers``: arm -> answer id -> answer; ``verdicts``: answer id -> verdict
    (None: unscored; absent: not judged); ``costs``: call key -> (latency, tokens)."""

    def hal(a: MishapAnswer) -> float | None:
        v = verdicts.get(a.id)
        return None if v is None else float(v == "hallucinated")

    def ms_per_token(arm: str) -> float | None:
        cs = [costs[a.call_key] for a in answers[arm].values() if a.call_key in costs]
        tokens = sum(t for _, t in cs)
        return 1000 * sum(s for s, _ in cs) / tokens if tokens else None

    base = {pair_key(a): a for a in answers.get(BASELINE, {}).values()}
    base_cost = ms_per_token(BASELINE) if BASELINE in answers else None
    rows = []
    for arm in arms:
        name = arm["arm"]
        got = answers.get(name, {})
        judged = [a for a in got.values() if a.id in verdicts]
        scored = [h for a in judged if (h := hal(a)) is not None]
        qs = [a.question_id for a in judged if hal(a) is not None]
        row = {
            "arm": name,
            "strength": arm.get("strength"),
            "answers": len(got),
            "judged": len(judged),
            "unscored": len(judged) - len(scored),
            "rate": sum(scored) / len(scored) if scored else None,
            "rate_ci": mean_ci(scored, qs) if scored else None,
            "pairs": None,
            "rate_change": None,
            "rate_change_ci": None,
            "agreement": None,
            "ms_per_token": ms_per_token(name),
            "cost_ratio": None,
        }
        if name != BASELINE and base:
            if name == "plain greedy":
                pairs = [(a, b) for a in got.values() for b in base.values() if b.question_id == a.question_id]
            else:
                pairs = [(a, base[pair_key(a)]) for a in got.values() if pair_key(a) in base]
            diffs = [
                (ha - hb, a.question_id) for a, b in pairs if (ha := hal(a)) is not None and (hb := hal(b)) is not None
            ]
            row.update(
                pairs=len(pairs),
                agreement=(sum((a.text or "").strip() == (b.text or "").strip() for a, b in pairs) / len(pairs))
                if pairs
                else None,
            )
            if diffs:
                row.update(
                    rate_change=sum(d for d, _ in diffs) / len(diffs),
                    rate_change_ci=mean_ci([d for d, _ in diffs], [q for _, q in diffs]),
                )
        if row["ms_per_token"] is not None and base_cost:
            row["cost_ratio"] = row["ms_per_token"] / base_cost
        rows.append(row)
    return rows


def sweeps(store: Store) -> list[SweepConfig]:
    """The latest 'mitigation sweep' config per (model, method), in first-run order."""
    return [r.config for r in latest_runs(store, COMMAND)]


def card_data(store: Store, cfg: SweepConfig) -> list[dict]:
    answers = {a["arm"]: store.results("mishap.answers", a["answers"], MishapAnswer) for a in cfg.arms}
    verdicts: dict[str, str | None] = {}
    for fp in cfg.judge_stages:
        for k, g in store.results("mishap.judge", fp, GroundednessJudgement).items():
            verdicts[k] = g.verdict if g.status == "ok" else None
    keys = {a.call_key for arm in answers.values() for a in arm.values() if a.call_key}
    return card_rows(cfg.arms, answers, verdicts, call_costs(store, keys))


def card_plot(rows: list[dict], method: str) -> bytes | None:
    pts = [r for r in rows if r["strength"] is not None and r["rate_change"] is not None]
    if not pts:
        return None
    import matplotlib.pyplot as plt

    from halluscope.report.plots import png

    fig, (a1, a2) = plt.subplots(1, 2, figsize=(8.0, 3.0))
    xs, ys = [r["strength"] for r in pts], [r["rate_change"] for r in pts]
    err = [
        [y - r["rate_change_ci"][0] if r["rate_change_ci"] else 0 for y, r in zip(ys, pts)],
        [r["rate_change_ci"][1] - y if r["rate_change_ci"] else 0 for y, r in zip(ys, pts)],
    ]
    a1.errorbar(xs, ys, yerr=err, marker="o", capsize=3, color="#2b6cb0")
    a1.axhline(0, color="grey", linewidth=0.8)
    greedy = next((r for r in rows if r["arm"] == "plain greedy"), None)
    if greedy and greedy["rate_change"] is not None:
        a1.axhline(greedy["rate_change"], color="#dd6b20", linestyle="dashed", linewidth=1, label="plain greedy")
        a1.legend(fontsize=7)
    a1.set_xlabel(f"{method.upper()} strength (alpha)")
    a1.set_ylabel("hallucination rate - plain sampled")
    cost = [r for r in pts if r["cost_ratio"] is not None]
    a2.plot([r["strength"] for r in cost], [r["cost_ratio"] for r in cost], marker="s", color="#38a169")
    a2.axhline(1, color="grey", linewidth=0.8)
    a2.set_xlabel(f"{method.upper()} strength (alpha)")
    a2.set_ylabel("time per token / plain sampled")
    return png(fig)


COLS = [
    ("arm", "Decoding"),
    ("answers", "answers"),
    ("judged", "judged"),
    ("unscored", "unscored"),
    ("rate", "halluc. rate"),
    ("rate_ci", "rate 95% CI"),
    ("pairs", "pairs"),
    ("rate_change", "change vs sampled"),
    ("rate_change_ci", "change 95% CI"),
    ("agreement", "same text"),
    ("ms_per_token", "ms / token"),
    ("cost_ratio", "cost vs sampled"),
]


@register_section
def cards_section(store: Store) -> list[Section] | None:
    out = []
    for n, cfg in enumerate(sweeps(store)):
        rows = card_data(store, cfg)
        sid = f"mitigation_card_{cfg.method}" + (f"_{n}" if n else "")
        out.append(
            Section(
                f"Mitigation card: {cfg.method.upper()} on {cfg.model} (MISHAP-Bench, 001)",
                [
                    f"Strengths {', '.join(f'{s:g}' for s in cfg.strengths)} over seeds "
                    f"{', '.join(map(str, cfg.seeds))} at temperature {cfg.temperature:g}, judge "
                    f"{cfg.judge or '(none: rates need --judge)'}. Change: paired with plain sampled decoding on the "
                    "same question and seed, 95% CI resampling questions; same text: share of those pairs answered "
                    "identically; cost: stored latency per completion token. Answers - judged: empty or skipped answers, "
                    "which the MISHAP judge does not read.",
                    Table(sid, COLS, rows, title="Per strength against plain decoding"),
                    Figure(
                        card_plot(rows, cfg.method),
                        f"{cfg.method.upper()} rate change and cost by strength",
                        file=f"{sid}.png",
                    ),
                ],
            )
        )
    return out or None
