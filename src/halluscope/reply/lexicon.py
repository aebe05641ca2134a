"""The one multilingual lexicon of the reply reader (en, ru, kk, zh, es, fr, de): refusals, uncertainty, answer
words, presence statements, numbers and ordinals, matched on normalised text. Every reader uses it.

All patterns run on lower-cased, NFKC-normalised text with straight apostrophes (see ``normalize_reply``).
Latin and Cyrillic patterns use ``\\b`` word boundaries, so "eyes" is not "yes" and "know" is not "no";
Chinese has no word boundaries and gets its own patterns.
"""

from __future__ import annotations

import re


def _alt(words: list[str]) -> str:
    """A regex alternation, longest first so a phrase wins over its prefix."""
    return "|".join(sorted((w.replace(" ", r"\s+") for w in words), key=len, reverse=True))


# --- refusals: the model says it cannot hear / process / answer (not: it hears no dog) -----------------
_AUDIO_OBJ = (
    r"(?:(?:the|this|that|your|any|an|provided|attached|given|uploaded|actual)\s+){0,2}"
    r"(?:audio|recording|sound\s+file|audio\s+file|audio\s+clip|clip|file|attachment|media|sound\s+clip)\b"
)
_CANNOT = (
    r"(?:can\s*not|can't|could\s+not|couldn't|unable\s+to|not\s+able\s+to|don't\s+have\s+the\s+(?:ability|capability|capacity)\s+to|"
    r"do\s+not\s+have\s+the\s+(?:ability|capability|capacity)\s+to|not\s+capable\s+of|incapable\s+of|no\s+way\s+(?:for\s+me\s+)?to|"
    r"don't\s+have\s+(?:the\s+)?(?:ability|capability)\s+to|lack\s+the\s+ability\s+to)"
)
_VERB = r"(?:directly\s+|actually\s+|physically\s+)?(?:hear|listen|process|access|analy[sz]|play|open|perceiv|interpret|review|receiv)\w*(?:\s+to)?"

_TASK_VERB = (
    r"(?:identify\w*|describ\w*|analy[sz]\w*|listen\w*(?:\s+to)?|interpret\w*|process\w*|access\w*|"
    r"provide\s+(?:a\s+|any\s+)?(?:descriptions?|details|analys[ie]s))"
)

