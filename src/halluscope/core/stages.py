"""Stage runner: items keyed by (stage, config fingerprint, item id), resumable after any kill."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.text import Text

from halluscope.core.errors import HalluscopeError
from halluscope.core.executors import LOCAL, Executor, attempt
from halluscope.core.hashing import json_sha256
from halluscope.core.records import Record
from halluscope.core.store import Store

T = TypeVar("T")
R = TypeVar("R", bound=Record)

console = Console(stderr=True)


class _Status(ProgressColumn):
    """A line a stage computes at each refresh (a model backend's pacing: in flight, req/s, the limit and why)."""

    def __init__(self, status: Callable[[], str]) -> None:
        super().__init__()
        self.status = status

    def render(self, task: Any) -> Text:
        try:
            return Text(self.status(), style="dim")
        except Exception:  # noqa: BLE001 - a status that cannot be read must not stop the stage
            return Text("")


@contextmanager
def progress(
    description: str, total: int, *, quiet: bool = False, done: int = 0, status: Callable[[], str] | None = None
) -> Iterator[Callable[[], None]]:
    """The one progress display of every stage (rich, on stderr; off when ``quiet`` or when nothing is to do):
    yields the function that advances it by one item. ``status``: a line shown after the bar, read at each refresh."""
    extra = [_Status(status)] if status is not None else []
    with Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        *extra,
        console=console,
        disable=quiet or total <= done,
    ) as bar:
        task = bar.add_task(description, total=total, completed=done)
        yield lambda: bar.advance(task)


def fingerprint(payload: Any) -> str:
    """Stable short hash of a JSON-able config."""
    return json_sha256(payload, 16, default=str)


@dataclass(frozen=True)
class Stage:
    """A named stage and its full config; the fingerprint changes whenever the config or upstream does."""

    name: str
    config: dict
    upstream: tuple[str, ...] = ()

    @property
    def fingerprint(self) -> str:
        return fingerprint({"stage": self.name, "config": self.config, "upstream": list(self.upstream)})


@dataclass
class StageSummary(Generic[R]):
    """What a stage run did: new results, reused ones and failures (item id -> reason)."""

    stage: str
    fingerprint: str
    results: dict[str, R]
    computed: int
    reused: int
    failed: dict[str, str] = field(default_factory=dict)


def run_stage(
    store: Store,
    stage: Stage,
    items: Sequence[tuple[str, T]],
    fn: Callable[[T], R],
    cls: type[R],
    *,
    retry_failed: bool = True,
    quiet: bool = False,
    description: str | None = None,
    executor: Executor | None = None,
) -> StageSummary[R]:
    """Run ``fn`` on every item not yet done; each result is committed as soon as it exists.

    An item whose ``fn`` raises a HalluscopeError is stored as failed with the message and the stage
    goes on; any other exception is also recorded (with its type) so no failure is silent. ``executor``
    says where ``fn`` runs (default: here, one item after another; see executors.py); wherever it runs,
    this driver writes every result, under the same key.
    """
    fp = stage.fingerprint
    ids = [item_id for item_id, _ in items]
    if len(set(ids)) != len(ids):
        dupes = sorted({i for i in ids if ids.count(i) > 1})
        raise HalluscopeError(f"stage '{stage.name}' got duplicate item ids {dupes[:5]}; item ids must be unique")
    done = store.done_ids(stage.name, fp)
    previously_failed = set(store.failures(stage.name, fp))
    todo = [(i, x) for i, x in items if i not in done and (retry_failed or i not in previously_failed)]
    computed = 0
    finish = getattr(fn, "finish", None)
    written: set[str] = set()
    with progress(description or stage.name, len(items), quiet=quiet, done=len(items) - len(todo)) as advance:
        for item_id, x, ok, value in (executor or LOCAL).map(stage.name, fn, todo):
            if item_id in written:  # an executor must not yield an item twice; never write it twice
                continue
            written.add(item_id)
            if ok and finish is not None:
                ok, value = attempt(lambda out: finish(x, out), value)  # noqa: B023 - called at once
            if ok:
                store.put(stage.name, fp, item_id, value)
                computed += 1
            else:
                store.fail(stage.name, fp, item_id, value)
            advance()
    wanted = set(ids)
    results = {k: v for k, v in store.results(stage.name, fp, cls).items() if k in wanted}
    failed = {k: v for k, v in store.failures(stage.name, fp).items() if k in wanted}
    return StageSummary(
        stage=stage.name,
        fingerprint=fp,
        results=results,
        computed=computed,
        reused=len(items) - len(todo),
        failed=failed,
    )
