"""The executor protocol, stage tasks and resources, and the in-process executor (the default)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any, Protocol

from halluscope.core.errors import HalluscopeError


@dataclass(frozen=True)
class Resources:
    """What one worker asks the cluster for; ``num_cpus`` also sets the ASR worker's CTranslate2 threads."""

    num_cpus: float = 1.0
    num_gpus: float = 0.0
    memory_mb: int | None = None

    @classmethod
    def parse(cls, text: str, base: Resources | None = None) -> Resources:
        """'cpus=2,gpus=0.5,memory_mb=4000' on top of ``base``."""
        out = base or cls()
        names = {"cpus": "num_cpus", "gpus": "num_gpus", "memory_mb": "memory_mb", "memory": "memory_mb"}
        for part in filter(None, (p.strip() for p in text.split(","))):
            key, sep, value = part.partition("=")
            if not sep or key.strip() not in names:
                raise HalluscopeError(
                    f"resource '{part}': expected cpus=N, gpus=N or memory_mb=N, e.g. 'asr:cpus=2,gpus=0.5'"
                )
            name = names[key.strip()]
            try:
                out = replace(out, **{name: int(value) if name == "memory_mb" else float(value)})
            except ValueError:
                raise HalluscopeError(f"resource '{part}': '{value}' is not a number") from None
        return out


class ItemTask:
    """A picklable per-item stage function, split by where each part runs.

    ``setup`` runs once per worker (before the first item), ``prepare`` and ``finish`` on the driver,
    ``__call__`` on the worker. A plain callable behaves as ``__call__`` alone.
    """

    def setup(self, resources: Resources | None) -> None:
        """Adapt to the worker's resources (e.g. threads); in-process runs get None."""

    def prepare(self, x: Any) -> Any:
        return x

    def __call__(self, payload: Any) -> Any:  # pragma: no cover - abstract
        raise NotImplementedError

    def finish(self, x: Any, out: Any) -> Any:
        return out


def place(backend: Any, executor: Executor | None) -> Any:
    """Local-model backends (hf, hf-audio) generate on ``executor``'s workers; API backends call from here."""
    if executor is not None and hasattr(backend, "executor"):
        backend.executor = executor
    return backend


def torch_threads(resources: Resources | None) -> None:
    """On a worker, give torch as many threads as the worker was granted CPUs (in-process: leave it)."""
    if resources is not None:
        import torch

        torch.set_num_threads(max(1, int(resources.num_cpus)))


def attempt(fn: Callable[[Any], Any], payload: Any) -> tuple[bool, Any]:
    """(True, output) or (False, reason): the reason text run_stage has always stored."""
    try:
        return True, fn(payload)
    except HalluscopeError as exc:
        return False, str(exc)
    except (KeyboardInterrupt, SystemExit):
        raise
    except Exception as exc:  # noqa: BLE001 - recorded as the item's failure, never swallowed silently
        return False, f"{type(exc).__name__}: {exc}"


Outcome = tuple[str, Any, bool, Any]  # item id, the item, ok, worker output or failure reason


class Executor(Protocol):
    """Runs a stage function over items and yields each outcome as it is ready (any order)."""

    name: str

    def map(self, stage: str, fn: Callable[[Any], Any], items: Sequence[tuple[str, Any]]) -> Iterator[Outcome]: ...

    def pool(self, stage: str, fn: Callable[[Any], Any]) -> Pool:
        """Workers that keep ``fn`` (and what its ``setup`` loads) for calls chosen by the caller."""
        ...


def _prepare(fn: Any, x: Any) -> tuple[bool, Any]:
    prep = getattr(fn, "prepare", None)
    return (True, x) if prep is None else attempt(prep, x)


class LocalExecutor:
    """One item after another in this process (the default)."""

    name = "local"

    def map(self, stage: str, fn: Callable[[Any], Any], items: Sequence[tuple[str, Any]]) -> Iterator[Outcome]:
        if isinstance(fn, ItemTask):
            fn.setup(None)
        for item_id, x in items:
            ok, payload = _prepare(fn, x)
            if not ok:
                yield item_id, x, False, payload
                continue
            ok, value = attempt(fn, payload)
            yield item_id, x, ok, value

    def pool(self, stage: str, fn: Callable[[Any], Any]) -> LocalPool:
        return LocalPool(fn)

    def close(self) -> None:
        pass

    def __enter__(self) -> LocalExecutor:
        return self

    def __exit__(self, *exc: object) -> None:
        pass


class Pool(Protocol):
    """Long-lived workers holding one stage function (e.g. a loaded model), called from asyncio code.

    ``start`` runs the function's ``setup`` on every worker (a failure there is raised: the stage cannot
    run); ``call`` returns ``(True, output)`` or ``(False, reason)`` like :func:`attempt`; ``size`` is how
    many calls can run at once.
    """

    size: int

    async def start(self) -> None: ...

    async def call(self, payload: Any) -> tuple[bool, Any]: ...

    async def close(self) -> None: ...


class LocalPool:
    """One worker: this process, calls in a thread so the event loop keeps serving."""

    size = 1

    def __init__(self, fn: Callable[[Any], Any]) -> None:
        self.fn = fn

    async def start(self) -> None:
        if isinstance(self.fn, ItemTask):
            await asyncio.to_thread(self.fn.setup, None)

    async def call(self, payload: Any) -> tuple[bool, Any]:
        return await asyncio.to_thread(attempt, self.fn, payload)

    async def close(self) -> None:
        pass


LOCAL = LocalExecutor()
