"""Report section: the audio-reliance check (halluscope.canary) of every model a run asked, with its warning."""

from __future__ import annotations

from halluscope.canary.core import ALPHA, CHANGE_FLOOR, stored_results
from halluscope.core.store import Store
from halluscope.report.sections import Section, register_section
from halluscope.report.table import Table

TITLE = "Does the model hear? Audio-reliance check"
COLUMNS = [
    ("model", "model"),
    ("source", "asked by"),
    ("ablation", "ablation"),
    ("n", "n"),
    ("unchanged", "unchanged"),
    ("unchanged_ci", "95% CI"),
    ("p_changed", "binomial p"),
    ("acc_real", "Acc real"),
    ("acc_ablated", "Acc ablated"),
    ("mcnemar_p", "McNemar p"),
    ("kl_mean", "KL first token"),
    ("js_mean", "JS first token"),
    ("verdict", "verdict"),
]
NOTE = (
    f"A seeded sample of the run's items asked again with silence of the clip's length, Gaussian noise at the "
    f"clip's RMS, and another sampled item's clip cut or looped to the same length. unchanged = share of items "
    f"whose answer (the parsed answer, else the reply lower-cased with whitespace collapsed) equals the real-audio "
    f"answer (Wilson 95% CI). binomial p: one-sided exact binomial test of the changed count against "
    f"H0 'an ablation changes at most {CHANGE_FLOOR:.0%} of answers' (the audio barely matters); it needs no gold "
    f"label, so it applies to free-form answers too. Where gold labels exist (zero-shot detection, Lost in "
    f"Speech (000)), the exact McNemar test compares correctness with real vs ablated audio on the same items: "
    f"it asks whether the audio makes the model right, not merely different. A model is FLAGGED when every "
    f"ablation leaves at least {1 - CHANGE_FLOOR:.0%} of answers unchanged (significance level {ALPHA}). KL/JS: "
    f"hf-audio models only, the next-token distributions with vs without the audio at the first answer token "
    f"(the AAD branch pair), in nats. A cascade's reliance is its ASR's: silence gives an empty transcript. "
    f"Unchanged answers can also mean the task is answerable without listening."
)


def canary_rows(store: Store) -> tuple[list[dict], list[str]]:
    rows, warnings = [], []
    for r in stored_results(store):
        div = r.divergence or {}
        for row in r.rows:
            rows.append({**row, "kl_mean": div.get("kl_mean"), "js_mean": div.get("js_mean"), "verdict": r.verdict})
        if r.flagged:
            warnings.append(
                f"WARNING: {r.model} ({r.source}): answers barely change with silence, noise or another "
                "item's clip: its audio is probably not reaching it, or the task is answerable without "
                "listening."
            )
    return rows, warnings


@register_section
def canary_section(store: Store) -> Section | None:
    rows, warnings = canary_rows(store)
    if not rows:
        return None
    return Section(
        TITLE, [*warnings, Table("canary_audio_reliance", COLUMNS, rows, title="Audio-reliance check", notes=(NOTE,))]
    )
