"""Free-text yes/no: a reply -> yes / no, or a named non-answer, read against the asked subject (or the question,
from which the subject is taken: ``subject.asked_subject``)."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import replace

from halluscope.reply import lexicon as lx
from halluscope.reply.normal import Extraction, _mask, _preamble, _spans, _unknown
from halluscope.reply.reading import ABSTENTIONS, answer as _answer
from halluscope.reply.subject import asked_subject

Fallback = Callable[[str], str]


# ---------------------------------------------------------------------------------------------- yes / no
def _subject_words(subject: str | None) -> list[str]:
    if not subject:
        return []
    stop = {
        "the",
        "a",
        "an",
        "of",
        "sound",
        "sounds",
        "audio",
        "and",
        "or",
        "is",
        "are",
        "there",
        "any",
        "some",
        "in",
        "on",
        "at",
        "to",
        "by",
        "with",
        "звук",
        "дыбыс",
        "и",
        "в",
        "на",
    }
    words = [w for w in re.findall(r"[^\W\d_]+(?:&[^\W\d_]+)?", subject.lower()) if len(w) >= 2 and w not in stop]
    specific = [w for w in words if w not in lx.GENERIC_SUBJECT]  # "jazz music" is about "jazz", "angry speech" "angry"
    return specific or words


def _mentions(clause: str, words: Sequence[str]) -> bool:
    tokens = re.findall(r"[^\W\d_]+", clause)
    return any(_same_word(t, w) for t in tokens for w in words)


def _same_word(token: str, word: str) -> bool:
    """The same word up to its ending: a shared 4-letter stem, or for short words the word plus at most two letters
    ("dog" / "dogs", "ит" / "иттер" is not, "ит" / "итті")."""
    token, word = lx.WORD_FORMS.get(token, token), lx.WORD_FORMS.get(word, word)
    if min(len(token), len(word)) < 4:
        short, long = sorted((token, word), key=len)
        return long.startswith(short) and (len(long) - len(short) <= 2 or long[len(short) :] in ("ness", "ly"))
    short, long = sorted((token, word), key=len)
    return token[:4] == word[:4] and (len(short) > 4 or len(long) - len(short) <= 4)  # not "rock" / "rockslides"


def _denied(clause: str, words: Sequence[str]) -> str | None:
    """The words that deny the subject inside a clause ("not a dog", "no dogs", "ит емес"), else None; only words of
    the same comma-separated phrase count ("there isn't any cat, the dog barks" does not deny the dog)."""
    for m in re.finditer(r"[^\W\d_]+", clause):
        if not any(_same_word(m.group(0), w) for w in words):
            continue
        head = re.split(r"[,:;()\"]", clause[: m.start()])[-1]
        before = re.findall(r"[^\W\d_]+(?:'[^\W\d_]+)?", head)[-4:]
        if any(t in lx.SUBJECT_NEGATORS for t in before) and not any(t in lx.SUBJECT_NEGATORS_BLOCK for t in before):
            return (head.strip() + " " + m.group(0)).strip()
        tail = re.split(r"[,:;()\"]", clause[m.end() :])[0]
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


def _mention(clause: str, words: Sequence[str]) -> str:
    tokens = re.findall(r"[^\W\d_]+", clause)
    return " ".join(t for t in tokens if any(_same_word(t, w) for w in words))


def _among_alternatives(clause: str, words: Sequence[str]) -> str | None:
    """The words naming the subject as one of several alternatives ("pop or hip-hop", "pop, soul, or r&b"), else
    None; alternatives that are all subject words ("rap or hip-hop" asked as one) do not count."""
    for m in re.finditer(r"[\w&'-]+(?:\s*,\s*[\w&'-]+)*,?\s+or\s+[\w&'-]+", clause):
        names = re.findall(r"[^\W\d_]+(?:&[^\W\d_]+)?", m.group(0).replace(" or ", " "))
        hit = [n for n in names if any(_same_word(n, w) for w in words)]
        other = [n for n in names if n not in hit and n not in lx.GENERIC_SUBJECT and n not in ("a", "an", "the")]
        if hit and other:
            return m.group(0).strip()
    return None


def _sibling(masked: str, words: Sequence[str]) -> str | None:
    """Another member of the subject's closed set (lexicon.SIBLINGS: genres) the reply names and does not deny."""
    for kind, members in lx.SIBLINGS.items():
        own = next((m for m in members if any(w in m for w in words)), None)
        if own is None:
            continue
        others = set().union(*(m for m in members if m is not own))
        for clause in lx.CLAUSE_SPLIT.split(masked):
            named = [t for t in re.findall(r"[^\W\d_]+(?:&[^\W\d_]+)?", clause) if t in others]
            if named and not _denied(clause, named) and not lx.NOT_ASSERTED.search(clause):
                return f"{kind} '{named[0]}'"
    return None


