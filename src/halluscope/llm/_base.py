"""The text-LLM backend interface and the store-backed caller every protocol goes through."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Protocol

from halluscope.errors import HalluscopeError
from halluscope.records import ChatMessage, ModelRequest, ModelResponse, Usage
from halluscope.registry import Registry
from halluscope.store import Store


class CallLog(Protocol):
    def __call__(self, *, request: ModelRequest, payload: dict, response: dict | None, status: str,
                 latency_s: float | None) -> None: ...


class ChatBackend(Protocol):
    """A chat model. ``send`` logs every attempt through ``log`` before the reply is parsed."""

    spec: str

    def identity(self) -> dict:
        """Model and decoding options: everything that changes replies (part of stage fingerprints)."""
        ...

    def request(self, messages: Sequence[ChatMessage | dict], *, nonce: int = 0, tag: str | None = None,
                params: dict | None = None) -> ModelRequest:
        """A request with the caller's default ``params`` under the configured ones."""
        ...

    def from_stored(self, request: ModelRequest, stored: dict) -> ModelResponse:
        """Re-read a reply logged by an earlier ``send`` (same parsing, no call)."""
        ...

    async def open(self) -> None: ...

    async def send(self, request: ModelRequest, log: CallLog) -> ModelResponse: ...

    async def aclose(self) -> None: ...


LLM_BACKENDS: Registry[ChatBackend] = Registry("LLM backend")


def local_params(spec: str, defaults: dict, caller: dict | None, configured: dict, mitigation: Any = None) -> dict:
    """Decoding parameters of a local model's request: its defaults, under the caller's, under the configured
    ones (OpenAI's 'max_tokens' is read as 'max_new_tokens' on either side, so a configured max_new_tokens wins
    over a caller's max_tokens); a decoding-time mitigation's key is added only when one is on."""
    def named(d: dict | None) -> dict:
        out = {k: v for k, v in (d or {}).items() if k != "mitigation"}  # only ever the backend's own
        if "max_tokens" in out:
            out["max_new_tokens"] = out.pop("max_tokens")
        return out

    merged = {**defaults, **named(caller), **named(configured)}
    unknown = set(merged) - set(defaults)
    if unknown:
        raise HalluscopeError(f"{spec}: unknown decoding parameters {sorted(unknown)}; expected {sorted(defaults)}")
    if mitigation is not None:  # part of the request key only when on, so unmitigated keys stay what they were
        merged["mitigation"] = mitigation.key()
    return merged


class LocalChatBackend:
    """What the local-model backends (hf, hf-audio) share: request parameters, requests, and replies built from
    the dict a worker returns, which is also what the store keeps (so a stored reply reads back the same)."""

    spec: str
    default_params: dict
    mitigation: Any  # a halluscope.mitigation.MitigationConfig, or None

    def _params(self, params: dict | None) -> dict:
        return local_params(self.spec, self.default_params, params, self.options.params, self.mitigation)  # type: ignore[attr-defined]

    def request(self, messages: Sequence[ChatMessage | dict], *, nonce: int = 0, tag: str | None = None,
                params: dict | None = None) -> ModelRequest:
        return ModelRequest(backend=self.spec, messages=messages_of(messages), params=self._params(params),
                            nonce=nonce, tag=tag)

    def from_stored(self, request: ModelRequest, stored: dict) -> ModelResponse:
        return self._response(request, stored, latency_s=None, cached=True)

    def _response(self, request: ModelRequest, out: dict, *, latency_s: float | None, cached: bool) -> ModelResponse:
        audio = {}
        if request.audio:  # what was sent, what the front end kept, whether audio tokens reached the model
            audio = {"audio_sent_s": out.get("audio_sent_s"), "audio_heard_s": out.get("audio_heard_s"),
                     "audio_delivered": out.get("audio_delivered")}
        return ModelResponse(key=request.key(), backend=self.spec, status="ok", text=out["text"],
                             finish_reason=out["finish_reason"],
                             usage=Usage(prompt_tokens=out["prompt_tokens"], completion_tokens=out["completion_tokens"]),
                             latency_s=latency_s, attempts=0 if cached else 1, cached=cached, **audio)


