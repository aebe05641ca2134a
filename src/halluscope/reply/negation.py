"""Negation cues and their scope: which words of a text a negation denies (en, ru, kk). The one negation module:
the strict yes/no reader (``yesno``) and the caption extractor (``closedform.kuan_captions``) both read it.

The algorithm is NegEx's (W. W. Chapman et al., "A simple algorithm for identifying negated findings and diseases
in discharge summaries", J. Biomed. Inform. 34, 2001) with the cue-and-scope view of negation annotation (R. Morante
and W. Daelemans, CoNLL 2009 and the *SEM 2012 shared task; the BioScope corpus, Vincze et al. 2008): a *cue* ("no",
"not", "without", "absence of", "нет") denies the words of its *scope*; the scope runs from the cue to the end of
its clause, cut at a *terminator* (clause punctuation, a contrastive, subordinating or temporal conjunction: "but",
"only", "while", "that", "followed by", "но", "а", "бірақ"); *pseudo-cues* look like cues and deny nothing ("not
only", "no doubt", "nothing but", "не только", "тек қана емес"). Three cue kinds:

* ``pre``: the scope follows the cue ("no explosion", "without any music", "no one is speaking", "birds, not a
  dog", "без музыки", "ешқандай дыбыс");
* ``post``: the scope precedes it, back to the clause start ("the music is absent", "собаки нет", "ит жоқ");
* ``verbal``: a negated verb ("does not", "isn't", "cannot be heard", "never", "не слышно", a Kazakh verb in
  -ма/-ме/-ба/-бе/-па/-пе: "естілмейді") denies what follows it and, when a subject stands before it in the clause,
  the subject too ("a dog does not bark", "the birds cannot be heard", "лай собаки не слышен"), unless a degree or
  manner word carries the negation ("the music is not loud", "never stops"). A bare "not" after a noun is a
  ``pre`` cue ("a cat, not a dog"; "a cat not a dog" denies the dog only).

Coordination stays in scope ("no dogs or cats", "no dogs and cats"); "and" opens a new clause when a determiner,
pronoun or "there" follows it ("no music and a man speaks"), "or" when a pronoun or "there" follows it ("no dog or
there is a cat"). A parenthesis ends no clause ("Frying (food)
cannot be heard").
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

_TOKEN = re.compile(r"[^\W_]+(?:['’][^\W_]+)*|[.,;:!?()\[\]\"]|\s-\s|\n")

# pre-cues: their scope follows them (multi-word cues as word tuples, matched longest first)
_PRE: set[tuple[str, ...]] = {
    ("no",),
    ("none",),
    ("nothing",),
    ("nobody",),
    ("no", "one"),
    ("neither",),
    ("nor",),
    ("without",),
    ("absence", "of"),
    ("absent",),  # "absent any music"; after its subject it is a post-cue (below)
    ("lack", "of"),
    ("lacks",),
    ("lacking",),
    ("devoid", "of"),
    ("free", "of"),
    ("rather", "than"),
    ("instead", "of"),
    ("нет",),
    ("нету",),
    ("без",),
    ("ни",),
    ("никто",),
    ("ничего",),
    ("ничто",),
    ("отсутствие",),
    ("отсутствует",),
    ("отсутствуют",),
    ("ешқандай",),
    ("ешкім",),
    ("ештеңе",),
    ("ешбір",),
    ("еш",),
    ("unable", "to"),
    ("fail", "to"),
    ("fails", "to"),
    ("failed", "to"),
    ("lack",),
    ("никого",),
    ("никакой",),
    ("никакого",),
    ("никакая",),
    ("никакие",),
    ("никаких",),
}
# pre-cues that deny a whole clause, not one phrase: what a clause without the subject says (``sentential``)
_CLAUSAL_PRE = {"none", "nothing", "nobody", "no one", "neither", "nor", "никто", "ничего", "ничто", "никого"}
_CLAUSAL_PRE |= {"ешкім", "ештеңе", "unable to", "fail to", "fails to", "failed to"}
# verbal negators: deny what follows and the clause's subject before them
_VERBAL: set[tuple[str, ...]] = {
    ("not",),  # after an auxiliary; a bare "not" is a pre-cue
    ("never",),
    ("nowhere",),
    ("cannot",),
    ("can", "not"),
    ("не",),
    ("никогда",),
    ("нигде",),
    ("ешқашан",),
    ("емес",),
}
# the words after which "not" negates a verb ("is not", "does not"); elsewhere it negates what follows it
_AUX_VERBS = {"is", "are", "was", "were", "am", "be", "been", "do", "does", "did", "can", "could", "will", "would"}
_AUX_VERBS |= {"should", "has", "have", "had", "may", "might", "must", "shall"}
_AUXILIARIES = _AUX_VERBS | {"still", "just", "really", "certainly", "definitely", "probably", "surely", "simply"}
# Kazakh verbal negation: stem + -ма/-ме/-ба/-бе/-па/-пе + tense/person ("естілмейді", "үрмеді", "сөйлемейді")
_KK_NEGATED_VERB = re.compile(
    r"[а-яәғқңөұүһі]{2,}(?:ма|ме|ба|бе|па|пе)(?:йды|йді|йтын|йтін|ған|ген|ды|ді)(?:м|қ|к|ң|ңыз|ңіз|мыз|міз)?"
)
_VERBAL_SUFFIX = "n't"  # isn't, doesn't, can't, wasn't ...
# post-cues: their scope is the clause before them
_POST: set[tuple[str, ...]] = {
    ("absent",),
    ("missing",),
    ("inaudible",),
    ("undetectable",),
    ("нет",),
    ("нету",),
    ("отсутствует",),
    ("отсутствуют",),
    ("жоқ",),
    ("жок",),
    ("емес",),
}
# pseudo-cues: a cue word followed by these denies nothing
_PSEUDO_AFTER = {
    "not": {"only", "just", "merely", "simply", "least", "to"},
    "no": {"doubt", "matter", "sooner", "question", "problem", "wonder", "longer"},
    "nothing": {"but", "except", "else"},
    "none": {"other"},
    "never": {"ends", "ending", "stops", "stopping", "ceases", "ceasing", "mind"},
    "не": {"только", "прекращается", "прекращаясь", "смолкает", "умолкает", "переставая", "смолкая", "раз"},
    "ничего": {"себе"},
    "can't": {"help"},
}
# a cue word preceded by these denies nothing ("тек қана емес": not only)
_PSEUDO_BEFORE = {"емес": {"қана"}}
# a verbal negation that carries a degree or manner ("is not loud", "does not stop") leaves the subject present
_DEGREE = {
    "loud",
    "loudly",
    "clear",
    "clearly",
    "very",
    "too",
    "so",
    "that",
    "quite",
    "as",
    "much",
    "constant",
    "constantly",
    "continuous",
    "continuously",
    "always",
    "far",
    "long",
    "steady",
    "steadily",
    "entirely",
    "fully",
    "completely",
    "particularly",
    "distinct",
    "distinctly",
    "close",
    "near",
    "stop",
    "stops",
    "stopping",
    "cease",
    "end",
    "fade",
    "громко",
    "очень",
    "слишком",
    "прекращается",
    "смолкает",
}
_AUX = {"be", "being", "been", "is", "are", "was", "were", "to", "ever", "really", "actually"}
# words that end a scope (NegEx's termination terms, plus clause-opening conjunctions of captions)
_TERMINATORS = {
    "but",
    "however",
    "although",
    "though",
    "yet",
    "only",
    "just",
    "except",
    "apart",
    "aside",
    "besides",
    "instead",
    "rather",
    "while",
    "whilst",
    "whereas",
    "which",
    "who",
    "whose",
    "when",
    "whenever",
    "then",
    "followed",
    "that",
    "where",
    "whereby",
    "before",
    "after",
    "until",
    "as",
    "because",
    "since",
    "with",
    "plus",
    "also",
    "но",
    "а",
    "однако",
    "зато",
    "только",
    "лишь",
    "кроме",
    "пока",
    "затем",
    "потом",
    "когда",
    "который",
    "которая",
    "которое",
    "которые",
    "что",
    "где",
    "хотя",
    "алайда",
    "дегенмен",
    "pero",
    "mais",
    "aber",
    "тек",
    "бірақ",
    "ал",
    "ғана",
}
# after "and"/"и"/"және" these open a new clause (a new subject), which ends the scope
_NEW_CLAUSE = {
    "a",
    "an",
    "the",
    "some",
    "someone",
    "somebody",
    "something",
    "several",
    "many",
    "one",
    "two",
    "he",
    "she",
    "it",
    "they",
    "we",
    "i",
    "you",
    "there",
    "this",
    "people",
    "его",
    "она",
    "он",
    "они",
    "кто",
}
_AND = {"and", "и", "және", "да"}
_OR = {"or", "или", "немесе"}
# after "or" (and "and") these open a new clause: "no dog or there is a cat"
_NEW_SUBJECT = {"he", "she", "it", "they", "we", "i", "you", "there", "this", "that", "его", "она", "он", "они"}
# a parenthesis does not end a clause: "Frying (food) cannot be heard", "a dog (a small one) is not barking"
_HARD = {".", ";", ":", "!", "?", '"', "\n", ",", "-"}


@dataclass(frozen=True)
class Scope:
    """A cue and the character span of the text it denies (``start``..``end``, cue excluded)."""

    cue: str
    kind: str  # pre | post | verbal
    start: int
    end: int


def _tokens(text: str) -> list[tuple[str, int, int]]:
    # lower-cased word by word: the offsets stay the text's own
    return [
        (m.group(0).strip().lower().replace("\u2019", "'") or "\n", m.start(), m.end()) for m in _TOKEN.finditer(text)
    ]


def _match(words: list[str], i: int, cues: set[tuple[str, ...]]) -> int:
    """The length of the longest cue of ``cues`` starting at word i (0: none)."""
    for n in (2, 1):
        if tuple(words[i : i + n]) in cues:
            return n
    return 0


def _opens_clause(words: list[str], j: int) -> bool:
    """Whether word j ends the clause before it: hard punctuation, a terminator, or a coordinator that a new subject
    follows ("and a man speaks", "or there is")."""
    w = words[j]
    if w in _HARD or w in _TERMINATORS:
        return True
    if w not in _AND and w not in _OR:
        return False
    nxt = words[j + 1] if j + 1 < len(words) else ""
    return nxt in _NEW_SUBJECT or (w in _AND and nxt in _NEW_CLAUSE)


def _clause_end(words: list[str], i: int) -> int:
    """The index of the first word from i on that ends the clause, or len(words)."""
    return next((j for j in range(i, len(words)) if _opens_clause(words, j)), len(words))


def _clause_start(words: list[str], i: int) -> int:
    """The index of the first word of the clause that word i is in."""
    return next((j + 1 for j in range(i - 1, -1, -1) if _opens_clause(words, j)), 0)


def clauses(text: str) -> list[tuple[int, str]]:
    """The scope-bounded clauses of a text with their offsets: no negation's scope crosses from one to another."""
    toks = _tokens(text)
    words = [t[0] for t in toks]
    out, i = [], 0
    while i < len(words):
        if _opens_clause(words, i):
            i += 1
            continue
        end = _clause_end(words, i)
        out.append((toks[i][1], text[toks[i][1] : toks[end - 1][2]]))
        i = end
    return out


