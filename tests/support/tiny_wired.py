"""Tiny Qwen2-Audio models wired to hear or to ignore their audio (tests/support/tiny_audio_lm.py's builder)."""

from __future__ import annotations

from pathlib import Path


def build_wired(path: Path, *, gain: float) -> Path:
    """The tiny random Qwen2-Audio with its audio projector scaled by ``gain``: 0 makes it deaf (every audio
    embedding is zero whatever the clip: the answer can depend only on how many audio positions there are, which
    the canary keeps equal); a gain above 1 makes the audio weigh more in the tiny decoder."""
    from safetensors.torch import load_file, save_file

    from support.tiny_audio_lm import build_qwen2_audio

    build_qwen2_audio(path)
    weights = path / "model.safetensors"
    tensors = load_file(weights)
    for k in tensors:
        if "multi_modal_projector" in k:
            tensors[k] = tensors[k] * gain
    save_file(tensors, weights, metadata={"format": "pt"})
    return path


_BUILT: dict[float, Path] = {}


def wired(tmp_path_factory, gain: float) -> Path:
    """``build_wired`` once per test session and gain (the models are only read), under the session's tmp dirs."""
    if gain not in _BUILT:
        _BUILT[gain] = build_wired(tmp_path_factory.mktemp(f"qwen2-audio-gain{gain:g}"), gain=gain)
    return _BUILT[gain]
