"""The App. A.2 judge prompt and the reading of its reply through the reply reader (verbal ratings -> 1..5)."""

from __future__ import annotations

import json

from halluscope.core.records import ChatMessage, HallucinationType, Severity
from halluscope.prompts import severity_texts, template
from halluscope.prompts.protocol import DIMENSIONS, dimension_for_label
from halluscope.reply import objects, read_keys, read_rating

# seed 000, App. A generation conditions: judges at temperature 0, max_tokens 300
JUDGE_PARAMS = {"temperature": 0, "max_tokens": 300}


def judge_messages(*, original: str, rewritten: str, type: HallucinationType, severity: Severity) -> list[ChatMessage]:
    dims = DIMENSIONS[type]
    prompt = template("judge/quality").render(
        {
            "HALLUCINATION TYPE": type,
            "SEVERITY LEVEL": severity,
            "SEVERITY LEVEL DEFINITION": severity_texts()["judge"][type][severity],
            "DIMENSION LIST": "\n".join(f"- {d.name}" for d in dims),
            "DIMENSION KEYS": ", ".join(json.dumps(d.name) for d in dims),
            "ORIGINAL ARTICLE TEXT": original,
            "REWRITTEN ARTICLE TEXT": rewritten,
        }
    )
    return [ChatMessage(role="user", content=prompt)]


def parse_judgement(text: str, type: HallucinationType) -> tuple[dict[str, int], str | None]:
    """(scores by dimension abbreviation, None) or ({}, why not); every one of the type's seven is required.
    Per dimension the last rating given wins (a judge that drafts and then concludes is scored by its conclusion)."""
    want = [d.abbr for d in DIMENSIONS[type]]

    def resolve(key: str) -> str | None:
        dim = dimension_for_label(key, type)
        return dim.abbr if dim is not None else None

    readings = read_keys(text, resolve, lambda value, _dim: read_rating(value, "any"))
    if not objects(text):
        return {}, "no JSON object in the reply"
    scores = {k: int(r.value) for k, r in readings.items() if r.is_answer}  # type: ignore[arg-type]
    missing = [k for k in want if k not in scores]
    if missing:
        why = "; ".join(f"{k}: {readings[k].reason}" for k in missing if k in readings)
        return {}, f"no readable rating for {', '.join(missing)}" + (f" ({why})" if why else "")
    return {k: scores[k] for k in want}, None
