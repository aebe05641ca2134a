"""Audio-language-model backends named 'provider/model': 'openai/<model>' (input_audio content parts on the
OpenAI-compatible backend of halluscope.backends.llm) and 'hf-audio/<path>' (local transformers models by adapter:
Qwen2-Audio, Qwen2.5-Omni thinker).

Both are ChatBackends under halluscope.backends.llm's store-backed Caller: a request carries clips in
``ModelRequest.audio``; every reply records the seconds sent and heard and whether audio reached the model.
Long audio is cut to the model's window by a per-run policy (truncate, chunk, skip): see ``plan_audio``.
"""

from __future__ import annotations

# each family registers its adapter on import; here, not in _adapters.py, whose base classes they import
from halluscope.backends.audio_lm import _af3, _gemma3n, _granite, _nemotron, _phi4, _qwen3_omni, _voxtral  # noqa: E402,F401
from halluscope.backends.audio_lm._adapters import (
    ADAPTERS,
    AudioLMAdapter,
    ModelInputs,
    Qwen2AudioAdapter,
    Qwen25OmniThinkerAdapter,
    load_adapter,
    register_adapter,
)
from halluscope.backends.audio_lm._clips import (
    POLICIES,
    AudioAnswer,
    AudioPlan,
    Policy,
    ask_audio,
    audio_request,
    check_policy,
    clip_of,
    plan_audio,
)
from halluscope.backends.audio_lm._hf_audio import (
    HFAudioBackend,
    HFAudioOptions,
    create_hf_audio,  # noqa: F401 - imported for its registration of the hf-audio backend
)
from halluscope.backends.llm import CHAT_BACKENDS, ChatBackend, LLMConfig, load_llm_config
from halluscope.core.registry import Registry, RegistryView
from halluscope.core.spec import ModelSpec

# the chat backends that hear audio ('openai', 'hf-audio', 'cascade/<asr>+<llm>'): a view of CHAT_BACKENDS
AUDIO_LM_BACKENDS: Registry[ChatBackend] = RegistryView(CHAT_BACKENDS, "audio LM backend", "hears_audio")


def create_audio_backend(spec: str | ModelSpec, *, config: LLMConfig | None = None, **options: object) -> ChatBackend:
    """Build 'openai/<model>', 'hf-audio/<path>' or 'cascade/<asr>+<llm>' with options from ``config`` (default: $HALLUSCOPE_LLM_CONFIG)."""
    return AUDIO_LM_BACKENDS.create(spec, config=config if config is not None else load_llm_config(), **options)


def audio_window_s(backend: ChatBackend) -> float | None:
    """Seconds per clip the backend's model can hear (None: the openai backend with no declared window)."""
    window = getattr(backend, "audio_window_s", None)
    if window is None and hasattr(backend, "options"):
        window = getattr(backend.options, "audio_window_s", None)
    return None if window is None else float(window)


def with_audio(request, clips):
    """The request with ``clips`` attached to its last user turn (part of its key)."""
    return request.model_copy(update={"audio": tuple(clips)})


__all__ = [
    "ADAPTERS",
    "AUDIO_LM_BACKENDS",
    "POLICIES",
    "AudioAnswer",
    "AudioLMAdapter",
    "AudioPlan",
    "HFAudioBackend",
    "HFAudioOptions",
    "ModelInputs",
    "Policy",
    "Qwen2AudioAdapter",
    "Qwen25OmniThinkerAdapter",
    "ask_audio",
    "audio_request",
    "audio_window_s",
    "check_policy",
    "clip_of",
    "create_audio_backend",
    "load_adapter",
    "plan_audio",
    "register_adapter",
    "with_audio",
]
