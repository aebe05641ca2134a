"""The one audio reader (backends.speech.audio.read_audio) reads every format the old copies did, to the same
samples: 16-bit PCM WAV by the standard library (TTS output, stored clips), anything else through libsndfile
(MISHAP clip manifests: FLAC, OGG, 24-bit WAV), mono by channel mean, resampled on request."""

import io

import numpy as np
import pytest
import soundfile as sf

from halluscope.backends.speech.audio import SAMPLE_RATE, encode_wav, load_verified, read_audio
from halluscope.core.errors import ItemError
from halluscope.core.hashing import sha256_hex


def _tone(n: int = 4000, rate: int = 22_050) -> np.ndarray:
    t = np.arange(n) / rate
    return (0.5 * np.sin(2 * np.pi * 440 * t)).astype(np.float32)


def test_16bit_wav_gives_the_samples_libsndfile_gives(tmp_path):
    stereo = np.stack([_tone(), -0.25 * _tone()], axis=1)
    path = tmp_path / "s.wav"
    sf.write(str(path), stereo, 22_050, subtype="PCM_16")
    samples, rate = read_audio(path)
    old, old_rate = sf.read(str(path), dtype="float32", always_2d=True)  # what mishap's reader returned
    assert rate == old_rate == 22_050 and samples.dtype == np.float32
    np.testing.assert_array_equal(samples, old.mean(axis=1))
    same, _ = read_audio(path.read_bytes(), name="bytes")  # bytes and paths alike
    np.testing.assert_array_equal(same, samples)


def test_flac_and_24bit_wav_read_through_libsndfile(tmp_path):
    x = _tone()
    for name, subtype in (("c.flac", "PCM_16"), ("c24.wav", "PCM_24"), ("f.wav", "FLOAT")):
        sf.write(str(tmp_path / name), x, 22_050, subtype=subtype)
        samples, rate = read_audio(tmp_path / name)
        assert rate == 22_050 and samples.shape == x.shape
        assert float(np.abs(samples - x).max()) < 1e-3


def test_resampling_to_a_rate():
    wav = encode_wav(_tone(22_050), 22_050)
    samples, rate = read_audio(wav, name="clip", rate=SAMPLE_RATE)
    assert rate == SAMPLE_RATE and len(samples) == SAMPLE_RATE and samples.dtype == np.float32


def test_problems_name_the_file_and_the_fix(tmp_path):
    with pytest.raises(ItemError, match=r"audio file .*nope.wav not found; fix the manifest"):
        read_audio(tmp_path / "nope.wav", fix="fix the manifest")
    with pytest.raises(ItemError, match=r"^clip: not a readable WAV file"):
        read_audio(b"RIFF garbage", name="clip")
    with pytest.raises(ItemError, match=r"^x.bin: not a readable audio file"):
        read_audio(b"\x00\x01 not audio at all", name="x.bin")


def test_stored_clips_still_verify(tmp_path):
    wav = encode_wav(_tone(1600, SAMPLE_RATE))
    path = tmp_path / "a.wav"
    path.write_bytes(wav)
    samples, rate = load_verified(path, sha256_hex(wav))
    assert rate == SAMPLE_RATE
    np.testing.assert_array_equal(samples, sf.read(io.BytesIO(wav), dtype="float32")[0])
    with pytest.raises(ItemError, match="sha256 mismatch"):
        load_verified(path, sha256_hex(b"other"))
