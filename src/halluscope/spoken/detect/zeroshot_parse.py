"""Read a zero-shot detection reply (seed 000, App. A.3): the answer for the asked key, or why there is none.

The reading itself is the reply reader's (halluscope.reply): the last answer for the asked key, values read
with their negation. Never guesses: a reply without a readable answer is 'unparsable' (uncertain, ambiguous
and denied values included, the reason says which), an explicit refusal (or a request for the missing input)
is 'refusal', and a 'none' answer is kept as the answer 'none' with no label. All three count as errors in
accuracy and macro-F1 and are reported as rates.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from halluscope.reply import BINARY, SEVERITY, TYPE, read_key

Status = Literal["ok", "unparsable", "refusal"]

KEYS = {"binary": "binary", "type": "type", "severity": "degree"}
SCALES = {"binary": BINARY, "type": TYPE, "severity": SEVERITY}
# keys models write instead of the asked one, in en / ru / kk; they answer only when the asked key is absent
KEY_ALIASES = {
    "binary": (
        "hallucination",
        "has_hallucination",
        "is_hallucination",
        "hallucinated",
        "answer",
        "label",
        "галлюцинация",
        "ответ",
        "галлюцинация_бар",
        "жауап",
    ),
    "type": (
        "hallucination_type",
        "type_of_hallucination",
        "answer",
        "label",
        "category",
        "тип",
        "түрі",
        "ответ",
        "жауап",
    ),
    "severity": (
        "severity",
        "level",
        "severity_level",
        "answer",
        "label",
        "степень",
        "уровень",
        "дәреже",
        "деңгей",
        "ответ",
        "жауап",
    ),
}


@dataclass(frozen=True)
class Parsed:
    """One reply read for one task: ``answer`` as normalised (e.g. 'yes', 'none'), ``reason`` when not ok."""

    status: Status
    answer: str | None = None
    reason: str | None = None


def parse_reply(text: str | None, task: str) -> Parsed:
    """The answer to ``task`` (binary, type or severity) in a reply; the last answer for the asked key wins (CoT)."""
    if task not in KEYS:
        raise ValueError(f"unknown task '{task}': expected binary, type or severity")
    r = read_key(text, KEYS[task], SCALES[task], aliases=KEY_ALIASES[task])
    if r.is_answer:
        note = (
            r.reason if r.key != KEYS[task] or "answers, the last" in r.reason or "outside a JSON" in r.reason else None
        )
        return Parsed("ok", str(r.value), note)
    if r.status == "refusal":
        return Parsed("refusal", reason=r.reason)
    return Parsed("unparsable", reason=f"{r.status}: {r.reason}")
