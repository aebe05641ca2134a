"""Shared first steps of every free-text reader: normalising a reply, masking spans, the refusal and uncertainty
look-ups of the one lexicon (``lexicon``)."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

from halluscope.reply import lexicon as lx
from halluscope.reply.jsonfind import json_values, walk
from halluscope.reply.reading import Reading

Extraction = Reading  # the closed-form name for a reading


# ---------------------------------------------------------------------------------------------- normalising
_ANSWER_KEYS = (
    "answer",
    "final_answer",
    "finalanswer",
    "response",
    "prediction",
    "result",
    "output",
    "label",
    "choice",
    "reply",
    "ответ",
    "жауап",
    "答案",
)
_PREFIX = re.compile(
    r"^\s*(?:assistant|model|output|response|final\s+answer|answer|a|prediction|ответ|жауап|答案|答|respuesta|"
    r"réponse|antwort)\s*[:：]\s*"
)


def _pick(obj: object) -> str | None:
    if isinstance(obj, bool):
        return "yes" if obj else "no"
    if isinstance(obj, (str, int, float)):
        return str(obj)
    if isinstance(obj, list):
        return _pick(obj[0]) if len(obj) == 1 else None
    if isinstance(obj, dict):
        lower = {str(k).lower(): v for k, v in obj.items()}
        for key in _ANSWER_KEYS:
            if key in lower:
                return _pick(lower[key])
        return _pick(next(iter(obj.values()))) if len(obj) == 1 else None
    return None


def _unwrap_json(text: str) -> str:
    """'{"answer": "Yes", "reason": ...}' -> 'Yes' (the last object with an answer key wins); anything that is not
    JSON-like is returned unchanged."""
    t = re.sub(r"^\s*```(?:json|python|text)?\s*|\s*```\s*$", "", text.strip())
    if t[:1] not in "{[":
        return text
    tops = json_values(t, dict) if t[:1] == "{" else json_values(t, list)
    keyed = [d for top in tops for d in walk(top) if any(str(k).lower() in _ANSWER_KEYS for k in d)]
    picked = _pick(keyed[-1] if keyed else tops[0]) if tops else None
    return picked if picked is not None else text


def normalize_reply(text: str | None) -> str:
    """Lower-case, NFKC, straight quotes, no markdown, JSON unwrapped, 'Answer:' prefixes removed."""
    if text is None:
        return ""
    s = unicodedata.normalize("NFKC", str(text))
    s = s.translate(
        str.maketrans(
            {
                "’": "'",
                "‘": "'",
                "“": '"',
                "”": '"',
                "«": '"',
                "»": '"',
                "。": ".",
                "、": ",",
                "！": "!",
                "？": "?",
                "；": ";",
                "–": "-",
                "—": " - ",
            }
        )
    )
    s = _unwrap_json(s)
    s = re.sub(r"```\w*", " ", s).replace("`", "'")
    s = re.sub(r"(?m)^\s*(?:[-*+>#]+|\d+[.)])\s+", "", s)  # bullets, headings, quotes, numbered lists
    s = re.sub(r"[*_~#]+", " ", s)
    s = s.lower()
    s = _PREFIX.sub("", s)
    s = re.sub(r"[ \t\r\f\v]+", " ", s)
    s = re.sub(r" *\n+ *", "\n", s)
    return s.strip().strip("\"'()[]{} ").strip()


def _spans(patterns: Sequence[re.Pattern[str]], text: str) -> list[tuple[int, int, str]]:
    return [(m.start(), m.end(), m.group(0)) for p in patterns for m in p.finditer(text)]


def _mask(text: str, spans: Sequence[tuple[int, int, str]]) -> str:
    chars = list(text)
    for a, b, _ in spans:
        chars[a:b] = " " * (b - a)
    return "".join(chars)


def _first(patterns: Sequence[re.Pattern[str]], text: str) -> str | None:
    for p in patterns:
        m = p.search(text)
        if m:
            return m.group(0).strip()
    return None


def _preamble(text: str | None) -> tuple[str, Extraction | None, list[tuple[int, int, str]]]:
    """Shared first steps: normalise; empty -> unrelated; refusal wins over everything; find uncertainty spans."""
    norm = normalize_reply(text)
    if not norm.strip(" .!?,;:-\n"):
        return norm, Extraction("unrelated", reason="empty reply"), []
    refusal = _first(lx.REFUSAL, norm)
    if refusal:
        return norm, Extraction("refusal", reason=f"refusal: '{refusal}'"), []
    return norm, None, _spans(lx.UNKNOWN, norm)


def find_refusal(text: str | None) -> str | None:
    """The words of the shared multilingual lexicon that make a reply a refusal, else None."""
    return _first(lx.REFUSAL, normalize_reply(text)) if text else None


def find_uncertainty(text: str | None) -> str | None:
    """The words of the shared multilingual lexicon that make a reply uncertain, else None."""
    spans = _spans(lx.UNKNOWN, normalize_reply(text)) if text else []
    return min(spans)[2].strip() if spans else None


def _unknown(spans: Sequence[tuple[int, int, str]]) -> Extraction:
    return Extraction("unknown", reason=f"uncertainty: '{spans[0][2].strip()}'")
