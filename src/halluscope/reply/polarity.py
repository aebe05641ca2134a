"""How a reply marks polarity and commitment: negation cues with their scope, and hedge cues (en, ru, kk).

Negation follows the cue-and-scope view of negation annotation (Morante and Daelemans 2012, *SEM 2012 shared task;
the BioScope corpus, Vincze et al. 2008): a cue negates the words in its scope, whatever verb carries it.

* Sentential cues negate the whole clause, the subject included: "The dog **cannot** be heard", "A siren **is not**
  audible", "**Nobody** is talking", "Лай собаки **не** слышен", "Ит үрген дыбыс естіл**ме**йді", "Ит **жоқ**".
* Constituent cues negate what follows them in the clause: "**no** dog", "birds, **not** a dog", "**without** music".

A clause ends at punctuation (not at a parenthesis: "Frying (food) cannot be heard"), at a contrastive or subordinating conjunction ("but", "while", "that", "но", "а",
"бірақ") and at "and"/"or" when a new clause starts after it ("a dog barks and the cat is silent"); a scope never
crosses a clause end. Phrases that contain a cue but deny nothing ("not only", "no doubt", "nothing but") are
blocked.

Hedge cues are the epistemic ones of the hedge-detection literature (Light et al. 2004; CoNLL-2010 shared task,
Farkas et al. 2010; Hyland 1998): "maybe", "possibly", "probably", "likely", "might", "may", "could be", "I think",
"возможно", "вероятно", "наверное", "мүмкін", "бәлкім", "шығар". Evidential perception verbs ("it sounds like
jazz", "appears to contain", "seems to be") report what was heard, not a doubt about it (evidentiality is not
epistemic modality: de Haan 1999): the reply is read as an answer and marked ``hedged``; a reply whose every
statement about the subject is hedged is read as the class 'hedge', never as yes or no.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

# ------------------------------------------------------------------------------------------------ negation
_AUX = r"(?:is|are|was|were|am|be|been|do|does|did|can|could|will|would|should|has|have|had|may|might|must|shall)"
SENTENTIAL = re.compile(
    r"\b(?:"
    rf"{_AUX}\s+not|[a-z]+n't|cannot|never|nowhere|nobody|no\s+one|nothing|neither|nor|none|"
    r"unable\s+to|fail(?:s|ed)?\s+to|lacks?|lacking|free\s+of|devoid\s+of|absent|missing|inaudible|undetectable|"
    r"не|нет|нету|ни|никто|никого|ничего|ничто|нигде|никакой|никакого|никакие|никаких|никогда|отсутству\w*|"
    r"жоқ|жок|емес|ешқандай|ешкім|ештеңе|ешбір|ешқашан|еш"
    r")\b"
    # Kazakh verbal negation: stem + -ма/-ме/-ба/-бе/-па/-пе + tense/person ("естілмейді", "үрмеді", "сөйлемейді")
    r"|\b[а-яәғқңөұүһі]{2,}(?:ма|ме|ба|бе|па|пе)(?:йды|йді|йтын|йтін|ған|ген|ды|ді)(?:м|қ|к|ң|ңыз|ңіз|мыз|міз)?\b"
)
CONSTITUENT = re.compile(r"\b(?:no|not|without|rather\s+than|instead\s+of|без)\b")
# cue words that deny nothing in these phrases
BLOCKED = re.compile(
    r"\b(?:not\s+only|not\s+just|not\s+merely|no\s+doubt|no\s+question|no\s+problem|no\s+matter|no\s+wonder|"
    r"nothing\s+(?:but|except|else\s+but)|none\s+other\s+than|can't\s+help\s+but|not\s+to\s+mention|"
    r"never\s+mind|no\s+longer\s+than|не\s+только|не\s+переставая|не\s+смолкая|ничего\s+себе|не\s+раз|"
    r"тек\s+қана\s+емес)\b"
)
# what ends a scope: punctuation, and conjunctions that open another clause or contrast
_BOUNDARY = re.compile(
    r"[.;:!?\n,\"]|\s-\s|"
    r"\b(?:but|however|although|though|whereas|while|instead|except|that|which|who|whose|where|whereby|"
    r"но|однако|а|зато|хотя|кроме|что|который|которая|которое|которые|где|"
    r"бірақ|алайда|ал|дегенмен|pero|mais|aber)\b"
)
# "and"/"or" end a scope when a new clause follows ("a dog barks and the cat does not")
_COORD = re.compile(
    r"\b(?:and|or)\s+(?=(?:there|it|i|he|she|they|we|you|this|that|the\s+\w+\s+" + _AUX + r"|\w+\s+" + _AUX + r")\b)"
)


def clauses(text: str) -> Iterator[tuple[int, str]]:
    """The scope-bounded clauses of a text, with their offsets."""
    start = 0
    cuts = sorted(
        [(m.start(), m.end()) for m in _BOUNDARY.finditer(text)] + [(m.start(), m.end()) for m in _COORD.finditer(text)]
    )
    for a, b in cuts:
        if a >= start:
            if text[start:a].strip():
                yield start, text[start:a]
            start = b
    if text[start:].strip():
        yield start, text[start:]


def _cues(clause: str) -> list[tuple[int, int, str, str]]:
    blocked = [(m.start(), m.end()) for m in BLOCKED.finditer(clause)]

    def free(m: re.Match[str]) -> bool:
        return not any(a <= m.start() < b for a, b in blocked)

    out = [(m.start(), m.end(), m.group(0), "clause") for m in SENTENTIAL.finditer(clause) if free(m)]
    taken = [(a, b) for a, b, _, _ in out]
    out += [
        (m.start(), m.end(), m.group(0), "after")
        for m in CONSTITUENT.finditer(clause)
        if free(m) and not any(a <= m.start() < b for a, b in taken)
    ]
    return sorted(out)


def negation(clause: str, start: int, end: int) -> str | None:
    """The negation cue whose scope covers the words at ``clause[start:end]``, else None ("The dog cannot be heard"
    -> 'cannot'; "There is no dog" -> 'no'; "A dog barks with no cat" -> None for the dog). ``clause`` is one of
    ``clauses``: a sentential cue covers all of it, a constituent cue what follows it."""
    for a, _b, cue, kind in _cues(clause):
        if kind == "clause" or a < start:
            return " ".join(cue.split())
    return None


def sentential(clause: str) -> str | None:
    """A cue that negates a whole clause ("What I hear does not match what I see"), else None."""
    for _start, part in clauses(clause):
        cue = next((c for _, _, c, kind in _cues(part) if kind == "clause"), None)
        if cue:
            return " ".join(cue.split())
    return None


def negated_clause(clause: str) -> str | None:
    """A sentential or constituent negation cue anywhere in a clause, else None."""
    cues = _cues(clause)
    return " ".join(cues[0][2].split()) if cues else None


# ------------------------------------------------------------------------------------------------ hedges
HEDGE = re.compile(
    r"\b(?:maybe|perhaps|possibly|possible|probably|probable|likely|unlikely|might|may\s+(?:be|have|contain|"
    r"include|feature|hear|come|also|well)|could\s+(?:be|have\s+been|possibly|also\s+be|well\s+be)|"
    r"i\s+(?:think|guess|suppose|believe|assume|reckon)|presumably|supposedly|conceivably|"
    r"can't\s+rule\s+out|cannot\s+rule\s+out|not\s+impossible|"
    r"возможно|может\s+быть|может,|вероятно|вероятнее\s+всего|наверное|наверно|пожалуй|скорее\s+всего|"
    r"предположительно|не\s+исключено|вряд\s+ли|могу\s+ошибаться|мне\s+кажется|я\s+думаю|по-моему|"
    r"мүмкін|бәлкім|шығар|шамасы|сірә|ықтимал|меніңше|болар)(?=\W|$)"
)
# a sentence that is a hedge and nothing else ("Maybe.", "Может быть.", "Бәлкім.")
HEDGE_ONLY = re.compile(
    r"^\W*(?:(?:well|hmm+|um+|so)\W+)?(?:maybe|perhaps|possibly|probably|likely|might\s+be|could\s+be|"
    r"may\s+be|it(?:'s|\s+is)\s+possible|possibly\s+yes|maybe\s+yes|probably\s+yes|possibly\s+not|maybe\s+not|"
    r"probably\s+not|likely\s+not|i\s+think\s+so|i\s+guess\s+so|i\s+suppose\s+so|"
    r"возможно|может\s+быть|может|вероятно|наверное|наверно|пожалуй|возможно,?\s+(?:да|нет)|"
    r"вероятно,?\s+(?:да|нет)|наверное,?\s+(?:да|нет)|мүмкін|бәлкім|мүмкін,?\s+(?:иә|жоқ))\W*$"
)
# a hedge on the whole reply, wherever it stands ("..., but I may be wrong")
REPLY_HEDGE = re.compile(
    r"\b(?:i\s+(?:may|might|could)\s+be\s+(?:wrong|mistaken)|if\s+i'm\s+not\s+mistaken|"
    r"if\s+i\s+am\s+not\s+mistaken|могу\s+ошибаться|если\s+не\s+ошибаюсь|қателесуім\s+мүмкін)(?=\W|$)"
)
# evidential perception: an answer, marked hedged
EVIDENTIAL = re.compile(
    r"\b(?:seems?|seemingly|appears?|apparently|sounds?\s+like|sounds?\s+as\s+if|"
    r"кажется|похоже|видимо|по-видимому|сияқты|секілді)\b"
)


def hedge(text: str) -> str | None:
    """The first hedge cue of a text, else None."""
    m = HEDGE.search(text)
    return m.group(0).strip(" ,") if m else None


# a reply that answers by ellipsis, the asked subject left out ("There isn't.", "It does.", "Нету.", "Бар.")
ELLIPTIC = re.compile(
    r"^\W*(?:there\s+(?:is|are|was|were)(?:n't|\s+not)?(?:\s+(?:any|one|none|some))?|"
    r"it\s+(?:does|did|is|has|was)(?:n't|\s+not)?|none(?:\s+at\s+all)?|nothing|"
    r"нет[уь]?|есть|не\s+слышно|не\s+было|не\s+слышу|слышно|бар|жоқ|жок|естілмейді|естіледі)\W*$"
)
