"""Whole words and their forms, for matching a label in a reply: "dogs", "barking" and "собаки" are forms of "dog",
"bark" and "собака"; "category", "catchy" and "caterpillar" are not forms of "cat".

Lemmas come from simplemma's dictionaries (English, Russian). An English word is a form of a label word when the
dictionary gives both one lemma ("cries"/"cry", "men"/"man"), when it is a plural the dictionary does not know as a
word of its own ("hiss" is no plural of "his", "blues" none of "blue"), one of a few derivations that keep the
label's referent ("musical", "soulful", "violinist", "sadness"; ``_EN_DERIVED``), or an inflected verb of a gerund
label ("sings"/"singing"). No other derivation: "assist" is not "ass", "blending" not "blender", "crowd" not
"crow". A verb form (-ing, -ed) of a noun names it only when the noun is a sound made by
that verb ("barking"/"bark", "coughing"/"cough"; ``SOUND_VERBS``), not when the verb does something else with the
thing ("shipping" boxes, "training" a dog). Kazakh, which simplemma does not cover, is matched as a stem followed
only by Kazakh inflectional suffixes (plural, possessive, case, person and the common verb endings), with the voicing
of a final k/q/p before a vowel (мысық -> мысығы)."""

from __future__ import annotations

import functools
import os
import re

_KAZAKH = re.compile(r"[әғқңөұүһі]")
_CYRILLIC = re.compile(r"[\u0400-\u04ff]")

# English endings a label word may take beyond what the dictionary lemmatizes: a plural, and the derivations that
# keep the label's referent: an adjective ("musical", "rhythmic", "soulful"), a player ("violinist"), a manner
# ("loudly") after a stem of four letters or more ("assist" is not "ass"), a quality ("sadness"); no agent -er
# ("blender" is no form of "blend")
_EN_PLURAL = re.compile(r"(?:s|es|'s|s')")
_EN_DERIVED = re.compile(r"(?:al|ic|ful|is(?:t|ts)|ly|ness)")
_EN_SHORT_DERIVED = re.compile(r"ness")
# verbs whose action is heard: their -ing/-ed form names the noun or verb of the same spelling (B. Levin, "English
# Verb Classes and Alternations", 1993: 37 communication, 38 sounds made by animals, 40.1-40.2 bodily and nonverbal
# sounds, 43.2 sound emission, 18.1 hitting, 26.7 performance, 57 weather, and the heard motions of AudioSet's
# classes); any other verb of a label word is another word ("shipping" boxes, "training" a dog)
SOUND_VERBS = frozenset(
    "baa bark bay bellow blat bleat bray buzz cackle caw chatter cheep chirp chirrup cluck coo croak crow drone gabble "  # codespell:ignore
    "growl grunt hiss hoot howl hum low mew meow miaow moo neigh oink purr quack roar screech snarl snort squawk squeak "
    "squeal trill tweet twitter ululate wail warble whicker whine whinny woof yap yelp yip yowl "
    "babble bang beat beep blare blast bleep boom bubble burble burr chime chink chug clack clang clank clap clash "
    "clatter click clink clomp clump clunk crack crackle crash creak crunch ding dong fizz fizzle flap flush groan "
    "gurgle honk jangle jingle knell knock patter peal ping plink plonk plop plunk pop putter rap rasp rattle ring "  # codespell:ignore
    "roll rumble rustle scream shriek shrill sizzle snap splash splutter sputter squelch strum swish swoosh thud thump "
    "thunder thunk tick ting tinkle toll toot trumpet twang vroom whir whirr whistle whoosh whump zing zip "
    "breathe burp belch cough gasp hiccup pant sneeze sniff sniffle snore wheeze yawn cry giggle laugh sigh sob "
    "chuckle snicker titter whimper moan shout yell whisper mumble mutter murmur sing chant drum play "
    "talk speak say tell chat converse narrate announce lecture utter discuss interview read recite preach pray "
    "argue call answer ask cheer applaud boo "
    "rain drizzle hail storm pour blow "
    "hammer pound slam tap bump kick slap smack thwack whack drip boil fry saw drill chop grind scrape scratch rub "
    "shake shatter tear rip crumple crush walk run stomp sew type vacuum "
    "sew type vacuum".split()
)
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