def _verbal_at(words: list[str], i: int) -> int:
    """The length of a verbal cue at word i: "is not", "isn't", "never", "не", a Kazakh negated verb (0: none)."""
    w = words[i]
    n = _match(words, i, _VERBAL)
    if n and w == "not" and not (i and words[i - 1] in _AUXILIARIES):
        return 0  # "a cat, not a dog": "not" negates what follows it
    if not n and (w.endswith(_VERBAL_SUFFIX) or _KK_NEGATED_VERB.fullmatch(w)):
        return 1
    return n


def _cues(words: list[str]) -> list[tuple[int, int, str]]:
    """(word index, length, kind) of every negation cue among the words, pseudo-cues left out."""
    out = []
    i = 0
    while i < len(words):
        w = words[i]
        nxt = words[i + 1] if i + 1 < len(words) else ""
        if nxt in _PSEUDO_AFTER.get(w, ()) or (w == "not" and nxt in _TERMINATORS):
            i += 2
            continue
        if i and words[i - 1] in _PSEUDO_BEFORE.get(w, ()):
            i += 1
            continue
        pre, verbal = _match(words, i, _PRE), _verbal_at(words, i)
        if w == "not" and not verbal:
            pre = 1
        n = max(pre, verbal)
        if n and verbal >= pre and w == "not":
            out.append((i - 1, n + 1, "verbal"))  # the cue with its auxiliary: "does not"
        elif n:
            out.append((i, n, "verbal" if verbal >= pre else "pre"))
        if _match(words, i, _POST):
            out.append((i, 1, "post"))
        i += max(n, 1)
    return out


