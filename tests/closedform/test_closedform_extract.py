"""Strict answer extraction pinned on real-world reply shapes (hedges, refusals, negations, traps, languages)."""

from __future__ import annotations

import pytest

from halluscope.closedform.extract import (
    extract_choice,
    extract_label,
    extract_number,
    extract_option,
    extract_yesno,
    normalize_reply,
)

YESNO_CASES = [
    # plain and formatted answers
    ("Yes.", "yes"),
    ("No.", "no"),
    ("yes", "yes"),
    ("NO", "no"),
    ("Yes!", "yes"),
    ("  no  ", "no"),
    ("**Yes**", "yes"),
    ("**No.** There is no barking.", "no"),
    ("`yes`", "yes"),
    ('"No."', "no"),
    ("> Yes", "yes"),
    ("Answer: No", "no"),
    ("Final answer: yes", "yes"),
    ("A: Yes", "yes"),
    ('{"answer": "Yes"}', "yes"),
    ("{'answer': 'no', 'reason': 'silence'}", "no"),
    ('```json\n{"answer": "no"}\n```', "no"),
    ('{"response": "Yes, a dog."}', "yes"),
    ('{"present": true}', "yes"),
    ("Yep", "yes"),
    ("Yeah, definitely.", "yes"),
    ("Nope", "no"),
    ("Nah.", "no"),
    ("Of course.", "yes"),
    ("Absolutely!", "yes"),
    ("Correct.", "yes"),
    ("Definitely not.", "no"),
    ("Not really.", "no"),
    ("Not at all.", "no"),
    ("Certainly not, it is a cat.", "no"),
    ("I don't think so.", "no"),
    ("I think so.", "hedge"),
    # leading answer with explanation
    ("Yes, there is a dog barking.", "yes"),
    ("No, there is no dog barking in the audio.", "no"),
    ("No, the sound is a cat meowing.", "no"),
    ("Yes. The dog barks twice near the end.", "yes"),
    ("Hmm, yes.", "yes"),
    ("Well, no.", "no"),
    ("Y", "yes"),
    ("N", "no"),
    ("True", "yes"),
    ("False.", "no"),
    ("Let me listen. Yes it is a dog.", "yes"),
    ("Let me listen. No, it is a cat.", "no"),
    ("There is a dog barking. Not a cat.", "yes"),  # a later 'Not' is not an answer word
    ("Да, нет сомнений.", "yes"),
    ("Based on the audio, yes.", "yes"),
    ("The answer is no.", "no"),
    ("I would say yes.", "yes"),
    ("After listening carefully: no.", "no"),
    # statements without a yes/no word, with negation handled
    ("There is no dog barking.", "no"),
    ("There's no sound of a siren.", "no"),
    ("There are no birds.", "no"),
    ("The audio does not contain any dog barking.", "no"),
    ("The clip doesn't include speech.", "no"),
    ("I can't hear a dog in this audio.", "no"),
    ("I don't hear any dog.", "no"),
    ("No dog is barking.", "no"),
    ("Only background noise.", "no"),
    ("Nobody is speaking.", "no"),
    ("Nothing but silence.", "no"),
    ("None.", "no"),
    ("The dog is not present.", "no"),
    ("I can hear a dog barking in the background.", "yes"),
    ("The audio contains the sound of a dog barking.", "yes"),
    ("A dog is barking.", "yes"),
    ("A siren can be heard in the distance.", "yes"),
    ("There is a faint engine sound.", "yes"),
    # word-boundary traps: not yes / not no
    ("The eyes of the cat.", "unrelated"),
    ("Yesterday it rained.", "unrelated"),
    ("I know there is a dog.", "yes"),
    ("There is some noise, mostly wind.", "yes"),
    ("It is now playing a melody.", "unrelated"),
    ("Noted.", "unrelated"),
    ("No doubt, there is a dog.", "yes"),
    # refusals (cannot hear / process / answer)
    ("I cannot hear the audio.", "refusal"),
    ("I'm sorry, but as an AI language model I cannot listen to audio files.", "refusal"),
    ("No, I cannot process audio.", "refusal"),
    ("I am unable to access the audio file you provided.", "refusal"),
    ("No audio was provided.", "refusal"),
    ("I can't answer that.", "refusal"),
    ("I don't have access to the recording.", "refusal"),
    ("I'm a text-based model, so I can't tell.", "refusal"),
    ("I cannot process the audio, so the answer is no.", "refusal"),
    ("I refuse to answer.", "refusal"),
    ("Refuse", "refusal"),
    # explicit uncertainty
    ("I don't know.", "unknown"),
    ("i dont know", "unknown"),
    ("I'm not sure.", "unknown"),
    ("Not sure.", "unknown"),
    ("Unknown", "unknown"),
    ("Maybe.", "hedge"),
    ("It is impossible to determine from the audio.", "unknown"),
    ("It's unclear whether there is a dog.", "unknown"),
    ("I can't tell.", "unknown"),
    ("It cannot be determined.", "unknown"),
    ("No idea.", "unknown"),
    ("No, I don't know.", "unknown"),
    ("It could be yes or no.", "unknown"),
    # an answer with a doubt after it stays an answer; hedge cues give their own class (never yes, never a silent no)
    ("Yes, but I'm not completely sure.", "yes"),
    ("I'm not sure, but I think yes.", "hedge"),
    ("Possibly yes.", "hedge"),
    ("Probably not.", "hedge"),
    # ambiguous: both asserted
    ("Yes and no.", "ambiguous"),
    ("Yes. No.", "ambiguous"),
    ("Yes... actually no.", "ambiguous"),
    ("Yes, there is no dog.", "ambiguous"),
    ("There is a cat but no dog.", "ambiguous"),
    ("No. Yes.", "ambiguous"),
    # empty and off-topic
    ("", "unrelated"),
    ("   ", "unrelated"),
    ("The audio is a recording of a busy street.", "unrelated"),
    ("Please provide more context.", "unrelated"),
    # Russian
    ("Да.", "yes"),
    ("Нет.", "no"),
    ("Да, в записи слышен лай собаки.", "yes"),
    ("Нет, лая собаки нет.", "no"),
    ("Конечно нет.", "no"),
    ("Собаки нет.", "no"),
    ("В записи есть лай собаки.", "yes"),
    ("Не знаю.", "unknown"),
    ("Я не уверен.", "unknown"),
    ("Не могу прослушать аудио файл.", "refusal"),
    # Kazakh
    ("Иә.", "yes"),
    ("Жоқ.", "no"),
    ("Иә, ит үреді.", "yes"),
    ("Жоқ, ит үрмейді.", "no"),
    ("Ит жоқ.", "no"),
    ("Білмеймін.", "unknown"),
    ("Аудионы тыңдай алмаймын.", "refusal"),
    # Chinese
    ("是的。", "yes"),
    ("是", "yes"),
    ("否", "no"),
    ("不是。", "no"),
    ("有，音频中有狗叫声。", "yes"),
    ("没有，音频中没有狗叫声。", "no"),
    ("音频中没有狗叫声。", "no"),
    ("不确定", "unknown"),
    ("无法处理音频文件", "refusal"),
    # Spanish / French / German
    ("Sí.", "yes"),
    ("Si, hay un perro.", "yes"),
    ("No, no hay ningún perro.", "no"),
    ("No sé.", "unknown"),
    ("Oui.", "yes"),
    ("Non.", "no"),
    ("Non, il n'y a pas de chien.", "no"),
    ("Je ne sais pas.", "unknown"),
    ("Ja.", "yes"),
    ("Nein.", "no"),
    ("Nein, es gibt keinen Hund.", "no"),
    ("Ich weiß nicht.", "unknown"),
]


