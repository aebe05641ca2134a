"""Free-text answers: a reply -> yes / no / a number / a choice / a label, or a named non-answer.

Words, not substrings ("eyes" is not "yes", "know" is not "no"); refusals ("I cannot hear the audio"),
explicit uncertainty ("I don't know", "not sure") and ambiguous replies (both yes and no asserted) are their own
classes and are never folded into an answer (STYLE.md: unscored is never a class). English, Russian and Kazakh are
covered in depth; Chinese, Spanish, French and German for the common answer shapes. A yes/no reading given the
asked ``subject`` counts a presence statement only for that subject ("I only hear drums" to a trumpet question
is a no; "birds, not a dog" to a dog question is a no).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from halluscope.reply import lexicon as lx
from halluscope.reply.jsonfind import json_values, walk
from halluscope.reply.reading import ABSTENTIONS, NON_ANSWERS, Reading, Status
from halluscope.reply.reading import answer as _answer

Extraction = Reading  # the closed-form name for a reading
Fallback = Callable[[str], str]
__all__ = ["ABSTENTIONS", "NON_ANSWERS", "Extraction", "Fallback", "Status", "extract_choice", "extract_label",
           "extract_number", "extract_option", "extract_yesno", "find_refusal", "find_uncertainty", "normalize_label",
           "normalize_reply"]


# ---------------------------------------------------------------------------------------------- normalising
_ANSWER_KEYS = ("answer", "final_answer", "finalanswer", "response", "prediction", "result", "output", "label",
                "choice", "reply", "ответ", "жауап", "答案")
_PREFIX = re.compile(r"^\s*(?:assistant|model|output|response|final\s+answer|answer|a|prediction|ответ|жауап|答案|答|respuesta|"
                     r"réponse|antwort)\s*[:：]\s*")


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
    s = s.translate(str.maketrans({"’": "'", "‘": "'", "“": '"', "”": '"', "«": '"', "»": '"', "。": ".",
                                   "、": ",", "！": "!", "？": "?", "；": ";", "–": "-", "—": " - "}))
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


# ---------------------------------------------------------------------------------------------- yes / no
def _subject_words(subject: str | None) -> list[str]:
    if not subject:
        return []
    stop = {"the", "a", "an", "of", "sound", "sounds", "audio", "and", "or", "is", "are", "there", "any", "some", "in",
            "on", "at", "to", "by", "with", "звук", "дыбыс", "и", "в", "на"}
    return [w for w in re.findall(r"[^\W\d_]+", subject.lower()) if len(w) >= 2 and w not in stop]


def _mentions(clause: str, words: Sequence[str]) -> bool:
    tokens = re.findall(r"[^\W\d_]+", clause)
    return any(_same_word(t, w) for t in tokens for w in words)


def _same_word(token: str, word: str) -> bool:
    """The same word up to its ending: a shared 4-letter stem, or for short words the word plus at most two letters
    ("dog" / "dogs", "ит" / "иттер" is not, "ит" / "итті")."""
    if min(len(token), len(word)) < 4:
        short, long = sorted((token, word), key=len)
        return long.startswith(short) and len(long) - len(short) <= 2
    return token[:4] == word[:4]


def _denied(clause: str, words: Sequence[str]) -> str | None:
    """The words that deny the subject inside a clause ("not a dog", "no dogs", "ит емес"), else None; only words of
    the same comma-separated phrase count ("there isn't any cat, the dog barks" does not deny the dog)."""
    for m in re.finditer(r"[^\W\d_]+", clause):
        if not any(_same_word(m.group(0), w) for w in words):
            continue
        head = re.split(r"[,:;()\"]", clause[:m.start()])[-1]
        before = re.findall(r"[^\W\d_]+(?:'[^\W\d_]+)?", head)[-4:]
        if any(t in lx.SUBJECT_NEGATORS for t in before) and not any(t in lx.SUBJECT_NEGATORS_BLOCK for t in before):
            return (head.strip() + " " + m.group(0)).strip()
        tail = re.split(r"[,:;()\"]", clause[m.end():])[0]
        after = re.findall(r"[^\W\d_]+", tail)[:2]
        if any(t in lx.SUBJECT_NEGATORS_AFTER for t in after):
            return (m.group(0) + tail).strip()
    return None


def _answer_words(masked: str) -> list[tuple[int, str, str]]:
    hits: dict[int, tuple[str, str]] = {}
    for p in lx.ANSWER_POSITIONS:
        for m in p.finditer(masked):
            word = re.sub(r"\s+", " ", m.group("w"))
            hits[m.start("w")] = ("yes" if word in lx.YES_SET or word == "si" else "no", word)
    for m in lx.THINK_NO.finditer(masked):
        hits[m.start()] = ("no", m.group(0))
    for m in lx.THINK_YES.finditer(masked):
        hits[m.start()] = ("yes", m.group(0))
    return sorted((pos, pol, word) for pos, (pol, word) in hits.items())


def _zh_yesno(masked: str) -> Extraction | None:
    s = masked.strip(" ,.!?:;\"'\n")
    for pol, pattern in lx.ZH_LEADING:
        m = pattern.match(s)
        if m:
            return _answer(pol, f"leading '{m.group(0)}'")
    no, yes = lx.ZH_NO.search(s), lx.ZH_YES.search(s)
    if no and yes:
        return Extraction("ambiguous", reason=f"both '{yes.group(0)}' and '{no.group(0)}'")
    if no:
        return _answer("no", f"statement '{no.group(0)}'")
    if yes:
        return _answer("yes", f"statement '{yes.group(0)}'")
    return None


def _statements(clause: str) -> tuple[re.Match[str] | None, re.Match[str] | None]:
    no = next((m for p in lx.IMPLICIT_NO for m in [p.search(clause)] if m), None)
    yes = next((m for p in lx.IMPLICIT_YES for m in [p.search(clause)] if m), None)
    return no, yes


def _implicit(masked: str, subject: str | None) -> Extraction:
    words = _subject_words(subject)
    found: list[tuple[str, str, bool, str]] = []  # (polarity, words, about the subject, clause)
    for clause in lx.CLAUSE_SPLIT.split(masked):
        if not clause.strip():
            continue
        denied = _denied(clause, words) if words else None
        if denied:  # "birds singing, not a dog": the subject is denied, whatever else is heard
            found.append(("no", denied, True, clause))
            continue
        no, yes = _statements(clause)
        if words and _mentions(clause, words):  # "I hear a dog, no cat": read the phrase that names the subject
            phrase = ",".join(ph for ph in re.split(r"[,:]", clause) if _mentions(ph, words))
            no, yes = _statements(phrase) if any(_statements(phrase)) else (no, yes)
        if no:  # a negation inside a clause dominates its affirmative frame ("there is no dog")
            found.append(("no", no.group(0).strip(), _mentions(clause, words), clause))
        elif yes:
            found.append(("yes", yes.group(0).strip(), _mentions(clause, words), clause))
    if words:
        about = [f for f in found if f[2]]
        if about:
            found = about
        else:
            others = [f for f in found if f[0] == "yes"]
            found = [f for f in found if f[0] == "no"]  # absence is often stated with a pronoun ("there is no such sound")
            only = next((m for f in others for m in [lx.EXCLUSIVE.search(f[3])] if m), None)
            if not found and only:  # "I only hear drums" to a trumpet question
                return _answer("no", f"'{only.group(0).strip()}' names other sounds only, not '{subject}'")
            if not found and others:
                return Extraction("unrelated", reason=f"describes other sounds ('{others[0][1]}') without mentioning '{subject}'")
    polarities = {f[0] for f in found}
    if len(polarities) == 2:
        return Extraction("ambiguous", reason="mixed statements: " + "; ".join(f"'{f[1]}'" for f in found[:3]))
    if polarities:
        return _answer(found[0][0], f"statement '{found[0][1]}'")
    return Extraction("unrelated", reason="no yes/no answer found")


def _yesno_rules(text: str | None, subject: str | None) -> Extraction:
    norm, early, unknown = _preamble(text)
    if early is not None:
        return early
    masked = _mask(norm, unknown + [(m.start(), m.end(), m.group(0)) for m in lx.NEUTRAL.finditer(norm)])
    both = lx.BOTH.search(masked)
    if both:
        return _unknown(unknown) if unknown else Extraction("ambiguous", reason=f"says both: '{both.group(0)}'")
    hedged = bool(unknown) or bool(lx.HEDGE.search(masked))
    if lx.CJK.search(masked):
        zh = _zh_yesno(masked)
        if zh is not None:
            return replace(zh, hedged=hedged) if zh.is_answer else zh
    strong = _answer_words(masked)
    polarities = {pol for _, pol, _ in strong}
    if len(polarities) == 2:
        return Extraction("ambiguous", reason="asserts both: " + ", ".join(f"'{w}'" for _, _, w in strong[:4]))
    if polarities:
        pos, pol, word = strong[0]
        after = masked[pos + len(word):]
        if pol == "yes":
            contra = lx.CONTRADICTS_YES.match(after)
            if contra:
                return Extraction("ambiguous", reason=f"'{word}' contradicted by '{contra.group(0).strip(' ,.')}'")
        elif unknown and not masked[:pos].strip() and any(0 <= a - (pos + len(word)) <= 4 for a, _, _ in unknown):
            return Extraction("unknown", reason=f"'{word}' introduces uncertainty '{unknown[0][2].strip()}'")
        return _answer(pol, f"answer word '{word}'", hedged=hedged)
    if unknown:
        return _unknown(unknown)
    ex = _implicit(masked, subject)
    return replace(ex, hedged=hedged) if ex.is_answer else ex


def extract_yesno(text: str | None, *, subject: str | None = None, fallback: Fallback | None = None) -> Extraction:
    """Classify a reply to a yes/no question as yes, no, unknown, refusal, ambiguous or unrelated.

    ``subject`` (e.g. the object asked about) lets a presence statement count only when it names the subject.
    ``fallback`` (e.g. an LLM judge) is asked only for *unrelated* replies; its raw output is kept on the result.
    """
    ex = _yesno_rules(text, subject)
    if ex.status != "unrelated" or fallback is None or not (text or "").strip():
        return ex
    raw = fallback(text or "")
    second = _yesno_rules(raw, None)
    if second.is_answer or second.status in ABSTENTIONS:
        return replace(second, via="fallback", fallback_raw=raw, reason=f"fallback: {second.reason}")
    return replace(ex, fallback_raw=raw, reason=f"{ex.reason}; fallback said '{raw}' ({second.status})")


# ---------------------------------------------------------------------------------------------- numbers
_TOKEN = re.compile(r"\d+(?:[.,]\d+)?|[^\W\d_]+(?:'[^\W\d_]+)*|%")
_RANGE_BETWEEN = re.compile(r"^\s*(?:-|~|/|to|or|and|или|до|немесе|o|ou|oder|bis|或|到|至)?\s*$")
_KAZAKH_LETTERS = re.compile(r"[әғқңөұүһі]")
_IMPLICIT_ZERO = re.compile(r"\b(?:none|nobody|nothing|no\s+one|no\s+(?!doubt|more|less|idea|problem|matter|way)[^\W\d_]+)\b|"
                            r"\bни\s+одного\b|\bжоқ\b|没有")


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
        prev = [t for _, _, t in toks[max(0, i - 2):i]]
        value: int | None = None
        if tok.isdigit():
            if nxt in lx.UNIT_AFTER or norm[end:end + 1] == ":" or norm[max(0, start - 1):start] == ":":
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
            if tok in lx.TENS and nxt in lx.NUMBER_WORDS and 0 < lx.NUMBER_WORDS[nxt] < 10 \
                    and re.fullmatch(r"[\s-]*", norm[end:toks[i + 1][0]]):
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
            negated = norm[max(0, m.start() - 1):m.start()] in {"不", "没"}
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
        if a.value != b.value and _RANGE_BETWEEN.match(masked[a.end:b.start]):
            return Extraction("ambiguous", reason=f"alternatives '{masked[a.start:b.end]}'")
    first = nums[0]
    extra = "" if len({n.value for n in nums}) == 1 else f" (first of {len(nums)} numbers)"
    return _answer(first.value, f"number '{first.text}'{extra}", hedged=bool(unknown))


# ---------------------------------------------------------------------------------------------- choices and labels
_NEG_BEFORE = re.compile(r"\b(?:not|isn't|wasn't|aren't|never|rather\s+than|instead\s+of|не|nicht|pas|no\s+es|ни)\b[^,.;:!?]*$")
_THAN = re.compile(r"\b(?:than|чем|que|als)\b|比")
_INVERSE = re.compile(r"\b(?:quieter|softer|slower|weaker|lower|less\s+\w+|тише|медленнее|слабее)\b")


def _negated(masked: str, start: int, end: int) -> bool:
    before = masked[max(0, start - 40):start]
    return bool(_NEG_BEFORE.search(before)) or bool(re.match(r"\s+(?:емес|not)\b", masked[end:]))


def _mentions_of(masked: str, options: dict[str, re.Pattern[str]]) -> list[tuple[int, int, str]]:
    found: list[tuple[int, int, str]] = []
    work = masked
    for opt, pattern in options.items():
        for m in pattern.finditer(work):
            found.append((m.start(), m.end(), opt))
        work = pattern.sub(lambda m: " " * len(m.group(0)), work)
    return sorted(found)


def _resolve(masked: str, mentions: list[tuple[int, int, str]], unknown: list[tuple[int, int, str]],
             kind: str) -> Extraction:
    kept = [m for m in mentions if not _negated(masked, m[0], m[1])]
    order = list(dict.fromkeys(opt for _, _, opt in kept))
    if len(order) == 1:
        return _answer(order[0], f"{kind} '{masked[kept[0][0]:kept[0][1]]}'", hedged=bool(unknown))
    if len(order) > 1:
        a = next(m for m in kept if m[2] == order[0])
        b = next(m for m in kept if m[2] == order[1])
        between = masked[a[1]:b[0]]
        if kind == "choice" and _THAN.search(between):
            pick = order[1] if _INVERSE.search(between) else order[0]
            return _answer(pick, f"comparative '{masked[a[0]:b[1]].strip()}'", hedged=bool(unknown))
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


def extract_label(text: str | None, *, labels: Sequence[str]) -> Extraction:
    """Which of the candidate labels a reply names, as whole words (plural allowed), longest label first so
    'electric guitar' is not also 'guitar'; negated mentions ("not music") are dropped; several -> ambiguous."""
    norm, early, unknown = _preamble(text)
    if early is not None:
        return early
    masked = _mask(norm, unknown)
    uniq = sorted({normalize_label(lab): lab for lab in labels if normalize_label(lab)}.items(), key=lambda kv: -len(kv[0]))
    patterns = {orig: re.compile(r"\b%s(?:s|es)?\b" % re.escape(key).replace(r"\ ", r"[\s_-]+")) for key, orig in uniq}
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
