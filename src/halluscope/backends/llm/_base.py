"""The text-LLM backend interface and the store-backed caller every protocol goes through."""

from __future__ import annotations

import asyncio
import functools
import json
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from halluscope.core import gctune
from halluscope.core.errors import HalluscopeError
from halluscope.core.records import ChatMessage, ModelRequest, ModelResponse, Usage
from halluscope.core.registry import Registry, RegistryView
from halluscope.core.store import Store


class CallLog(Protocol):
    def __call__(
        self, *, request: ModelRequest, payload: dict, response: dict | None, status: str, latency_s: float | None
    ) -> None: ...


class ChatBackend(Protocol):
    """A chat model. ``send`` logs every attempt through ``log`` before the reply is parsed."""

    spec: str

    def identity(self) -> dict:
        """Model and decoding options: everything that changes replies (part of stage fingerprints)."""
        ...

    def request(
        self,
        messages: Sequence[ChatMessage | dict],
        *,
        nonce: int = 0,
        tag: str | None = None,
        params: dict | None = None,
    ) -> ModelRequest:
        """A request with the caller's default ``params`` under the configured ones."""
        ...

    def from_stored(self, request: ModelRequest, stored: dict) -> ModelResponse:
        """Re-read a reply logged by an earlier ``send`` (same parsing, no call)."""
        ...

    async def open(self) -> None: ...

    async def send(self, request: ModelRequest, log: CallLog) -> ModelResponse: ...

    async def aclose(self) -> None: ...


# One registry of chat backends, text and audio LMs alike, each with its declared capabilities:
#   text (a text LLM), hears_audio (takes clips in ModelRequest.audio), exposes_logits (decoding-time mitigation
#   is possible), local (runs in this process or a worker) or server (an API).
# Entries are 'module:attr' strings imported on first use; plug-ins join through the group 'halluscope.chat_backends'.
CHAT_BACKENDS: Registry[ChatBackend] = Registry("chat backend", "halluscope.chat_backends")
CHAT_BACKENDS.register(
    "openai",
    "halluscope.backends.llm._openai:create_openai",
    takes_spec=True,
    capabilities=("text", "hears_audio", "server"),
)
CHAT_BACKENDS.register(
    "hf", "halluscope.backends.llm._hf:create_hf", takes_spec=True, capabilities=("text", "exposes_logits", "local")
)
CHAT_BACKENDS.register(
    "hf-audio",
    "halluscope.backends.audio_lm._hf_audio:create_hf_audio",
    takes_spec=True,
    capabilities=("hears_audio", "exposes_logits", "local"),
)
CHAT_BACKENDS.register(
    "cascade", "halluscope.backends.audio_lm._cascade:create_cascade", takes_spec=True, capabilities=("hears_audio",)
)
LLM_BACKENDS: Registry[ChatBackend] = RegistryView(CHAT_BACKENDS, "LLM backend", "text")

# A protocol retry (nonce >= 1, after an unreadable or rejected reply) must change the request, or a greedy model
# answers it byte for byte as before: retry k samples at RETRY_TEMPERATURES[k-1] (the last one from then on, never
# below the configured temperature) with seed + k. The params are part of the request, so the call log records them.
RETRY_TEMPERATURES = (0.7, 1.0)


def retry_params(params: dict, nonce: int) -> dict:
    """``params`` of the first attempt, or those of protocol retry ``nonce`` (see RETRY_TEMPERATURES)."""
    if nonce <= 0:
        return params
    temperature = RETRY_TEMPERATURES[min(nonce, len(RETRY_TEMPERATURES)) - 1]
    return {
        **params,
        "temperature": max(float(params.get("temperature") or 0.0), temperature),
        "seed": int(params.get("seed") or 0) + nonce,
    }


def sampling_note(request: ModelRequest) -> str:
    """How a retry was sampled, for the reasons a protocol records: '' for the first attempt."""
    if request.nonce <= 0:
        return ""
    p = request.params
    return f" (retry {request.nonce}: temperature {p.get('temperature')}, seed {p.get('seed')})"


# model-card decoding controls (seed 001, Table 5) a local request carries only when set, so keys made without them
# stay what they were
OPTIONAL_PARAMS = ("top_k", "repetition_penalty")


