"""The one runner of model-calling stages, and the one ask-until-parsed loop every protocol uses.

``run_calls`` runs ``fn(caller, item, *extra_callers)`` on every item of a stage not done yet (keyed by the stage
fingerprint, so a killed run resumes and a finished one makes no call). Every call goes through a store-backed
Caller, which logs each attempt with its raw reply before anything parses it. One meaning for each outcome:

- *failed*: the backend gave no reply at all (transport error after its own retries), or ``fn`` returned a
  str / raised a HalluscopeError saying why; stored as a failure and retried on the next run. A BackendError
  (no API key, a key refused, an unknown model: nothing a retry fixes) is no item's failure: it stops the stage
  at the first call, before any item is recorded;
- *unscored*: replies came but none could be read after the protocol's retries; stored as a result whose
  ``status`` is 'unscored', with the last raw reply and every reason (``ask_until_parsed``);
- *retried*: a protocol retry (nonce >= 1) was asked: it samples differently (llm._base.retry_params);
- *reused*: done by an earlier run; *computed*: done by this one.

Items in flight are bounded by ``concurrency`` (default: twice the backend's call concurrency, at least
ITEMS_IN_FLIGHT), so per-item inputs such as audio clips are in memory only for those; calls in flight are bounded
by the backend. Progress goes to one display (core.stages.progress: rich on stderr, off when quiet); library code
prints nothing else and returns a CallSummary that the CLI renders.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable, Collection, Sequence
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from halluscope.backends.llm import (
    BackendError,
    Caller,
    CallStats,
    ChatBackend,
    StageOutage,
    retry_params,
    sampling_note,
)
from halluscope.core.errors import HalluscopeError
from halluscope.core.records import ModelRequest, ModelResponse, Record
from halluscope.core.stages import Stage, progress
from halluscope.core.store import Store

R = TypeVar("R")
T = TypeVar("T")
V = TypeVar("V")

ITEMS_IN_FLIGHT = 16


@dataclass(frozen=True)
class StageKey:
    """Where a stage's records go when they live under another stage's fingerprint (an LLM generator's rewrite
    logs sit beside the generate stage, under its fingerprint)."""

    name: str
    fingerprint: str


@dataclass
class CallSummary(Generic[R]):
    """What a model-calling stage did: its results and failures (item id -> reason) over the items asked for,
    how many were computed now or reused, and what the calls cost; ``notes`` are warnings for the CLI to show."""

    stage: Stage | StageKey | None
    results: dict[str, R]
    failed: dict[str, str]
    stats: CallStats = field(default_factory=CallStats)
    computed: int = 0
    reused: int = 0
    notes: list[str] = field(default_factory=list)

    @property
    def unscored(self) -> int:
        return sum(getattr(r, "status", None) == "unscored" for r in self.results.values())

    @property
    def retried(self) -> int:
        """Protocol retries asked (nonce >= 1), answered by the backend or the store."""
        return self.stats.retried

    def counts(self) -> dict[str, int]:
        return {
            "results": len(self.results),
            "computed": self.computed,
            "reused": self.reused,
            "failed": len(self.failed),
            "unscored": self.unscored,
            "retried": self.retried,
        }

    def line(self, what: str = "items") -> str:
        c = self.counts()
        return (
            f"{c['results']} {what} ({c['computed']} new, {c['reused']} reused, {c['unscored']} unscored, "
            f"{c['retried']} retries), {c['failed']} failed; {self.stats.line()}"
        )


def items_in_flight(backend: ChatBackend, concurrency: int | None = None) -> int:
    if concurrency is not None:
        if concurrency < 1:
            raise HalluscopeError(f"concurrency must be >= 1, got {concurrency}")
        return concurrency
    calls = getattr(getattr(backend, "options", None), "concurrency", None)
    return max(ITEMS_IN_FLIGHT, 2 * int(calls)) if isinstance(calls, int) else ITEMS_IN_FLIGHT


async def arun_calls(
    store: Store | None,
    stage: Stage | StageKey | None,
    items: Sequence[tuple[str, T]],
    backend: ChatBackend,
    fn: Callable[..., Awaitable[R | str]],
    cls: type[Record] | None = None,
    *,
    description: str,
    quiet: bool = False,
    extra: Sequence[ChatBackend] = (),
    concurrency: int | None = None,
    redo: Collection[str] = (),
    advance: Callable[[], None] | None = None,
) -> CallSummary[R]:
    """``run_calls`` inside a running event loop (several stages at once: pass one ``advance`` to share a display).

    ``stage`` None: nothing is put or failed in the store (the results come back in the summary only; the Caller
    still answers repeated requests from ``store`` when there is one). ``redo``: ids to ask again although done.
    """
    ids = [i for i, _ in items]
    if len(set(ids)) != len(ids):
        dupes = sorted({i for i in ids if ids.count(i) > 1})
        raise HalluscopeError(
            f"stage '{stage.name if stage else description}' got duplicate item ids {dupes[:5]}; "
            "item ids must be unique"
        )
    if stage is not None and store is None:
        raise HalluscopeError(f"stage '{stage.name}' needs a store to keep its results")
    done = store.done_ids(stage.name, stage.fingerprint) - set(redo) if stage is not None else set()  # type: ignore[union-attr]
    todo = [(i, x) for i, x in items if i not in done]
    summary: CallSummary[R] = CallSummary(stage, {}, {}, reused=len(items) - len(todo))
    gate = asyncio.Semaphore(items_in_flight(backend, concurrency))
    callers: list[Caller] = []

    async def one(caller: Caller, others: list[Caller], item_id: str, x: T, tick: Callable[[], None]) -> None:
        async with gate:
            try:
                out = await fn(caller, x, *others)
            except BackendError:
                raise  # a configuration problem (no key, key refused, unknown model): the stage stops, no item fails
            except HalluscopeError as exc:
                out = str(exc)
        if isinstance(out, str):
            summary.failed[item_id] = out
            if stage is not None:
                store.fail(stage.name, stage.fingerprint, item_id, out)
        else:
            summary.results[item_id] = out
            summary.computed += 1
            if stage is not None:
                store.put(stage.name, stage.fingerprint, item_id, out)
        tick()

    def finish() -> CallSummary[R]:
        for c in callers:
            summary.stats.add(c.stats)
        if stage is not None:
            wanted = set(ids)
            if cls is not None:
                summary.results = {
                    k: v  # type: ignore[misc]
                    for k, v in store.results(stage.name, stage.fingerprint, cls).items()  # type: ignore[misc]
                    if k in wanted
                }
            summary.failed = {
                k: v
                for k, v in store.failures(stage.name, stage.fingerprint).items()
                if k in wanted and k not in summary.results
            }
        return summary

    try:
        if todo:
            async with AsyncExitStack() as stack:  # a stage session: raises StageOutage when every call failed
                callers.append(await stack.enter_async_context(Caller(backend, store, stage=stage is not None)))
                callers += [await stack.enter_async_context(Caller(b, store, stage=stage is not None)) for b in extra]
                caller, others = callers[0], callers[1:]
                if advance is not None:
                    await asyncio.gather(*(one(caller, others, i, x, advance) for i, x in todo))
                else:
                    pacing = lambda: " · ".join(x for c in callers if (x := c.pacing_status()))  # noqa: E731
                    with progress(description, len(todo), quiet=quiet, status=pacing) as tick:
                        await asyncio.gather(*(one(caller, others, i, x, tick) for i, x in todo))
    except StageOutage as exc:  # what was done is stored; the summary rides on the error
        exc.summary = finish()  # type: ignore[attr-defined]
        raise
    return finish()


def run_calls(
    store: Store | None,
    stage: Stage | StageKey | None,
    items: Sequence[tuple[str, T]],
    backend: ChatBackend,
    fn: Callable[..., Awaitable[R | str]],
    cls: type[Record] | None = None,
    *,
    description: str,
    quiet: bool = False,
    extra: Sequence[ChatBackend] = (),
    concurrency: int | None = None,
    redo: Collection[str] = (),
) -> CallSummary[R]:
    """Run ``fn(caller, item, *extra_callers)`` on every item not done yet; a str result (or a HalluscopeError) is
    the reason the item failed. ``extra`` backends (a checker, a second judge) get Callers of their own.

    Each result is committed as it arrives (a killed run resumes); the Caller answers repeated requests from the
    store, so a finished stage makes no call. See the module docstring for failed / unscored / retried.
    """
    return asyncio.run(
        arun_calls(
            store,
            stage,
            items,
            backend,
            fn,
            cls,
            description=description,
            quiet=quiet,
            extra=extra,
            concurrency=concurrency,
            redo=redo,
        )
    )


# -- ask, parse, retry with a nonce, else unscored --------------------------------------------------------------

CUT_NOTE = " (reply cut at the token limit, finish_reason=length)"


@dataclass(frozen=True)
class Attempt:
    """One protocol attempt: its nonce, the key of its last call, what became of it and how a retry was sampled."""

    nonce: int
    key: str
    status: str  # 'ok' (parsed), 'rejected' (parse said why), or the reply's status (error, refusal, unparsable)
    reason: str | None = None
    note: str = ""  # sampling_note of a retry
    response: ModelResponse | None = None

    def line(self) -> str:
        return f"#{self.nonce} {self.reason or self.status}{self.note}"


@dataclass
class Asked(Generic[V]):
    """The outcome of ``ask_until_parsed``: 'ok' with the parsed value, 'unscored' (replies, none readable) with
    the last raw reply, or 'failed' (no reply at all: ``error``); every attempt and every call key in order."""

    status: str
    value: V | None
    attempts: list[Attempt]
    keys: tuple[str, ...]
    raw_text: str | None = None
    error: str | None = None
    response: ModelResponse | None = None  # the last reply
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float | None = None

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    @property
    def reason(self) -> str:
        """Why each rejected attempt was rejected, '; '-joined (the unscored reason)."""
        return "; ".join(a.line() for a in self.attempts if a.status != "ok")

    @property
    def failure(self) -> str:
        """The failed item's reason: '<backend>: <error>'."""
        backend = self.response.backend if self.response is not None else "backend"
        return f"{backend}: {self.error}"


