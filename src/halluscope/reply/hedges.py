"""Hedge cues and elliptic answers of a reply (en, ru, kk); negation and its scope are ``reply.negation``.

Hedge cues are the epistemic ones of the hedge-detection literature (Light et al. 2004; CoNLL-2010 shared task,
Farkas et al. 2010; Hyland 1998): "maybe", "possibly", "probably", "likely", "might", "may", "could be", "I think",
"возможно", "вероятно", "наверное", "мүмкін", "бәлкім", "шығар". Evidential perception verbs ("it sounds like
jazz", "appears to contain", "seems to be") report what was heard, not a doubt about it (evidentiality is not
epistemic modality: de Haan 1999): the reply is read as an answer and marked ``hedged``; a reply whose every
statement about the subject is hedged is read as the class 'hedge', never as yes or no.
"""

from __future__ import annotations

import re

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
