"""Read a zero-shot detection reply (seed 000, App. A.3): the JSON fragment's answer, or why there is none.

Never guesses: a reply without a readable answer is 'unparsable', an explicit refusal (or a request for the
missing input) is 'refusal', and a 'none' answer is kept as the answer 'none' with no label. All three count
as errors in accuracy and macro-F1 and are reported as rates.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Literal

Status = Literal["ok", "unparsable", "refusal"]

KEYS = {"binary": "binary", "type": "type", "severity": "degree"}
# keys models write instead of the asked one, in en / ru / kk
KEY_ALIASES = {
    "binary": ("binary", "hallucination", "has_hallucination", "is_hallucination", "hallucinated", "answer", "label",
               "галлюцинация", "ответ", "галлюцинация_бар", "жауап"),
    "type": ("type", "hallucination_type", "type_of_hallucination", "answer", "label", "category", "тип", "түрі", "ответ",
             "жауап"),
    "severity": ("degree", "severity", "level", "severity_level", "answer", "label", "степень", "уровень", "дәреже",
                 "деңгей", "ответ", "жауап"),
}
VALUES = {
    "binary": {
        "yes": "yes", "true": "yes", "1": "yes", "y": "yes", "да": "yes", "есть": "yes", "иә": "yes", "ия": "yes",
        "бар": "yes", "hallucinated": "yes",
        "no": "no", "false": "no", "0": "no", "n": "no", "нет": "no", "жоқ": "no", "original": "no",
    },
    "type": {
        "factual_contradiction": "contradiction", "contradiction": "contradiction", "противоречие": "contradiction",
        "фактическое_противоречие": "contradiction", "қайшылық": "contradiction", "фактілік_қайшылық": "contradiction",
        "factual_fabrication": "fabrication", "fabrication": "fabrication", "фабрикация": "fabrication",
        "вымысел": "fabrication", "фактическая_фабрикация": "fabrication", "ойдан_шығару": "fabrication",
        "жалған_ақпарат": "fabrication",
        "contextual_inconsistency": "context_inconsistency", "context_inconsistency": "context_inconsistency",
        "контекстуальное_несоответствие": "context_inconsistency", "несоответствие_контексту": "context_inconsistency",
        "контекстік_сәйкессіздік": "context_inconsistency", "контекстік_сәйкес_келмеушілік": "context_inconsistency",
        "none": "none", "нет": "none", "отсутствует": "none", "жоқ": "none", "null": "none", "no": "none",
    },
    "severity": {
        "mild": "mild", "легкая": "mild", "лёгкая": "mild", "слабая": "mild", "незначительная": "mild", "жеңіл": "mild",
        "moderate": "moderate", "умеренная": "moderate", "средняя": "moderate", "орташа": "moderate",
        "severe": "severe", "серьезная": "severe", "серьёзная": "severe", "тяжелая": "severe", "тяжёлая": "severe",
        "сильная": "severe", "ауыр": "severe", "күшті": "severe",
        "none": "none", "нет": "none", "отсутствует": "none", "жоқ": "none", "null": "none",
    },
}
REFUSAL = re.compile(
    r"\b(?:i\s*(?:am|'m)\s*(?:sorry|unable|not able)|i\s*(?:can(?:no|')t|cannot|could\s*not)"
    r"|as an ai|i (?:do not|don't) have (?:access|the ability)|(?:please|kindly) (?:provide|upload|share|attach)"
    r"|no (?:audio|text|content) (?:was|has been|is) (?:provided|attached|given))"
    r"|(?:не\s+могу|не\s+в\s+состоянии|к\s+сожалению|пожалуйста,?\s+предоставьте|извините)"
    r"|(?:кешіріңіз|алмаймын|мүмкін\s+емес|ұсыныңыз)",
    re.IGNORECASE,
)
_FENCE = re.compile(r"```(?:json)?", re.IGNORECASE)
_KV = re.compile(r"[\"']?([\w\- ]{1,40}?)[\"']?\s*:\s*[\"']?([^\"',}\n]{1,60})", re.UNICODE)


@dataclass(frozen=True)
class Parsed:
    """One reply read for one task: ``answer`` as normalised (e.g. 'yes', 'none'), ``reason`` when not ok."""

    status: Status
    answer: str | None = None
    reason: str | None = None


def _objects(text: str) -> list[dict]:
    """Every JSON object in ``text``, outermost first, in order; tolerates single quotes and trailing commas."""
    dec = json.JSONDecoder()
    out: list[dict] = []
    i = 0
    while (i := text.find("{", i)) != -1:
        obj, step = None, 1
        try:
            obj, end = dec.raw_decode(text, i)
            step = end - i  # a complete object: continue after it
        except ValueError:
            try:
                obj, _ = dec.raw_decode(_relax(text[i:]))
            except ValueError:
                obj = None
        if isinstance(obj, dict):
            out.append(obj)
            out.extend(v for v in obj.values() if isinstance(v, dict))
        i += step if isinstance(obj, dict) else 1
    return out


def _relax(s: str) -> str:
    end = s.find("}")
    head = s[: end + 1] if end != -1 else s
    head = re.sub(r",\s*}", "}", head)
    return head.replace("'", '"')


def _norm(value: object) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    s = str(value).strip().strip(".!*`\"' ").lower()
    return re.sub(r"[\s\-]+", "_", s)


def _value(task: str, value: object) -> str | None:
    table = VALUES[task]
    v = _norm(value)
    if v in table:
        return table[v]
    words = [w for w in re.split(r"[^\w]+", str(value).lower()) if w]
    hits = {table[w] for w in words if w in table and len(w) > 1}
    return hits.pop() if len(hits) == 1 and len(words) <= 4 else None


def _from_object(task: str, obj: dict) -> tuple[str | None, str | None]:
    """(answer, note) from one object: the asked key, then known aliases, then a lone readable value."""
    lowered = {str(k).strip().lower(): v for k, v in obj.items()}
    for key in KEY_ALIASES[task]:
        if key in lowered and (ans := _value(task, lowered[key])) is not None:
            return ans, None if key == KEYS[task] else f"key '{key}' instead of '{KEYS[task]}'"
    readable = {k: a for k, v in lowered.items() if isinstance(v, (str, bool)) and (a := _value(task, v)) is not None}
    if len(readable) == 1:
        (k, a), = readable.items()
        return a, f"key '{k}' instead of '{KEYS[task]}'"
    return None, None


def parse_reply(text: str | None, task: str) -> Parsed:
    """The answer to ``task`` (binary, type or severity) in a reply; the last readable JSON answer wins (CoT)."""
    if task not in KEYS:
        raise ValueError(f"unknown task '{task}': expected binary, type or severity")
    if text is None or not text.strip():
        return Parsed("unparsable", reason="empty reply")
    body = _FENCE.sub(" ", text)
    answers = [(a, note) for obj in _objects(body) for a, note in [_from_object(task, obj)] if a is not None]
    if not answers:  # a broken fragment: '"binary": "yes"' without braces, or a missing closing brace
        for key, value in _KV.findall(body):
            if key.strip().lower() in KEY_ALIASES[task] and (a := _value(task, value)) is not None:
                answers.append((a, "JSON fragment without a complete object"))
    if answers:
        answer, note = answers[-1]
        if len({a for a, _ in answers}) > 1:
            note = "; ".join(filter(None, [note, f"{len(answers)} answers, the last taken"]))
        return Parsed("ok", answer, note)
    if REFUSAL.search(text):
        return Parsed("refusal", reason="refused or asked for the input: " + text.strip()[:120])
    return Parsed("unparsable", reason="no JSON answer for '" + KEYS[task] + "': " + text.strip()[:120])