def retry(request: ModelRequest, nonce: int) -> ModelRequest:
    """``request`` (a first attempt) as protocol retry ``nonce``: the same key a backend's request(nonce=) gives."""
    return request.model_copy(update={"nonce": nonce, "params": retry_params(request.params, nonce)})


async def ask_until_parsed(
    caller: Caller,
    request: ModelRequest | Callable[[int], ModelRequest],
    parse: Callable[[ModelResponse], Any],
    retries: int,
    *,
    parse_refusals: bool = False,
    follow: Callable[[ModelResponse, ModelRequest], ModelRequest | None] | None = None,
) -> Asked:
    """Ask, parse, and on an unreadable reply ask again with the next nonce, up to ``retries`` times.

    ``request``: the first attempt (retries via ``retry``) or a function of the nonce. ``parse(reply)`` returns
    (value, None) or (None, why) and may be async; it sees only 'ok' replies unless ``parse_refusals`` (a refusal
    or an unparsable reply is then the parser's to judge). ``follow(reply, request)``, when it returns a request,
    sends it as the next turn of the same attempt (a tool call) instead of rejecting the reply. A reply with no
    text at all (status 'error') ends the loop as 'failed'.
    """
    attempts: list[Attempt] = []
    keys: list[str] = []
    out: Asked = Asked("unscored", None, attempts, ())
    for nonce in range(retries + 1):
        req = request(nonce) if callable(request) else retry(request, nonce)
        note = sampling_note(req)
        while True:
            resp = await caller.complete(req)
            keys.append(resp.key)
            out.response = resp
            if resp.usage is not None:
                out.prompt_tokens += resp.usage.prompt_tokens
                out.completion_tokens += resp.usage.completion_tokens
            if resp.cost_usd is not None:
                out.cost_usd = (out.cost_usd or 0.0) + resp.cost_usd
            if resp.status == "error":  # no reply after the backend's own retries: failed, retried next run
                attempts.append(Attempt(nonce, resp.key, "error", f"error: {resp.error}", note, resp))
                out.status, out.error, out.keys = "failed", resp.error, tuple(keys)
                return out
            out.raw_text = resp.text
            if resp.status != "ok" and not parse_refusals:
                attempt = Attempt(nonce, resp.key, resp.status, f"{resp.status}: {resp.error}", note, resp)
                break
            parsed = parse(resp)
            value, why = (await parsed) if inspect.isawaitable(parsed) else parsed
            if why is None:
                attempts.append(Attempt(nonce, resp.key, "ok", None, note, resp))
                out.status, out.value, out.keys = "ok", value, tuple(keys)
                return out
            nxt = follow(resp, req) if follow is not None else None
            if nxt is not None:
                req = nxt
                continue
            cut = CUT_NOTE if resp.finish_reason == "length" and "finish_reason=length" not in why else ""
            attempt = Attempt(nonce, resp.key, "rejected", f"{why}{cut}", note, resp)
            break
        attempts.append(attempt)
    out.keys = tuple(keys)
    return out
