"""The App. A.2 judge prompt and the reading of its reply (JSON object by pattern, verbal ratings -> 1..5)."""

from __future__ import annotations

import json
import re

from halluscope.prompts import severity_texts, template
from halluscope.prompts.protocol import DIMENSIONS, dimension_for_label, rating_value
from halluscope.records import ChatMessage, HallucinationType, Severity

# seed 000, App. A generation conditions: judges at temperature 0, max_tokens 300
JUDGE_PARAMS = {"temperature": 0, "max_tokens": 300}
_OBJECT = re.compile(r"\{[^{}]*\}", re.S)


def judge_messages(*, original: str, rewritten: str, type: HallucinationType, severity: Severity) -> list[ChatMessage]:
    dims = DIMENSIONS[type]
    prompt = template("judge/quality").render({
        "HALLUCINATION TYPE": type,
        "SEVERITY LEVEL": severity,
        "SEVERITY LEVEL DEFINITION": severity_texts()["judge"][type][severity],
        "DIMENSION LIST": "\n".join(f"- {d.name}" for d in dims),
        "DIMENSION KEYS": ", ".join(json.dumps(d.name) for d in dims),
        "ORIGINAL ARTICLE TEXT": original,
        "REWRITTEN ARTICLE TEXT": rewritten,
    })
    return [ChatMessage(role="user", content=prompt)]


def _loads(blob: str) -> object:
    try:
        return json.loads(blob)
    except ValueError:  # single quotes or a trailing comma, as models sometimes write
        try:
            return json.loads(re.sub(r",\s*}", "}", blob.replace("'", '"')))
        except ValueError:
            return None


def parse_judgement(text: str, type: HallucinationType) -> tuple[dict[str, int], str | None]:
    """(scores by dimension abbreviation, None) or ({}, why not); every one of the type's seven is required."""
    want = [d.abbr for d in DIMENSIONS[type]]
    best: dict[str, int] = {}
    seen_object = False
    for blob in _OBJECT.findall(text or ""):
        obj = _loads(blob)
        if not isinstance(obj, dict):
            continue
        seen_object = True
        scores: dict[str, int] = {}
        for key, value in obj.items():
            dim = dimension_for_label(str(key), type)
            rating = rating_value(value, "any")
            if dim is not None and rating is not None and dim.abbr not in scores:
                scores[dim.abbr] = rating
        if len(scores) > len(best):
            best = scores
        if len(best) == len(want):
            return {k: best[k] for k in want}, None
    if not seen_object:
        return {}, "no JSON object in the reply"
    return {}, f"no readable rating for {', '.join(k for k in want if k not in best)}"
