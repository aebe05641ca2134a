"""An example halluscope plug-in: a TTS engine that speaks a text's UTF-8 bytes as tones (one of 16 frequencies per
4 bits, 5 ms each) and an ASR engine that reads them back exactly. A pipeline built with both has WER 0, so what is
measured is halluscope's own plumbing: the TTS and ASR stages, the WAV files, the store and the report.

Install it beside halluscope (``pip install -e examples/halluscope-modem``), then::

    halluscope build spoken runs/modem --corpus demo --langs en,ru --tts modem --asr modem

A TTS factory is called as ``create_tts(model, **options)`` with the text after 'modem/' (here the voice name, ''
when bare); an ASR factory the same way. Both objects carry ``spec`` (what the report calls them) and ``config()``
(what keys their stage: change it and the clips or transcripts are made again).
"""

from __future__ import annotations

import numpy as np

from halluscope.core.errors import ItemError

__version__ = "0.1.0"
SAMPLE_RATE = 16_000  # halluscope's clips: 16 kHz mono float32
SYMBOL = 80  # samples per 4-bit symbol (5 ms); an 80-sample FFT has 200 Hz bins
BASE_BIN = 5  # symbol k is a tone at (5 + k) x 200 Hz: 1000 ... 4000 Hz, each on an FFT bin
_T = np.arange(SYMBOL) / SAMPLE_RATE
TONES = np.stack([0.5 * np.sin(2 * np.pi * (BASE_BIN + k) * (SAMPLE_RATE / SYMBOL) * _T) for k in range(16)])
TONES = TONES.astype(np.float32)


class ModemTts:
    """Text -> tones. ``voices`` is one name; a voice changes nothing but the stage key (an example of config())."""

    def __init__(self, voice: str = "", **options: object) -> None:
        if options:
            raise ValueError(f"modem TTS takes no options, got {sorted(options)}")
        self.voice = voice or "plain"

    @property
    def spec(self) -> str:
        return f"modem/{self.voice}"

    def config(self) -> dict:
        return {"engine": "halluscope-modem", "version": __version__, "voice": self.voice, "symbol_samples": SYMBOL}

    def voices(self, language: str) -> list[str]:
        return [self.voice]

    def synthesize(self, text: str, *, language: str, voice: str) -> np.ndarray:
        data = np.frombuffer(text.encode("utf-8"), dtype=np.uint8)
        if data.size == 0:
            raise ItemError("modem TTS input is empty; nothing to speak")  # an item error: that item fails, not the run
        symbols = np.stack([data >> 4, data & 15], axis=1).ravel()
        return TONES[symbols].ravel()


class ModemAsr:
    """Tones -> text: the strongest of the 16 bins in each 5 ms frame."""

    spec = "modem"

    def config(self) -> dict:
        return {"engine": "halluscope-modem", "version": __version__}

    def transcribe(self, samples: np.ndarray, *, language: str) -> str:
        n = len(samples) // SYMBOL
        frames = np.asarray(samples[: n * SYMBOL], dtype=np.float64).reshape(n, SYMBOL)
        power = np.abs(np.fft.rfft(frames, axis=1))[:, BASE_BIN : BASE_BIN + 16]
        symbols = power.argmax(axis=1).astype(np.uint8)
        data = (symbols[0::2][: n // 2] << 4) | symbols[1::2][: n // 2]
        return data.tobytes().decode("utf-8", errors="replace")


def create_tts(model: str, **options: object) -> ModemTts:
    return ModemTts(model, **options)


def create_asr(model: str, **options: object) -> ModemAsr:
    if model or options:
        raise ValueError("modem ASR is just 'modem' and takes no options")
    return ModemAsr()
