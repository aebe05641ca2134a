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
# data sizes that writers to a pipe put in the header (espeak-ng --stdout, ffmpeg, sox): "until the end of the file"
STREAMING_SIZES = frozenset({0, 0x7FFFF000, 0x7FFFFFFF, 0xFFFFFFFF})


def read_audio(
    source: str | Path | bytes, *, name: str | None = None, rate: int | None = None, fix: str | None = None
) -> tuple[np.ndarray, int]:
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
    """Samples and rate; a WAV that lies (a data size over what the file holds, a zero rate, a frame cut in half,
    no samples at all) is an ItemError, never a silently shorter clip."""
    wav_problem = None
    if data[:4] == b"RIFF":
        _check_riff(data, label, then)
        try:
            with wave.open(io.BytesIO(data)) as w:
                sr, channels, width, n = w.getframerate(), w.getnchannels(), w.getsampwidth(), w.getnframes()
                frames = w.readframes(n)
            if width == 2:
                samples = np.frombuffer(frames[: len(frames) // (2 * channels) * 2 * channels], dtype="<i2")
                samples = samples.astype(np.float32) / 32768.0
                if channels > 1:
                    samples = samples.reshape(-1, channels).mean(axis=1)
                return samples, sr
        except (wave.Error, EOFError) as exc:
            wav_problem = str(exc)
    import soundfile as sf

    try:
        samples, sr = sf.read(io.BytesIO(data), dtype="float32", always_2d=True)
    except (RuntimeError, ValueError, ZeroDivisionError) as exc:  # LibsndfileError: unknown format or damaged
        what = f"WAV file ({wav_problem})" if wav_problem is not None else f"audio file ({exc})"
        raise ItemError(f"{label}: not a readable {what}{then}") from None
    if not len(samples) or sr <= 0:
        raise ItemError(f"{label}: holds no audio samples ({len(samples)} frames at {sr} Hz){then}")
    return samples.mean(axis=1), int(sr)


def _check_riff(data: bytes, label: str, then: str) -> None:
    """The fmt and data chunks of a RIFF/WAVE file against the bytes it holds."""
    fmt: tuple[int, int, int] | None = None
    off = 12
    while off + 8 <= len(data):
        cid, size = data[off : off + 4], int.from_bytes(data[off + 4 : off + 8], "little")
        body = data[off + 8 : off + 8 + size]
        if cid == b"fmt " and len(body) >= 16:
            fmt = (
                int.from_bytes(body[2:4], "little"),
                int.from_bytes(body[4:8], "little"),
                int.from_bytes(body[12:14], "little"),
            )  # channels, rate, block align
        elif cid == b"data":
            if fmt is None:
                raise ItemError(f"{label}: not a readable WAV file (no 'fmt ' chunk before the data){then}")
            channels, rate, align = fmt
            if rate <= 0 or channels <= 0 or align <= 0:
                raise ItemError(
                    f"{label}: the header gives {rate} Hz, {channels} channel(s), {align}-byte frames; "
                    f"expected a positive rate (e.g. 16000), channels and frame size{then}"
                )
            held = len(data) - off - 8
            if size in STREAMING_SIZES:  # written by a stream (espeak-ng, ffmpeg to a pipe): the data runs to the end
                size = held
            if size > held:
                raise ItemError(
                    f"{label}: truncated: the header declares {size:,} bytes of audio ({size // align / rate:.3f}"
                    f" s) but the file holds {held:,} ({held // align / rate:.3f} s); re-export or "
                    f"re-download the file{then}"
                )
            if size % align:
                raise ItemError(
                    f"{label}: the audio data ({size:,} bytes) is not a whole number of {align}-byte "
                    f"frames ({channels} channel(s)): the file is damaged; re-export it{then}"
                )
            if size == 0:
                raise ItemError(f"{label}: holds no audio samples (0 frames); expected a clip with sound{then}")
            return
        off += 8 + size + (size & 1)
    raise ItemError(f"{label}: not a readable WAV file (no 'data' chunk){then}")


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
