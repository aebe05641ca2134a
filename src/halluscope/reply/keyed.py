"""Structured answers: the value given for the asked key, read into a closed scale with its negation.

Rules (issue 12): the *last* answer for the *asked* key wins (chain-of-thought drafts come first); a key the
caller did not name never answers; known aliases answer only when the asked key is absent; a value is read
with its negation ("not hallucinated" -> no, "no hallucination" -> no / none, "не галлюцинация" -> no,
"галлюцинация жоқ" -> no), and a negated class with no complement ("not severe") names no class at all.
Refusal, uncertainty, several classes and no value stay apart from every class.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from halluscope.reply.free import find_refusal, find_uncertainty
from halluscope.reply.jsonfind import json_spans, objects, walk
from halluscope.reply.reading import Reading, answer

# words that deny the class named right after them (within three words) or, for the postfix ones, right before
NEGATORS = {
    "not",
    "no",
    "non",
    "never",
    "isn't",
    "wasn't",
    "aren't",
    "doesn't",
    "don't",
    "without",
    "neither",
    "nor",
    "не",
    "нет",
    "без",
    "ни",
    "ешқандай",
    "ешбір",
}
NEGATORS_AFTER = {"емес", "жоқ", "жок", "нет", "отсутствует", "absent"}
_NEG_BLOCK = {"only", "just", "merely", "doubt", "только"}  # "not only", "no doubt"


@dataclass(frozen=True)
class Scale:
    """A closed set of classes a value is read into.

    ``words``: phrase -> class ('_' or '-' in a phrase match any separator); ``complement``: the class a negated
    class names (yes <-> no); ``topic``: a regex for what is asked about (hallucination), naming ``present`` when
    stated and ``absent`` when denied; ``bools``: the classes of JSON true and false.
    """

    name: str
    words: Mapping[str, str]
    complement: Mapping[str, str] = field(default_factory=dict)
    topic: str | None = None
    present: str | None = None
    absent: str | None = None
    bools: tuple[str, str] | None = None
    _pattern: re.Pattern[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        alts = [re.escape(_norm(w)).replace("_", r"[\s_\-/]*") for w in sorted(self.words, key=len, reverse=True)]
        if self.topic:
            alts.append(f"(?P<topic>{self.topic})")
        object.__setattr__(self, "_pattern", re.compile(rf"(?<![\w])(?:{'|'.join(alts)})(?![\w])"))

    def classify(self, phrase: str) -> str | None:
        return {_norm(k): v for k, v in self.words.items()}.get(_norm(phrase).replace(" ", "_"))


def _norm(s: str) -> str:
    s = unicodedata.normalize("NFKC", s).lower().replace("ё", "е").replace("’", "'")
    return re.sub(r"[\s\-]+", "_", s.strip())


def _clean(value: str) -> str:
    s = unicodedata.normalize("NFKC", value).lower().replace("ё", "е").replace("’", "'").replace("`", "")
    return re.sub(r"\s+", " ", s.replace("*", " ")).strip(" .!\"'")


def _negated(text: str, start: int, end: int) -> bool:
    head = re.split(r"[,;:()\"]|\bbut\b|\bно\b|\bбірақ\b", text[:start])[-1]
    before = re.findall(r"[^\W\d_]+(?:'[^\W\d_]+)?", head)[-3:]
    if any(t in NEGATORS for t in before) and not any(t in _NEG_BLOCK for t in before):
        return True
    after = re.findall(r"[^\W\d_]+", re.split(r"[,;:()\"]", text[end:])[0])[:2]
    return any(t in NEGATORS_AFTER for t in after)


def read_value(value: object, scale: Scale, *, key: str | None = None) -> Reading:
    """One value (a JSON value, or the text after 'key:') read into ``scale``."""
    where = f" under '{key}'" if key else ""
    if isinstance(value, bool):
        if scale.bools is None:
            return Reading("unparsable", reason=f"{str(value).lower()}{where} names no {scale.name}", key=key)
        return answer(scale.bools[0 if value else 1], f"JSON {str(value).lower()}{where}", key=key)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        value = str(int(value)) if float(value).is_integer() else str(value)
    if not isinstance(value, str) or not value.strip():
        return Reading(
            "unparsable",
            reason=f"no value{where}"
            if value in (None, "")
            else f"{type(value).__name__} value{where} names no {scale.name}",
            key=key,
        )
    text = _clean(value)
    if (exact := scale.classify(text)) is not None:
        return answer(exact, f"'{value.strip()}'{where}", key=key)
    if refusal := find_refusal(value):
        return Reading("refusal", reason=f"refusal{where}: '{refusal}'", key=key)
    classes: list[str] = []
    denied: list[str] = []
    for m in scale._pattern.finditer(text):
        topic = m.groupdict().get("topic") is not None
        cls = scale.present if topic else scale.classify(m.group(0))
        if _negated(text, m.start(), m.end()):
            cls = scale.absent if topic else scale.complement.get(cls or "")
            if cls is None:
                denied.append(m.group(0))
                continue
        if cls is not None:
            classes.append(cls)
    unsure = find_uncertainty(value)
    found = list(dict.fromkeys(classes))
    if len(found) == 1:
        return answer(found[0], f"'{value.strip()[:80]}'{where}", hedged=unsure is not None, key=key)
    if len(found) > 1:
        return Reading("ambiguous", reason=f"'{value.strip()[:80]}'{where} names several: {', '.join(found)}", key=key)
    if unsure:
        return Reading("unknown", reason=f"uncertainty{where}: '{unsure}'", key=key)
    if denied:
        return Reading(
            "unparsable",
            reason=f"'{value.strip()[:80]}'{where} denies {', '.join(repr(d) for d in denied)} "
            f"and names no other {scale.name}",
            key=key,
        )
    return Reading("unparsable", reason=f"'{value.strip()[:80]}'{where} names no {scale.name}", key=key)


def _key(k: object) -> str:
    return re.sub(r"[\s\-]+", "_", str(k).strip().lower())


def _fragments(text: str, keys: Sequence[str], skip: Sequence[tuple[int, int]]) -> list[tuple[int, str, str]]:
    """(position, key, value) of every 'key: value' outside a JSON object ('"binary": "no"' without braces, a
    'Verdict: grounded' line), for the named keys only."""
    alts = "|".join(re.escape(k).replace("_", r"[\s_]") for k in sorted(keys, key=len, reverse=True))
    pat = re.compile(
        rf"(?<!\w)[\"'*_]*({alts})[\"'*_]*\s*(?:[:=\-–—]|\bis\b)\s*[\"'*_]*(?=([^\"',}}\n*]{{1,80}}))", re.IGNORECASE
    )
    return [
        (m.start(), _key(m.group(1)), m.group(2))
        for m in pat.finditer(text)
        if not any(a <= m.start() < b for a, b in skip)
    ]


def _last(readings: list[Reading]) -> Reading | None:
    said = [r for r in readings if r.status in ("answer", "unknown", "refusal")]
    pick = said[-1] if said else (readings[-1] if readings else None)
    if pick is not None and len({r.label for r in said}) > 1:
        pick = Reading(
            pick.status, pick.value, f"{pick.reason}; {len(said)} answers, the last taken", pick.hedged, key=pick.key
        )
    return pick


def read_key(text: str | None, key: str, scale: Scale, *, aliases: Sequence[str] = ()) -> Reading:
    """The last answer a reply gives for ``key`` (or, when it never gives one, for one of ``aliases``): in a JSON
    object, fenced or bare, or as a 'key: value' fragment outside one; the latest in the text wins."""
    if text is None or not text.strip():
        return Reading("unparsable", reason="empty reply")
    asked, alias = _key(key), [_key(a) for a in aliases if _key(a) != _key(key)]
    found: list[tuple[int, int, Reading]] = []  # (position, order inside the object, reading)
    spans = json_spans(text, dict)
    seen_keys: set[str] = set()
    for start, _end, top in spans:
        for n, obj in enumerate(walk(top)):
            lowered = {_key(k): v for k, v in obj.items()}
            seen_keys |= set(lowered)
            hit = asked if asked in lowered else next((a for a in alias if a in lowered), None)
            if hit is not None:
                found.append((start, n, read_value(lowered[hit], scale, key=hit)))
    for pos, k, v in _fragments(text, [asked, *alias], [(a, b) for a, b, _ in spans]):
        r = read_value(v.strip(), scale, key=k)
        found.append((pos, 0, Reading(r.status, r.value, f"{r.reason} (outside a JSON object)", r.hedged, key=k)))
    found.sort(key=lambda t: (t[0], t[1]))
    exact = [r for _, _, r in found if r.key == asked]
    by_alias = [
        Reading(r.status, r.value, f"{r.reason} (key '{r.key}' instead of '{asked}')", r.hedged, key=r.key)
        for _, _, r in found
        if r.key != asked
    ]
    picked = _last(exact) or _last(by_alias)
    if picked is not None and (picked.status != "unparsable" or not find_refusal(text)):
        return picked
    if refusal := find_refusal(text):
        return Reading("refusal", reason=f"refusal: '{refusal}'")
    if picked is not None:
        return picked
    if unsure := find_uncertainty(text):
        return Reading("unknown", reason=f"no '{asked}' in the reply; uncertainty: '{unsure}'")
    where = "no JSON object" if not spans else f"no '{asked}' in its JSON ({', '.join(sorted(seen_keys))[:80]})"
    return Reading("unparsable", reason=f"{where} in the reply: {text.strip()[:100]!r}")


def read_keys(
    text: str | None, resolve: Callable[[str], str | None], read: Callable[[object, str], Reading]
) -> dict[str, Reading]:
    """Many keys at once (a rating per dimension): ``resolve`` maps a key as written to its canonical name (None:
    not asked), ``read(value, canonical)`` reads its value; per key the last answer wins."""
    per: dict[str, list[Reading]] = {}
    for obj in objects(text):
        for k, v in obj.items():
            if (canon := resolve(str(k))) is not None:
                per.setdefault(canon, []).append(read(v, canon))
    return {k: r for k, rs in per.items() if (r := _last(rs)) is not None}


_LINE = re.compile(r"^\s*(?:[-*•>]\s*|\d+[.)]\s*)*(?P<label>[^:：\n]{1,80}?)\s*[:：]\s*(?P<value>.*)$")


def labelled_lines(text: str) -> list[tuple[str, str, str]]:
    """(label, value, the next line) for every 'label: value' line, (label, value, "") for every table row of a
    plain-text report (the generator's self-assessment, seed 000 App. A.1 step 3)."""
    lines = [ln.replace("**", "").replace("__", "").strip() for ln in text.splitlines()]
    out = []
    for i, line in enumerate(lines):
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        if "|" in line:
            cells = [c.strip() for c in line.strip("|").split("|")]
            if len(cells) >= 2:
                out.append((cells[0], cells[1], ""))
        elif m := _LINE.match(line):
            out.append((m.group("label").strip(), m.group("value"), nxt))
    return out


def read_rating(value: object, language: str = "any", *, leading: bool = False) -> Reading:
    """A quality rating (seed 000, App. A.1/A.2): a rating word of the language's scale or an integer 1..5 -> 1..5;
    a negated rating word ("not high", "жоғары емес") names no rating."""
    from halluscope.prompts.protocol import rating_value

    r = rating_value(value, language, leading=leading)
    if r is None:
        return Reading("unparsable", reason=f"no rating in {str(value)[:60]!r}")
    if isinstance(value, str):
        text = _clean(value)
        first = re.search(r"[^\W\d_]+", text)
        words = re.findall(r"[^\W\d_]+", text)
        if (first and first.group(0) in NEGATORS - {"no"}) or any(t in NEGATORS_AFTER for t in words[1:3]):
            return Reading("unparsable", reason=f"negated rating {value.strip()[:60]!r}")
    return answer(r, f"rating {str(value).strip()[:60]!r}")