def messages_of(messages: Sequence[ChatMessage | dict]) -> tuple[ChatMessage, ...]:
    return tuple(m if isinstance(m, ChatMessage) else ChatMessage.model_validate(m) for m in messages)


@dataclass
class CallStats:
    """What a session cost: requests asked, answered from the store, calls actually made, tokens, USD."""

    requests: int = 0
    from_store: int = 0
    calls: int = 0
    failed: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0

    def line(self) -> str:
        cost = f", ${self.cost_usd:.4f}" if self.cost_usd else ""
        return (f"{self.requests} requests: {self.from_store} from the store, {self.calls} model calls, "
                f"{self.failed} failed; {self.prompt_tokens}+{self.completion_tokens} tokens{cost}")

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


class Caller:
    """One backend session over an optional store.

    A request whose key has an 'ok' call in the store is answered from it; identical requests in flight
    share one call; the backend is opened (client built, model loaded) only when a call is needed.
    """

    def __init__(self, backend: ChatBackend, store: Store | None = None) -> None:
        self.backend = backend
        self.store = store
        self.stats = CallStats()
        self._inflight: dict[str, asyncio.Task[ModelResponse]] = {}
        self._opened = False
        self._lock: asyncio.Lock | None = None

    async def __aenter__(self) -> Caller:
        self._lock = asyncio.Lock()
        return self

    async def __aexit__(self, *exc: object) -> None:
        for task in self._inflight.values():
            task.cancel()
        if self._opened:
            await self.backend.aclose()
            self._opened = False

    def _log(self, *, request: ModelRequest, payload: dict, response: dict | None, status: str,
             latency_s: float | None) -> None:
        self.stats.calls += 1
        if self.store is not None:
            self.store.log_call(key=request.key(), backend=self.backend.spec, request=payload, response=response,
                                status=status, latency_s=latency_s)

    async def _ensure_open(self) -> None:
        assert self._lock is not None, "use 'async with Caller(...)'"
        async with self._lock:
            if not self._opened:
                await self.backend.open()
                self._opened = True

    async def complete(self, request: ModelRequest) -> ModelResponse:
        self.stats.requests += 1
        key = request.key()
        if self.store is not None:
            stored = self.store.cached_call(key)
            if stored is not None:
                self.stats.from_store += 1
                return self.backend.from_stored(request, stored)
        task = self._inflight.get(key)
        if task is None:
            task = asyncio.ensure_future(self._send(request))
            self._inflight[key] = task
            task.add_done_callback(lambda _t, k=key: self._inflight.pop(k, None))
        return await asyncio.shield(task)

    async def _send(self, request: ModelRequest) -> ModelResponse:
        await self._ensure_open()
        response = await self.backend.send(request, self._log)
        if response.status == "error":
            self.stats.failed += 1
        if response.usage is not None:
            self.stats.prompt_tokens += response.usage.prompt_tokens
            self.stats.completion_tokens += response.usage.completion_tokens
        self.stats.cost_usd += response.cost_usd or 0.0
        return response


async def _complete_all(backend: ChatBackend, requests: Sequence[ModelRequest], store: Store | None) -> tuple[list[ModelResponse], CallStats]:
    async with Caller(backend, store) as caller:
        out = await asyncio.gather(*(caller.complete(r) for r in requests))
        return list(out), caller.stats


def complete_all(backend: ChatBackend, requests: Sequence[ModelRequest], *, store: Store | None = None) -> tuple[list[ModelResponse], CallStats]:
    """Answer every request (concurrently, as the backend allows), from the store where possible."""
    return asyncio.run(_complete_all(backend, requests, store))


@contextmanager
def progress(description: str, total: int, *, quiet: bool = False) -> Iterator[Callable[[], None]]:
    """A progress bar on the shared console; yields the function that advances it by one."""
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    from halluscope.stages import console

    with Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  TimeRemainingColumn(), console=console, disable=quiet) as bar:
        task = bar.add_task(description, total=total)
        yield lambda: bar.advance(task)
