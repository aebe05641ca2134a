"""'hf-audio/<path>': a local audio-language model as a chat backend under the store-backed Caller.

Calls run one at a time per worker (audio batches pad to very different lengths): in this process by
default, or on Ray actors that each load the model once (``executor=RayExecutor(...)``), the driver
logging every call. Each stored reply carries the
seconds sent, the seconds the front end kept and whether audio tokens reached the model, so a reply read
back from the store reports the same delivery as the call that made it.
"""

from __future__ import annotations

import asyncio
from typing import Any, Literal

from pydantic import Field, field_validator

from halluscope.backends.audio_lm._adapters import ADAPTERS, AudioLMAdapter, load_adapter
from halluscope.backends.llm._base import CallLog, LocalChatBackend
from halluscope.backends.llm._config import LLMConfig, _Options, resolve_options
from halluscope.core.errors import HalluscopeError
from halluscope.core.executors import LOCAL, ItemTask, Resources, torch_threads
from halluscope.core.records import ModelRequest, ModelResponse
from halluscope.core.spec import ModelSpec

DEFAULT_PARAMS = {"max_new_tokens": 256, "temperature": 0.0, "top_p": 1.0, "seed": 0}


class HFAudioOptions(_Options):
    """Options of an 'hf-audio/<path>' backend ([models."hf-audio/<path>"] in the LLM config, or keywords)."""

    device: str = Field(default="auto", description="auto (cuda if available, else cpu), cpu, cuda, cuda:1, ...")
    dtype: Literal["auto", "float32", "bfloat16", "float16"] = "auto"
    params: dict = Field(
        default_factory=dict, description="max_new_tokens (256), temperature (0 = greedy), top_p, seed."
    )
    chat_template: str | None = Field(default=None, description="Jinja chat template if the model ships none.")
    audio_window_s: float | None = Field(
        default=None, gt=0, description="Override the adapter's window (seconds per clip)."
    )
    mitigation: Any = Field(
        default=None,
        description="Decoding-time mitigation (halluscope.mitigation): 'aad', 'vcd', "
        "'mti', 'dola' or a table {method = 'aad', alpha = 1.0, ...}; None decodes plainly.",
    )

    @field_validator("mitigation", mode="before")
    @classmethod
    def _mitigation(cls, value: Any) -> Any:
        from halluscope.mitigation import parse_mitigation

        return parse_mitigation(value)