def _inflected(long: str, stem: str) -> bool:
    """Whether the Russian or Kazakh word ``long`` is ``stem`` plus inflectional endings of the language."""
    stems = [stem]
    if stem[-1:] in _KK_VOICED:
        stems.append(stem[:-1] + _KK_VOICED[stem[-1]])
    if stem[-1:] in "аяоеиыьй" and len(stem) > 3:
        stems.append(stem[:-1])  # собака -> собак|и
    if _KAZAKH.search(long) or not _known_ru(stem):  # a Kazakh word may carry no Kazakh letter ("ит", "иттер")
        endings = [_RU_ENDINGS, _KK_ENDINGS]
    else:  # a Russian word takes Russian endings, or one Kazakh suffix ("музыканы"; "кот" is not "котел")
        endings = [_RU_ENDINGS, _KK_ONE]
    return any(long.startswith(s) and (long == s or any(e.fullmatch(long[len(s) :]) for e in endings)) for s in stems)


@functools.lru_cache(maxsize=20_000)
def _known_en(word: str) -> bool:
    return bool(_simplemma().is_known(word, lang="en"))


def _gerund_stems(word: str) -> tuple[str, ...]:
    """The verbs a gerund label word is made from: "singing" sing, "idling" idle, "clapping" clap (AudioSet names
    many sounds by a gerund, and the lemmatizer reads some of them as other words)."""
    if not word.endswith("ing") or len(word) < 6:
        return ()
    stem = word[:-3]
    return (stem, stem + "e", stem[:-1]) if stem[-1] == stem[-2] else (stem, stem + "e")


def _verb_form(token: str) -> bool:
    return token.endswith(("ing", "ed"))


def _english_form(token: str, word: str) -> bool:
    """Whether an English word is a form of a label word (the module's rules for English)."""
    base, lw = lemma(token), lemma(word)
    if base == lw:
        # a noun's verb form names it only when the verb makes the noun's sound: "barking" bark, not "shipping" ship
        return not (_verb_form(token) and not _verb_form(word) and base == word and word not in SOUND_VERBS)
    # a gerund label by an inflected verb only: "sings", "claps", "idles"; a bare "a bit" or "a ring" is a noun
    if base != token and base in _gerund_stems(word):
        return True
    if not token.startswith(word):
        return False
    rest = token[len(word) :]
    if (_EN_DERIVED if len(word) > 3 else _EN_SHORT_DERIVED).fullmatch(rest):
        return True
    # a plural the dictionary does not know; "hiss" is a word of its own, no plural of "his", "blues" none of "blue"
    return bool(_EN_PLURAL.fullmatch(rest)) and not (_known_en(token) and base == token)


@functools.lru_cache(maxsize=200_000)
def same_word(token: str, word: str) -> bool:
    """Whether ``token`` (a word of a reply or caption) is a form of ``word`` (a label or subject word): "dogs" of
    "dog", "sings" of "singing", "musical" of "music", "ит"/"иттер", "мысық"/"мысығы"; never another word that
    merely starts with it or that it starts ("cat"/"category", "car"/"carefully", "ass"/"assist", "crow"/"crowd",
    "blender"/"blending"). English forms are read from the label word to the token (a plural, an adjective of the
    label); Russian and Kazakh forms either way."""
    token, word = token.lower().replace("ё", "е"), word.lower().replace("ё", "е")
    if token == word:
        return True
    if language(token) != language(word) and not (_CYRILLIC.search(token) and _CYRILLIC.search(word)):
        return False
    if language(token) == "en":
        return _english_form(token, word)
    lt, lw = lemma(token), lemma(word)
    if lt == lw:
        return True
    short, long = sorted((token, word), key=len)
    if _inflected(long, short):
        return True
    short, long = sorted((lt, lw), key=len)
    if len(short) >= 3 and _inflected(long, short):
        return True
    # two inflected forms of one stem: "сөйлеп" / "сөйлеу" (сөйле-п, сөйле-у)
    stem = os.path.commonprefix([token, word])
    kazakh = bool(_KAZAKH.search(token + word))
    return len(stem) >= 3 and all(
        _RU_ENDINGS.fullmatch(w[len(stem) :]) or (kazakh and _KK_ENDINGS.fullmatch(w[len(stem) :]))
        for w in (token, word)
    )
