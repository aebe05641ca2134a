"""Free-text yes/no: a reply -> yes / no, or a named non-answer, read against the asked subject (or the question,
from which the subject is taken: ``subject.asked_subject``)."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import replace

from halluscope.reply import hedges as hd, lexicon as lx, negation as ng
from halluscope.reply.lemmas import same_word
from halluscope.reply.normal import Extraction, _mask, _preamble, _spans, _unknown
from halluscope.reply.reading import ABSTENTIONS, answer as _answer
from halluscope.reply.subject import asked_subject
from halluscope.reply.synonyms import names

# the strict yes/no reader's version, stated with every score (bump it when a reading can change)
READER_VERSION = "strict-2.3"
# the classes that mean the reader found nothing it can state (refusal, unknown and hedge are readings)
UNREAD = ("ambiguous", "unrelated", "unparsable")


def reader_summary(labels: Sequence[str]) -> dict:
    """What every score output states about the strict reader: its version, how many of the replies (their reading
    labels) it could not read, by class, and how many were hedged; ``line`` says it in one sentence."""
    unread = Counter(label for label in labels if label in UNREAD)
    hedge = sum(label == "hedge" for label in labels)
    detail = ", ".join(f"{k} {v}" for k, v in sorted(unread.items()))
    line = (
        f"reply reader {READER_VERSION}: {sum(unread.values())} of {len(labels)} replies could not be read"
        + (f" ({detail})" if detail else "")
        + f"; {hedge} hedged (never counted as yes or no)"
    )
    return {
        "version": READER_VERSION,
        "n_replies": len(labels),
        "unread": sum(unread.values()),
        "unread_classes": dict(unread),
        "hedge": hedge,
        "line": line,
    }


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
    """The same word up to inflection (``lemmas.same_word``: "dog"/"dogs", "собака"/"собаки", "ит"/"иттер"; never
    "cat"/"category"), or one of the word's other names (``synonyms``: "puppy" for "dog", "talking" for "speech")."""
    token, word = lx.WORD_FORMS.get(token, token), lx.WORD_FORMS.get(word, word)
    return same_word(token, word) or any(same_word(token, n) for n in names(word))


def _denied(clause: str, words: Sequence[str], *, other_names: bool = True) -> str | None:
    """The words that deny the subject inside a clause, else None: a negation cue whose scope covers a mention of
    the subject (``negation``: "the dog cannot be heard", "no dogs", "ит емес", "собаки не слышно"); a cue in
    another clause does not count ("there isn't any cat, the dog barks" does not deny the dog)."""
    match = _same_word if other_names else same_word
    for m in re.finditer(r"[^\W\d_]+(?:-[^\W\d_]+)*", clause):
        if not any(match(t, w) for t in _parts(m.group(0)) for w in words):
            continue
        scope = ng.negated(clause, m.start(), m.end())
        if scope:
            return f"{scope.cue} ... {m.group(0)}"
    return None


def _parts(token: str) -> list[str]:
    return [token] + (token.split("-") if "-" in token else [])


# after a leading "no"/"not" these words make it an answer word ("No it isn't"); any other word makes it the
# determiner of a negated phrase ("No dog can be heard", "Not a dog, but a cat"), read by its scope
_ANSWER_NO_NEXT = re.compile(
    r"\s+(?:it|there|i|that|this|they|he|she|we|you|way|sir|thanks|thank|not|really|at|exactly|quite|definitely|"
    r"the\s+(?:audio|clip|recording|sound|track)|so)\b"
)


def _determiner_no(masked: str, m: re.Match[str]) -> bool:
    word = m.group("w")
    rest = masked[m.end("w") :]
    return word in ("no", "not") and bool(re.match(r"\s+[^\W\d_]", rest)) and not _ANSWER_NO_NEXT.match(rest)


def _answer_words(masked: str) -> list[tuple[int, str, str]]:
    hits: dict[int, tuple[str, str]] = {}
    for p in lx.ANSWER_POSITIONS:
        for m in p.finditer(masked):
            if _determiner_no(masked, m):
                continue
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


def _hedge_of(sentence: str, clause: str, words: Sequence[str]) -> str | None:
    """The hedge cue that qualifies what a clause says of the subject: one in the scope-bounded part that names the
    subject ("the rumbling may be a train"; not "spoken in a happy tone, which might mean ..."), or a hedge standing
    alone between commas in the clause or at the head of its sentence ("Possibly, ...", "the dog, I think, ...")."""
    parts = [part for _, part in ng.clauses(clause)]
    named = [part for part in parts if words and _mentions(part, words)] or [clause]
    cue = next((c for part in named for c in [hd.hedge(part)] if c), None)
    if cue:
        return cue
    head = sentence.split(",", 1)[0] if "," in sentence else ""
    alone = [part for part in [*parts, head] if part.strip() and len(part.split()) <= 3]
    return next((c for part in alone for c in [hd.hedge(part)] if c), None)