def _implicit(masked: str, subject: str | None) -> Extraction:
    words = _subject_words(subject)
    generic = [
        w for w in re.findall(r"[^\W\d_]+", (subject or "").lower()) if w in lx.GENERIC_SUBJECT and w not in words
    ]
    found: list[tuple[str, str, bool, str]] = []  # (polarity, words, about the subject, clause)
    clauses = [
        (k == 0, c)
        for sentence in re.split(r"[.;!?\n]+", masked)
        for k, c in enumerate(lx.CLAUSE_SPLIT.split(sentence))
    ]
    for opens, clause in clauses:
        if not clause.strip():
            continue
        denied = _denied(clause, words) if words else None
        if denied:  # "birds singing, not a dog": the subject is denied, whatever else is heard
            found.append(("no", denied, True, clause))
            continue
        general = _denied(clause, generic) if generic else None
        if general:  # "there isn't any music present" to a jazz-music question
            found.append(("no", general, True, clause))
            continue
        no, yes = _statements(clause)
        if words and _mentions(clause, words):  # "I hear a dog, no cat": read the phrase that names the subject
            phrase = ",".join(ph for ph in re.split(r"[,:]", clause) if _mentions(ph, words))
            no, yes = _statements(phrase) if any(_statements(phrase)) else (no, yes)
        about = bool(words) and _mentions(clause, words)
        if no:  # a negation inside a clause dominates its affirmative frame ("there is no dog")
            found.append(("no", no.group(0).strip(), about, clause))
        elif (
            about
            and not lx.NON_LATIN.search(clause)
            and not lx.NOT_ASSERTED.search(clause)
            and not (opens and lx.GENERIC_TOPIC.search(clause) and not lx.PRESENCE.search(clause))
        ):
            among = _among_alternatives(clause, words)
            if among:  # "likely a pop or hip-hop song" to a pop question
                found.append(("alternatives", among, True, clause))
            else:  # "It sounds like jazz.", "delivered in an angry tone", "the dog is barking in the background"
                found.append(
                    ("yes", (yes.group(0).strip() + " ... " if yes else "") + _mention(clause, words), True, clause)
                )
        elif yes:
            found.append(("yes", yes.group(0).strip(), about, clause))
    if words:
        about = [f for f in found if f[2]]
        if about:
            found = about
        elif sibling := _sibling(masked, words):  # "a rap or hip-hop song" to an alternative-music question
            return _answer("no", f"names another {sibling}, not '{subject}'")
        else:
            others = [f for f in found if f[0] == "yes"]
            # absence of another subject answers only when said of "it"/"such a sound" ("there is no such sound"),
            # not of a named other thing ("there's no spoken dialogue" to an electronic-music question)
            found = [f for f in found if f[0] == "no" and lx.ABSENCE_OF_IT.search(f[3][f[3].find(f[1]) :] or f[1])]
            only = next((m for f in others for m in [lx.EXCLUSIVE.search(f[3])] if m), None)
            if not found and only:  # "I only hear drums" to a trumpet question
                return _answer("no", f"'{only.group(0).strip()}' names other sounds only, not '{subject}'")
            if not found and others:
                return Extraction(
                    "unrelated", reason=f"describes other sounds ('{others[0][1]}') without mentioning '{subject}'"
                )
    if any(f[0] == "alternatives" for f in found) and not any(f[0] == "no" for f in found):
        alt = next(f for f in found if f[0] == "alternatives")
        return Extraction("ambiguous", reason=f"names '{subject}' among alternatives: '{alt[1]}'")
    found = [f for f in found if f[0] != "alternatives"]
    polarities = {f[0] for f in found}
    if len(polarities) == 2:
        return Extraction("ambiguous", reason="mixed statements: " + "; ".join(f"'{f[1]}'" for f in found[:3]))
    if polarities:
        return _answer(found[0][0], f"statement '{found[0][1]}'")
    return Extraction("unrelated", reason="no yes/no answer found")


