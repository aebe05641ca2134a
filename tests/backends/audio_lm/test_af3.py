"""Audio Flamingo 3 on tiny random weights: the declared window and what is heard (from the feature mask), the
four mitigations (checked against uncached forward passes / plain greedy decoding), and zero-shot detection
with AAD through 'detect'."""

import sys
from pathlib import Path
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from support.tiny_af3 import build_af3
from support.tiny_audio_lm import espeak, espeak_of_length

from halluscope.backends.audio_lm import clip_of, load_adapter
from halluscope.core.errors import HalluscopeError
from halluscope.mitigation import parse_mitigation
from halluscope.mitigation._audio import branches, generate
from halluscope.core.records import ChatMessage

MSG = [ChatMessage(role="user", content="hello is there audio in the text")]


@pytest.fixture(scope="module")
def af3_dir(tmp_path_factory):
    return build_af3(tmp_path_factory.mktemp("af3"))


@pytest.fixture(scope="module")
def ad(af3_dir):
    return load_adapter(str(af3_dir), window_s=30)


def test_window_declared_and_heard_from_the_mask(af3_dir, ad):
    clip = clip_of(espeak_of_length(45.0))
    assert type(ad).__name__ == "AudioFlamingo3Adapter" and ad.window_s == 30
    inp = ad.inputs(MSG, [clip])
    assert inp.heard_s == pytest.approx(30.0) and inp.delivered
    wide = load_adapter(str(af3_dir))  # default: the model card's 10 minutes
    assert wide.window_s == 600
    inp = wide.inputs(MSG, [clip])
    assert inp.heard_s == pytest.approx(45.0, abs=0.02) and inp.tensors["input_features"].shape[0] == 2  # two windows
    none = wide.inputs(MSG, [])
    assert none.heard_s == 0 and "input_features" not in none.tensors
    with pytest.raises(HalluscopeError, match="multiple of 30"):
        load_adapter(str(af3_dir), window_s=45)


def _full(model, tensors, extra=()):
    ids = torch.cat([tensors["input_ids"], torch.tensor([list(extra)], dtype=torch.long)], dim=1)
    with torch.inference_mode():
        return model(**{**tensors, "input_ids": ids, "attention_mask": torch.ones_like(ids)}, use_cache=False).logits[0, -1]


def test_aad_matches_uncached_contrast(ad):
    clip = clip_of(espeak("hello the audio")[:16_000])
    cfg = parse_mitigation("aad", alpha=1.0)
    _, main, res = generate(ad, MSG, [clip], {"max_new_tokens": 4}, cfg, keep_logits=True)
    same, neg, _ = branches(ad, MSG, [clip], cfg)  # both with AAD's prefix; the contrast without the audio
    assert torch.equal(same.tensors["input_ids"], main.tensors["input_ids"])
    assert "input_features" in main.tensors and "input_features" not in neg
    for t, step in enumerate(res.steps):
        z, zn = _full(ad.model, dict(main.tensors), res.tokens[:t]), _full(ad.model, dict(neg), res.tokens[:t])
        want = 2 * z - zn
        p = torch.softmax(z, -1)
        want = want.masked_fill(p < cfg.beta * p.max(), float("-inf")) if cfg.beta is not None else want
        finite = torch.isfinite(want)
        assert torch.allclose(step.logits[finite], want[finite], atol=2e-4, rtol=1e-4)
        assert int(torch.argmax(want)) == res.tokens[t]


@pytest.mark.parametrize("method", ["aad", "vcd", "mti", "dola"])
def test_zero_strength_is_plain_greedy(ad, method):
    clip = clip_of(espeak("hello the audio")[:16_000])
    extra = {"tau": 0.0} if method == "mti" else {"repetition_penalty": 1.0} if method == "dola" else {}
    cfg = parse_mitigation(method, alpha=0.0, **extra)
    _, main, res = generate(ad, MSG, [clip], {"max_new_tokens": 5}, cfg)
    with torch.inference_mode():
        plain = ad.model.generate(**main.tensors, max_new_tokens=5, do_sample=False,
                                  eos_token_id=ad.tokenizer.eos_token_id, pad_token_id=ad.tokenizer.eos_token_id)
    assert res.tokens == plain[0, main.tensors["input_ids"].shape[1]:].tolist()


def test_detect_on_audio_with_aad(af3_dir, tmp_path):
    from support import fakes
    from halluscope.spoken.detect import detect

    run = fakes.spoken_run(tmp_path)
    for extra in ({}, {"mitigation": "aad", "alpha": 0.5}):
        res = detect(run, detector=f"hf-audio/{af3_dir}", task="binary", input="audio",
                     options={"max_new_tokens": 4, "audio_window_s": 30, "subset": 1, **extra})
        assert len(res.predictions) == 2
        assert all(p.audio is not None and p.audio.delivered and p.audio.window_s == 30 for p in res.predictions.values())


def test_table8_from_the_registry():
    from typer.testing import CliRunner

    from halluscope.backends.audio_lm import ADAPTERS
    from halluscope.backends.audio_lm.table8 import table8
    from halluscope.cli.main import app

    rows = {r["model"]: r for r in table8()}
    assert {cls.name for cls in ADAPTERS.values()} <= set(rows)  # every registered adapter has a row
    assert rows["audio-flamingo-3"]["window_s"] == 600 and "AAD" in rows["audio-flamingo-3"]["mitigation"]
    assert rows["Kimi-Audio"]["mitigation"].startswith("none") and rows["Kimi-Audio"]["window_s"] is None
    res = CliRunner().invoke(app, ["models"])
    assert res.exit_code == 0 and "| audio-flamingo-3 | local hf-audio/<dir> |" in res.output
