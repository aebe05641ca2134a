"""Negation cues and their scope: which words of a sentence a negation denies.

The algorithm is NegEx's (W. W. Chapman et al., "A simple algorithm for identifying negated findings and diseases
in discharge summaries", J. Biomed. Inform. 34, 2001) with the scope notions of the negation-scope literature
(R. Morante and W. Daelemans, "A metalearning approach to processing the scope of negation", CoNLL 2009): a *cue*
("no", "not", "without", "absence of", "нет") denies the words of its *scope*; the scope runs from the cue to the
end of its clause, cut at a *terminator* (clause punctuation, a contrastive or temporal conjunction: "but", "only",
"while", "followed by", "но", "а"); *pseudo-cues* look like cues and deny nothing ("not only", "no doubt", "nothing
but"). Three cue kinds:

* ``pre``: the scope follows the cue ("no explosion", "without any music", "no one is speaking", "без музыки");
* ``post``: the scope precedes it, back to the clause start ("the music is absent", "собаки нет", "ит жоқ");
* ``verbal``: a negated verb ("does not", "isn't", "cannot be heard", "не слышно") denies what follows it and,
  when a subject stands before it in the clause, the subject too ("a dog does not bark", "the birds cannot be
  heard"), unless a degree or manner word carries the negation ("the music is not loud", "never stops").

Coordination stays in scope ("no dogs or cats", "no dogs and cats"); "and" opens a new clause when a determiner,
pronoun or "there" follows it ("no music and a man speaks"). English, Russian and Kazakh cues.
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
}
# verbal negators: deny what follows and the clause's subject before them
_VERBAL: set[tuple[str, ...]] = {
    ("not",),
    ("never",),
    ("cannot",),
    ("can", "not"),
    ("не",),
    ("емес",),
}
_VERBAL_SUFFIX = "n't"  # isn't, doesn't, can't, wasn't ...
# post-cues: their scope is the clause before them
_POST: set[tuple[str, ...]] = {
    ("absent",),
    ("missing",),
    ("inaudible",),
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
    "not": {"only", "just", "merely", "simply", "least"},
    "no": {"doubt", "matter", "sooner"},
    "nothing": {"but", "except", "else"},
    "none": {"other"},
    "never": {"ends", "ending", "stops", "stopping", "ceases", "ceasing"},
    "не": {"только", "прекращается", "прекращаясь", "смолкает", "умолкает"},
}
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
    "которые",
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


def _clause_end(words: list[str], i: int) -> int:
    """The index of the first word from i on that ends the clause (a terminator, hard punctuation, a new clause
    after 'and'), or len(words)."""
    for j in range(i, len(words)):
        w = words[j]
        if w in _HARD or w in _TERMINATORS:
            return j
        if w in _AND and j + 1 < len(words) and words[j + 1] in _NEW_CLAUSE:
            return j
    return len(words)


def _clause_start(words: list[str], i: int) -> int:
    """The index of the first word of the clause that word i is in."""
    for j in range(i - 1, -1, -1):
        w = words[j]
        if w in _HARD or w in _TERMINATORS:
            return j + 1
        if w in _AND and j + 1 < len(words) and words[j + 1] in _NEW_CLAUSE:
            return j + 1
    return 0


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

    i = 0
    while i < len(words):
        w = words[i]
        nxt = words[i + 1] if i + 1 < len(words) else ""
        if nxt in _PSEUDO_AFTER.get(w, ()) or (w == "not" and nxt in _TERMINATORS):
            i += 2
            continue
        pre, verbal = _match(words, i, _PRE), _match(words, i, _VERBAL)
        if not verbal and w.endswith(_VERBAL_SUFFIX):
            verbal = 1
        n = max(pre, verbal)
        if n:
            cue = " ".join(words[i : i + n])
            end = _clause_end(words, i + n)
            span(i + n, end, cue, "verbal" if verbal >= pre else "pre")
            if verbal >= pre:
                head = next((x for x in words[i + n : end] if x not in _AUX), "")
                if head not in _DEGREE:
                    span(_clause_start(words, i), i, cue, "verbal")
        if _match(words, i, _POST):
            start = _clause_start(words, i)
            # a post-cue denies the clause before it; "нет"/"отсутствует" at the clause start deny what follows
            span(start, i, w, "post")
        i += max(n, 1)
    return tuple(out)


@functools.lru_cache(maxsize=4096)
def scopes_after(text: str, cues: frozenset[str], kind: str) -> tuple[Scope, ...]:
    """The clause after each cue word of ``cues`` (the same clause ends as a negation's scope): for cues that are
    not negations but open a scope of their own (what a caption reports as said or sung: "the lyrics mention ...")."""
    toks = _tokens(text)
    words = [t[0] for t in toks]
    out = []
    for i, w in enumerate(words):
        if w in cues:
            end = _clause_end(words, i + 1)
            if end > i + 1:
                out.append(Scope(w, kind, toks[i + 1][1], toks[end - 1][2]))
    return tuple(out)


def negated(text: str, start: int, end: int) -> Scope | None:
    """The scope that denies the span ``start``..``end`` of ``text`` (a label mention, a subject), or None."""
    for s in negation_scopes(text):
        if s.start <= start and end <= s.end:
            return s
    return None
