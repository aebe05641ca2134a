"""The closed-form readers live in the reply reader (halluscope.reply); these names stay importable here."""

from halluscope.reply.free import (
    ABSTENTIONS,
    NON_ANSWERS,
    Extraction,
    Fallback,
    Status,
    extract_choice,
    extract_label,
    extract_number,
    extract_option,
    extract_yesno,
    normalize_label,
    normalize_reply,
)

__all__ = [
    "ABSTENTIONS",
    "NON_ANSWERS",
    "Extraction",
    "Fallback",
    "Status",
    "extract_choice",
    "extract_label",
    "extract_number",
    "extract_option",
    "extract_yesno",
    "normalize_label",
    "normalize_reply",
]
