"""hf-audio adapters on tiny random-weight Qwen2-Audio and Qwen2.5-Omni thinker built here, with real espeak audio."""

import pytest

from support.tiny_audio_lm import clip45, omni_dir, qwen2_audio_dir  # noqa: F401 - fixtures

pytest.importorskip("transformers")

from halluscope.backends.audio_lm import (
    HFAudioBackend,
    create_audio_backend,
    load_adapter,
    plan_audio,
    with_audio,
)
from halluscope.backends.llm import LLMConfig, complete_all
from halluscope.core.records import ChatMessage
from halluscope.core.store import Store

MSG = [ChatMessage(role="user", content="hello is there a hallucination")]


@pytest.mark.parametrize("which", ["qwen2_audio_dir", "omni_dir"])
def test_audio_reaches_the_model_and_the_window_is_measured(which, request, clip45):
    adapter = load_adapter(str(request.getfixturevalue(which)))
    assert adapter.window_s == 30.0
    whole = plan_audio(clip45, 16_000, window_s=None, audio_policy="truncate")  # 45 s sent as one clip
    with_a, without = adapter.inputs_pair(MSG, whole.clips)
    assert with_a.heard_s == pytest.approx(30.0) and with_a.audio_tokens > 0 and with_a.delivered
    assert without.heard_s == 0 and without.audio_tokens == 0 and not without.delivered
    assert with_a.tensors["input_ids"].shape[1] > without.tensors["input_ids"].shape[1] + 100
    short = plan_audio(clip45[: 5 * 16_000], 16_000, window_s=30.0, audio_policy="truncate")
    assert adapter.inputs(MSG, short.clips).heard_s == pytest.approx(5.0)
    chunks = plan_audio(clip45, 16_000, window_s=30.0, audio_policy="chunk")
    assert adapter.inputs(MSG, chunks.clips).heard_s == pytest.approx(45.0)  # two clips, both heard in full
    # the contrastive-decoding hooks: one step with logits, hidden states and a cache to continue from
    step = adapter.forward(without)
    assert step.logits.shape[:2] == without.tensors["input_ids"].shape and len(step.hidden_states) == 3
    assert step.past_key_values is not None
    out = adapter.generate(with_a, {"max_new_tokens": 4, "temperature": 0})
    assert out["completion_tokens"] <= 4 and isinstance(out["text"], str)


def test_omni_window_can_be_raised_to_hear_all_of_it(omni_dir, clip45):
    adapter = load_adapter(str(omni_dir), window_s=60.0)
    whole = plan_audio(clip45, 16_000, window_s=60.0, audio_policy="truncate")
    assert whole.delivery.action == "whole"
    assert adapter.inputs(MSG, whole.clips).heard_s == pytest.approx(45.0)


def test_backend_records_delivery_and_reruns_from_the_store(qwen2_audio_dir, clip45, tmp_path):
    backend = create_audio_backend(f"hf-audio/{qwen2_audio_dir}", config=LLMConfig(), params={"max_new_tokens": 3})
    assert isinstance(backend, HFAudioBackend) and backend.audio_window_s == 30.0
    whole = plan_audio(clip45, 16_000, window_s=None, audio_policy="truncate")
    reqs = [with_audio(backend.request(MSG), whole.clips), backend.request(MSG)]
    assert reqs[0].key() != reqs[1].key()
    (a, t), stats = complete_all(backend, reqs, store=Store(tmp_path))
    assert stats.calls == 2
    assert (a.audio_sent_s, a.audio_heard_s, a.audio_delivered) == (45.0, 30.0, True)
    assert t.audio_sent_s is None and t.audio_delivered is None
    (a2, _), stats2 = complete_all(backend, reqs, store=Store(tmp_path))
    assert stats2.calls == 0 and a2.cached and (a2.audio_heard_s, a2.audio_delivered) == (30.0, True)
    logged = [c["request"] for c in Store(tmp_path).calls()]
    assert all("wav" not in r for r in logged) and len(logged[0]) < 5000  # the clip's hash, never the audio
