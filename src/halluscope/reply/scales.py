"""The closed scales halluscope asks models for, in en / ru / kk: zero-shot detection (seed 000, App. A.3), the
MISHAP verdict and stance (seed 001, App. A.3) and the true/false checks (informativeness, adherence)."""

from __future__ import annotations

from halluscope.reply.keyed import Scale

_HALLUCINATION = r"hallucinat\w*|галлюцинац\w*|галлюцинаци\w*|галлюцинация\w*"

BINARY = Scale(
    "yes/no answer",
    {
        "yes": "yes",
        "true": "yes",
        "1": "yes",
        "y": "yes",
        "да": "yes",
        "есть": "yes",
        "иә": "yes",
        "ия": "yes",
        "бар": "yes",
        "hallucinated": "yes",
        "contains_hallucination": "yes",
        "no": "no",
        "false": "no",
        "0": "no",
        "n": "no",
        "нет": "no",
        "жоқ": "no",
        "жок": "no",
        "original": "no",
        "faithful": "no",
        "оригинал": "no",
        "түпнұсқа": "no",
    },
    complement={"yes": "no", "no": "yes"},
    topic=_HALLUCINATION,
    present="yes",
    absent="no",
    bools=("yes", "no"),
)

TYPE = Scale(
    "hallucination type",
    {
        "factual_contradiction": "contradiction",
        "contradiction": "contradiction",
        "противоречие": "contradiction",
        "фактическое_противоречие": "contradiction",
        "қайшылық": "contradiction",
        "фактілік_қайшылық": "contradiction",
        "factual_fabrication": "fabrication",
        "fabrication": "fabrication",
        "фабрикация": "fabrication",
        "вымысел": "fabrication",
        "фактическая_фабрикация": "fabrication",
        "ойдан_шығару": "fabrication",
        "жалған_ақпарат": "fabrication",
        "contextual_inconsistency": "context_inconsistency",
        "context_inconsistency": "context_inconsistency",
        "контекстуальное_несоответствие": "context_inconsistency",
        "несоответствие_контексту": "context_inconsistency",
        "контекстік_сәйкессіздік": "context_inconsistency",
        "контекстік_сәйкес_келмеушілік": "context_inconsistency",
        "none": "none",
        "нет": "none",
        "отсутствует": "none",
        "жоқ": "none",
        "null": "none",
        "no": "none",
    },
    topic=_HALLUCINATION,
    absent="none",
)

SEVERITY = Scale(
    "degree",
    {
        "mild": "mild",
        "легкая": "mild",
        "слабая": "mild",
        "незначительная": "mild",
        "жеңіл": "mild",
        "moderate": "moderate",
        "умеренная": "moderate",
        "средняя": "moderate",
        "орташа": "moderate",
        "severe": "severe",
        "серьезная": "severe",
        "тяжелая": "severe",
        "сильная": "severe",
        "ауыр": "severe",
        "күшті": "severe",
        "none": "none",
        "нет": "none",
        "отсутствует": "none",
        "жоқ": "none",
        "null": "none",
    },
    topic=_HALLUCINATION,
    absent="none",
)

VERDICT = Scale(
    "verdict (grounded/hallucinated)",
    {
        "grounded": "grounded",
        "hallucinated": "hallucinated",
        "ungrounded": "hallucinated",
        "hallucination": "hallucinated",
        "обоснованный": "grounded",
        "обоснован": "grounded",
        "негаллюцинированный": "grounded",
        "галлюцинация": "hallucinated",
        "негізделген": "grounded",
    },
    complement={"grounded": "hallucinated", "hallucinated": "grounded"},
)

STANCE = Scale(
    "stance",
    {
        "asserts": "asserts",
        "assert": "asserts",
        "asserting": "asserts",
        "abstains": "abstains",
        "abstain": "abstains",
        "abstaining": "abstains",
        "abstention": "abstains",
        "endorses_false_premise": "endorses_false_premise",
        "endorses_the_false_premise": "endorses_false_premise",
        "endorses_premise": "endorses_false_premise",
        "endorses": "endorses_false_premise",
        "false_premise": "endorses_false_premise",
    },
)

BOOLEAN = Scale(
    "true/false",
    {
        "true": "true",
        "yes": "true",
        "1": "true",
        "y": "true",
        "да": "true",
        "иә": "true",
        "adheres": "true",
        "adhere": "true",
        "informative": "true",
        "false": "false",
        "no": "false",
        "0": "false",
        "n": "false",
        "нет": "false",
        "жоқ": "false",
        "uninformative": "false",
        "not_informative": "false",
    },
    complement={"true": "false", "false": "true"},
    bools=("true", "false"),
)


def read_check(text: str | None, key: str) -> tuple[bool | None, str]:
    """A true/false check (MISHAP informativeness filter, question adherence): (the last answer for ``key``, the
    'reason' the reply gives with it), or (None, why there is no answer)."""
    from halluscope.reply.jsonfind import objects
    from halluscope.reply.keyed import read_key

    r = read_key(text, key, BOOLEAN)
    if not r.is_answer:
        return None, f"no true/false '{key}': {r.reason}"
    with_key = [o for o in objects(text) if key in o]
    return r.value == "true", str(with_key[-1].get("reason") or "") if with_key else ""
