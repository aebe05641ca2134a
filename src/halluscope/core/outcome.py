"""When a command's work counts as failed: the one rule every command applies to what its steps did.

A step asked for items that produced none of them, or failed on more than ``MAX_FAILED_SHARE`` of them, fails the
command: it exits 2 with one line naming the step, the counts, the first reason and the fix. What succeeded is
kept wherever the step keeps results (a run's store: a rerun resumes and retries only the failed items).
``--allow-partial`` accepts a step that failed on more than the share (the command goes on and says how many
failed); a step that produced nothing still fails, since there is nothing to keep.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from halluscope.core.errors import HalluscopeError

MAX_FAILED_SHARE = 0.1  # a step failing on more than this share of its items fails the command
ALLOW_PARTIAL_HELP = (
    "Keep a partial result: a step that failed on more than "
    f"{MAX_FAILED_SHARE:.0%} of its items no longer fails the command (one that produced nothing still does)."
)


class PartialFailure(HalluscopeError):
    """A step produced nothing, or failed on more than the allowed share of its items (exit 2, one line)."""


@dataclass(frozen=True)
class StepOutcome:
    """What one step did: ``asked`` items, ``produced`` results, ``failed`` item -> reason, and the fix to print."""

    step: str
    asked: int
    produced: int
    failed: Mapping[str, str] = field(default_factory=dict)
    fix: str = ""

    @classmethod
    def of(cls, summary: Any, *, step: str | None = None, fix: str = "") -> StepOutcome:
        """From a stage's StageSummary or a model-calling stage's CallSummary (results and failed by item id)."""
        results, failed = summary.results, dict(summary.failed)
        name = step or getattr(summary.stage, "name", None) or str(summary.stage)
        return cls(name, len(set(results) | set(failed)), len(results), failed, fix)

    @property
    def share_failed(self) -> float:
        return len(self.failed) / self.asked if self.asked else 0.0

    def first_reason(self) -> str:
        if not self.failed:
            return ""
        item, reason = next(iter(sorted(self.failed.items())))
        return f"first: '{item}': {reason[:300]}"


def check_outcomes(
    outcomes: Iterable[StepOutcome],
    *,
    command: str,
    allow_partial: bool = False,
    max_failed: float = MAX_FAILED_SHARE,
    kept: str = "",
) -> list[str]:
    """Raise PartialFailure for the first step that produced nothing, or (unless ``allow_partial``) failed on more
    than ``max_failed`` of its items; return a note per step that failed on some items (shown, not fatal).

    ``kept``: where what succeeded stays (e.g. 'in RUN's store; a rerun retries only the failed items').
    """
    notes: list[str] = []
    for o in outcomes:
        if not o.failed and (o.produced or not o.asked):
            continue
        counts = f"{o.produced} of {o.asked} items done, {len(o.failed)} failed"
        reason = f" ({o.first_reason()})" if o.failed else ""
        fix = f" Fix: {o.fix.rstrip('.')}" if o.fix else " Fix: see the reasons above"
        where = f"; what succeeded is kept {kept}" if kept else ""
        if o.asked and not o.produced:
            raise PartialFailure(f"{command}: step '{o.step}' produced nothing: {counts}{reason}.{fix}{where}")
        if o.share_failed > max_failed and not allow_partial:
            raise PartialFailure(
                f"{command}: step '{o.step}' failed on {o.share_failed:.0%} of its items (more than "
                f"{max_failed:.0%}): {counts}{reason}.{fix}{where}; or pass --allow-partial to keep a partial result"
            )
        notes.append(f"step '{o.step}': {counts}{reason}")
    return notes
