"""The reply reader: every step that reads an answer out of model text goes through this package.

* ``jsonfind``: JSON objects and arrays in a reply, fenced or bare, with the tolerances real models need.
* ``keyed``: the last answer for the asked key, read into a closed scale with its negation (zero-shot
  detection, quality ratings, MISHAP verdict, stance and checks); ``scales`` holds those scales.
* ``free``: free-text numbers, choices, labels and option letters; ``yesno`` yes/no read against the asked subject
  (``subject.asked_subject`` takes it from the question); ``normal`` the shared normalising and refusal look-ups.
* ``lexicon``: the one multilingual refusal / uncertainty / answer-word lexicon all of them use.

Every reading is a :class:`Reading`: its class and the reason, or a non-answer (unknown, refusal, ambiguous,
unrelated, unparsable) that is never folded into a class.
"""

from halluscope.reply.free import (
    extract_choice,
    extract_label,
    extract_number,
    extract_option,
    extract_yesno,
    find_refusal,
    find_uncertainty,
    normalize_reply,
)
from halluscope.reply.jsonfind import json_records, json_values, last_json, objects
from halluscope.reply.keyed import Scale, labelled_lines, read_key, read_keys, read_rating, read_value
from halluscope.reply.reading import ABSTENTIONS, NON_ANSWERS, Reading
from halluscope.reply.scales import BINARY, BOOLEAN, SEVERITY, STANCE, TYPE, VERDICT, read_check
from halluscope.reply.subject import asked_subject

__all__ = [
    "ABSTENTIONS",
    "BINARY",
    "asked_subject",
    "BOOLEAN",
    "NON_ANSWERS",
    "SEVERITY",
    "STANCE",
    "TYPE",
    "VERDICT",
    "Reading",
    "Scale",
    "extract_choice",
    "extract_label",
    "extract_number",
    "extract_option",
    "extract_yesno",
    "find_refusal",
    "find_uncertainty",
    "json_records",
    "json_values",
    "labelled_lines",
    "last_json",
    "normalize_reply",
    "objects",
    "read_check",
    "read_key",
    "read_keys",
    "read_rating",
    "read_value",
]
