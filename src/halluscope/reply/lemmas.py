"""Whole words and their forms, for matching a label in a reply: "dogs", "barking" and "собаки" are forms of "dog",
"bark" and "собака"; "category", "catchy" and "caterpillar" are not forms of "cat".

Lemmas come from simplemma's dictionaries (English, Russian); Kazakh, which simplemma does not cover, is matched as
a stem followed only by Kazakh inflectional suffixes (plural, possessive, case, person and the common verb endings),
with the voicing of a final k/q/p before a vowel (мысық -> мысығы)."""

from __future__ import annotations

import functools
import os
import re

_KAZAKH = re.compile(r"[әғқңөұүһі]")
_CYRILLIC = re.compile(r"[\u0400-\u04ff]")

# endings a stem may take and still be the same word (derivation kept small: an adjective of the noun, -ing / -er)
# no "-y": "belly" is not a form of "bell" (and "jazzy" goes unmatched)
_EN_ENDINGS = re.compile(r"(?:s|es|ed|d|ing|er|ers|ish|ly|ness|ful|ic|al|is(?:t|ts)|'s|s')")
_EN_SHORT = re.compile(r"(?:s|es|'s|s'|ness|ly|is(?:t|ts))")  # a short word takes only its plural: "car" is not "cared"
_RU_ENDINGS = re.compile(
    r"(?:а|я|о|е|ё|и|ы|у|ю|ь|ой|ей|ом|ем|ам|ям|ах|ях|ами|ями|ов|ев|ью|ию|ия|ие|ий|ый|ая|ое|ые|ого|его|ому|ему|ых|"
    r"их|ым|им|ую|юю)"
)
_KK_SUFFIX = (
    r"(?:лар|лер|дар|дер|тар|тер|ның|нің|дың|дің|тың|тің|ға|ге|қа|ке|на|не|ды|ді|ты|ті|ны|ні|да|де|та|те|нда|нде|"
    r"дан|ден|тан|тен|нан|нен|мен|бен|пен|ым|ім|ың|ің|сы|сі|ы|і|м|ң|н|а|е|й|п|ып|іп|ған|ген|қан|кен|атын|етін|"
    r"йды|йді|ады|еді|ар|ер|р|у|ю|дағы|дегі|тағы|тегі|ша|ше|дай|дей|тай|тей|ма|ме|ба|бе|па|пе|йтын|йтін|"
    r"уда|уде|ушы|уші|шы|ші|лы|лі|ғы|гі|қы|кі|с|ыс|іс|л|ыл|іл|ын|ін|ла|ле|мын|мін|сың|сің|ыз|із|май|мей|бай|бей|пай|пей|жатыр|тұр)"
)
_KK_ENDINGS = re.compile(rf"{_KK_SUFFIX}{{1,5}}")
_KK_ONE = re.compile(rf"(?=..){_KK_SUFFIX}")
_KK_VOICED = {"қ": "ғ", "к": "г", "п": "б"}


def language(word: str) -> str:
    """'kk', 'ru' or 'en' by the letters of one word (a Kazakh letter marks Kazakh)."""
    if _KAZAKH.search(word):
        return "kk"
    return "ru" if _CYRILLIC.search(word) else "en"


@functools.lru_cache(maxsize=1)
def _simplemma():
    import simplemma

    return simplemma


@functools.lru_cache(maxsize=50_000)
def lemma(word: str) -> str:
    """The dictionary form of a lower-cased word (simplemma for English and Russian); a Kazakh word as it is."""
    w = word.lower().replace("ё", "е")
    lang = language(w)
    if lang == "kk" or len(w) < 3:
        return w
    try:
        return _simplemma().lemmatize(w, lang=lang).lower().replace("ё", "е")
    except (ValueError, KeyError):  # a word the dictionary cannot take stays itself
        return w


@functools.lru_cache(maxsize=20_000)
def _known_ru(word: str) -> bool:
    return bool(_simplemma().is_known(word, lang="ru"))


def _inflected(long: str, stem: str, lang: str) -> bool:
    """Whether ``long`` is ``stem`` plus inflectional endings of the language."""
    stems = [stem]
    if lang != "en" and stem[-1:] in _KK_VOICED:
        stems.append(stem[:-1] + _KK_VOICED[stem[-1]])
    if lang != "en" and stem[-1:] in "аяоеиыьй" and len(stem) > 3:
        stems.append(stem[:-1])  # собака -> собак|и
    if lang == "en":
        endings = [_EN_ENDINGS if len(stem) > 3 else _EN_SHORT]
    elif _KAZAKH.search(long) or not _known_ru(stem):  # a Kazakh word may carry no Kazakh letter ("ит", "иттер")
        endings = [_RU_ENDINGS, _KK_ENDINGS]
    else:  # a Russian word takes Russian endings, or one Kazakh suffix ("музыканы"; "кот" is not "котел")
        endings = [_RU_ENDINGS, _KK_ONE]
    return any(long.startswith(s) and (long == s or any(e.fullmatch(long[len(s) :]) for e in endings)) for s in stems)


@functools.lru_cache(maxsize=200_000)
def same_word(token: str, word: str) -> bool:
    """The same word up to inflection: equal lemmas, or one word is the other plus endings of its language
    ("dog"/"dogs", "jazz"/"jazzy", "ит"/"иттер", "мысық"/"мысығы"); never a longer word that merely starts with it
    ("cat"/"category", "car"/"carefully", "bell"/"bellows")."""
    token, word = token.lower().replace("ё", "е"), word.lower().replace("ё", "е")
    if token == word:
        return True
    if language(token) != language(word) and not (_CYRILLIC.search(token) and _CYRILLIC.search(word)):
        return False
    lt, lw = lemma(token), lemma(word)
    if lt == lw:
        return True
    lang = "en" if language(token) == "en" else "cyr"
    short, long = sorted((token, word), key=len)
    if _inflected(long, short, lang):
        return True
    short, long = sorted((lt, lw), key=len)
    if len(short) >= 3 and _inflected(long, short, lang):
        return True
    if lang == "en":
        return False
    # two inflected forms of one stem: "сөйлеп" / "сөйлеу" (сөйле-п, сөйле-у)
    stem = os.path.commonprefix([token, word])
    kazakh = bool(_KAZAKH.search(token + word))
    return len(stem) >= 3 and all(
        _RU_ENDINGS.fullmatch(w[len(stem) :]) or (kazakh and _KK_ENDINGS.fullmatch(w[len(stem) :]))
        for w in (token, word)
    )
