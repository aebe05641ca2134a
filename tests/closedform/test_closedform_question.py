"""Issue 25: 'score aha | halluaudio | yesno' never count a statement about another sound as yes when the question is
known (the statements are SmolLM2's and AudioTrust's, from tests/reply/corpus), and an affirmative statement about
the asked subject is a yes in every scorer."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_closedform_kuan import QROWS, _predictions, _questions  # noqa: E402 - the Kuan file writers

from halluscope.closedform.loaders import load_aha, load_halluaudio, load_yesno
from halluscope.closedform.score import score_aha, score_halluaudio, score_yesno

OTHER = "The audio of traffic is actually a siren wailing."  # smollm2/49, asked about birds
ABOUT = "The audio contains the sound of a cat - it's actually a film about a dog."  # smollm2/6, asked about a cat


@pytest.mark.parametrize("reply,subject,want", [(OTHER, "birds", "unrelated"), (ABOUT, "cat", "yes")])
def test_every_scorer_reads_against_the_question(
    tmp_path: Path, write_jsonl, reply: str, subject: str, want: str
) -> None:
    q = f"Is there a sound of {subject} in the audio?"
    ha = write_jsonl(
        tmp_path / "b.jsonl",
        [{"audio": "a.wav", "prompt": q, "reference": "no", "subset": "fsd_binary", "domain": "sound", "pred": reply}],
    )
    aha = write_jsonl(
        tmp_path / "m_0.jsonl",
        [
            {
                "index": "60_0_1",
                "type": "existence",
                "question": q,
                "answer": "No",
                "prediction": reply,
                "audio_path": "x.wav",
                "label": "en",
            }
        ],
    )
    rows = [[QROWS[1][0], QROWS[1][1], q, subject, "negative", "No", "popular"]]
    yn = load_yesno(
        _questions(tmp_path / "q.txt", rows),
        _predictions(tmp_path / "p.csv", ["entry_id", "response"], [[QROWS[1][0], reply]]),
    )
    got = [
        score_halluaudio(load_halluaudio([ha]), bootstrap=0).items[0].strict,
        score_aha(load_aha([aha]), bootstrap=0, judge_fallback=False).items[0].strict,
        score_yesno(yn, bootstrap=0).items[0].strict,
    ]
    assert got == [want] * 3, got
