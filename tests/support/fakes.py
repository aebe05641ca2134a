"""Instant stand-ins for TTS and ASR so LLM build tests exercise build.py without espeak or Whisper."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from halluscope.backends.speech import ASR_BACKENDS, TTS_BACKENDS
from support.corpus_fixtures import EN, KK, RU, write_jsonl


class SilentTts:
    spec = "test-silence"

    def voices(self, language: str) -> list[str]:
        return ["none"]

    def synthesize(self, text: str, *, language: str, voice: str) -> np.ndarray:
        return np.zeros(1600, dtype=np.float32)


class FixedAsr:
    spec = "test-fixed"

    def transcribe(self, samples: np.ndarray, *, language: str) -> str:
        return "transcript"


def register() -> None:
    """Idempotent: the registries refuse a second registration of a name."""
    if "test-silence" not in TTS_BACKENDS.providers:
        TTS_BACKENDS.register("test-silence")(lambda model, **o: SilentTts())
    if "test-fixed" not in ASR_BACKENDS.providers:
        ASR_BACKENDS.register("test-fixed")(lambda model, **o: FixedAsr())


ARTICLES = {"en": EN[:3], "ru": RU, "kk": KK}


def write_corpus(path: Path) -> Path:
    """Nine articles, three per language, as a .jsonl corpus."""
    return write_jsonl(
        path,
        [
            {"id": f"{lang}-{i}", "language": lang, "text": t}
            for lang, texts in ARTICLES.items()
            for i, t in enumerate(texts, 1)
        ],
    )


def spoken_run(root: Path, langs: tuple[str, ...] = ("en",)) -> Path:
    """The small spoken build the detect, mitigation and audio-adapter tests ask: three articles per language of
    ``langs``, one rewrite each (seed 3), real espeak-ng audio, transcripts from the stand-in ASR. Returns root/run."""
    from halluscope.spoken.build import BuildConfig, build_spoken

    register()
    corpus = write_corpus(root / "corpus.jsonl")
    build_spoken(
        root / "run",
        BuildConfig(corpus=str(corpus), langs=langs, tts="espeak", asr="test-fixed", rewrites_per_article=1, seed=3),
        quiet=True,
    )
    return root / "run"
