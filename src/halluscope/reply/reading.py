"""What every reader returns: the class read out of a reply, or the named non-answer, and why."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

# answer: ``value`` holds the class. The others never carry a class (halluscope's rule: unscored is never a class):
# unknown: explicit uncertainty (an abstention), refusal: the model declines or cannot take the input,
# ambiguous: the reply asserts several classes, unrelated: free text that answers something else,
# unparsable: no value under the asked key (structured replies), hedge: a yes/no reply that leans one way under a
# hedge cue ("maybe", "possibly", "there might be a dog"; ``lean`` keeps the way), never counted as that answer.
Status = Literal["answer", "unknown", "refusal", "ambiguous", "unrelated", "unparsable", "hedge"]
NON_ANSWERS: tuple[str, ...] = ("unknown", "refusal", "ambiguous", "unrelated", "unparsable", "hedge")
ABSTENTIONS: tuple[str, ...] = ("unknown", "refusal")


@dataclass(frozen=True)
class Reading:
    """What a reply says. ``value`` is set only when ``status == 'answer'``; ``reason`` says which words decided it;
    ``key`` the JSON key that answered (structured readers); ``hedged`` an answer given with a hedge or an evidential
    ("it seems to be jazz"); ``lean`` the answer a 'hedge' reading leans to."""

    status: Status
    value: str | int | None = None
    reason: str = ""
    hedged: bool = False
    via: Literal["rules", "fallback"] = "rules"
    fallback_raw: str | None = None
    key: str | None = None
    lean: str | None = None

    @property
    def label(self) -> str:
        """The class counted in reports: the answer value, or the non-answer status."""
        return str(self.value) if self.status == "answer" else self.status

    @property
    def is_answer(self) -> bool:
        return self.status == "answer"


def answer(value: str | int, reason: str, hedged: bool = False, key: str | None = None) -> Reading:
    return Reading("answer", value, reason, hedged, key=key)
