"""Report section: how an LLM generator fared on the App. A.1 protocol (seed 000), from the run's RewriteLogs.

Attempts by status (accepted, rejected, truncated, unparsable, refusal, error) with counts and a few example
reasons each, and items accepted or failed: a small real model's protocol failures show here exactly.
"""

from __future__ import annotations

from collections import Counter, defaultdict

from halluscope.core.store import Store
from halluscope.report.sections import Section, register_section
from halluscope.report.table import Table
from halluscope.spoken.build import load_build_or_none

STATUSES = ("accepted", "rejected", "truncated", "unparsable", "refusal", "error")
EXAMPLES = 3
COLUMNS = [
    ("generator", "generator"),
    ("status", "attempt status"),
    ("attempts", "attempts"),
    ("share", "share"),
    ("examples", "example reasons"),
]


@register_section
def generation_section(store: Store) -> Section | None:
    from halluscope.core.records import RewriteLog
    from halluscope.spoken.generate.llm import LOG_STAGE

    build = load_build_or_none(store)
    fp = build.stages.get("generate") if build is not None else None
    logs = store.results(LOG_STAGE, fp, RewriteLog) if fp else {}
    if not logs:
        return None
    counts: dict[str, Counter] = defaultdict(Counter)
    examples: dict[tuple[str, str], list[str]] = defaultdict(list)
    items: dict[str, Counter] = defaultdict(Counter)
    for item_id, log in sorted(logs.items()):
        items[log.generator]["accepted" if log.accepted else "failed"] += 1
        for a in log.attempts:
            counts[log.generator][a.status] += 1
            if a.reason and len(examples[(log.generator, a.status)]) < EXAMPLES:
                examples[(log.generator, a.status)].append(f"{item_id}: {a.reason[:160]}")
    rows = []
    for gen, c in sorted(counts.items()):
        total = sum(c.values())
        rows += [
            {
                "generator": gen,
                "status": s,
                "attempts": c[s],
                "share": round(c[s] / total, 3),
                "examples": " | ".join(examples[(gen, s)]),
            }
            for s in STATUSES
            if c[s]
        ]
    summary = "; ".join(
        f"{g}: {n['accepted']} item(s) accepted, {n['failed']} failed after every attempt"
        for g, n in sorted(items.items())
    )
    return Section(
        "LLM generation protocol (Lost in Speech App. A.1)",
        [f"{summary}.", Table("generation_attempts", COLUMNS, rows, title="Attempts by status")],
    )