def local_params(
    spec: str,
    defaults: dict,
    caller: dict | None,
    configured: dict,
    mitigation: Any = None,
    optional: tuple[str, ...] = OPTIONAL_PARAMS,
) -> dict:
    """Decoding parameters of a local model's request: its defaults, under the caller's, under the configured
    ones (OpenAI's 'max_tokens' is read as 'max_new_tokens' on either side, so a configured max_new_tokens wins
    over a caller's max_tokens); a decoding-time mitigation's key is added only when one is on. ``optional``: the
    keys a request carries only when set (the backend's own, e.g. 'response_format' where it is honoured)."""

    def named(d: dict | None) -> dict:
        out = {k: v for k, v in (d or {}).items() if k != "mitigation"}  # only ever the backend's own
        if "max_tokens" in out:
            out["max_new_tokens"] = out.pop("max_tokens")
        return out

    merged = {**defaults, **named(caller), **named(configured)}
    unknown = set(merged) - set(defaults) - set(optional)
    if unknown:
        raise HalluscopeError(
            f"{spec}: unknown decoding parameters {sorted(unknown)}; expected {sorted(defaults)} or {sorted(optional)}"
        )
    if mitigation is not None:  # part of the request key only when on, so unmitigated keys stay what they were
        merged["mitigation"] = mitigation.key()
    return merged


class LocalChatBackend:
    """What the local-model backends (hf, hf-audio) share: request parameters, requests, and replies built from
    the dict a worker returns, which is also what the store keeps (so a stored reply reads back the same)."""

    spec: str
    default_params: dict
    mitigation: Any  # a halluscope.mitigation.MitigationConfig, or None
    optional_params: tuple[str, ...] = OPTIONAL_PARAMS

    def _params(self, params: dict | None) -> dict:
        return local_params(
            self.spec,
            self.default_params,
            params,
            self.options.params,  # type: ignore[attr-defined]
            self.mitigation,
            self.optional_params,
        )

    def request(
        self,
        messages: Sequence[ChatMessage | dict],
        *,
        nonce: int = 0,
        tag: str | None = None,
        params: dict | None = None,
    ) -> ModelRequest:
        return ModelRequest(
            backend=self.spec,
            messages=messages_of(messages),
            params=retry_params(self._params(params), nonce),
            nonce=nonce,
            tag=tag,
        )

    def from_stored(self, request: ModelRequest, stored: dict) -> ModelResponse:
        return self._response(request, stored, latency_s=None, cached=True)

    def _response(self, request: ModelRequest, out: dict, *, latency_s: float | None, cached: bool) -> ModelResponse:
        audio = {}
        if request.audio:  # what was sent, what the front end kept, whether audio tokens reached the model
            audio = {
                "audio_sent_s": out.get("audio_sent_s"),
                "audio_heard_s": out.get("audio_heard_s"),
                "audio_delivered": out.get("audio_delivered"),
            }
        return ModelResponse(
            key=request.key(),
            backend=self.spec,
            status="ok",
            text=out["text"],
            finish_reason=out["finish_reason"],
            usage=Usage(prompt_tokens=out["prompt_tokens"], completion_tokens=out["completion_tokens"]),
            latency_s=latency_s,
            attempts=0 if cached else 1,
            cached=cached,
            **audio,
        )


def messages_of(messages: Sequence[ChatMessage | dict]) -> tuple[ChatMessage, ...]:
    return tuple(m if isinstance(m, ChatMessage) else ChatMessage.model_validate(m) for m in messages)


