"""What scoring returns: the per-item decision in both modes (ScoredItem) and the whole result (ScoreResult)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Literal

from halluscope.closedform.extract import (
    ABSTENTIONS,
    NON_ANSWERS,
)
from halluscope.closedform.records import Loaded
from halluscope.core.errors import InputError
from halluscope.reply.subject import asked_subject  # noqa: F401 - re-exported (tests, callers)
from halluscope.reply.yesno import reader_summary

Mode = Literal["strict", "compat"]
MODES: tuple[Mode, ...] = ("strict", "compat")


@dataclass(frozen=True)
class ScoredItem:
    """One item as both modes read it. ``compat_scored`` is False where the official scorer skips the item."""

    id: str
    group: str
    subset: str
    kind: str
    reference: str
    reply: str
    strict: str
    strict_correct: bool
    strict_reason: str
    hedged: bool
    via: str
    compat: str
    compat_correct: bool
    compat_rule: str
    misfire: str | None
    run: str = ""
    compat_scored: bool = True
    read_differently: bool = False  # same correctness, but the modes read a different answer (it moves a figure)

    @property
    def differs(self) -> bool:
        return self.compat_scored and (self.strict_correct != self.compat_correct or self.read_differently)

    @property
    def category(self) -> str:
        """Why the modes disagree, in a few stable words (used for the counts in the diff table)."""
        m = self.misfire or ""
        if self.kind == "asr":
            return "ASR: text normalisation / CER for Chinese vs raw WER"
        if self.kind == "unanswerable":
            return "invalid audio: official keyword list vs abstention or stated absence"
        if self.strict in ABSTENTIONS and self.compat not in ("none", "", "refusal"):
            return "abstention read as an answer by the official rules"
        if self.kind == "choice" and "both" in m:
            return "comparison names both clips: the official rule never credits it"
        if self.strict == "ambiguous" or "both" in m:
            return "reply asserts both answers"
        if "inside" in m:
            return "substring inside another word"
        if self.strict == "unrelated" and self.compat not in ("none", ""):
            return "no answer in the reply, but an official rule fires"
        if (
            self.strict in NON_ANSWERS
            and self.compat in ("none", "")
            and not (self.strict_correct or self.compat_correct)
        ):
            return "no answer in either mode; the official rules count it as a 'no' answer (precision denominator)"
        if self.compat in ("none", "") or "unparsed" in m:
            return "phrasing the official rules miss (negation, other language, number word)"
        return "different answer read (negation, order, first number)"

    def as_row(self) -> dict:
        return {
            "id": self.id,
            "run": self.run,
            "group": self.group,
            "subset": self.subset,
            "kind": self.kind,
            "reference": self.reference,
            "reply": self.reply,
            "strict": self.strict,
            "strict_correct": self.strict_correct,
            "strict_reason": self.strict_reason,
            "hedged": self.hedged,
            "via": self.via,
            "compat": self.compat,
            "compat_correct": self.compat_correct if self.compat_scored else None,
            "compat_rule": self.compat_rule,
            "misfire": self.misfire,
        }


@dataclass(frozen=True)
class ScoreResult:
    """Both modes' metrics per group and overall ('all'), every item decision, load problems and notes."""

    benchmark: str
    mode: Mode
    group_name: str
    strict: dict[str, dict]
    compat: dict[str, dict]
    items: tuple[ScoredItem, ...]
    loaded: Loaded
    notes: tuple[str, ...] = ()
    tables: dict[str, list[dict]] = field(default_factory=dict)
    rules: tuple[str, ...] = ()  # how the two modes' figures are defined differently, beyond item readings

    @property
    def metrics(self) -> dict[str, dict]:
        return self.strict if self.mode == "strict" else self.compat

    def comparison(self, *, max_rows: int = 50) -> dict:
        both = [i for i in self.items if i.compat_scored]
        diff = [i for i in both if i.differs]
        return {
            "n_scored_in_both": len(both),
            "n_differ": len(diff),
            "strict_correct_only": sum(i.strict_correct for i in diff),
            "compat_correct_only": sum(i.compat_correct for i in diff),
            "read_differently_only": sum(i.strict_correct == i.compat_correct for i in diff),
            "n_skipped_by_official": sum(not i.compat_scored for i in self.items),
            "by_reason": dict(Counter(i.category for i in diff).most_common()),
            "rows": [{**i.as_row(), "reason": i.category, "reply": _short(i.reply)} for i in diff[:max_rows]],
            "rules": list(self.rules),
        }

    def extraction_counts(self) -> dict:
        strict_classes = Counter(_class_name(i) for i in self.items)
        return {
            "classes": dict(strict_classes.most_common()),
            "hedged_answers": sum(i.hedged for i in self.items),
            "decided_by_fallback": sum(i.via == "fallback" for i in self.items),
        }

    def reader_summary(self) -> dict:
        """The strict reply reader's version and how many replies it could not read (``reply.yesno.reader_summary``)."""
        return reader_summary([i.strict for i in self.items if i.kind != "asr"])

    def as_dict(self, *, max_diff_rows: int = 50) -> dict:
        other: Mode = "compat" if self.mode == "strict" else "strict"
        return {
            "benchmark": self.benchmark,
            "mode": self.mode,
            "reply_reader": self.reader_summary(),
            "files": list(self.loaded.files),
            "n_items": len(self.items),
            "group_by": self.group_name,
            "metrics": self.metrics,
            "other_mode": {"mode": other, "metrics": self.compat if other == "compat" else self.strict},
            "extraction": self.extraction_counts(),
            "comparison": self.comparison(max_rows=max_diff_rows),
            "problems": {"count": len(self.loaded.problems), "items": [p.text() for p in self.loaded.problems]},
            "notes": list(self.loaded.notes) + list(self.notes),
            "tables": self.tables,
        }


def _short(text: str, n: int = 200) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 3] + "..."


def _class_name(item: ScoredItem) -> str:
    if item.kind in ("count", "label", "choice") and item.strict not in NON_ANSWERS:
        return f"{item.kind} answer"
    return item.strict


def _require_items(loaded: Loaded, what: str) -> None:
    if not loaded.items:
        detail = f"; {len(loaded.problems)} problem(s), first: {loaded.problems[0].text()}" if loaded.problems else ""
        raise InputError(
            f"no valid {what} rows to score{detail}",
            file=", ".join(loaded.files) or None,
            fix="fix the problems listed, or check that the file is the right format",
        )
