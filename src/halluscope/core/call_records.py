"""The records of one model call: the request (chat turns, audio clips), the response and its usage, and how an
item's audio went to an audio model (seed 000, section 3.4 and App. A)."""

from __future__ import annotations

from typing import Literal

from pydantic import AliasChoices, Field

from halluscope.core.hashing import json_sha256
from halluscope.core.record_base import Record

ResponseStatus = Literal["ok", "unparsable", "refusal", "error"]


class ChatMessage(Record):
    """One turn of a chat-completions request."""

    role: Literal["system", "user", "assistant"]
    content: str

    def as_dict(self) -> dict[str, str]:
        """``model_dump()`` of the turn (its fields are plain strings) at a fraction of its cost: request keys and
        chat bodies build one per message per request."""
        return dict(self.__dict__)


class AudioClip(Record):
    """One clip attached to a request: 16-bit PCM WAV bytes (never stored in the key or the call log) and their hash."""

    sha256: str = Field(description="sha256 of the WAV bytes: what the request key holds.")
    seconds: float = Field(description="Duration of the clip.")
    sample_rate: int = 16_000
    wav: bytes = Field(default=b"", exclude=True, repr=False, description="The WAV file; left out of dumps.")


class ModelRequest(Record):
    """A text-LLM request; its key (backend, messages, params, nonce) decides whether the store can answer it."""

    backend: str = Field(description="Backend spec, e.g. 'openai/gpt-4o-mini' or 'hf//models/qwen'.")
    messages: tuple[ChatMessage, ...]
    params: dict = Field(
        default_factory=dict,
        description="Decoding parameters sent with the request (temperature, max_tokens, seed, ...).",
    )
    nonce: int = Field(
        default=0, description="Protocol-level retry number; a retry after a rejected output is a new request."
    )
    tag: str | None = Field(
        default=None,
        description="What the call is for (e.g. 'generate:<variant id>'); kept for audit, not part of the key.",
    )
    audio: tuple[AudioClip, ...] = Field(default=(), description="Clips attached to the last user turn (audio models).")

    def key(self) -> str:
        """sha256 of everything that can change the reply; the tag is left out on purpose."""
        content = {
            "backend": self.backend,
            "messages": [m.as_dict() for m in self.messages],
            "params": self.params,
            "nonce": self.nonce,
        }
        if self.audio:  # text-only keys stay what they were before audio existed
            content["audio"] = [a.sha256 for a in self.audio]
        return json_sha256(content)


class Usage(Record):
    """Token counts as the backend reported them."""

    prompt_tokens: int = 0
    completion_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


class ModelResponse(Record):
    """What a backend returned for one request; the raw text is always kept, whatever the status."""

    key: str = Field(description="ModelRequest.key() of the request.")
    backend: str
    status: ResponseStatus = Field(
        description="ok; unparsable (the body was no chat completion); refusal; error (no answer after all retries)."
    )
    text: str | None = Field(default=None, description="Message content (or refusal text, or the unreadable body).")
    error: str | None = Field(default=None, description="Why the status is not ok.")
    finish_reason: str | None = None
    usage: Usage | None = None
    latency_s: float | None = Field(
        default=None, description="Wall time of the answering call (None when served from the store)."
    )
    attempts: int = Field(default=0, description="Transport attempts made (0 when served from the store).")
    cached: bool = Field(default=False, description="Served from the store without a call.")
    cost_usd: float | None = Field(default=None, description="From the backend's cost table, if configured.")
    audio_sent_s: float | None = Field(
        default=None, description="Seconds of audio attached to the request (None: none)."
    )
    audio_heard_s: float | None = Field(default=None, description="Seconds the model could hear of it (None: unknown).")
    audio_delivered: bool | None = Field(
        default=None, description="Audio reached the model (see AudioDelivery.delivered)."
    )


class AudioDelivery(Record):
    """How one item's audio went to an audio model: what was sent, what the model could hear, and under which policy."""

    audio_policy: Literal["truncate", "chunk", "skip"] = Field(
        validation_alias=AliasChoices("audio_policy", "policy"),  # 'policy' in records stored before the rename
        description="The run's --audio-policy for audio longer than the window.",
    )
    window_s: float | None = Field(description="Seconds of audio the model can hear per clip (None: not declared).")
    duration_s: float = Field(description="Length of the item's audio.")
    action: Literal["whole", "truncated", "chunked", "skipped"] = Field(description="What the policy did to this item.")
    chunks: int = Field(default=1, description="Clips attached to the call (0 when skipped).")
    sent_s: float = Field(default=0.0, description="Seconds of audio attached to the call.")
    heard_s: float | None = Field(
        default=None,
        description="Seconds the model received after its own front end "
        "(hf-audio: from the processor's feature mask; openai: min(sent, declared window)).",
    )
    delivered: bool | None = Field(
        default=None,
        description="Audio reached the model: audio features/tokens > 0 "
        "(hf-audio) or an audio part in the request body (openai); None when nothing was sent.",
    )
