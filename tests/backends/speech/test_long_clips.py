"""Whisper on long clips: a clip of several minutes keeps its words (WER within 0.05 of the same speech as short
clips), and the decoding that does so keys the ASR stage."""

import json

import numpy as np
import pytest

from halluscope.backends.speech import ASR_BACKENDS, TTS_BACKENDS
from halluscope.backends.speech.audio import SAMPLE_RATE
from halluscope.core.stages import Stage
from halluscope.metrics.asr import score_asr
from halluscope.spoken.corpus import demo_path


def demo_articles(language: str, words: int) -> list[str]:
    """The first demo-corpus articles of ``language`` holding at least ``words`` words."""
    out: list[str] = []
    for row in map(json.loads, demo_path().read_text(encoding="utf-8").splitlines()):
        if row["language"] == language and sum(len(t.split()) for t in out) < words:
            out.append(row["text"])
    return out


def test_timestamps_are_on_and_key_the_asr_stage():
    new, old = ASR_BACKENDS.create("whisper/base"), ASR_BACKENDS.create("whisper/base?without_timestamps=true")
    assert new.options()["without_timestamps"] is False and old.options()["without_timestamps"] is True
    # transcripts made with the window jumping 30 s are not read back as this decoding's
    assert Stage("asr", new.options()).fingerprint != Stage("asr", old.options()).fingerprint


@pytest.mark.slow  # about 70 s of CPU: four minutes of speech transcribed twice
def test_a_clip_of_several_minutes_keeps_its_words():
    articles = demo_articles("en", 640)  # about 4 minutes at espeak-ng's 165 words a minute
    tts = TTS_BACKENDS.create("espeak/en-us")
    clips = [tts.synthesize(t, language="en", voice="en-us") for t in articles]
    pause = np.zeros(SAMPLE_RATE // 2, dtype=np.float32)
    long_clip = np.concatenate([c for clip in clips for c in (clip, pause)])
    assert len(long_clip) / SAMPLE_RATE > 180
    asr = ASR_BACKENDS.create("whisper/base")
    short = score_asr(reference=articles, hypothesis=[asr.transcribe(c, language="en") for c in clips])
    text = asr.transcribe(long_clip, language="en")
    long = score_asr(reference=[" ".join(articles)], hypothesis=[text])
    assert long.wer <= short.wer + 0.05, (long.wer, short.wer, text[-300:])


def test_hf_asr_decodes_a_long_clip_with_whisper_sequentially(tmp_path):
    from support.tiny_speech import build_whisper

    noise = (np.random.RandomState(0).randn(SAMPLE_RATE * 35) * 0.1).astype(np.float32)  # past the 30 s window
    whisper = ASR_BACKENDS.create(f"hf-asr/{build_whisper(tmp_path / 'whisper')}")
    assert isinstance(whisper.transcribe(noise, language="en"), str) and whisper._whisper
    assert whisper.options()["whisper_long_form"] == "sequential-timestamps"  # part of the ASR stage key
    # a CTC model's long clips stay in chunk_s chunks (test_hf_speech.py transcribes one of 40 s)
