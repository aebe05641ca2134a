"""'whitebox/<hf-audio dir>' on a tiny random Qwen2-Audio (tests/support/tiny_wired.py) over the small spoken
build: features from one teacher-forced pass with and without the clip, stored once per input and shared by the
tasks; a per-language logistic regression trained on train, predicting dev and test; in Table 2 with intervals."""

from __future__ import annotations

import pytest

pytest.importorskip("transformers")

from halluscope.core.errors import HalluscopeError
from halluscope.core.store import Store
from halluscope.spoken.detect import detect
from halluscope.spoken.detect.whitebox import FEATURE_STAGE, FEATURES, forced_pass
from support import fakes
from support.tiny_wired import wired


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    root = tmp_path_factory.mktemp("whitebox")
    (root / "spoken").mkdir()
    # two languages: the overall row of Table 2 has two test articles, so its bootstrap interval exists
    return fakes.spoken_run(root / "spoken", langs=("en", "ru")), wired(tmp_path_factory, 30.0)


def test_trains_predicts_and_sits_in_table2(setup):
    run, model = setup
    spec = f"whitebox/{model}"
    o = detect(run, detector=spec, task="binary", input="text", options={"max_text_tokens": 32})
    t = detect(run, detector=spec, task="binary", input="transcript", options={"max_text_tokens": 32})
    assert {k: p.split for k, p in o.predictions.items()} == {k: p.split for k, p in t.predictions.items()}
    assert {p.split for p in o.predictions.values()} == {"dev", "test"}
    assert all(p.predicted in ("original", "hallucinated") and not p.zero_shot for p in o.predictions.values())
    with Store(run) as store:
        n_features = store.count(FEATURE_STAGE)
    assert n_features == 2 * len(setup_items(run))  # train items too: one feature set per item and input
    # a second task reuses the features: same predictions on a rerun, no model load needed
    again = detect(run, detector=spec, task="binary", input="text", options={"max_text_tokens": 32})
    assert again.predictions == o.predictions
    with Store(run) as store:
        assert store.count(FEATURE_STAGE) == n_features  # nothing recomputed
    from halluscope.spoken.report import collect
    from halluscope.spoken.report.tables import o_vs_t

    rows = [r for r in o_vs_t(collect(run).detection) if r["detector"].startswith("whitebox/")]
    assert {r["language"] for r in rows} == {"en", "ru", "all"}
    overall = next(r for r in rows if r["language"] == "all")
    assert overall["O_f1"] is not None and overall["T_f1"] is not None
    assert overall["O_f1_ci"] is not None and overall["T_f1_ci"] is not None


def setup_items(run) -> list[str]:
    from halluscope.spoken.build import load_build

    with Store(run) as store:
        build = load_build(store)
    return [k for k in build.samples if k in build.transcripts and k in build.audio]


def test_unknown_option_and_audio_input_are_refused(setup):
    run, model = setup
    with pytest.raises(HalluscopeError, match="does not take -o bogus"):
        detect(run, detector=f"whitebox/{model}", task="binary", input="text", options={"bogus": 1})
    with pytest.raises(HalluscopeError, match="reads text, transcript"):
        detect(run, detector=f"whitebox/{model}", task="binary", input="audio")


def test_features_read_the_audio_the_attention_and_the_forced_text(setup):
    from halluscope.backends.audio_lm import clip_of, load_adapter
    from halluscope.core.records import ChatMessage
    from support.tiny_audio_lm import espeak

    _, model = setup
    from halluscope.spoken.detect.whitebox import eager_text_attention

    adapter = load_adapter(str(model))
    assert eager_text_attention(adapter.model)
    msgs = [ChatMessage(role="user", content="repeat")]
    got = forced_pass(adapter, msgs, (clip_of(espeak("hello the audio")),), "hello the audio yes", 64)
    values = dict(zip(FEATURES, got["values"]))
    assert got["tokens"] == 4 and got["audio_tokens"] > 0 and got["attentions"]
    assert 0 < values["entropy_mean"] <= values["entropy_max"] and values["kl_max"] > 0
    assert 0 < values["attn_audio_mean"] <= values["attn_audio_max"] <= 1
    silent = forced_pass(adapter, msgs, (), "hello the audio yes", 64)  # no clip: both branches equal
    assert dict(zip(FEATURES, silent["values"]))["kl_max"] == 0 and not silent["attentions"]