@pytest.mark.parametrize("reply,expected", YESNO_CASES)
def test_yesno_table(reply: str, expected: str) -> None:
    assert extract_yesno(reply).label == expected


def test_yesno_table_is_large_and_covers_every_class() -> None:
    assert len(YESNO_CASES) >= 80
    assert {e for _, e in YESNO_CASES} == {"yes", "no", "unknown", "refusal", "ambiguous", "unrelated", "hedge"}


@pytest.mark.parametrize(
    "reply,subject,expected",
    [
        ("The audio features a man talking.", "dog barking", "unrelated"),  # describes something else
        ("There is no such sound.", "dog barking", "no"),  # absence by pronoun still answers
        ("I hear a cat meowing, but there is no dog.", "dog", "no"),
        ("There is a dog and no cat.", "dog", "yes"),
        ("Dogs are barking loudly.", "dog barking", "yes"),
    ],
)
def test_yesno_subject_hint(reply: str, subject: str, expected: str) -> None:
    assert extract_yesno(reply, subject=subject).label == expected


def test_hedged_flag_and_reason() -> None:
    ex = extract_yesno("Yes, but I'm not completely sure.")
    assert ex.value == "yes" and ex.hedged and "yes" in ex.reason
    hedge = extract_yesno("I'm not sure, but I think yes.")
    assert hedge.status == "hedge" and hedge.value is None and hedge.lean == "yes" and "i think" in hedge.reason
    plain = extract_yesno("Yes.")
    assert not plain.hedged and plain.status == "answer"