@dataclass
class CallStats:
    """What a session cost: requests asked, answered from the store, calls actually made, tokens, USD."""

    requests: int = 0
    from_store: int = 0
    sent: int = 0  # requests that needed the backend (identical requests in flight share one)
    calls: int = 0
    failed: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    attempts: Counter = field(
        default_factory=Counter
    )  # status of every call made: ok, timeout, connection, http_429, ...
    truncated: int = 0  # replies cut at the token limit (finish_reason == 'length')
    retried: int = 0  # protocol retries asked (nonce >= 1: after an unreadable or rejected reply)
    pacing: dict = field(default_factory=dict)  # backend spec -> its limit's history and budget (llm/_adaptive.py)

    def line(self) -> str:
        cost = f", ${self.cost_usd:.4f}" if self.cost_usd else ""
        bad = {k: n for k, n in sorted(self.attempts.items()) if k != "ok"}
        retried = f" ({', '.join(f'{n} {k}' for k, n in bad.items())}, each sent again or given up)" if bad else ""
        cut = f", {self.truncated} cut at the token limit" if self.truncated else ""
        again = f", {self.retried} protocol retries" if self.retried else ""
        return (
            f"{self.requests} requests: {self.from_store} from the store, {self.calls} model calls{retried}, "
            f"{self.failed} failed{cut}{again}; {self.prompt_tokens}+{self.completion_tokens} tokens{cost}"
            f"{''.join(pacing_line(s, p) for s, p in self.pacing.items())}"
        )

    def add(self, other: CallStats) -> None:
        for k, v in other.__dict__.items():
            if k == "pacing":
                self.pacing.update(v)
            else:
                setattr(self, k, getattr(self, k) + v)

    def as_dict(self) -> dict[str, Any]:
        return {k: dict(v) if isinstance(v, Counter) else v for k, v in self.__dict__.items()}


def pacing_line(spec: str, p: dict) -> str:
    """'; pacing <spec>: ...' for a stage summary (empty for a backend with no limit)."""
    if not p or "limit" not in p:
        return ""
    budget = ", ".join(f"{p[k]:,.0f} {k}" for k in ("rpm", "tpm") if p.get(k))
    moves = "; ".join(f"{n} at {t:.0f} s" for t, n, _ in p["history"][-4:])
    return (
        f"; pacing {spec}: in flight limit {p['limit']} of {p['ceiling']} (peak {p['peak']}, {p['changes']} "
        f"changes, last: {p['reason'][:80]}; latest {moves})"
        + (
            f", budget {budget}, {p['budget_wait_s']:.1f} s waited for it (summed over requests), {p['http_429']} HTTP 429"
            if budget
            else ""
        )
    )


class StageOutage(HalluscopeError):
    """Every request of a session that reached the backend failed: the stage did nothing (exit 2, one line)."""


def _slug(text: str) -> str:
    return re.sub(r"[^\w.-]+", "_", text).strip("_")