REFUSAL = [
    re.compile(p)
    for p in [
        rf"\b{_CANNOT}\s+{_VERB}\s+{_AUDIO_OBJ}",
        # AudioTrust shapes: "I can't identify or describe the content of audio clips", "... speakers from audio samples"
        rf"\b{_CANNOT}\s+{_TASK_VERB}(?:\s*,?\s*(?:or|and)?\s*{_TASK_VERB})*\s+(?:[\w']+\s+){{0,5}}?(?:audio|voice)\s+"
        r"(?:content|clips|samples|files|inputs?|data|recordings)\b",
        # asking for the missing input instead of answering
        r"\b(?:please|kindly)\s+(?:provide|upload|share|attach|send)\s+(?:me\s+)?(?:the\s+|an\s+|your\s+|a\s+)?"
        r"(?:audio|recording|sound|file|text|article|clip|input|transcript)\b",
        r"\bno\s+(?:text|content|article|input|transcript)\s+(?:was\s+|has\s+been\s+|is\s+)(?:provided|attached|given|included)",
        rf"\b{_CANNOT}\s+{_VERB}\s+(?:sounds?|audio)\b",
        r"\bas\s+an?\s+(?:ai|artificial\s+intelligence|text-based|text\s+based|language\s+model|large\s+language\s+model|text\s+model)\b",
        r"\b(?:i'm|i\s+am)\s+(?:a\s+|an\s+|just\s+a\s+|only\s+a\s+)?(?:text-based|text\s+only|text-only|language\s+model)\b",
        r"\bno\s+(?:audio|recording)(?:\s+file|\s+clip|\s+input)?\s+(?:was\s+|has\s+been\s+|is\s+|were\s+)?(?:provided|attached|included|given|uploaded|shared|available)",
        r"\b(?:audio|recording|audio\s+file|clip)\s+(?:is|was|has\s+not\s+been|hasn't\s+been|wasn't|isn't)\s+(?:not\s+)?(?:provided|attached|included|available|accessible)",
        r"\b(?:haven't|have\s+not|didn't|did\s+not)\s+(?:provide|attach|include|share|upload|send)\b[^.]{0,30}?\b(?:audio|recording|file|clip)",
        r"\b(?:can\s*not|can't|unable\s+to|won't|will\s+not|not\s+able\s+to)\s+(?:answer|help\s+with|assist\s+with|respond\s+to|comply)\b",
        r"\bi\s+(?:don't|do\s+not)\s+have\s+access\b",
        r"\b(?:don't|do\s+not)\s+have\s+the\s+(?:ability|capability)\s+to\s+(?:hear|listen)\b",
        r"\bi\s+(?:don't|do\s+not)\s+have\s+(?:any\s+)?(?:audio|recording|sound\s+file)\b",
        r"\bplease\s+(?:go\s+ahead\s+and\s+)?play\s+(?:it|the\s+(?:audio|clip|recording))\b",
        r"\b(?:can\s*not|can't|unable\s+to)\s+provide\s+(?:that|this|such)\s+(?:type\s+of\s+|kind\s+of\s+)?information\b",
        r"\b(?:refuse|decline)[sd]?\s+to\s+(?:answer|respond)\b",
        r"^(?:refuse|refused|refusal|no\s+comment)\W*$",
        # ru
        r"не\s+(?:могу|можем|в\s+состоянии)\s+(?:\w+\s+)?(?:прослушать|слушать|услышать|воспроизвести|обработать|проанализировать|открыть|получить\s+доступ\s+к)\s+(?:\w+\s+)?(?:аудио|запис|файл|звуков)",
        r"не\s+(?:могу|можем)\s+ответить",
        r"не\s+(?:могу|можем)\s+(?:помочь|выполнить|проанализировать\s+(?:аудио|запис|текст))",
        r"(?:пожалуйста,?\s+)?(?:предоставьте|пришлите|загрузите|приложите)\s+(?:\w+\s+)?(?:аудио|запис|текст|файл|стать)",
        r"(?:у\s+меня\s+нет|не\s+имею)\s+доступа",
        r"\bкак\s+(?:ии|искусственный\s+интеллект|языковая\s+модель)\b",
        r"аудио(?:файл|запись)?\s+не\s+(?:был[оа]?\s+)?(?:предоставлен|прикреплен|приложен)",
        # kk
        r"(?:аудионы|аудионы|жазбаны|файлды|дыбысты)\s+(?:тыңдай|өңдей|аша|ести|талдай)\s+алмаймын",
        r"тыңдай\s+алмаймын",
        r"жауап\s+бере\s+алмаймын",
        r"(?:көмектесе|орындай|талдай)\s+алмаймын",
        r"(?:аудио|жазба|мәтін|файл)\w*\s+(?:\w+\s+)?(?:ұсыныңыз|жіберіңіз|жүктеңіз)",
        r"қол\s+жеткізе\s+алмаймын",
        r"тілдік\s+модельмін",
        # zh
        r"(?:无法|不能|没法)(?:直接)?(?:收听|听取|访问|处理|播放|打开|分析|听)(?:该|这个|此|您的|你的)?(?:段)?(?:音频|录音|文件|声音文件)",
        r"(?:无法|不能|没法)(?:回答|作答)",
        r"(?:我|作为)(?:是|只是)?(?:一个)?(?:文本|人工智能|ai|语言模型)",
        r"(?:没有|未)(?:提供|上传)(?:任何)?(?:音频|录音|文件)",
        # es / fr / de
        r"\bno\s+puedo\s+(?:escuchar|oír|oir|procesar|acceder\s+a|reproducir|analizar)\s+(?:el\s+|este\s+|la\s+|esta\s+|ningún\s+)?(?:audio|archivo|grabación|grabacion)",
        r"\bno\s+puedo\s+responder\b",
        r"\bcomo\s+(?:una\s+)?(?:ia|inteligencia\s+artificial|modelo\s+de\s+lenguaje)\b",
        r"\bje\s+ne\s+peux\s+pas\s+(?:écouter|entendre|traiter|accéder\s+à|lire|analyser)\s+(?:l'|le\s+|ce\s+|cet\s+|cette\s+|les\s+)?(?:audio|fichier|enregistrement)",
        r"\bje\s+ne\s+peux\s+pas\s+répondre\b",
        r"\ben\s+tant\s+qu'(?:ia|intelligence\s+artificielle|modèle\s+de\s+langage)\b",
        r"\bich\s+kann\s+(?:die\s+|das\s+|diese\s+|keine\s+)?(?:audiodatei|audio|aufnahme|datei|audios)\s+(?:leider\s+)?nicht\s+(?:hören|anhören|abspielen|verarbeiten|analysieren|öffnen)",
        r"\bich\s+kann\s+(?:das\s+|die\s+frage\s+)?(?:leider\s+)?nicht\s+beantworten\b",
        r"\bals\s+(?:ki|sprachmodell)\b",
    ]
]

