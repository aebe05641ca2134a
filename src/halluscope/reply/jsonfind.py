"""Every JSON object (or array) in a model reply, in order: fenced or bare, as real models write them.

Each span opened by ``{`` (or ``[``) is closed by brace balance (double-quoted strings respected) and read with
``json``; what ``json`` refuses is read with ``json_repair``, which takes single quotes, trailing commas, Python
literals (True/False/None), unquoted keys and values, and a missing closing brace (the span then runs to the end).
Code fences, with or without a language tag, are blanked first.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator

import json_repair

_FENCE = re.compile(r"```[ \t]*(?:json5?|python|javascript|js|text)?", re.IGNORECASE)
_CLOSE = {"{": "}", "[": "]"}


def _end(text: str, start: int) -> int | None:
    """Index of the bracket closing the one at ``start``; None when the text ends first."""
    depth, in_str, esc = 0, False, False
    for i in range(start, len(text)):
        c = text[i]
        if in_str:
            if esc:
                esc = False
            elif c == "\\":
                esc = True
            elif c == '"':
                in_str = False
        elif c == '"':
            in_str = True
        elif c in "{[":
            depth += 1
        elif c in "}]":
            depth -= 1
            if depth == 0:
                return i
    return None


def _load(blob: str) -> object:
    try:
        return json.loads(blob)
    except ValueError:
        try:
            return json_repair.loads(blob)
        except Exception:  # noqa: BLE001 - the repairer's own failures mean: no JSON here
            return None


def json_spans(text: str | None, kind: type = dict) -> list[tuple[int, int, object]]:
    """(start, end, value) of every top-level JSON value of ``kind`` (dict or list) in ``text``, in the order written."""
    if not text:
        return []
    body = _FENCE.sub(lambda m: " " * len(m.group(0)), text)
    opener = "{" if kind is dict else "["
    out: list[tuple[int, int, object]] = []
    i = 0
    while (i := body.find(opener, i)) != -1:
        end = _end(body, i)
        blob = body[i:] if end is None else body[i : end + 1]
        value = _load(blob if end is not None else blob.rstrip() + _CLOSE[opener])  # a missing closing brace
        if isinstance(value, list) and kind is dict and end is None:  # a repaired tail may hold several objects
            value = next((v for v in value if isinstance(v, dict)), None)
        if isinstance(value, kind) and (kind is not list or any(isinstance(v, dict) for v in value)):
            out.append((i, len(body) if end is None else end + 1, value))
            if end is None:
                break
            i = end + 1
        else:
            i += 1
    return out


def json_values(text: str | None, kind: type = dict) -> list[object]:
    """Every top-level JSON value of ``kind`` (dict or list) in ``text``, in the order written."""
    return [v for _, _, v in json_spans(text, kind)]


def walk(obj: object) -> Iterator[dict]:
    """A dict and every dict nested in it (inside dicts and lists), outermost first."""
    if isinstance(obj, dict):
        yield obj
        for v in obj.values():
            yield from walk(v)
    elif isinstance(obj, list):
        for v in obj:
            yield from walk(v)


def objects(text: str | None) -> list[dict]:
    """Every JSON object in a reply with the objects nested in it, in reading order."""
    return [d for top in json_values(text, dict) for d in walk(top)]


def last_json(text: str | None, kind: type = dict) -> object | None:
    """The last JSON object (or array of objects) in a reply; None when there is none."""
    found = json_values(text, kind)
    return found[-1] if found else None


def json_records(text: str | None, fields: dict[str, type]) -> tuple[list[dict] | None, str | None]:
    """Every top-level JSON object of a reply in order (JSON Lines, a fenced block, an array, objects in prose),
    each required to hold ``fields`` with exactly those types; (None, why) at the first that does not."""
    records = [d for top in json_values(text, dict) for d in ([top] if isinstance(top, dict) else [])]
    if not records:
        return None, "no JSON object in the reply"
    for r in records:
        bad = [f"{k} ({t.__name__})" for k, t in fields.items() if type(r.get(k)) is not t]
        if bad:
            return None, f"{json.dumps(r, ensure_ascii=False)[:60]} lacks {', '.join(bad)}"
    return records, None


def string_list(text: str | None) -> list[str] | None:
    """The last top-level JSON array of strings in a reply (``[]`` included); None when the reply holds none."""
    body = _FENCE.sub(lambda m: " " * len(m.group(0)), text or "")
    found, i = None, 0
    while (i := body.find("[", i)) != -1:
        end = _end(body, i)
        value = _load(body[i:] + "]" if end is None else body[i : end + 1])
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            found = value
            if end is None:
                break
            i = end + 1
        else:
            i += 1
    return found