@functools.lru_cache(maxsize=4096)
def negation_scopes(text: str) -> tuple[Scope, ...]:
    """Every negation cue of ``text`` with the character span its scope covers (lower-cased matching; the offsets
    are the text's own)."""
    toks = _tokens(text)
    words = [t[0] for t in toks]
    out: list[Scope] = []

    def span(a: int, b: int, cue: str, kind: str) -> None:
        if a < b:
            out.append(Scope(cue, kind, toks[a][1], toks[b - 1][2]))

    for i, n, kind in _cues(words):
        cue = " ".join(words[i : i + n])
        if kind == "post":
            span(_clause_start(words, i), i, cue, "post")  # the clause before a post-cue
            continue
        end = _clause_end(words, i + n)
        span(i + n, end, cue, kind)
        if kind == "verbal":
            head = next((x for x in words[i + n : end] if x not in _AUX), "")
            if head not in _DEGREE:
                span(_clause_start(words, i), i, cue, "verbal")
    return tuple(out)


def cue(text: str) -> str | None:
    """The first negation cue of a text, whatever its scope covers ("There isn't.", "Нету.", "Жоқ."), else None."""
    words = [t[0] for t in _tokens(text)]
    found = _cues(words)
    return " ".join(words[found[0][0] : found[0][0] + found[0][1]]) if found else None


