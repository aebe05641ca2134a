"""Audio Flamingo 3 on tiny random weights: its 30 s windows (what is heard, from the feature mask) and Table 8 from
the adapter registry. The mitigations and detection on audio run for AF3 with the other families in
test_adapters_families.py."""

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from halluscope.backends.audio_lm import clip_of, load_adapter
from halluscope.core.errors import HalluscopeError
from halluscope.core.records import ChatMessage
from support.tiny_af3 import build_af3
from support.tiny_audio_lm import espeak_of_length

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