def _quoted(norm: str) -> list[tuple[int, int, str]]:
    """Quoted material of three words or more (lyrics, a transcript, the entry's description): it does not answer."""
    return [(m.start(), m.end(), m.group(0)) for m in lx.QUOTED.finditer(norm) if len(m.group(1).split()) >= 3]


def _sentence_of(text: str, pos: int) -> tuple[int, int]:
    starts = [m.end() for m in re.finditer(r"[.;!?\n]+", text[:pos])]
    end = re.search(r"[.;!?\n]", text[pos:])
    return (starts[-1] if starts else 0), (pos + end.start() if end else len(text))


def _taken_back(after: str, words: Sequence[str]) -> str | None:
    """'yes, but it is a cat, not a dog': the words after a yes that deny the subject, else None."""
    for clause in lx.CLAUSE_SPLIT.split(after):
        denied = _denied(clause, words) if clause.strip() else None
        if denied:
            return denied
    return None


def _yesno_rules(text: str | None, subject: str | None) -> Extraction:
    norm, early, unknown = _preamble(text)
    if early is not None:
        return early
    unknown = sorted(unknown + _spans(lx.YESNO_UNKNOWN, norm))
    unknown = [u for u in unknown if not lx.UNCLEAR_WHAT_SAID.match(norm, u[1])]  # "unclear what is being said"
    quoted = _quoted(norm)
    unknown = [u for u in unknown if not any(a <= u[0] < b for a, b, _ in quoted)]
    masked = _mask(norm, unknown + quoted + [(m.start(), m.end(), m.group(0)) for m in lx.NEUTRAL.finditer(norm)])
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
    words = _subject_words(subject)
    if polarities:
        pos, pol, word = strong[0]
        after = masked[pos + len(word) :]
        if pol == "yes":
            contra = lx.CONTRADICTS_YES.match(after)
            if contra:
                return Extraction("ambiguous", reason=f"'{word}' contradicted by '{contra.group(0).strip(' ,.')}'")
            back = _taken_back(after, words) if words else None
            if back:
                return _answer("no", f"'{word}' taken back: '{back}' denies '{subject}'", hedged=hedged)
        if words and not unknown:  # "No, there is no jazz. The audio is simply a jazz song."
            rest = _implicit(after, subject)
            if (rest.is_answer and rest.value != pol and "names other sounds" not in rest.reason) or (
                rest.status == "ambiguous" and rest.reason.startswith("mixed")
            ):
                return Extraction("ambiguous", reason=f"'{word}' contradicted by {rest.reason}")
        if (
            pol == "no"
            and unknown
            and not masked[:pos].strip()
            and any(0 <= a - (pos + len(word)) <= 4 for a, _, _ in unknown)
        ):
            return Extraction("unknown", reason=f"'{word}' introduces uncertainty '{unknown[0][2].strip()}'")
        return _answer(pol, f"answer word '{word}'", hedged=hedged)
    ex = _implicit(masked, subject)
    if unknown:
        # uncertainty about something else ("the exact intention isn't clear") leaves a statement about the subject
        # standing when the two are in different sentences; otherwise the reply abstains
        about = (
            ex.is_answer
            and words
            and all(not _mentions(masked[slice(*_sentence_of(norm, a))], words) for a, _, _ in unknown)
        )
        return replace(ex, hedged=True) if about else _unknown(unknown)
    return replace(ex, hedged=hedged) if ex.is_answer else ex


def extract_yesno(
    text: str | None, *, subject: str | None = None, question: str | None = None, fallback: Fallback | None = None
) -> Extraction:
    """Classify a reply to a yes/no question as yes, no, unknown, refusal, ambiguous or unrelated.

    ``subject`` (e.g. the object asked about; else taken from ``question`` by ``asked_subject``) lets a statement
    count only when it names the subject: "It sounds like jazz." is a yes to a jazz question, "I hear a car engine."
    to a siren question is unrelated, never a yes.
    ``fallback`` (e.g. an LLM judge) is asked only for *unrelated* replies; its raw output is kept on the result.
    """
    if subject is None and question:
        subject = asked_subject(question)
    ex = _yesno_rules(text, subject)
    if ex.status != "unrelated" or fallback is None or not (text or "").strip():
        return ex
    raw = fallback(text or "")
    second = _yesno_rules(raw, None)
    if second.is_answer or second.status in ABSTENTIONS:
        return replace(second, via="fallback", fallback_raw=raw, reason=f"fallback: {second.reason}")
    return replace(ex, fallback_raw=raw, reason=f"{ex.reason}; fallback said '{raw}' ({second.status})")