# --- explicit uncertainty ----------------------------------------------------------------------------
UNKNOWN = [
    re.compile(p)
    for p in [
        r"\bi\s+(?:do\s+not|don't|dont)\s+know\b",
        r"(?:\bnot|n't)\s+(?:be\s+)?(?:entirely\s+|completely\s+|totally\s+|quite\s+|100%\s+|really\s+)?(?:sure|certain)\b",
        r"\bunsure\b",
        r"\buncertain\b",
        r"\bno\s+idea\b",
        r"\b(?:dunno|idk)\b",
        r"\b(?:can\s*not|can't|couldn't|could\s+not|unable\s+to|not\s+able\s+to|impossible\s+to|hard\s+to|difficult\s+to|no\s+way\s+to)\s+"
        r"(?:\w+\s+){0,2}?(?:determine|tell|say|know|confirm|verify|judge|be\s+sure|decide|ascertain)\b",
        r"\b(?:cannot|can't|can\s+not)\s+be\s+(?:determined|confirmed|verified)\b",
        r"\b(?:it\s+is|it's|it\s+was|this\s+is)\s+(?:not\s+clear|unclear)\b",
        r"\bunclear\b",
        r"\b(?:insufficient|not\s+enough)\s+(?:information|evidence|context)\b",
        r"\b(?:may|might)\s+or\s+(?:may|might)\s+not\b",
        r"^(?:unknown|unsure|uncertain|not\s+sure|n/?a|none\s+of\s+the\s+above|maybe|perhaps|possibly)\W*$",
        r"\b(?:could|might|may|can)\s+be\s+(?:either\s+)?yes\s+or\s+no\b",
        # ru
        r"не\s+знаю",
        r"не\s+уверен[аы]?\b",
        r"(?:трудно|сложно)\s+сказать",
        r"неясно",
        r"непонятно",
        r"(?:невозможно|нельзя|не\s+могу|затрудняюсь)\s+(?:\w+\s+)?(?:определить|сказать\s+точно|судить|ответить\s+точно)",
        # kk
        r"білмеймін",
        r"сенімді\s+емеспін",
        r"(?:айту|анықтау)\s+қиын",
        r"анықтау\s+мүмкін\s+емес",
        r"белгісіз",
        # zh
        r"不知道",
        r"不确定",
        r"无法(?:确定|判断|得知)",
        r"不清楚",
        r"难以(?:判断|确定)",
        r"说不准",
        r"不好说",
        # es / fr / de
        r"\bno\s+(?:lo\s+)?sé\b",
        r"\bno\s+(?:lo\s+)?se\s*(?:[.,!]|$)",
        r"\bno\s+estoy\s+segur[oa]\b",
        r"\bno\s+está\s+claro\b",
        r"\bno\s+(?:se\s+)?puede\s+(?:determinar|saber)\b",
        r"\bje\s+ne\s+sais\s+pas\b",
        r"\bpas\s+sûre?\b",
        r"\bimpossible\s+de\s+(?:dire|déterminer|savoir)\b",
        r"\bdifficile\s+à\s+dire\b",
        r"\bich\s+weiß\s+(?:es\s+)?nicht\b",
        r"\bweiß\s+ich\s+nicht\b",
        r"\bnicht\s+sicher\b",
        r"\bunklar\b",
        r"\bschwer\s+zu\s+sagen\b",
    ]
]

