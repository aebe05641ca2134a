"""Audio I/O: the one reader of audio files (WAV, FLAC, OGG -> float32 mono at a rate) and the benchmark's own
format, 16 kHz mono 16-bit PCM WAV."""

from __future__ import annotations

import io
import wave
from math import gcd
from pathlib import Path

import numpy as np

from halluscope.core.errors import ItemError
from halluscope.core.hashing import sha256_hex

SAMPLE_RATE = 16_000


def read_audio(source: str | Path | bytes, *, name: str | None = None, rate: int | None = None,
               fix: str | None = None) -> tuple[np.ndarray, int]:
    """Float32 mono samples in [-1, 1] and their rate, from an audio file's path or its bytes (``name`` says what
    they are in messages); resampled to ``rate`` when given. 16-bit PCM WAV (the benchmark's format) is decoded
    by the standard library, anything else libsndfile reads (FLAC, OGG, 24-bit or float WAV) by soundfile.
    A missing or unreadable file is an ItemError naming it, with ``fix`` when given."""
    then = f"; {fix}" if fix else ""
    if isinstance(source, bytes):
        data, label = source, name or "audio"
    else:
        path = Path(source)
        label = name or str(path)
        if not path.is_file():
            raise ItemError(f"audio file {path} not found{then}")
        data = path.read_bytes()
    samples, sr = _decode(data, label, then)
    if rate is not None and sr != rate:
        samples, sr = resample(samples, sr, rate), rate
    return samples, sr


def _decode(data: bytes, label: str, then: str) -> tuple[np.ndarray, int]:
    wav_problem = None
    if data[:4] == b"RIFF":
        try:
            with wave.open(io.BytesIO(data)) as w:
                sr, channels, width, n = w.getframerate(), w.getnchannels(), w.getsampwidth(), w.getnframes()
                frames = w.readframes(n)
            if width == 2:
                samples = np.frombuffer(frames, dtype="<i2").astype(np.float32) / 32768.0
                if channels > 1:
                    samples = samples.reshape(-1, channels).mean(axis=1)
                return samples, sr
        except (wave.Error, EOFError) as exc:
            wav_problem = str(exc)
    import soundfile as sf

    try:
        samples, sr = sf.read(io.BytesIO(data), dtype="float32", always_2d=True)
    except RuntimeError as exc:  # soundfile.LibsndfileError: not a format it knows, or a damaged file
        what = f"WAV file ({wav_problem})" if wav_problem is not None else f"audio file ({exc})"
        raise ItemError(f"{label}: not a readable {what}{then}") from None
    return samples.mean(axis=1), int(sr)


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


def load_verified(path: Path, expected_sha256: str) -> tuple[np.ndarray, int]:
    """Read a clip and check it is the one the TTS stage wrote."""
    if not path.exists():
        raise ItemError(f"audio file {path} is missing; re-run 'halluscope build spoken' to regenerate it")
    data = path.read_bytes()
    if sha256_hex(data) != expected_sha256:
        raise ItemError(
            f"audio file {path} is corrupt or was modified (sha256 mismatch with the TTS record); "
            "delete it and re-run 'halluscope build spoken' to regenerate it"
        )
    return read_audio(data, name=str(path), fix="re-run the TTS stage to regenerate it")