def test_fallback_only_for_unrelated_and_logged() -> None:
    calls: list[str] = []

    def judge(text: str) -> str:
        calls.append(text)
        return "Yes"

    decided = extract_yesno("The audio is of a street.", fallback=judge)
    assert decided.label == "yes" and decided.via == "fallback" and decided.fallback_raw == "Yes"
    assert extract_yesno("I don't know.", fallback=judge).label == "unknown"  # classified: judge not asked
    assert calls == ["The audio is of a street."]
    unhelpful = extract_yesno("The audio is of a street.", fallback=lambda t: "purple")
    assert unhelpful.label == "unrelated" and unhelpful.fallback_raw == "purple" and unhelpful.via == "rules"


def test_normalize_reply_strips_markup_and_json() -> None:
    assert normalize_reply("**Answer:** Yes") == "yes"
    assert normalize_reply('{"Answer": "No", "why": "x"}') == "no"
    assert normalize_reply(None) == ""
    assert normalize_reply("“Yes”") == "yes"


@pytest.mark.parametrize(
    "reply,expected",
    [
        ("3", "3"),
        ("There are three speakers.", "3"),
        ("two", "2"),
        ("Not two but three.", "3"),
        ("There is only one guitar.", "1"),
        ("None.", "0"),
        ("There are no drums.", "0"),
        ("No one is speaking.", "0"),
        ("The word count is 7.", "7"),
        ("At 3 seconds there are 2 strokes.", "2"),
        ("At 0:05 the tonic sounds 4 times.", "4"),
        ("twenty-one words", "21"),
        ("It was played twice.", "2"),
        ("Someone is speaking once.", "1"),
        ("Which one? The first one has 4 notes.", "4"),
        ("Три.", "3"),
        ("Он играет два раза.", "2"),
        ("Үш рет.", "3"),
        ("Бес рет естіледі.", "5"),
        ("三次", "3"),
        ("有两个人在说话", "2"),
        ("Dos personas.", "2"),
        ("Il y a trois voix.", "3"),
        ("Zwei Sprecher.", "2"),
        ("I count 2 or 3 instruments.", "ambiguous"),
        ("2-3", "ambiguous"),
        ("I don't know how many.", "unknown"),
        ("I cannot hear the audio.", "refusal"),
        ("A guitar plays.", "unrelated"),
        ("", "unrelated"),
    ],
)
def test_numbers(reply: str, expected: str) -> None:
    assert extract_number(reply).label == expected


@pytest.mark.parametrize(
    "reply,expected",
    [
        ("The first one.", "first"),
        ("The second audio is louder.", "second"),
        ("Second.", "second"),
        ("The first sound is louder than the second.", "first"),
        ("The first is quieter than the second.", "second"),
        ("The second is faster than the first one.", "second"),
        ("Not the first, but the second.", "second"),
        ("the latter", "second"),
        ("Audio 1 is faster.", "first"),
        ("Первый.", "first"),
        ("Второй звук громче.", "second"),
        ("Бірінші.", "first"),
        ("Екінші.", "second"),
        ("第二个更响", "second"),
        ("Both are equally loud.", "equal"),
        ("I can't tell which is louder.", "unknown"),
        ("They sound nice.", "unrelated"),
    ],
)
def test_choices(reply: str, expected: str) -> None:
    assert extract_choice(reply).label == expected


@pytest.mark.parametrize(
    "reply,labels,expected",
    [
        ("This is music.", ["speech", "music"], "music"),
        ("It is speech, not music.", ["speech", "music"], "speech"),
        ("An electric guitar is playing.", ["Guitar", "Electric_guitar"], "Electric_guitar"),
        ("A guitar is playing.", ["Guitar", "Electric_guitar"], "Guitar"),
        ("Dogs barking", ["dog", "cat"], "dog"),
        ("Both speech and music.", ["speech", "music"], "ambiguous"),
        ("A car horn", ["dog", "cat"], "unrelated"),
        ("Musical instruments", ["music", "speech"], "unrelated"),  # 'music' inside 'musical' is not the label
    ],
)
def test_labels(reply: str, labels: list[str], expected: str) -> None:
    assert extract_label(reply, labels=labels).label == expected


@pytest.mark.parametrize(
    "reply,expected",
    [
        ("B", "dog"),
        ("(a)", "cat"),
        ("Option C.", "bird"),
        ("The answer is B.", "dog"),
        ("A bird is singing.", "bird"),
        ("A or B", "ambiguous"),
    ],
)
def test_option_letters(reply: str, expected: str) -> None:
    assert extract_option(reply, options=["cat", "dog", "bird"]).label == expected
