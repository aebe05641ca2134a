"""A stand-in ASR (and a silent TTS) so hostile-input builds run in seconds; espeak stays real where it matters."""

from __future__ import annotations

import numpy as np

from halluscope.backends.speech import ASR_BACKENDS, TTS_BACKENDS


class EchoLengthAsr:
    spec = "hostile-asr"

    def transcribe(self, samples: np.ndarray, *, language: str) -> str:
        return f"clip of {samples.size} samples"


class SilentTts:
    spec = "hostile-tts"

    def voices(self, language: str) -> list[str]:
        return ["none"]

    def synthesize(self, text: str, *, language: str, voice: str) -> np.ndarray:
        return np.full(800 + len(text) % 97, 0.01, dtype=np.float32)


def register() -> None:
    if "hostile-asr" not in ASR_BACKENDS.providers:
        ASR_BACKENDS.register("hostile-asr")(lambda model, **o: EchoLengthAsr())
    if "hostile-tts" not in TTS_BACKENDS.providers:
        TTS_BACKENDS.register("hostile-tts")(lambda model, **o: SilentTts())