def _implicit(masked: str, subject: str | None) -> Extraction:
    words = _subject_words(subject)
    generic = [
        w for w in re.findall(r"[^\W\d_]+", (subject or "").lower()) if w in lx.GENERIC_SUBJECT and w not in words
    ]
    if hd.ELLIPTIC.match(masked.strip()):  # "There isn't.", "It does.", "Нету.": the subject is the one asked about
        pol = "no" if ng.cue(masked) else "yes"
        return _answer(pol, f"elliptic answer '{masked.strip()}'")
    # (polarity, words, about the subject, clause, hedge cue, evidential)
    found: list[tuple[str, str, bool, str, str | None, bool]] = []
    clauses = [
        (k == 0, c, sentence)
        for sentence in re.split(r"[.;!?\n]+", masked)
        for k, c in enumerate(lx.CLAUSE_SPLIT.split(sentence))
    ]
    for opens, clause, sentence in clauses:
        if not clause.strip():
            continue
        hedge, evidential = _hedge_of(sentence, clause, words), bool(hd.EVIDENTIAL.search(clause))
        denied = _denied(clause, words) if words else None
        if denied:  # "birds singing, not a dog", "the dog cannot be heard": a cue's scope covers the subject
            found.append(("no", denied, True, clause, hedge, evidential))
            continue
        general = _denied(clause, generic, other_names=False) if generic else None
        if general:  # "there isn't any music present" to a jazz-music question
            found.append(("no", general, True, clause, hedge, evidential))
            continue
        no, yes = _statements(clause)
        about = bool(words) and _mentions(clause, words)
        if (
            about
            and not lx.NOT_ASSERTED.search(clause)
            and not (opens and lx.GENERIC_TOPIC.search(clause) and not lx.PRESENCE.search(clause))
        ):
            # named and in no negation's scope: asserted ("It sounds like jazz.", "the dog is barking", "a man is
            # talking" to a speech question), whatever else the clause denies ("a dog barks with no other sound")
            among = _among_alternatives(clause, words)
            if among:  # "likely a pop or hip-hop song" to a pop question
                found.append(("alternatives", among, True, clause, hedge, evidential))
            else:
                found.append(
                    (
                        "yes",
                        (yes.group(0).strip() + " ... " if yes else "") + _mention(clause, words),
                        True,
                        clause,
                        hedge,
                        evidential,
                    )
                )
        elif about:
            continue
        elif no or (not words and yes and (cue := ng.sentential(clause))):  # the clause's own verb negated
            found.append(("no", no.group(0).strip() if no else str(cue), False, clause, hedge, evidential))
        elif yes:
            found.append(("yes", yes.group(0).strip(), False, clause, hedge, evidential))
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
        pol = found[0][0]
        whole = hd.REPLY_HEDGE.search(masked)
        if whole or all(f[4] for f in found):  # every statement hedged: never a yes, never silently a no
            cue = whole.group(0) if whole else found[0][4]
            return _hedged(pol, f"statement '{found[0][1]}' hedged by '{cue}'")
        return _answer(pol, f"statement '{found[0][1]}'", hedged=any(f[5] for f in found))
    return Extraction("unrelated", reason="no yes/no answer found")


def _hedged(lean: str, reason: str) -> Extraction:
    """The class 'hedge': the reply leans to ``lean`` under a hedge cue (kept on the reading, never scored)."""
    return Extraction("hedge", reason=reason, hedged=True, lean=lean)


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


def _joined(norm: str, subject: str | None) -> str:
    """A subject whose name holds a conjunction ("rock and roll") joined in the reply, so that no clause ends
    inside it (same length: every offset stays)."""
    name = " ".join((subject or "").lower().split())
    if not re.search(r"\s(?:and|or|и|или|және|немесе)\s", name):
        return norm
    return re.sub(re.escape(name).replace(r"\ ", r"\s"), lambda m: re.sub(r"\s", "&", m.group(0)), norm)


def _yesno_rules(text: str | None, subject: str | None) -> Extraction:
    norm, early, unknown = _preamble(text)
    if early is not None:
        return early
    norm = _joined(norm, subject)
    if hd.HEDGE_ONLY.match(norm):  # "Maybe.", "Probably not.", "Может быть.": a hedge, not an abstention
        lean = "no" if re.search(r"\b(?:not|нет|жоқ)\b", norm) else "yes"
        return _hedged(lean, f"hedge only: '{norm.strip()}'")
    unknown = sorted(unknown + _spans(lx.YESNO_UNKNOWN, norm))
    unknown = [u for u in unknown if not lx.UNCLEAR_WHAT_SAID.match(norm, u[1])]  # "unclear what is being said"
    quoted = _quoted(norm)
    unknown = [u for u in unknown if not any(a <= u[0] < b for a, b, _ in quoted)]
    masked = _mask(norm, unknown + quoted + [(m.start(), m.end(), m.group(0)) for m in lx.NEUTRAL.finditer(norm)])
    both = lx.BOTH.search(masked)
    if both:
        return _unknown(unknown) if unknown else Extraction("ambiguous", reason=f"says both: '{both.group(0)}'")
    hedged = bool(unknown) or bool(hd.EVIDENTIAL.search(masked))
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
        start, end = _sentence_of(masked, pos)
        cue = hd.hedge(masked[start : min(end, pos + len(word) + 60)])
        if cue:  # "Possibly yes.", "Yes, there might be a dog.", "Вероятно, нет."
            return _hedged(pol, f"answer word '{word}' hedged by '{cue}'")
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
    return replace(ex, hedged=hedged or ex.hedged) if ex.is_answer else ex


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