# phrases containing a yes/no word that assert neither; masked before answer words are looked for
NEUTRAL = re.compile(
    r"\b(?:no\s+doubt|no\s+question|no\s+problem|no\s+matter|no\s+wonder|whether\s+or\s+not|"
    r"(?:answer|reply|respond)\s+(?:with\s+)?(?:a\s+)?(?:simple\s+)?[\"']?yes[\"']?\s+or\s+[\"']?no[\"']?)\b"
)
BOTH = re.compile(
    r"\b(?:yes[\"']?\s*(?:and|or|/)\s*[\"']?no|no[\"']?\s*(?:and|or|/)\s*[\"']?yes|да\s+и\s+нет|и\s+да\s+и\s+нет|sí\s+y\s+no|oui\s+et\s+non|ja\s+und\s+nein)\b"
)

# --- answer words, valid only in answer positions (reply start, sentence start, after "answer is") -----
YES_WORDS = [
    "yes",
    "yeah",
    "yep",
    "yup",
    "yea",
    "aye",
    "y",
    "true",
    "correct",
    "affirmative",
    "indeed",
    "absolutely",
    "definitely",
    "certainly",
    "of course",
    "that's right",
    "that is right",
    "that's correct",
    "that is correct",
    "да",
    "ага",
    "конечно",
    "верно",
    "точно",
    "иә",
    "ия",
    "иа",
    "әрине",
    "дұрыс",
    "sí",
    "claro",
    "oui",
    "ja",
    "jawohl",
    "genau",
    "doch",
]
NO_WORDS = [
    "no",
    "nope",
    "nah",
    "nay",
    "n",
    "false",
    "incorrect",
    "negative",
    "of course not",
    "definitely not",
    "certainly not",
    "absolutely not",
    "not at all",
    "not really",
    "no way",
    "нет",
    "неа",
    "неверно",
    "конечно нет",
    "конечно же нет",
    "жоқ",
    "жок",
    "әрине жоқ",
    "қате",
    "non",
    "nein",
    "claro que no",
    "bien sûr que non",
    "natürlich nicht",
    "auf keinen fall",
]
LEADING_ONLY_YES = ["si"]  # Spanish/French "si": only as the whole first word followed by punctuation

ANSWER_WORD = _alt(YES_WORDS + NO_WORDS)
_YES_WORD = _alt(YES_WORDS)
YES_SET = {w for w in YES_WORDS}
NO_SET = {w for w in NO_WORDS}

# where an answer word counts: reply start (after fillers), sentence start, after a cue, or ", yes." at a clause end
_FILLER = (
    r"(?:(?:well|so|hmm+|um+|uh+|ok(?:ay)?|oh|ah|alright|answer|final\s+answer|possibly|probably|maybe|perhaps|likely|"
    r"most\s+likely|i\s+think|i\s+guess|i\s+believe)\s*[,.!:-]?\s*)*"
)
HEDGE = re.compile(r"\b(?:possibly|probably|maybe|perhaps|likely|might|i\s+think|i\s+guess|i\s+believe|seems?\s+to)\b")
_CUE = (
    r"(?:actually|wait|i\s+mean|correction:?|answer\s+(?:is|would\s+be|will\s+be)|answer\s*:|would\s+say|i'd\s+say|i\s+say|i\s+think|i\s+believe|i\s+guess|"
    r"response\s+is|my\s+answer\s+is|it's\s+a|it\s+is\s+a|ответ|жауап|respuesta|réponse|antwort)\s*[:\-]?\s*[\"'(]?"
)
ANSWER_POSITIONS = [
    re.compile(rf"^[\s\"'(:,.-]*{_FILLER}(?P<w>{ANSWER_WORD}|not)(?=\W|$)"),  # "Not a dog." only at the start
    # later sentences: a yes word may run on ("Yes it is"), a no word must stand alone ("No cat though" is a determiner)
    re.compile(rf"(?:[.!?;:]|\n)\s*(?P<w>{_YES_WORD})(?=\W|$)"),
    re.compile(rf"(?:[.!?;:]|\n)\s*(?P<w>{ANSWER_WORD})(?=\s*[,.!;:]|\s*$)"),
    re.compile(rf"\b{_CUE}(?P<w>{ANSWER_WORD})(?=\W|$)"),
    re.compile(rf",\s*(?P<w>{ANSWER_WORD})\s*(?=[,.!?;]|$)"),
    re.compile(r"^(?P<w>si)\s*(?=[,.!]|$)"),
]
# stance phrases that count anywhere
THINK_NO = re.compile(r"\bi\s+(?:don't|do\s+not)\s+(?:think|believe)\s+so\b|\bnot\s+that\s+i\s+can\s+(?:hear|tell)\b")
THINK_YES = re.compile(r"\bi\s+(?:think|believe)\s+so\b")

