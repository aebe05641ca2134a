"""Text-to-speech backends, named 'espeak/<voice>' (Debian espeak-ng) or bare 'espeak' for a voice pool."""

from __future__ import annotations

import hashlib
import shutil
import subprocess
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from halluscope.errors import HalluscopeError, ItemError
from halluscope.registry import Registry
from halluscope.speech.audio import SAMPLE_RATE, decode_wav, resample


class TtsBackend(Protocol):
    spec: str

    def voices(self, language: str) -> list[str]: ...

    def synthesize(self, text: str, *, language: str, voice: str) -> np.ndarray:
        """16 kHz mono float32 samples."""
        ...


TTS_BACKENDS: Registry[TtsBackend] = Registry("TTS backend")

# seed 000, section 3.3 uses several voices per language; these espeak-ng voice+variant pairs all
# exist in Debian's espeak-ng and sound distinct (male/female variants, GB/US English).
ESPEAK_VOICE_POOLS: dict[str, list[str]] = {
    "en": ["en-us", "en-us+f3", "en-gb", "en-gb-x-rp+m3"],
    "ru": ["ru", "ru+f3", "ru+m3", "ru+f4"],
    "kk": ["kk", "kk+f3", "kk+m3", "kk+f4"],
}


def pick_voice(voices: list[str], *, seed: int, item_id: str) -> str:
    """Reproducible voice choice that does not depend on item order."""
    h = hashlib.sha256(f"{seed}:{item_id}".encode()).digest()
    return voices[int.from_bytes(h[:4], "big") % len(voices)]


@dataclass
class EspeakTts:
    """espeak-ng via its command line; one process per clip, WAV on stdout."""

    voice: str | None = None
    rate_wpm: int = 165
    binary: str = "espeak-ng"

    def __post_init__(self) -> None:
        if shutil.which(self.binary) is None:
            raise HalluscopeError(
                f"'{self.binary}' is not on PATH. Install it with: apt-get install -y espeak-ng"
            )

    @property
    def spec(self) -> str:
        return f"espeak/{self.voice}" if self.voice else "espeak"

    def voices(self, language: str) -> list[str]:
        if self.voice:
            return [self.voice]
        if language not in ESPEAK_VOICE_POOLS:
            raise HalluscopeError(f"espeak has no voice pool for language '{language}'; pass espeak/<voice>")
        return ESPEAK_VOICE_POOLS[language]

    def synthesize(self, text: str, *, language: str, voice: str) -> np.ndarray:
        if not text.strip():
            raise ItemError("TTS input is empty; nothing to speak")
        try:
            proc = subprocess.run(
                [self.binary, "-v", voice, "-s", str(self.rate_wpm), "-b", "1", "--stdout"],
                input=text.encode("utf-8"),
                capture_output=True,
                timeout=600,
                check=False,
            )
        except subprocess.TimeoutExpired:
            raise ItemError(f"espeak-ng timed out on a {len(text)}-character text") from None
        if proc.returncode != 0 or not proc.stdout:
            err = proc.stderr.decode("utf-8", "replace").strip() or f"exit code {proc.returncode}"
            raise ItemError(f"espeak-ng failed with voice '{voice}': {err}; check 'espeak-ng --voices' for valid names")
        samples, rate = decode_wav(proc.stdout, source=f"espeak-ng output (voice {voice})")
        if samples.size == 0 or float(np.abs(samples).max()) == 0.0:
            raise ItemError(f"espeak-ng produced silence for voice '{voice}'")
        return resample(samples, rate, SAMPLE_RATE)


@TTS_BACKENDS.register("espeak")
def _espeak(model: str, **options: object) -> TtsBackend:
    return EspeakTts(voice=model or None, **options)  # type: ignore[arg-type]
