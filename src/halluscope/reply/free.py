"""Free-text answers: a reply -> yes / no / a number / a choice / a label, or a named non-answer.

Words, not substrings ("eyes" is not "yes", "know" is not "no"); refusals ("I cannot hear the audio"),
explicit uncertainty ("I don't know", "not sure") and ambiguous replies (both yes and no asserted) are their own
classes and are never folded into an answer (halluscope's rule: unscored is never a class). English, Russian and Kazakh are
covered in depth; Chinese, Spanish, French and German for the common answer shapes. A yes/no reading given the
asked ``subject`` counts a presence statement only for that subject ("I only hear drums" to a trumpet question
is a no; "birds, not a dog" to a dog question is a no).
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

from halluscope.reply import lexicon as lx
from halluscope.reply.normal import (
    Extraction,
    _mask,
    _preamble,
    _unknown,
    find_refusal,
    find_uncertainty,
    normalize_reply,
)
from halluscope.reply.reading import ABSTENTIONS, NON_ANSWERS, Status, answer as _answer
from halluscope.reply.yesno import Fallback, extract_yesno

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
    "find_refusal",
    "find_uncertainty",
    "normalize_label",
    "normalize_reply",
]


# ---------------------------------------------------------------------------------------------- numbers
_TOKEN = re.compile(r"\d+(?:[.,]\d+)?|[^\W\d_]+(?:'[^\W\d_]+)*|%")
_RANGE_BETWEEN = re.compile(r"^\s*(?:-|~|/|to|or|and|или|до|немесе|o|ou|oder|bis|或|到|至)?\s*$")
_KAZAKH_LETTERS = re.compile(r"[әғқңөұүһі]")
_IMPLICIT_ZERO = re.compile(
    r"\b(?:none|nobody|nothing|no\s+one|no\s+(?!doubt|more|less|idea|problem|matter|way)[^\W\d_]+)\b|"
    r"\bни\s+одного\b|\bжоқ\b|没有"
)


@dataclass(frozen=True)
class _Num:
    start: int
    end: int
    value: int
    negated: bool
    text: str


def _zh_value(chars: str) -> int | None:
    if "十" in chars:
        a, _, b = chars.partition("十")
        if len(a) > 1 or len(b) > 1:
            return None
        return (lx.ZH_DIGITS[a] if a else 1) * 10 + (lx.ZH_DIGITS[b] if b else 0)
    return lx.ZH_DIGITS[chars] if len(chars) == 1 else None


def _numbers(norm: str) -> list[_Num]:
    toks = [(m.start(), m.end(), m.group(0)) for m in _TOKEN.finditer(norm)]
    kazakh = bool(_KAZAKH_LETTERS.search(norm))
    out: list[_Num] = []
    i = 0
    while i < len(toks):
        start, end, tok = toks[i]
        nxt = toks[i + 1][2] if i + 1 < len(toks) else ""
        prev = [t for _, _, t in toks[max(0, i - 2) : i]]
        value: int | None = None
        if tok.isdigit():
            if nxt in lx.UNIT_AFTER or norm[end : end + 1] == ":" or norm[max(0, start - 1) : start] == ":":
                i += 1
                continue
            value = int(tok)
        elif "-" not in tok and tok in lx.NUMBER_WORDS and tok != "none":
            if tok == "one" and prev and prev[-1] in lx.PRONOUN_ONE_BEFORE:
                i += 1
                continue
            if tok == "он" and not kazakh:  # Russian "he"
                i += 1
                continue
            value = lx.NUMBER_WORDS[tok]
            if (
                tok in lx.TENS
                and nxt in lx.NUMBER_WORDS
                and 0 < lx.NUMBER_WORDS[nxt] < 10
                and re.fullmatch(r"[\s-]*", norm[end : toks[i + 1][0]])
            ):
                value += lx.NUMBER_WORDS[nxt]
                end = toks[i + 1][1]
                i += 1
        if value is not None:
            negated = any(p in lx.NEGATORS or p.endswith("n't") for p in prev) or nxt in {"емес", "нет"}
            out.append(_Num(start, end, value, negated, norm[start:end]))
        i += 1
    for m in lx.ZH_NUMBER.finditer(norm):
        v = _zh_value(m.group(1))
        if v is not None:
            negated = norm[max(0, m.start() - 1) : m.start()] in {"不", "没"}
            out.append(_Num(m.start(), m.end(), v, negated, m.group(0)))
    return sorted(out, key=lambda n: n.start)


def extract_number(text: str | None) -> Extraction:
    """A count from digits or number words (en, ru, kk, zh, es, fr, de); negated numbers ("not two") are skipped,
    units ("3 seconds") and clock times ignored, alternatives ("2 or 3") are ambiguous, none/nobody mean 0."""
    norm, early, unknown = _preamble(text)
    if early is not None:
        return early
    masked = _mask(norm, unknown)
    nums = [n for n in _numbers(masked) if not n.negated]
    if not nums:
        zero = _IMPLICIT_ZERO.search(masked)
        if zero:
            return _answer(0, f"'{zero.group(0)}' means zero", hedged=bool(unknown))
        return _unknown(unknown) if unknown else Extraction("unrelated", reason="no number found")
    for a, b in zip(nums, nums[1:]):
        if a.value != b.value and _RANGE_BETWEEN.match(masked[a.end : b.start]):
            return Extraction("ambiguous", reason=f"alternatives '{masked[a.start : b.end]}'")
    first = nums[0]
    extra = "" if len({n.value for n in nums}) == 1 else f" (first of {len(nums)} numbers)"
    return _answer(first.value, f"number '{first.text}'{extra}", hedged=bool(unknown))


# ---------------------------------------------------------------------------------------------- choices and labels
_NEG_BEFORE = re.compile(
    r"\b(?:not|isn't|wasn't|aren't|never|rather\s+than|instead\s+of|не|nicht|pas|no\s+es|ни)\b[^,.;:!?]*$"
)
_THAN = re.compile(r"\b(?:than|чем|que|als)\b|比")
_INVERSE = re.compile(r"\b(?:quieter|softer|slower|weaker|lower|less\s+\w+|тише|медленнее|слабее)\b")


def _negated(masked: str, start: int, end: int) -> bool:
    before = masked[max(0, start - 40) : start]
    return bool(_NEG_BEFORE.search(before)) or bool(re.match(r"\s+(?:емес|not)\b", masked[end:]))


def _mentions_of(masked: str, options: dict[str, re.Pattern[str]]) -> list[tuple[int, int, str]]:
    found: list[tuple[int, int, str]] = []
    work = masked
    for opt, pattern in options.items():
        for m in pattern.finditer(work):
            found.append((m.start(), m.end(), opt))
        work = pattern.sub(lambda m: " " * len(m.group(0)), work)
    return sorted(found)


def _resolve(
    masked: str, mentions: list[tuple[int, int, str]], unknown: list[tuple[int, int, str]], kind: str
) -> Extraction:
    kept = [m for m in mentions if not _negated(masked, m[0], m[1])]
    order = list(dict.fromkeys(opt for _, _, opt in kept))
    if len(order) == 1:
        return _answer(order[0], f"{kind} '{masked[kept[0][0] : kept[0][1]]}'", hedged=bool(unknown))
    if len(order) > 1:
        a = next(m for m in kept if m[2] == order[0])
        b = next(m for m in kept if m[2] == order[1])
        between = masked[a[1] : b[0]]
        if kind == "choice" and _THAN.search(between):
            pick = order[1] if _INVERSE.search(between) else order[0]
            return _answer(pick, f"comparative '{masked[a[0] : b[1]].strip()}'", hedged=bool(unknown))
        return Extraction("ambiguous", reason=f"names several {kind}s: " + ", ".join(f"'{o}'" for o in order[:4]))
    if unknown:
        return _unknown(unknown)
    if kind == "choice" and lx.EQUAL.search(masked):
        return _answer("equal", f"says '{lx.EQUAL.search(masked).group(0)}'")
    return Extraction("unrelated", reason=f"no {kind} found")


def extract_choice(text: str | None, *, options: Sequence[str] = ("first", "second")) -> Extraction:
    """Which of two clips (first/second, 'audio 1', 'the latter', первый, бірінші, 第一...) a comparison reply picks;
    "the first is louder than the second" picks first, "the first is quieter than the second" picks second."""
    norm, early, unknown = _preamble(text)
    if early is not None:
        return early
    masked = _mask(norm, unknown)
    patterns = {o: re.compile(r"\b(?:%s)\b" % lx._alt(lx.ORDINALS.get(o, [o]))) for o in options}
    mentions = _mentions_of(masked, patterns)
    for opt, zp in lx.ZH_ORDINALS.items():
        if opt in options:
            mentions += [(m.start(), m.end(), opt) for m in zp.finditer(masked)]
    return _resolve(masked, sorted(mentions), unknown, "choice")


def normalize_label(label: str) -> str:
    """'Electric_guitar' -> 'electric guitar', the form labels are matched in."""
    return re.sub(r"\s+", " ", re.sub(r"[_\-/]+", " ", unicodedata.normalize("NFKC", label).lower())).strip()


@functools.lru_cache(maxsize=None)
def _label_pattern(key: str) -> re.Pattern[str]:
    # word edges, not \b: a label may start or end with punctuation ("frying (food)")
    return re.compile(r"(?<!\w)%s(?:s|es)?(?!\w)" % re.escape(key).replace(r"\ ", r"[\s_-]+"))


@functools.lru_cache(maxsize=64)
def _label_index(labels: tuple[str, ...]) -> tuple[dict[str, list[tuple[str, str]]], dict[str, int]]:
    """The labels by the first word of their normalised form, and each label's rank (longest first), built once per
    label set, so that a reply is matched only against the labels whose first word it contains (linear in items and
    labels: issue 25, 10,000 items with 2,000 labels)."""
    uniq = sorted(
        {normalize_label(lab): lab for lab in labels if normalize_label(lab)}.items(), key=lambda kv: -len(kv[0])
    )
    index: dict[str, list[tuple[str, str]]] = {}
    for key, orig in uniq:
        first = re.match(r"[^\W_]*", key).group(0)  # type: ignore[union-attr]
        index.setdefault(first, []).append((key, orig))
    return index, {key: rank for rank, (key, _) in enumerate(uniq)}


def extract_label(text: str | None, *, labels: Sequence[str]) -> Extraction:
    """Which of the candidate labels a reply names, as whole words (plural allowed), longest label first so
    'electric guitar' is not also 'guitar'; negated mentions ("not music") are dropped; several -> ambiguous."""
    norm, early, unknown = _preamble(text)
    if early is not None:
        return early
    masked = _mask(norm, unknown)
    index, rank = _label_index(tuple(labels))
    words = set(re.findall(r"[^\W_]+", masked))
    words |= {w[:-k] for w in words for k in (1, 2) if len(w) > k and w.endswith("es"[2 - k :])}
    words.add("")  # labels that start with punctuation
    candidates = sorted((kv for w in words for kv in index.get(w, ())), key=lambda kv: rank[kv[0]])
    patterns = {orig: _label_pattern(key) for key, orig in candidates}
    return _resolve(masked, _mentions_of(masked, patterns), unknown, "label")


_LETTER_PATTERNS = [
    re.compile(r"^\(?(?P<l>[a-h])\)?(?:[.):,]|$)"),
    re.compile(r"^(?P<l>[b-h])\s"),  # a leading "a" followed by a space is the article
    re.compile(r"\b(?:option|answer|choice|вариант|ответ)\s*(?:is\s*)?:?\s*\(?(?P<l>[a-h])\)?(?:\W|$)"),
    re.compile(r"\((?P<l>[a-h])\)"),
]


def extract_option(text: str | None, *, options: Sequence[str]) -> Extraction:
    """A multiple-choice letter ('B', '(b)', 'Option B', 'The answer is B.') or the text of one option."""
    norm, early, unknown = _preamble(text)
    if early is not None:
        return early
    letters = {chr(ord("a") + i): opt for i, opt in enumerate(options)}
    both = re.match(r"^\(?([a-h])\)?\s*(?:or|and|/|,)\s*\(?([a-h])\)?\W*$", norm)
    if both and both.group(1) != both.group(2):
        return Extraction("ambiguous", reason=f"several option letters: {both.group(1)}, {both.group(2)}")
    picked = {m.group("l") for p in _LETTER_PATTERNS for m in p.finditer(norm) if m.group("l") in letters}
    if len(picked) == 1:
        letter = picked.pop()
        return _answer(letters[letter], f"option letter '{letter}'", hedged=bool(unknown))
    if len(picked) > 1:
        return Extraction("ambiguous", reason="several option letters: " + ", ".join(sorted(picked)))
    return extract_label(text, labels=list(options))