# a leading "yes" immediately contradicted: "yes, there is no dog"
CONTRADICTS_YES = re.compile(
    r"^\W*(?:there(?:'s|\s+is|\s+are|\s+was|\s+were)\s+(?:\w+\s+)?(?:no|not\s+any|none|nothing)\b|"
    r"there\s+(?:isn't|aren't|wasn't|weren't)\b|it\s+(?:does\s+not|doesn't)\s+(?:contain|include)\b|"
    r"i\s+(?:do\s+not|don't|can't|cannot)\s+hear\b)"
)

# --- statements that answer without a yes/no word -----------------------------------------------------
IMPLICIT_NO = [
    re.compile(p)
    for p in [
        r"\bthere(?:'s|\s+is|\s+are|\s+was|\s+were)(?:\s+\w+)?\s+(?:no|not\s+any|none|nothing)\b",
        r"\bthere\s+(?:isn't|aren't|wasn't|weren't)\b",
        r"\b(?:does|do|did|is|are|was|were)(?:\s+not|n't)\s+(?:seem\s+to\s+|appear\s+to\s+)?(?:contain|include|feature|have|hear|detect|present|audible|heard|detected|there)\b",
        r"\b(?:doesn't|don't|didn't|isn't|aren't|wasn't|weren't)\s+(?:seem\s+to\s+|appear\s+to\s+)?(?:contain|include|feature|have|hear|detect|present|audible|heard|detected|there)\b",
        r"\b(?:can\s*not|can't|couldn't|could\s+not|do\s+not|don't|did\s+not|didn't)\s+(?:hear|detect|identify|find|make\s+out|notice|perceive|discern)\b",
        r"\b(?:nobody|no\s+one|nothing|none|neither)\b",
        r"\bno\s+(?!doubt|question|problem|matter|wonder|idea)\w+",
        r"\b(?:absent|inaudible|not\s+present|not\s+audible)\b",
        r"\b(?:only|just|pure)\s+(?:background\s+)?(?:noise|static|silence)\b",
        # ru / kk
        r"\bнет\b",
        r"\bне\s+(?:слыш|содерж|присутств|обнаруж|звуч|было|был|была|было)\w*",
        r"\bотсутству\w*",
        r"\b(?:никто|ничего|никакого|никаких)\b",
        r"\bжоқ\b",
        r"\bжок\b",
        r"\bемес\b",
        r"естілмейді",
        r"\b(?:ешкім|ештеңе)\b",
        # es / fr / de
        r"\bno\s+(?:hay|se\s+(?:escucha|oye)|contiene|suena|existe|aparece)\b",
        r"\b(?:ningún|ninguna|nada|nadie)\b",
        r"\bn'y\s+a\s+(?:pas|aucun)",
        r"\bn'(?:entend|est|contient)\w*\s+pas\b",
        r"\bne\s+\w+\s+pas\b",
        r"\b(?:aucune?|rien)\b",
        r"\bkein(?:e|en|er|es|em)?\b",
        r"\bnicht\s+(?:zu\s+hören|vorhanden|enthalten|hörbar)\b",
        r"\b(?:niemand|nichts)\b",
    ]
]
IMPLICIT_YES = [
    re.compile(p)
    for p in [
        r"\bthere(?:'s|\s+is|\s+are|\s+was|\s+were)(?:\s+(?:definitely|clearly|indeed|certainly|also))?\s+(?:a|an|some|several|many|multiple|two|three|four|\d+|the|one|distinct|faint|loud|clear)\b",
        r"\b(?:the\s+audio|the\s+clip|the\s+recording|the\s+sound|the\s+track|it|this|audio)\s+(?:clearly\s+|definitely\s+|also\s+|does\s+)?(?:contains?|includes?|features?|has|have)\b",
        r"\bi\s+(?:can\s+|do\s+|could\s+)?(?:only\s+|just\s+|also\s+)?(?:clearly\s+|definitely\s+)?(?:hear|detect|notice)\b",
        r"\b(?:can|could)\s+(?:also\s+|clearly\s+)?be\s+(?:heard|detected)\b",
        r"\b(?:is|are|was|were)\s+(?:clearly\s+|definitely\s+|also\s+)?(?:present|audible|heard|detected|barking|playing|speaking|talking|ringing|singing)\b",
        # ru / kk
        r"\bесть\b",
        r"\bслыш(?:но|у|ен|на|ится)\b",
        r"\bприсутствует\b",
        r"\bсодержит\b",
        r"\bзвучит\b",
        r"\bбар\b",
        r"\bестіледі\b",
        # es / fr / de
        r"\bhay\b",
        r"\bse\s+(?:escucha|oye)\b",
        r"\bcontiene\b",
        r"\bil\s+y\s+a\b",
        r"\bon\s+entend\b",
        r"\bcontient\b",
        r"\bes\s+gibt\b",
        r"\bist\s+zu\s+hören\b",
        r"\bman\s+hört\b",
        r"\benthält\b",
        r"\bich\s+höre\b",
    ]
]
# a subject named after these words (same phrase) is denied: "birds, not a dog", "no dogs", "а не собака"
SUBJECT_NEGATORS = {
    "not",
    "no",
    "never",
    "nor",
    "neither",
    "without",
    "instead",
    "rather",
    "isn't",
    "aren't",
    "wasn't",
    "weren't",
    "don't",
    "doesn't",
    "didn't",
    "can't",
    "cannot",
    "couldn't",
    "не",
    "нет",
    "без",
    "ни",
    "ешқандай",
    "ni",
    "sin",
    "pas",
    "sans",
    "kein",
    "keine",
    "keinen",
    "nicht",
    "ohne",
}
SUBJECT_NEGATORS_BLOCK = {"only", "just", "merely", "doubt", "только", "тек"}  # "not only a dog", "no doubt a dog"
SUBJECT_NEGATORS_AFTER = {"емес", "жоқ", "жок", "нет", "отсутствует", "absent", "missing"}  # "ит емес", "собаки нет"
# presence stated as exclusive: "I only hear drums" rules out the trumpet asked about
EXCLUSIVE = re.compile(
    r"\b(?:only|just|nothing\s+but|nothing\s+except|solely|exclusively|purely|только|лишь|"
    r"исключительно|тек|ғана|seulement|uniquement|nur)\b"
)
# subject words too general to mark a statement as about the subject when a specific word is there ("jazz music")
GENERIC_SUBJECT = {
    "music",
    "speech",
    "song",
    "genre",
    "voice",
    "tone",
    "noise",
    "style",
    "track",
    "piece",
    "entry",
    "sound",
    "sounds",
    "type",
    "kind",
    "someone",
    "person",
    "talking",
    "playing",
}
WORD_FORMS = {
    "anger": "angry",
    "angrily": "angry",
    "sadly": "sad",
    "surprise": "surprised",
    "happily": "happy",
    "happiness": "happy",
    "joyful": "happy",
    "cheerful": "happy",
    "furious": "angry",
    "fury": "angry",
}
# a clause that names the subject without asserting it: a question, a condition, a wish, the entry itself, a trace
# of it in something else ("a potential undertone of jazz influence")
NOT_ASSERTED = re.compile(
    r"\b(?:if|whether|unless|wonder|would\s+need|description\s+of|entry|referring\s+to|unclear\s+what|"
    r"asking\s+about|imagine|undertones?\s+of|hints?\s+of|traces?\s+of)\b|\?"
)
# members of one closed set exclude each other: a reply that calls the audio another genre ("a rap or hip-hop song"
# to "Is the audio alternative music?") answers no; the words of one member (synonyms) share a set
SIBLINGS = {
    "genre": [
        {"jazz"},
        {"rock"},
        {"pop"},
        {"hip", "hop", "rap"},
        {"metal"},
        {"electronic", "techno", "edm"},
        {"classical", "orchestral"},
        {"country"},
        {"folk"},
        {"blues"},
        {"reggae"},
        {"alternative", "indie"},
        {"r&b", "soul"},
        {"funk"},
        {"disco"},
        {"punk"},
        {"gospel"},
    ]
}
# what an absence said of another subject must be said of to answer the question
ABSENCE_OF_IT = re.compile(
    r"^[^,]{0,40}?\b(?:such|it|that|this|those|them|anything|any\s+(?:such|sound|sounds|noise|of)|"
    r"sounds?|noises?|kind|trace|sign|nothing|none|no\s+one|nobody)\b|^\W*\w+\W*$"
)
# uncertainty the yes/no reader counts besides UNKNOWN (replies to presence questions)
YESNO_UNKNOWN = [
    re.compile(p)
    for p in [
        r"\bwithout\s+(?:more|further|additional)\s+(?:specific\s+)?(?:information|context|details)\b",
        r"\b(?:would\s+)?requires?\s+(?:additional|more|further)\s+(?:context|information|details)\b",
        r"\bnot\s+(?:entirely\s+|completely\s+|totally\s+|quite\s+|very\s+)?clear\b",
    ]
]
# a clause about the subject in general ("The sound of jazz is a quintessential ...", "In audio, the sound of traffic is
# often described as ..."): it asserts presence only with a presence word
GENERIC_TOPIC = re.compile(r"^\W*(?:in\s+(?:audio|music|general)\s*,?\s*)?(?:the|a)\s+sounds?\s+of\b")
PRESENCE = re.compile(
    r"\b(?:present|presence|heard|hear|audible|found|detected|contains?|includes?|features?|captured|"
    r"recorded|there\s+is|there's|plays?|playing)\b"
)
# a mention reads as a statement only in the languages whose negations the lexicon knows in full (not Cyrillic yet)
NON_LATIN = re.compile(r"[\u0400-\u04ff\u4e00-\u9fff]")
QUOTED = re.compile(r'"([^"\n]{3,400})"')
UNCLEAR_WHAT_SAID = re.compile(
    r"\s+(?:what|which\s+words)\s+(?:is|was|are|were)\s+(?:being\s+)?(?:said|sung|spoken)|"
    r"\s+what\s+(?:the\s+)?(?:speaker|singer|lyrics|words|they|he|she)\b"
)
CLAUSE_SPLIT = re.compile(
    r"[.;!?\n]+|,?\s+\b(?:but|however|although|though|whereas|while|and|но|однако|а|и|бірақ|және|pero|y|mais|et|"
    r"aber|und)\b"
)

# --- Chinese (no word boundaries) ---------------------------------------------------------------------
CJK = re.compile(r"[\u4e00-\u9fff]")
ZH_LEADING = [
    ("yes", re.compile(r"^(?:没错|当然是|当然有)")),
    ("no", re.compile(r"^(?:不是|不对|没有|当然不|当然没有|否|没|不(?!过))")),
    ("yes", re.compile(r"^(?:是的?|对的?|有的?(?![点些可])|确实|当然)")),
]
ZH_NO = re.compile(r"没有|不存在|听不到|未(?:检测|听)到|并无|不包含|无(?:任何)")
ZH_YES = re.compile(r"(?<![没不无])(?:有|存在|包含|能听到|可以听到|听到了)")

# numbers and ordinals live in their own module (re-exported here: every reader reads ``lexicon``)
from halluscope.reply.lexicon_numbers import *  # noqa: E402, F403
