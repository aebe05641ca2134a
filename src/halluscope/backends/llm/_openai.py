"""'openai/<model>': any OpenAI-compatible chat-completions server through the official openai SDK.

The SDK's own retries are off; this module retries 408/409/429/5xx, timeouts, connection errors and
unreadable bodies with exponential backoff and jitter, honours Retry-After (and pauses every request
of the session until then), and logs each attempt, raw body included, before reading it.
Requests in flight adapt to the server (see _adaptive.py; ``concurrency`` is the ceiling), within the provider's
budget when one is known (``rpm``/``tpm``, x-ratelimit-* headers; see _pacing.py). A request that timed
out is not sent again at once into the same queue: the limit halves first (the retry waits for the server to
drain what is in flight) and the retry gets twice the time, so work the server is still computing is not
piled up behind the same deadline again.
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import os
import random
import time
from collections.abc import Awaitable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar
from urllib.parse import urlsplit, urlunsplit

from halluscope.backends.llm._adaptive import AdaptiveLimit
from halluscope.backends.llm._base import CallLog, messages_of, retry_params
from halluscope.backends.llm._config import LLMConfig, OpenAIOptions, resolve_options
from halluscope.backends.llm._pacing import Pacing
from halluscope.core.errors import HalluscopeError, MissingExtraError
from halluscope.core.records import ChatMessage, ModelRequest, ModelResponse, Usage
from halluscope.core.spec import ModelSpec

MAX_TIMEOUT_GROWTH = 8  # a retried timeout waits at most this many times timeout_s
OVERLOAD_STATUSES = frozenset({429, 503, 529})  # "too many requests": fewer in flight
RETRY_STATUSES = frozenset({408, 409, 425, 429, 500, 502, 503, 504, 520, 522, 524, 529})
FATAL_STATUSES = {
    401: "the server rejected the API key",
    403: "the key may not use this model",
    404: "the server knows no such model or endpoint",
}
T = TypeVar("T")
_KEEP_HEADERS = (
    "content-type",
    "retry-after",
    "retry-after-ms",
    "x-request-id",
    "request-id",
    "openai-processing-ms",
    *(f"x-ratelimit-{w}-{k}" for w in ("limit", "remaining", "reset") for k in ("requests", "tokens")),
)


def _kept_headers(headers: Any) -> dict[str, str]:
    """The headers worth keeping, in _KEEP_HEADERS order: one pass over the response's (lower-cased) headers,
    repeated ones joined with ', ' as ``headers[name]`` does (a lookup per name scans them all)."""
    have = dict(headers.items())
    return {k: have[k] for k in _KEEP_HEADERS if k in have}


async def _within(aw: Awaitable[T], seconds: float) -> T:
    """``await aw`` with a deadline: asyncio.timeout where there is one (3.11+), which runs ``aw`` in the caller's
    task; wait_for (3.10) wraps it in a task of its own, one more per request."""
    timeout = getattr(asyncio, "timeout", None)
    if timeout is None:
        return await asyncio.wait_for(aw, seconds)
    async with timeout(seconds):
        return await aw


class BackendError(HalluscopeError):
    """A configuration problem no retry can fix (bad key, unknown model): the run stops."""


@dataclass(frozen=True)
class _Reply:
    """A chat-completions body as far as it could be read."""

    readable: bool
    status: str = "ok"
    content: str | None = None
    finish_reason: str | None = None
    usage: Usage | None = None
    error: str | None = None


def read_completion(body: str | None) -> _Reply:
    """Read a chat-completions body; never raises (an unreadable body is a result, not an exception)."""
    try:
        data = json.loads(body or "")
    except ValueError as exc:
        return _Reply(False, "unparsable", error=f"body is not JSON ({exc}): {(body or '')[:120]!r}")
    if not isinstance(data, dict) or not isinstance(data.get("choices"), list) or not data["choices"]:
        err = data.get("error") if isinstance(data, dict) else None
        return _Reply(
            False, "unparsable", error=f"body has no choices: {json.dumps(err or data, ensure_ascii=False)[:200]}"
        )
    choice = data["choices"][0] if isinstance(data["choices"][0], dict) else {}
    msg = choice.get("message") if isinstance(choice.get("message"), dict) else {}
    content = msg.get("content")
    if isinstance(content, list):  # content parts
        content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
    finish = choice.get("finish_reason")
    u = data.get("usage") if isinstance(data.get("usage"), dict) else None
    usage = (
        Usage(prompt_tokens=int(u.get("prompt_tokens") or 0), completion_tokens=int(u.get("completion_tokens") or 0))
        if u
        else None
    )
    if msg.get("refusal"):
        return _Reply(
            True, "refusal", content=str(msg["refusal"]), finish_reason=finish, usage=usage, error="the model refused"
        )
    if finish == "content_filter":
        return _Reply(
            True, "refusal", content=content, finish_reason=finish, usage=usage, error="stopped by the content filter"
        )
    if not isinstance(content, str):
        return _Reply(True, "unparsable", finish_reason=finish, usage=usage, error="the reply has no text content")
    return _Reply(True, "ok", content=content, finish_reason=finish, usage=usage)


def retry_after_s(headers: dict[str, str]) -> float | None:
    """Seconds a Retry-After(-ms) header asks for: a number or an HTTP date."""
    if (ms := headers.get("retry-after-ms")) is not None:
        try:
            return max(0.0, float(ms) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        return max(0.0, when.timestamp() - time.time())


def _public_url(url: str) -> str:
    """The URL without user:password, so nothing secret reaches the store."""
    parts = urlsplit(url)
    netloc = parts.hostname or ""
    if parts.port:
        netloc += f":{parts.port}"
    return urlunsplit((parts.scheme, netloc, parts.path.rstrip("/"), "", ""))


def _raw_response_type() -> type:
    # the README's "custom requests" route (client.post(..., cast_to=<httpx Response>)) returns the raw
    # response; its class is the one of the HTTP library this SDK version is built on (httpx or httpx2)
    from openai import _base_client

    lib = getattr(_base_client, "httpx2", None) or _base_client.httpx
    return lib.Response


class OpenAIBackend:
    """Chat completions over HTTP; see the module docstring for retries and logging."""

    # a request's params go into the body as they are: response_format (a JSON schema) is the server's to enforce
    structured_output = True

    def __init__(self, model: str, options: OpenAIOptions) -> None:
        self.spec = f"openai/{model}"
        self.model = options.model or model  # the name sent to the server (a second spec name may serve the same model)
        self.options = options
        self._client = None
        self.limit: AdaptiveLimit | None = None
        self.pacing: Pacing | None = None
        self._pause_until = 0.0
        self._url = ""

    def identity(self) -> dict:
        out = {"backend": self.spec, "params": self.options.params}
        if self.options.model:  # only when set: fingerprints of plain specs stay what they were
            out["model"] = self.options.model
        return out

    def where(self) -> str:
        """The chat-completions URL once opened (for messages about the server), else the spec."""
        return self._url or self.spec

    def request(
        self,
        messages: Sequence[ChatMessage | dict],
        *,
        nonce: int = 0,
        tag: str | None = None,
        params: dict | None = None,
    ) -> ModelRequest:
        merged = {**(params or {}), **self.options.params}  # a configured null drops a default (e.g. temperature)
        merged = {k: v for k, v in merged.items() if v is not None}
        return ModelRequest(
            backend=self.spec, messages=messages_of(messages), params=retry_params(merged, nonce), nonce=nonce, tag=tag
        )

    async def open(self) -> None:
        try:
            import openai
        except ImportError as exc:
            raise MissingExtraError("openai", "llm") from exc
        if not self.model:
            raise HalluscopeError("the openai backend needs a model name: 'openai/<model>', e.g. 'openai/gpt-4o-mini'")
        o = self.options
        base_url = o.base_url or os.environ.get(o.base_url_env) or None
        key = os.environ.get(o.api_key_env)
        if not key:
            if base_url is None:
                raise BackendError(
                    f"no API key for {self.spec}: export {o.api_key_env}, or point {o.base_url_env} "
                    "(or base_url in the LLM config) at a server that needs none"
                )
            key = "no-key"  # local servers (vLLM, Ollama, llama.cpp) accept any key
        self._client = openai.AsyncOpenAI(api_key=key, base_url=base_url, max_retries=0, timeout=o.timeout_s)
        self._errors = (openai.APITimeoutError, openai.APIConnectionError, openai.APIStatusError)
        self._response_type = _raw_response_type()
        self._url = _public_url(str(self._client.base_url)) + "/chat/completions"
        self.limit = AdaptiveLimit(o.concurrency, adaptive=o.adaptive == "on")
        self.pacing = Pacing(o.rpm, o.tpm)
        self._pause_until = 0.0

    def pacing_status(self) -> str:
        """The progress line's part: requests in flight, req/s and tokens/min achieved, the limit and why."""
        if self.limit is None or self.pacing is None:
            return ""
        rps, tpm = self.pacing.rates()
        budget = self.pacing.budget_line()
        return (
            f"{self.limit.active} in flight, {rps:.1f} req/s, {tpm / 1000:.1f}k tok/min, limit {self.limit.limit}"
            f"/{self.limit.ceiling} ({self.limit.reason[:70]}){'; budget ' + budget if budget else ''}"
        )

    def pacing_record(self) -> dict:
        """For the stage summary and the run's record: the limit's history and the budget's."""
        if self.limit is None or self.pacing is None:
            return {}
        return {**self.limit.record(), **self.pacing.record()}

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.close()
            self._client = None

    def _response(
        self,
        request: ModelRequest,
        reply: _Reply,
        *,
        latency_s: float | None,
        attempts: int,
        cached: bool,
        key: str | None = None,
    ) -> ModelResponse:
        cost = None
        if self.options.cost is not None and reply.usage is not None:
            cost = (
                reply.usage.prompt_tokens * self.options.cost.input
                + reply.usage.completion_tokens * self.options.cost.output
            ) / 1e6
        return ModelResponse(
            key=key or request.key(),
            backend=self.spec,
            status=reply.status,
            text=reply.content,
            error=reply.error,
            finish_reason=reply.finish_reason,
            usage=reply.usage,
            latency_s=latency_s,
            attempts=attempts,
            cached=cached,
            cost_usd=cost,
            **self._audio_fields(request),
        )

    def _audio_fields(self, request: ModelRequest) -> dict:
        """What an audio request sent; the server cannot tell what it heard, so 'heard' is the declared window."""
        if not request.audio:
            return {}
        window = self.options.audio_window_s
        sent = sum(a.seconds for a in request.audio)
        heard = None if window is None else sum(min(a.seconds, window) for a in request.audio)
        return {
            "audio_sent_s": round(sent, 3),
            "audio_heard_s": None if heard is None else round(heard, 3),
            "audio_delivered": all(a.wav for a in request.audio),
        }

    def body(self, request: ModelRequest, *, for_log: bool = False) -> dict:
        """The chat-completions body; clips go to the last user turn as input_audio parts before its text.

        ``for_log`` replaces the base64 data with the clip's sha256, so the store keeps the reference, not the audio.
        """
        messages: list[dict] = [m.as_dict() for m in request.messages]
        if request.audio:
            import base64

            last = max(i for i, m in enumerate(messages) if m["role"] == "user")
            parts: list[dict] = [
                {
                    "type": "input_audio",
                    "input_audio": {
                        "data": f"sha256:{a.sha256}" if for_log else base64.b64encode(a.wav).decode("ascii"),
                        "format": "wav",
                    },
                }
                for a in request.audio
            ]
            messages[last] = {"role": "user", "content": [*parts, {"type": "text", "text": messages[last]["content"]}]}
        return {"model": self.model, "messages": messages, **request.params}

    def from_stored(self, request: ModelRequest, stored: dict) -> ModelResponse:
        return self._response(request, read_completion(stored.get("body")), latency_s=None, attempts=0, cached=True)

    async def _wait_pause(self) -> None:
        while (left := self._pause_until - time.monotonic()) > 0:
            await asyncio.sleep(left)

    def _delay(self, attempt: int, retry_after: float | None) -> float:
        o = self.options
        if retry_after is not None:
            wait = min(retry_after, o.max_retry_after_s)
            self._pause_until = max(self._pause_until, time.monotonic() + wait)
            return wait * (1 + 0.1 * random.random())
        step = min(o.backoff_max_s, o.backoff_base_s * 2 ** (attempt - 1))
        return step * (0.5 + 0.5 * random.random())  # "equal jitter"

    async def send(self, request: ModelRequest, log: CallLog) -> ModelResponse:
        assert self._client is not None and self.limit is not None and self.pacing is not None, "open() first"
        o = self.options
        key = request.key()  # once per request (each key() serialises and hashes the whole request)
        body = self.body(request)
        payload = {
            "url": self._url,
            "body": self.body(request, for_log=True) if request.audio else body,
            "nonce": request.nonce,
            "tag": request.tag,
        }
        timeout_error, connection_error, status_error = self._errors
        attempt, last_status, last_error, last_text, timeouts = 0, "error", "", None, 0
        while attempt <= o.max_retries:
            attempt += 1
            await self._wait_pause()
            limit_s = o.timeout_s * min(MAX_TIMEOUT_GROWTH, 2**timeouts)
            async with self.limit:  # a slot per attempt: a retry waits for the (maybe lowered) limit
                estimate = await self.pacing.before(body)  # type: ignore[union-attr]  # within the budget
                t0 = time.perf_counter()
                http_status, text, headers, error = None, None, {}, ""
                try:
                    resp = await _within(
                        self._client.post(
                            "/chat/completions", cast_to=self._response_type, body=body, options={"timeout": limit_s}
                        ),
                        limit_s,
                    )
                    http_status, text, headers = resp.status_code, resp.text, resp.headers
                except (asyncio.TimeoutError, timeout_error):
                    status, error = "timeout", f"no complete reply within {limit_s:g} s"
                    timeouts += 1
                    self.limit.overload(f"timeout after {limit_s:g} s")
                except status_error as exc:
                    http_status, headers = exc.status_code, exc.response.headers
                    try:
                        text = exc.response.text
                    except Exception:  # noqa: BLE001 - a body that cannot be read is still an HTTP error
                        text = None
                except connection_error as exc:
                    cause = exc.__cause__ or exc
                    status, error = "connection", f"connection error: {type(cause).__name__}: {cause}"
                latency = time.perf_counter() - t0
                reply = None
                if http_status is not None and 200 <= http_status < 300:
                    reply = read_completion(text)
                    status = "ok" if reply.readable else "bad_body"
                    error = reply.error or ""
                    self.limit.success(latency)
                elif http_status is not None:
                    status, error = f"http_{http_status}", f"HTTP {http_status}: {(text or '')[:300]}"
                    if http_status in OVERLOAD_STATUSES:
                        self.limit.overload(f"HTTP {http_status}")
                kept = _kept_headers(headers)
                usage = reply.usage if reply is not None else None
                self.pacing.after(
                    estimate,
                    usage and usage.prompt_tokens + usage.completion_tokens,  # type: ignore[union-attr]
                    usage and usage.completion_tokens,
                    kept,
                    http_status,
                )
                response = (
                    {"http_status": http_status, "headers": kept, "body": text}
                    if http_status is not None
                    else {"error": error}
                )
                log(
                    request=request,
                    payload={**payload, "in_flight_limit": self.limit.limit, "timeout_s": limit_s},
                    response=response,
                    status=status,
                    latency_s=round(latency, 4),
                )
            if reply is not None and reply.readable:
                return self._response(request, reply, latency_s=latency, attempts=attempt, cached=False, key=key)
            if http_status in FATAL_STATUSES:
                raise BackendError(
                    f"{self.spec} at {self._url}: {FATAL_STATUSES[http_status]} ({error[:200]}); "
                    f"check {o.api_key_env}, the model name and the base URL"
                )
            last_status, last_error, last_text = status, error, text
            retryable = status in ("timeout", "connection", "bad_body") or http_status in RETRY_STATUSES
            if not retryable or attempt > o.max_retries:
                break
            await asyncio.sleep(self._delay(attempt, retry_after_s(kept)))
        return ModelResponse(
            key=key,
            backend=self.spec,
            status="unparsable" if last_status == "bad_body" else "error",
            text=last_text,
            error=f"{last_error} (gave up after {attempt} attempt{'s' * (attempt > 1)})",
            attempts=attempt,
        )


def create_openai(spec: ModelSpec, *, config: LLMConfig | None = None, **options: object) -> OpenAIBackend:
    """'openai/<model>' (registered in CHAT_BACKENDS); options in the spec are part of its name."""
    backend = OpenAIBackend(spec.model, resolve_options(OpenAIOptions, spec, config, options))
    backend.spec = str(spec)
    return backend
