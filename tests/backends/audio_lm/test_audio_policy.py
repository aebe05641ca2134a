"""Audio-length accounting: a real 45 s espeak clip against a 30 s window under truncate, chunk and skip."""

import numpy as np
import pytest

from halluscope.backends.audio_lm import clip_of, plan_audio
from halluscope.backends.speech.audio import read_audio
from halluscope.core.errors import HalluscopeError
from support.tiny_audio_lm import clip45, omni_dir, qwen2_audio_dir  # noqa: F401 - fixtures


def test_truncate_sends_the_first_window(clip45):
    plan = plan_audio(clip45, 16_000, window_s=30.0, audio_policy="truncate")
    d = plan.delivery
    assert (d.action, d.chunks, d.duration_s, d.sent_s, d.window_s) == ("truncated", 1, 45.0, 30.0, 30.0)
    samples, rate = read_audio(plan.clips[0].wav, name="clip")
    assert rate == 16_000 and len(samples) == 30 * 16_000
    assert np.allclose(samples[:1000], clip45[:1000], atol=1e-4)  # the beginning, not some other part


def test_chunk_sends_everything_in_window_sized_clips(clip45):
    plan = plan_audio(clip45, 16_000, window_s=30.0, audio_policy="chunk")
    assert plan.delivery.action == "chunked" and plan.delivery.chunks == 2
    assert [c.seconds for c in plan.clips] == [30.0, 15.0] and plan.delivery.sent_s == 45.0
    assert len({c.sha256 for c in plan.clips}) == 2


def test_skip_sends_nothing_and_short_audio_is_whole(clip45):
    plan = plan_audio(clip45, 16_000, window_s=30.0, audio_policy="skip")
    assert plan.skipped and plan.clips == () and plan.delivery.sent_s == 0.0 and plan.delivery.chunks == 0
    short = plan_audio(clip45[: 10 * 16_000], 16_000, window_s=30.0, audio_policy="skip")
    assert short.delivery.action == "whole" and short.delivery.sent_s == 10.0
    unbounded = plan_audio(clip45, 16_000, window_s=None, audio_policy="truncate")  # no declared window: all of it
    assert unbounded.delivery.action == "whole" and unbounded.delivery.sent_s == 45.0


def test_resampling_and_bad_policy(clip45):
    c = clip_of(clip45[:8000][::2], 8000)  # 1 s at 8 kHz -> 16 kHz
    assert c.seconds == 0.5 and c.sample_rate == 16_000
    with pytest.raises(HalluscopeError, match="truncate, chunk, skip"):
        plan_audio(clip45, 16_000, window_s=30.0, audio_policy="drop")
