"""Tiny closed-form files of each published format (HalluAudio, AHa-Bench, Kuan et al.'s yes/no), shared by the
closed-form tests and the README examples' test."""

from __future__ import annotations

import csv
from pathlib import Path

from support.corpus_fixtures import write_jsonl

HALLUAUDIO_ROWS = [
    # sound, binary (subset unknown to the official scripts: domain given per row)
    {
        "audio": "s1.wav",
        "prompt": "Is there a dog barking?",
        "reference": "yes",
        "subset": "fsd_binary",
        "domain": "sound",
        "pred": "Yes, a dog is barking.",
    },
    {
        "audio": "s2.wav",
        "prompt": "Is there a dog barking?",
        "reference": "no",
        "subset": "fsd_binary",
        "domain": "sound",
        "pred": "I don't know.",
    },
    {
        "audio": "s3.wav",
        "prompt": "Is there a cat?",
        "reference": "yes",
        "subset": "fsd_binary",
        "domain": "sound",
        "pred": "I can see its eyes glowing.",
    },
    {
        "audio": "s4.wav",
        "prompt": "Is there a siren?",
        "reference": "no",
        "subset": "fsd_binary",
        "domain": "sound",
        "pred": "Yes.",
    },
    # speech
    {
        "audio": "p1.wav",
        "prompt": "How many words?",
        "reference": "5",
        "subset": "commonvoice_word_count",
        "pred": "There are five words.",
    },
    {
        "audio": "p2.wav",
        "prompt": "Gender?",
        "reference": None,
        "subset": "commonvoice_invalid_gender",
        "pred": "Sorry, the speaker is male.",
    },
    {
        "audio": "p3.wav",
        "prompt": "Which is louder?",
        "reference": "first",
        "subset": "speech_commands_comparsion_loudness",
        "pred": "The first is louder than the second.",
    },
    {
        "audio": "p4.wav",
        "prompt": "Gender?",
        "reference": None,
        "subset": "invalid_noise",
        "pred": "There is no speech, only noise.",
    },
    # music
    {
        "audio": "m1.wav",
        "prompt": "How many instruments?",
        "reference": "1",
        "subset": "single_music_count",
        "pred": "None, just silence.",
    },
    {
        "audio": "m2.wav",
        "prompt": "How many instruments?",
        "reference": "3",
        "subset": "multiple_music_count",
        "pred": "I hear three instruments.",
    },
    {
        "audio": "m3.wav",
        "prompt": "Speech or music?",
        "reference": "music",
        "subset": "speech_music_classification",
        "pred": "It's music.",
    },
]


def write_halluaudio(path: Path, *, broken_line: bool = True) -> Path:
    return write_jsonl(path, HALLUAUDIO_ROWS + (["{broken"] if broken_line else []))


def write_aha(path0: Path, path1: Path) -> list[Path]:
    """Two runs of one model in AHa-Bench's output format."""
    base = {"question": "?", "audio_path": "x.wav", "label": "en"}
    run0 = [
        {
            "index": "60_0_1",
            "type": "existence",
            "answer": "Yes",
            "prediction": "Yes, a dog barks.",
            "prediction_match": "Yes",
        },
        {
            "index": "60_0_2",
            "type": "existence",
            "answer": "No",
            "prediction": "I am not sure.",
            "prediction_match": "Unknown",
        },
        {
            "index": "60_1_1",
            "type": "existence",
            "answer": "No",
            "prediction": "There is no car.",
            "prediction_match": "No",
        },
        {
            "index": "220_0_1",
            "type": "asr_en",
            "answer": "Hello world, how are you?",
            "prediction": "hello world how are you",
        },
        {"index": "40_10_3", "type": "inferred sound", "answer": "No", "prediction": "No."},
    ]
    run1 = [
        {"index": "60_0_1", "type": "existence", "answer": "Yes", "prediction": "No.", "prediction_match": "No"},
        {"index": "60_0_2", "type": "existence", "answer": "No", "prediction": "No.", "prediction_match": "No"},
        {"index": "60_1_1", "type": "existence", "answer": "No", "prediction": "Yes", "prediction_match": "Yes"},
        {
            "index": "220_0_1",
            "type": "asr_en",
            "answer": "Hello world, how are you?",
            "prediction": "hello word how are you",
        },
        {"index": "40_10_3", "type": "inferred sound", "answer": "No", "prediction": "No."},
    ]
    return [write_jsonl(path0, [{**base, **r} for r in run0]), write_jsonl(path1, [{**base, **r} for r in run1])]


YESNO_QUESTIONS = [
    ["entry_id", "audio_index", "prompt_text", "object", "attribute", "label", "sampling"],
    ["r1", "Ya", "Is there a sound of dog in the audio?", "dog", "", "Yes", "random"],
    ["r2", "Ya", "Is there a sound of siren in the audio?", "siren", "", "No", "random"],
    ["a1", "Yb", "Is there a sound of speech in the audio?", "speech", "", "Yes", "adversarial"],
    ["a2", "Yb", "Is there a sound of music in the audio?", "music", "", "No", "adversarial"],
    ["a3", "Yc", "Is there a sound of rain in the audio?", "rain", "", "No", "adversarial"],
    ["a4", "Yc", "Is there a sound of wind in the audio?", "wind", "", "Yes", "adversarial"],
]
YESNO_RESPONSES = [
    ("r1", "Yes, a dog is barking."),
    ("r2", "no, there isn't"),
    ("a1", "Yes"),
    ("a2", "The man's eyes... there is no music."),
    ("a3", "I don't know."),
    ("a4", "Sí, hay viento."),
]


def write_yesno(q: Path, p: Path) -> tuple[Path, Path]:
    """Kuan et al.'s questions TSV and a predictions CSV."""
    q.write_text("\n".join("\t".join(r) for r in YESNO_QUESTIONS) + "\n", encoding="utf-8")
    with p.open("w", encoding="utf-8", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["entry_id", "audio_index", "label", "response"])
        labels = {r[0]: r[5] for r in YESNO_QUESTIONS[1:]}
        audio = {r[0]: r[1] for r in YESNO_QUESTIONS[1:]}
        for eid, resp in YESNO_RESPONSES:
            w.writerow([eid, audio[eid], labels[eid], resp])
    return q, p
