"""Negation cues and their scope (reply/negation.py): which words a cue denies, in English, Russian and Kazakh."""

from __future__ import annotations

import pytest

from halluscope.reply.negation import negated, negation_scopes


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