class HFAudioBackend(LocalChatBackend):
    """A ChatBackend whose requests may carry clips (ModelRequest.audio)."""

    def __init__(self, path: str, options: HFAudioOptions) -> None:
        self.path = path
        self.spec = f"hf-audio/{path}"
        self.default_params = DEFAULT_PARAMS
        self.options = options
        self.adapter: AudioLMAdapter | None = None
        self.executor = None  # where calls run (None: this process); see halluscope.core.executors
        self._slots: asyncio.Semaphore | None = None
        self._pool = None

    def __getstate__(self) -> dict:  # what a Ray worker receives: configuration, no model or event loop state
        return {**self.__dict__, "adapter": None, "executor": None, "_slots": None, "_pool": None}

    # -- what the model can hear, known before loading it ----------------------------------------
    def adapter_class(self) -> type[AudioLMAdapter]:
        from halluscope.backends.audio_lm._adapters import _transformers

        try:
            model_type = _transformers().AutoConfig.from_pretrained(self.path).model_type
        except (OSError, ValueError) as exc:
            raise HalluscopeError(f"'{self.spec}': cannot read a transformers config in '{self.path}' ({exc})") from exc
        if model_type not in ADAPTERS:
            raise HalluscopeError(
                f"{self.path}: no audio adapter for model type '{model_type}'; "
                f"supported: {', '.join(ADAPTERS.providers)}"
            )
        return ADAPTERS[model_type]

    @property
    def audio_window_s(self) -> float:
        return float(self.options.audio_window_s or self.adapter_class().default_window_s)

    @property
    def mitigation(self) -> Any:
        return self.options.mitigation

    def identity(self) -> dict:
        return {"backend": self.spec, "params": self._params(None), "audio_window_s": self.audio_window_s}

    @property
    def mitigation_label(self) -> str:
        """The table row label of this backend's decoding: 'W/O' or the method (with non-default settings)."""
        from halluscope.mitigation import label_of

        return label_of(self.options.mitigation)

    # -- calls ----------------------------------------------------------------------------------
    def _load(self) -> None:
        if self.adapter is not None:
            return
        import torch

        device = self.options.device
        if device == "auto":
            device = "cuda" if torch.cuda.is_available() else "cpu"
        self.adapter = load_adapter(
            self.path,
            device=device,
            dtype=self.options.dtype,
            window_s=self.options.audio_window_s,
            chat_template=self.options.chat_template,
        )

    async def open(self) -> None:
        self._pool = (self.executor or LOCAL).pool("hf-audio", _AudioCall(self))
        await self._pool.start()  # loads the model (here, or once per Ray worker)
        self._slots = asyncio.Semaphore(self._pool.size)

    async def aclose(self) -> None:
        if self._pool is not None:
            await self._pool.close()
            self._pool = None
        self.adapter = None

    def _call(self, request: ModelRequest) -> dict:
        self._load()
        assert self.adapter is not None
        if self.options.mitigation is not None:
            from halluscope.mitigation._audio import generate

            out, inputs, _ = generate(
                self.adapter, request.messages, request.audio, request.params, self.options.mitigation
            )
        else:
            inputs = self.adapter.inputs(request.messages, request.audio)
            out = self.adapter.generate(inputs, request.params)
        if request.audio:
            out.update(
                audio_sent_s=round(sum(a.seconds for a in request.audio), 3),
                audio_heard_s=round(inputs.heard_s, 3),
                audio_delivered=inputs.delivered,
                audio_tokens=inputs.audio_tokens,
            )
        return out

    async def send(self, request: ModelRequest, log: CallLog) -> ModelResponse:
        assert self._slots is not None and self._pool is not None, "open() first"
        loop = asyncio.get_running_loop()
        payload = {
            "messages": [m.model_dump() for m in request.messages],
            "params": request.params,
            "audio": [a.model_dump() for a in request.audio],
            "nonce": request.nonce,
            "tag": request.tag,
        }
        async with self._slots:
            t0 = loop.time()
            ok, out = await self._pool.call(request)
            if not ok:
                log(request=request, payload=payload, response={"error": out}, status="error", latency_s=None)
                return ModelResponse(
                    key=request.key(), backend=self.spec, status="error", error=f"generation failed: {out}", attempts=1
                )
            latency = loop.time() - t0
        log(request=request, payload=payload, response=out, status="ok", latency_s=round(latency, 4))
        return self._response(request, out, latency_s=latency, cached=False)


class _AudioCall(ItemTask):
    """One request -> the reply dict, on whichever worker holds it; the model loads in ``setup``."""

    def __init__(self, backend: HFAudioBackend) -> None:
        self.backend = backend

    def setup(self, resources: Resources | None) -> None:
        torch_threads(resources)
        self.backend._load()

    def __call__(self, request: ModelRequest) -> dict:
        return self.backend._call(request)


def create_hf_audio(spec: ModelSpec, *, config: LLMConfig | None = None, **options: object) -> HFAudioBackend:
    """'hf-audio/<dir>' (registered in CHAT_BACKENDS), or 'hf-audio/<dir>?mitigation=aad&alpha=0.5': options in the
    spec make a distinct model name (so stages keyed by the name, e.g. MISHAP answers, keep mitigated runs apart);
    keywords win over them."""
    from halluscope.mitigation import FIELDS, split_mitigation

    options, mitigation = split_mitigation({**spec.options, **options})
    if mitigation is not None:
        options["mitigation"] = mitigation
    backend = HFAudioBackend(spec.model, resolve_options(HFAudioOptions, spec.name, config, options, FIELDS))
    backend.spec = str(spec)
    return backend
