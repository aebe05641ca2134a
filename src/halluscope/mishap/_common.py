"""Shared plumbing of the MISHAP steps: prompt files, async stages over the store, step manifests (replies are read
by halluscope.reply)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Sequence
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from typing import Generic, TypeVar

from halluscope.core.hashing import named_files_sha256
from halluscope.core.errors import HalluscopeError
from halluscope.backends.llm import Caller, CallStats, ChatBackend, progress
from halluscope.prompts import Template, prompt_files, template
from halluscope.core.records import Record
from halluscope.core.stages import Stage
from halluscope.core.store import Store

R = TypeVar("R", bound=Record)
T = TypeVar("T")

VERSION = 1
# one command name per step; a step finds its upstream through the latest manifest of the step before it
COMMANDS = {"clips": "mishap clips", "questions": "mishap questions", "rubrics": "mishap rubrics",
            "answer": "mishap answer", "judge": "mishap judge"}


def prompt(name: str) -> Template:
    return template(f"mishap/{name}")


@lru_cache(maxsize=None)
def strategy_texts() -> dict:
    """Category and strategy definitions, domain informativeness rubrics and stance definitions (data, not code)."""
    return json.loads((resources.files("halluscope") / "prompts" / "mishap" / "strategies.json").read_text(encoding="utf-8"))


@lru_cache(maxsize=None)
def prompts_hash() -> str:
    """sha256 over every MISHAP prompt and data file: part of each stage fingerprint that sends prompts."""
    return named_files_sha256(prompt_files("mishap", (".txt", ".json")))


def upstream(store: Store, step: str) -> dict[str, str]:
    """Stage fingerprints recorded by the latest run of ``step``; a clear error when it has not run."""
    manifest = store.latest_manifest(COMMANDS[step])
    if manifest is None:
        raise HalluscopeError(f"{store.run_dir} has no '{COMMANDS[step]}' run yet; run 'halluscope {COMMANDS[step]} "
                              f"{store.run_dir} ...' first")
    return manifest.stages


@dataclass
class StepResult(Generic[R]):
    """A step's records, its failures (item id -> reason) and what its calls cost."""

    stage: Stage
    results: dict[str, R]
    failed: dict[str, str]
    stats: CallStats = field(default_factory=CallStats)


def run_calls(store: Store, stage: Stage, items: Sequence[tuple[str, T]], backend: ChatBackend,
              fn: Callable[..., Awaitable[R | str]], cls: type[R], *, description: str,
              quiet: bool = False, extra: Sequence[ChatBackend] = ()) -> StepResult[R]:
    """Run ``fn(caller, item, *extra_callers)`` on every item not done yet, concurrently; a str result is the
    reason the item failed. ``extra`` backends (a checker, a second judge) get Callers of their own.

    Each result is committed as it arrives (a killed run resumes); the Caller answers repeated requests
    from the store, so a finished step makes no call.
    """
    ids = [i for i, _ in items]
    if len(set(ids)) != len(ids):
        raise HalluscopeError(f"stage '{stage.name}' got duplicate item ids")
    fp = stage.fingerprint
    done = store.done_ids(stage.name, fp)
    todo = [(i, x) for i, x in items if i not in done]

    async def main() -> CallStats:
        async with AsyncExitStack() as stack:
            caller = await stack.enter_async_context(Caller(backend, store, stage=True))
            others = [await stack.enter_async_context(Caller(b, store, stage=True)) for b in extra]
            with progress(description, len(todo), quiet=quiet or not todo) as advance:
                async def one(item_id: str, x: T) -> None:
                    try:
                        out = await fn(caller, x, *others)
                    except HalluscopeError as exc:
                        out = str(exc)
                    if isinstance(out, str):
                        store.fail(stage.name, fp, item_id, out)
                    else:
                        store.put(stage.name, fp, item_id, out)
                    advance()

                await asyncio.gather(*(one(i, x) for i, x in todo))
            stats = CallStats()
            for c in (caller, *others):
                stats.add(c.stats)
            return stats

    stats = asyncio.run(main()) if todo else CallStats()
    wanted = set(ids)
    return StepResult(stage, {k: v for k, v in store.results(stage.name, fp, cls).items() if k in wanted},
                      {k: v for k, v in store.failures(stage.name, fp).items() if k in wanted}, stats)
