"""Word forms (reply/lemmas.py ``same_word``): a reply or caption word names a label word only as one of its forms,
never as another word that merely starts with it or that it starts."""

from __future__ import annotations

import pytest

from halluscope.reply.lemmas import same_word


@pytest.mark.parametrize(
    ("token", "word"),
    [
        ("assist", "ass"),  # another word, not ass + -ist
        ("blending", "blender"),  # the verb blend, not the machine
        ("his", "hiss"),
        ("hiss", "his"),
        ("crowd", "crow"),  # crow + d is no form
        ("crowd", "crowing"),
        ("crowing", "crowd"),
        ("blue", "blues"),  # the colour is not the genre
        ("blues", "blue"),
        ("shipping", "ship"),  # sending goods makes no ship's sound
        ("training", "train"),
        ("category", "cat"),
        ("bellows", "bell"),
        ("belly", "bell"),
    ],
)
def test_other_words_are_not_forms(token: str, word: str) -> None:
    assert not same_word(token, word)


@pytest.mark.parametrize(
    ("token", "word"),
    [
        ("dogs", "dog"),
        ("barking", "bark"),  # a sound noun is named by its verb
        ("hissing", "hiss"),
        ("whistles", "whistle"),
        ("crows", "crow"),
        ("crowds", "crowd"),
        ("ships", "ship"),
        ("speaks", "speaking"),
        ("sings", "singing"),  # a gerund label by an inflected verb
        ("claps", "clapping"),
        ("cries", "cry"),
        ("men", "man"),
        ("musical", "music"),
        ("rhythmic", "rhythm"),
        ("coughing", "cough"),
        ("drumming", "drum"),
        ("собаки", "собака"),
        ("иттер", "ит"),
        ("мысығы", "мысық"),
    ],
)
def test_forms_are_the_same_word(token: str, word: str) -> None:
    assert same_word(token, word)


def test_both_readers_match_words_the_same_way() -> None:
    """The yes/no reader and the caption extractor share ``same_word``: a crowd is no crow to either."""
    from halluscope.closedform.kuan_captions import named_objects
    from halluscope.reply.yesno import extract_yesno

    assert named_objects("A crowd cheers while a crow caws.", ["Crow", "Crowd"]) == {"crow", "crowd"}
    assert named_objects("A crowd cheers; the singer has blue eyes.", ["Crow", "Blues", "Crowd"]) == {"crowd"}
    assert (
        extract_yesno("A crowd is cheering loudly.", question="Is there a sound of crow in the audio?").value != "yes"
    )
    assert extract_yesno("Crows are cawing.", question="Is there a sound of crow in the audio?").value == "yes"
    assert extract_yesno("Someone is shipping boxes.", question="Is there a sound of ship?").value != "yes"
    assert extract_yesno("A ship's horn blows.", question="Is there a sound of ship?").value == "yes"
