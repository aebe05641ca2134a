"""WAV I/O at the benchmark's format: 16 kHz mono 16-bit PCM."""

from __future__ import annotations

import hashlib
import io
import wave
from math import gcd
from pathlib import Path

import numpy as np

from halluscope.core.errors import ItemError

SAMPLE_RATE = 16_000


def decode_wav(data: bytes, *, source: str) -> tuple[np.ndarray, int]:
    """Float32 mono samples in [-1, 1] and the sample rate; raises ItemError naming ``source`` if corrupt."""
    try:
        with wave.open(io.BytesIO(data)) as w:
            rate, channels, width, n = w.getframerate(), w.getnchannels(), w.getsampwidth(), w.getnframes()
            frames = w.readframes(n)
    except (wave.Error, EOFError) as exc:
        raise ItemError(f"{source}: not a readable WAV file ({exc}); re-run the TTS stage to regenerate it") from None
    if width != 2:
        raise ItemError(f"{source}: expected 16-bit PCM WAV, got {8 * width}-bit")
    samples = np.frombuffer(frames, dtype="<i2").astype(np.float32) / 32768.0
    if channels > 1:
        samples = samples.reshape(-1, channels).mean(axis=1)
    return samples, rate


def resample(samples: np.ndarray, rate: int, target: int = SAMPLE_RATE) -> np.ndarray:
    if rate == target:
        return samples
    from scipy.signal import resample_poly

    g = gcd(rate, target)
    return resample_poly(samples, target // g, rate // g).astype(np.float32)


def encode_wav(samples: np.ndarray, rate: int = SAMPLE_RATE) -> bytes:
    pcm = (np.clip(samples, -1.0, 1.0) * 32767.0).astype("<i2")
    buf = io.BytesIO()
    with wave.open(buf, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(pcm.tobytes())
    return buf.getvalue()


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def load_verified(path: Path, expected_sha256: str) -> tuple[np.ndarray, int]:
    """Read a clip and check it is the one the TTS stage wrote."""
    if not path.exists():
        raise ItemError(f"audio file {path} is missing; re-run 'halluscope build spoken' to regenerate it")
    data = path.read_bytes()
    if sha256_bytes(data) != expected_sha256:
        raise ItemError(
            f"audio file {path} is corrupt or was modified (sha256 mismatch with the TTS record); "
            "delete it and re-run 'halluscope build spoken' to regenerate it"
        )
    return decode_wav(data, source=str(path))