def sentential(text: str) -> str | None:
    """A cue that negates a clause's own verb or the whole clause ("What I hear does not match what I see",
    "Nothing is heard"), not one phrase of it ("a dog with no collar"), else None."""
    words = [t[0] for t in _tokens(text)]
    for i, n, kind in _cues(words):
        c = " ".join(words[i : i + n])
        if kind != "pre" or c in _CLAUSAL_PRE:
            return c
    return None


@functools.lru_cache(maxsize=4096)
def scopes_after(text: str, cues: frozenset[str], kind: str) -> tuple[Scope, ...]:
    """The clause after each cue word of ``cues`` (the same clause ends as a negation's scope): for cues that are
    not negations but open a scope of their own (what a caption reports as said or sung: "the lyrics mention ...")."""
    toks = _tokens(text)
    words = [t[0] for t in toks]
    out = []
    for i, w in enumerate(words):
        if w in cues:
            first = i + 2 if words[i + 1 : i + 2] in (["that"], ["что"]) else i + 1  # "mentions that ...": said
            end = _clause_end(words, first)
            if end > first:
                out.append(Scope(w, kind, toks[first][1], toks[end - 1][2]))
    return tuple(out)


def negated(text: str, start: int, end: int) -> Scope | None:
    """The scope that denies the span ``start``..``end`` of ``text`` (a label mention, a subject), or None."""
    for s in negation_scopes(text):
        if s.start <= start and end <= s.end:
            return s
    return None
