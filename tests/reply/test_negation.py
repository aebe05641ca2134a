"""Negation cues and their scope (reply/negation.py, the one negation module of the yes/no reader and the caption
extractor): which words a cue denies, in English, Russian and Kazakh."""

from __future__ import annotations

import pytest

from halluscope.reply.negation import clauses, cue, negated, negation_scopes, sentential


def _denied(text: str, word: str) -> bool:
    at = text.lower().index(word)
    return negated(text, at, at + len(word)) is not None


@pytest.mark.parametrize(
    ("text", "denied", "kept"),
    [
        ("There is no explosion, only birds.", ["explosion"], ["birds"]),
        ("A man speaks without any music.", ["music"], ["man"]),
        ("No one is speaking and a dog barks.", ["speaking"], ["dog"]),
        ("The birds cannot be heard.", ["birds"], []),
        ("A dog barks, not a cat.", ["cat"], ["dog"]),
        ("In the absence of birds, wind blows.", ["birds"], ["wind"]),
        ("There are no dogs or cats barking.", ["dogs", "cats"], []),
        ("The siren is absent while rain falls.", ["siren"], ["rain"]),
        ("The music is not loud.", [], ["music"]),
        ("The engine never stops.", [], ["engine"]),
        ("Not only a dog but birds.", [], ["dog", "birds"]),
        ("No doubt a dog is barking.", [], ["dog"]),
        ("Собаки нет, только птицы.", ["собаки"], ["птицы"]),
        ("Без музыки, говорит мужчина.", ["музыки"], ["мужчина"]),
        ("Никто не говорит, но лает собака.", ["говорит"], ["собака"]),
        ("Ит жоқ, құстар сайрайды.", ["ит"], ["құстар"]),
        ("Frying (food) cannot be heard.", ["frying (food)"], []),
        ("A dog (a small one) is not barking, birds sing.", ["dog"], ["birds"]),
        ("It is a cat not a dog.", ["dog"], ["cat"]),  # a bare "not" negates what follows it
        ("The dog is nowhere to be heard.", ["dog"], []),
        ("I am unable to hear a siren.", ["siren"], []),
        ("The recording lacks drums; a bass plays.", ["drums"], ["bass"]),
        ("No dog or there is a cat.", ["dog"], ["cat"]),
        ("The track is not only drums.", [], ["drums"]),
        ("Ит үрген дыбыс естілмейді.", ["ит"], []),  # a Kazakh verb negated by its suffix
        ("Никакой музыки, только шум.", ["музыки"], ["шум"]),
        ("Собака нигде не слышна.", ["собака"], []),
        ("Лай собаки не слышен, но птицы поют.", ["собаки"], ["птицы"]),
        ("Не только собака, но и кошка.", [], ["собака", "кошка"]),
        ("Ешқандай музыка жоқ.", ["музыка"], []),
        ("Ит емес, мысық.", ["ит"], ["мысық"]),
        ("Тек қана емес ит, мысық та бар.", [], ["ит"]),
    ],
)
def test_scope(text: str, denied: list[str], kept: list[str]) -> None:
    for w in denied:
        assert _denied(text, w), (text, w, negation_scopes(text))
    for w in kept:
        assert not _denied(text, w), (text, w, negation_scopes(text))


def test_offsets_are_the_texts_own() -> None:
    text = "İstanbul: there isn’t a Dog here."  # a capital whose lower case is longer, a curly apostrophe
    at = text.index("Dog")
    scope = negated(text, at, at + 3)
    assert scope is not None and scope.cue == "isn't" and text[scope.start : scope.end] == "a Dog here"


def test_clauses_end_where_a_scope_ends() -> None:
    text = "A dog barks and the cat is silent, but birds sing"
    assert [c for _, c in clauses(text)] == ["A dog barks", "the cat is silent", "birds sing"]
    assert all(text[at : at + len(c)] == c for at, c in clauses(text))


@pytest.mark.parametrize(
    ("text", "found"),
    [("There isn't.", "isn't"), ("Нету.", "нету"), ("Жоқ.", "жоқ"), ("It does.", None), ("No doubt.", None)],
)
def test_a_cue_with_nothing_in_its_scope_is_still_a_cue(text: str, found: str | None) -> None:
    assert cue(text) == found


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("What I hear does not match what I see", "does not"),
        ("Nothing is heard", "nothing"),
        ("Үн естілмейді", "естілмейді"),
        ("A dog with no collar barks", None),  # one phrase negated, not the clause
    ],
)
def test_sentential_cues_negate_the_clause_not_a_phrase(text: str, found: str | None) -> None:
    assert sentential(text) == found
