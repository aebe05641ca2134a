"""Granite Speech's own checks (the family tests are in test_adapters_families.py): the torch front end against
transformers' own extractor with torchaudio (a stored reference on real speech, scripts/granite_reference.py) and an
independent numpy one built from the definitions (framing, window, rfft, HTK triangles), the audio-token count
against the model's own projector, the prompt through a string-content chat template, the refusal of a LoRA
checkpoint without peft, and the 'granite_speech_plus' variant."""

from __future__ import annotations

import json
import shutil
from importlib.util import find_spec

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from halluscope.backends.audio_lm import clip_of, load_adapter
from halluscope.backends.audio_lm._granite import MelFrontEnd
from halluscope.core.errors import HalluscopeError
from halluscope.core.records import ChatMessage
from support.tiny_audio_lm import espeak
from support.tiny_granite import FEATURES, build_granite_speech

MSG = [ChatMessage(role="system", content="yes"), ChatMessage(role="user", content="hello is there audio in the text")]


def numpy_log_mel(arrays: list[np.ndarray], cfg: dict, start: int | None = None) -> list[np.ndarray]:
    """Granite's features from their definition, in float64 numpy (no torch, no transformers); ``start``: where
    the window begins in the frame (default centred, as torch.stft places it)."""
    n_fft, win, hop, n_mels, sr = (cfg[k] for k in ("n_fft", "win_length", "hop_length", "n_mels", "sampling_rate"))
    freqs = np.linspace(0.0, sr / 2, n_fft // 2 + 1)
    to_mel, to_hz = (lambda f: 2595.0 * np.log10(1.0 + f / 700.0)), (lambda m: 700.0 * (10.0 ** (m / 2595.0) - 1.0))
    edges = to_hz(np.linspace(to_mel(0.0), to_mel(sr / 2), n_mels + 2))
    lo, mid, hi = edges[:-2], edges[1:-1], edges[2:]
    f = freqs[:, None]
    bank = np.maximum(0.0, np.minimum((f - lo) / (mid - lo), (hi - f) / (hi - mid)))  # [freqs, mels]
    window = np.zeros(n_fft)
    start = (n_fft - win) // 2 if start is None else start
    window[start : start + win] = 0.5 - 0.5 * np.cos(2 * np.pi * np.arange(win) / win)  # periodic Hann
    width = max(len(a) for a in arrays)
    out = []
    for a in arrays:
        x = np.zeros(width)
        x[: len(a)] = a
        padded = np.pad(x, n_fft // 2, mode="reflect")
        n_frames = 1 + width // hop
        frames = np.stack([padded[i * hop : i * hop + n_fft] for i in range(n_frames)])
        power = np.abs(np.fft.rfft(frames * window, axis=1)) ** 2
        logmel = np.log10(np.maximum(power @ bank, 1e-10))
        logmel = np.maximum(logmel, logmel.max() - 8.0) / 4 + 1
        if n_frames % 2:
            logmel = logmel[:-1]
        out.append(logmel.reshape(-1, 2 * n_mels))
    return out


@pytest.fixture(scope="module")
def granite(tmp_path_factory):
    path = build_granite_speech(tmp_path_factory.mktemp("granite-speech"))
    return path, load_adapter(str(path))


@pytest.fixture(scope="module")
def speech():
    return espeak("hello the audio is a dog barking").astype(np.float32)


def test_front_end_matches_transformers_extractor_with_torchaudio():
    """The features, masks and audio-token counts that GraniteSpeechFeatureExtractor (torchaudio 2.9.1's
    MelSpectrogram, transformers 5.24) gave on two real speech clips, alone and as one padded batch."""
    from pathlib import Path

    ref = np.load(Path(__file__).parent / "data/granite_torchaudio_reference.npz")
    assert any(v.startswith("torchaudio ") for v in ref["versions"])
    clips = {k: ref[k].astype(np.float32) / 32768.0 for k in ("libri", "pisets")}
    fe = MelFrontEnd()  # the extractor's defaults, as the reference used
    for name, batch in (("libri", ["libri"]), ("pisets", ["pisets"]), ("both", ["libri", "pisets"])):
        got = fe([clips[c] for c in batch])
        want = ref[f"{name}_features"]
        assert got["input_features"].shape == want.shape and np.ptp(want) > 1
        # torchaudio computes in float32, this front end in float64: they differ by float32 rounding (3.6e-5 seen)
        np.testing.assert_allclose(got["input_features"].numpy(), want, rtol=0, atol=1e-4)
        assert np.array_equal(got["input_features_mask"].numpy(), ref[f"{name}_mask"])
        assert list(got["audio_embed_sizes"]) == ref[f"{name}_sizes"].tolist()


def test_front_end_matches_independent_numpy(granite, speech):
    rng = np.random.default_rng(0)
    noise = (0.1 * rng.standard_normal(22_170)).astype(np.float32)  # 22170 // 160 + 1 = 139 frames: odd
    fe = granite[1].feature_extractor
    assert fe == MelFrontEnd(**{k: v for k, v in FEATURES.items() if k in MelFrontEnd.__dataclass_fields__})
    for batch in ([speech], [noise], [speech[:16_000], noise]):  # a batch is zero-padded to its longest clip
        got = fe(batch)["input_features"].numpy()
        want = numpy_log_mel(batch, FEATURES)
        assert got.shape == (len(batch), *want[0].shape) and got.shape[-1] == 2 * FEATURES["n_mels"]
        assert np.ptp(got) > 1  # not a floor or a constant
        for row, ref in zip(got, want):
            np.testing.assert_allclose(row, ref, atol=1e-5, rtol=0)
    # the comparison sees a wrong front end: the window zero-padded at the frame's end instead of centred
    shifted = numpy_log_mel([speech], FEATURES, start=0)[0]
    assert not np.allclose(fe([speech])["input_features"].numpy()[0], shifted, atol=1e-5)


def test_audio_tokens_are_what_the_projector_emits(granite, speech):
    ad = granite[1]
    fe = ad.feature_extractor
    for n in (4_000, 16_000, 22_170, 47_999, len(speech)):
        feats = fe([speech[:n] if n <= len(speech) else np.resize(speech, n)])
        with torch.inference_mode():
            emitted = ad.model.get_audio_features(feats["input_features"]).pooler_output.shape[1]
        assert feats["audio_embed_sizes"] == [emitted] and feats["input_features_mask"].all()
    two = fe([speech[:4_000], speech])
    sizes = two["audio_embed_sizes"]
    assert sizes[0] < sizes[1] and two["input_features_mask"].sum(-1).tolist() == sizes
    clips = [clip_of(speech[:4_000]), clip_of(speech)]
    inputs = ad.inputs(MSG, clips)
    assert inputs.audio_tokens == sum(sizes) and inputs.delivered
    with torch.inference_mode():  # both clips' embeddings scatter into the prompt (the model checks the count)
        assert ad.model(**inputs.tensors).logits.shape[1] == inputs.tensors["input_ids"].shape[1]


def test_prompt_puts_the_audio_tokens_before_the_question(granite):
    ad = granite[1]
    text = ad.prompt(MSG, 2)
    user = text.split("<|start_of_role|>user<|end_of_role|>")[1]
    assert user.startswith("<|audio|><|audio|>hello is there")
    assert text.endswith("<|start_of_role|>assistant<|end_of_role|>")
    assert "<|audio|>" not in ad.prompt(MSG, 0)


def test_checkpoint_disagreeing_with_its_preprocessor_config_is_refused(granite, tmp_path):
    path = tmp_path / "bad"
    shutil.copytree(granite[0], path)
    (path / "preprocessor_config.json").write_text(json.dumps({**FEATURES, "projector_window_size": 10}))
    with pytest.raises(HalluscopeError, match="disagrees with config.json"):
        load_adapter(str(path))


@pytest.mark.skipif(find_spec("peft") is not None, reason="peft installed: transformers loads the LoRA")
def test_lora_checkpoint_without_peft_is_refused(granite, tmp_path):
    path = tmp_path / "lora"
    shutil.copytree(granite[0], path)
    cfg = json.loads((path / "config.json").read_text())
    (path / "config.json").write_text(json.dumps({**cfg, "has_lora_adapter": True}))
    (path / "adapter_config.json").write_text(json.dumps({"peft_type": "LORA", "r": 4}))
    with pytest.raises(HalluscopeError, match="pip install peft"):
        load_adapter(str(path))


def test_lora_follows_the_audio(granite, speech, monkeypatch):
    ad = granite[1]
    calls: list[str] = []
    monkeypatch.setattr(ad.model, "_hf_peft_config_loaded", True, raising=False)
    monkeypatch.setattr(ad.model, "enable_adapters", lambda: calls.append("on"), raising=False)
    monkeypatch.setattr(ad.model, "disable_adapters", lambda: calls.append("off"), raising=False)
    clip = clip_of(speech)
    ad.inputs(MSG, [clip])
    ad.inputs(MSG, [])
    ad.inputs_pair(MSG, [clip])
    assert calls == ["on", "off", "off", "on"]  # AAD's pair ends with it on: both branches decode with it


def test_granite_speech_plus(tmp_path, speech):
    from halluscope.mitigation import parse_mitigation
    from halluscope.mitigation._audio import generate

    ad = load_adapter(str(build_granite_speech(tmp_path / "plus", plus=True)))
    assert type(ad.model).__name__ == "GraniteSpeechPlusForConditionalGeneration" and ad.name == "granite-speech"
    clip = clip_of(speech)
    _, main, res = generate(ad, MSG, [clip], {"max_new_tokens": 4}, parse_mitigation("vcd", alpha=0.0))
    eos = ad.tokenizer.eos_token_id
    with torch.inference_mode():
        plain = ad.model.generate(**main.tensors, max_new_tokens=4, do_sample=False, eos_token_id=eos, pad_token_id=eos)
    assert main.delivered and res.tokens == plain[0, main.tensors["input_ids"].shape[1] :].tolist()