class Caller:
    """One backend session over an optional store.

    A request whose key has an 'ok' call in the store is answered from it; identical requests in flight
    share one call; the backend is opened (client built, model loaded) only when a call is needed.
    A stage's session (``stage=True``) raises StageOutage on exit when every request it sent failed.
    """

    def __init__(self, backend: ChatBackend, store: Store | None = None, *, stage: bool = False) -> None:
        self.backend = backend
        self.stage = stage  # a stage's session: ends with check_outage()
        self.store = store
        self.stats = CallStats()
        self._inflight: dict[str, asyncio.Future[ModelResponse]] = {}
        self._opened = False
        self._lock: asyncio.Lock | None = None
        self.failures: list[dict] = []  # requests the backend gave no reply to: tag, key, error

    async def __aenter__(self) -> Caller:
        self._lock = asyncio.Lock()
        gctune.begin()  # thousands of requests in flight: see core/gctune.py
        return self

    async def __aexit__(self, exc_type: object, *exc: object) -> None:
        gctune.end()
        record = getattr(self.backend, "pacing_record", None)
        if self._opened and record is not None and (rec := record()):
            self.stats.pacing[self.backend.spec] = rec
        if self._opened:
            await self.backend.aclose()
            self._opened = False
        if exc_type is None and self.stage:
            self.check_outage()

    def check_outage(self) -> None:
        """Raise StageOutage when requests needed the backend and every one failed (nothing else to do this run);
        the reasons go to RUN/logs/failed-calls-<backend>.jsonl. Items already stored as failed are retried next run."""
        if not self.stats.sent or self.stats.failed < self.stats.sent:
            return
        where = getattr(self.backend, "where", lambda: self.backend.spec)()
        connection = any(k in ("connection", "timeout") for k in self.stats.attempts)
        head = f"server unreachable at {where}" if connection else f"every call to {where} failed"
        first = self.failures[0]["error"] if self.failures else "no reason recorded"
        if self.store is None:
            raise StageOutage(f"{head}: {self.stats.failed} of {self.stats.sent} calls failed; first reason: {first}")
        log = self.store.run_dir / "logs" / f"failed-calls-{_slug(self.backend.spec)}.jsonl"
        log.parent.mkdir(parents=True, exist_ok=True)
        log.write_text("".join(json.dumps(f, ensure_ascii=False) + "\n" for f in self.failures), encoding="utf-8")
        raise StageOutage(
            f"{head}: {self.stats.failed} of {self.stats.sent} calls failed; reasons in {log} "
            f"(first: {first[:200]}). Fix: start the server or correct its URL, then run the same "
            "command again (finished items are kept, failed ones are retried)"
        )

    def _log(
        self,
        *,
        request: ModelRequest,
        payload: dict,
        response: dict | None,
        status: str,
        latency_s: float | None,
        key: str | None = None,
    ) -> None:
        self.stats.calls += 1
        self.stats.attempts[status] += 1
        if self.store is not None:
            self.store.log_call(
                key=key or request.key(),
                backend=self.backend.spec,
                request=payload,
                response=response,
                status=status,
                latency_s=latency_s,
            )

    def pacing_status(self) -> str:
        """The backend's pacing for the progress line ('' when it has none or is not open)."""
        status = getattr(self.backend, "pacing_status", None)
        return status() if self._opened and status is not None else ""

    async def _ensure_open(self) -> None:
        assert self._lock is not None, "use 'async with Caller(...)'"
        if self._opened:  # every request passes here: no lock once open
            return
        async with self._lock:
            if not self._opened:
                await self.backend.open()
                self._opened = True

    async def complete(self, request: ModelRequest) -> ModelResponse:
        self.stats.requests += 1
        self.stats.retried += request.nonce > 0
        key = request.key()
        if self.store is not None:
            stored = self.store.cached_call(key)
            if stored is not None:
                self.stats.from_store += 1
                return self.backend.from_stored(request, stored)
        while (shared := self._inflight.get(key)) is not None:  # an identical request is out: its reply is ours
            try:
                return await asyncio.shield(shared)
            except asyncio.CancelledError:
                me = asyncio.current_task()
                if (
                    not shared.cancelled()
                    or self._inflight.get(key) is shared
                    or (me is not None and getattr(me, "cancelling", lambda: 0)())
                ):
                    raise  # we were cancelled, not its sender
        # sent from this task, not a new one: a stage hands thousands of requests over at once, and a task each
        # doubled the client's work before the first request went out (the identical ones wait on this future)
        shared = self._inflight[key] = asyncio.get_running_loop().create_future()
        try:
            response = await self._send(request, key)
        except BaseException:
            shared.cancel()  # those waiting send it themselves
            raise
        finally:
            del self._inflight[key]
        shared.set_result(response)
        return response

    async def _send(self, request: ModelRequest, key: str) -> ModelResponse:
        self.stats.sent += 1
        await self._ensure_open()
        response = await self.backend.send(request, functools.partial(self._log, key=key))  # the key made once
        if response.status == "error":
            self.stats.failed += 1
            self.failures.append({"tag": request.tag, "key": key, "error": response.error})
        if response.finish_reason == "length":
            self.stats.truncated += 1
        if response.usage is not None:
            self.stats.prompt_tokens += response.usage.prompt_tokens
            self.stats.completion_tokens += response.usage.completion_tokens
        self.stats.cost_usd += response.cost_usd or 0.0
        return response


async def _complete_all(
    backend: ChatBackend, requests: Sequence[ModelRequest], store: Store | None
) -> tuple[list[ModelResponse], CallStats]:
    async with Caller(backend, store) as caller:
        out = await asyncio.gather(*(caller.complete(r) for r in requests))
        return list(out), caller.stats


def complete_all(
    backend: ChatBackend, requests: Sequence[ModelRequest], *, store: Store | None = None
) -> tuple[list[ModelResponse], CallStats]:
    """Answer every request (concurrently, as the backend allows), from the store where possible."""
    return asyncio.run(_complete_all(backend, requests, store))
