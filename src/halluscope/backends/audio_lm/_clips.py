"""Long audio against a model's window: truncate, chunk or skip, with the seconds sent recorded per item.

The spec's harness sent 96 s median clips to models with a 30 s front end and never checked what was heard
(seed 000, section 4.2). Here every item gets an AudioDelivery saying what was done and how much was sent.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np

from halluscope.backends.speech.audio import SAMPLE_RATE, encode_wav, resample
from halluscope.core.errors import HalluscopeError
from halluscope.core.hashing import sha256_hex
from halluscope.core.records import AudioClip, AudioDelivery, ModelRequest, ModelResponse

Policy = Literal["truncate", "chunk", "skip"]
POLICIES: tuple[Policy, ...] = ("truncate", "chunk", "skip")
# a tail shorter than this is dropped rather than sent as its own chunk (it would carry no words)
MIN_CHUNK_S = 0.5


@dataclass(frozen=True)
class AudioPlan:
    """The clips to attach and the delivery record (``heard_s``/``delivered`` are filled in after the call)."""

    clips: tuple[AudioClip, ...]
    delivery: AudioDelivery

    @property
    def skipped(self) -> bool:
        return self.delivery.action == "skipped"


def clip_of(samples: np.ndarray, rate: int = SAMPLE_RATE) -> AudioClip:
    """A 16 kHz mono 16-bit WAV clip of ``samples``."""
    samples = resample(np.asarray(samples, dtype=np.float32), rate, SAMPLE_RATE)
    wav = encode_wav(samples, SAMPLE_RATE)
    return AudioClip(
        sha256=sha256_hex(wav), seconds=round(len(samples) / SAMPLE_RATE, 3), sample_rate=SAMPLE_RATE, wav=wav
    )


def check_policy(audio_policy: str) -> Policy:
    if audio_policy not in POLICIES:
        raise HalluscopeError(f"unknown audio policy '{audio_policy}': expected one of {', '.join(POLICIES)}")
    return audio_policy  # type: ignore[return-value]


def plan_audio(samples: np.ndarray, rate: int, *, window_s: float | None, audio_policy: str) -> AudioPlan:
    """Apply ``audio_policy`` (--audio-policy) to audio longer than ``window_s`` (no window declared: the whole clip is sent).

    truncate: the first window only; chunk: consecutive window-long clips, all attached to the same call;
    skip: nothing is sent and the item is reported as skipped.
    """
    policy = check_policy(audio_policy)
    samples = resample(np.asarray(samples, dtype=np.float32), rate, SAMPLE_RATE)
    duration = len(samples) / SAMPLE_RATE
    base = {"audio_policy": policy, "window_s": window_s, "duration_s": round(duration, 3)}
    if window_s is None or duration <= window_s + 1e-6:
        clip = clip_of(samples)
        return AudioPlan((clip,), AudioDelivery(**base, action="whole", chunks=1, sent_s=clip.seconds))
    n = int(round(window_s * SAMPLE_RATE))
    if policy == "skip":
        return AudioPlan((), AudioDelivery(**base, action="skipped", chunks=0, sent_s=0.0))
    if policy == "truncate":
        clip = clip_of(samples[:n])
        return AudioPlan((clip,), AudioDelivery(**base, action="truncated", chunks=1, sent_s=clip.seconds))
    pieces = [samples[i : i + n] for i in range(0, len(samples), n)]
    if len(pieces) > 1 and len(pieces[-1]) < MIN_CHUNK_S * SAMPLE_RATE:
        pieces = pieces[:-1]
    clips = tuple(clip_of(p) for p in pieces)
    return AudioPlan(
        clips,
        AudioDelivery(**base, action="chunked", chunks=len(clips), sent_s=round(sum(c.seconds for c in clips), 3)),
    )


@dataclass(frozen=True)
class AudioAnswer:
    """What ``ask_audio`` did: the request sent (None when the policy skipped the clip), the reply, and the delivery
    record with what the model heard filled in from the reply."""

    request: ModelRequest | None
    response: ModelResponse | None
    delivery: AudioDelivery

    @property
    def skipped(self) -> bool:
        return self.delivery.action == "skipped"


def audio_request(request, clip: tuple[np.ndarray, int], audio_policy: str, window: float | None):
    """(``request`` with ``clip`` (samples, rate) cut to ``window`` seconds by ``audio_policy`` attached, or None when the
    policy skips the clip; the delivery record). The clips are part of the request's key."""
    samples, rate = clip
    plan = plan_audio(samples, rate, window_s=window, audio_policy=audio_policy)
    if plan.skipped:
        return None, plan.delivery
    return request.model_copy(update={"audio": tuple(plan.clips)}), plan.delivery


async def ask_audio(
    caller, request, clip: tuple[np.ndarray, int], audio_policy: str, window: float | None
) -> AudioAnswer:
    """Ask an audio model ``request`` with its clip under the window policy (``audio_request``); nothing is sent
    when the policy skips the clip. The delivery record gets the seconds the model heard and whether audio reached
    it, as the reply reports them."""
    sent, delivery = audio_request(request, clip, audio_policy, window)
    if sent is None:
        return AudioAnswer(None, None, delivery)
    response = await caller.complete(sent)
    delivery = delivery.model_copy(update={"heard_s": response.audio_heard_s, "delivered": response.audio_delivered})
    return AudioAnswer(sent, response, delivery)
