"""Text-LLM backends named 'provider/model': 'openai/<model>' (any OpenAI-compatible server) and 'hf/<path>'.

CHAT_BACKENDS is the one registry of chat backends, text and audio (with capabilities text, hears_audio,
exposes_logits, local, server); LLM_BACKENDS and audio_lm.AUDIO_LM_BACKENDS are its text and audio views.

Every call goes through a Caller over the run's store: each attempt is logged with its raw reply
before parsing, and a request answered before is served from the store, so a rerun makes no calls.
"""

from halluscope.backends.llm._base import (
    CHAT_BACKENDS,
    LLM_BACKENDS,
    Caller,
    CallStats,
    ChatBackend,
    StageOutage,
    complete_all,
    retry_params,
    sampling_note,
)
from halluscope.backends.llm._config import (
    CONFIG_ENV,
    GenerateOptions,
    HFOptions,
    LLMConfig,
    OpenAIOptions,
    load_llm_config,
)
from halluscope.backends.llm._hf import HFBackend
from halluscope.backends.llm._openai import (
    BackendError,
    OpenAIBackend,
    read_completion,
    retry_after_s,
)
from halluscope.backends.llm._structured import complete_structured, response_format
from halluscope.core.spec import ModelSpec


def create_backend(spec: str | ModelSpec, *, config: LLMConfig | None = None, **options: object) -> ChatBackend:
    """Build a text LLM ('openai/<model>', 'hf/<path>') with options from ``config`` (default: $HALLUSCOPE_LLM_CONFIG)."""
    return LLM_BACKENDS.create(spec, config=config if config is not None else load_llm_config(), **options)


def create_chat_backend(spec: str | ModelSpec, *, config: LLMConfig | None = None, **options: object) -> ChatBackend:
    """Build any chat backend, text or audio (CHAT_BACKENDS), with options from ``config`` as in create_backend."""
    return CHAT_BACKENDS.create(spec, config=config if config is not None else load_llm_config(), **options)


__all__ = [
    "CHAT_BACKENDS",
    "CONFIG_ENV",
    "LLM_BACKENDS",
    "BackendError",
    "CallStats",
    "Caller",
    "ChatBackend",
    "GenerateOptions",
    "HFBackend",
    "HFOptions",
    "LLMConfig",
    "OpenAIBackend",
    "OpenAIOptions",
    "StageOutage",
    "complete_all",
    "complete_structured",
    "create_backend",
    "create_chat_backend",
    "load_llm_config",
    "read_completion",
    "response_format",
    "retry_after_s",
    "retry_params",
    "sampling_note",
]
