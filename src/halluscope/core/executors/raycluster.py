"""Stage work on Ray actors (``--executor ray``): a local cluster started here or one at RAY_ADDRESS."""

from __future__ import annotations

import asyncio
import os
import re
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from halluscope.core.errors import HalluscopeError, MissingExtraError
from halluscope.core.executors.local import ItemTask, Outcome, Resources, _prepare, attempt
from halluscope.core.hashing import sha256_hex

# Ray's Unix socket path (<temp>/session_<date>_<us>_<pid>/sockets/plasma_store) must fit in 107 bytes;
# the part below the temp dir takes up to about 66, so a longer temp dir moves to /tmp/hs-ray-<hash>.
RAY_SOCKET_MAX = 107
_RAY_SESSION_SUFFIX = 66


class _Worker:
    """Ray actor body: holds one stage function at a time (its backend loads once, in ``setup`` or on the first
    item); the executor hands an idle worker the next stage's function instead of starting a new process."""

    def __init__(self) -> None:
        self.fn: Callable[[Any], Any] | None = None

    def load(self, fn: Callable[[Any], Any], resources: Resources) -> tuple[bool, Any]:
        self.fn = None  # drop the previous stage's function (and its model) first
        ok, reason = attempt(lambda _: fn.setup(resources) if isinstance(fn, ItemTask) else None, None)
        self.fn = fn if ok else None
        return ok, reason if not ok else os.getpid()

    def run(self, payload: Any) -> tuple[bool, Any]:
        assert self.fn is not None, "load() first"
        return attempt(self.fn, payload)


def _first_line(exc: BaseException) -> str:
    text = re.sub(r"\x1b\[[0-9;]*m", "", str(exc)).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def ray_temp_dir(run_dir: str | Path, temp_dir: str | Path | None = None) -> Path:
    """RUN/.ray when its socket paths fit Ray's limit, else /tmp/hs-ray-<hash of the run dir>."""
    if temp_dir is not None:
        path = Path(temp_dir).resolve()
        if len(str(path)) + _RAY_SESSION_SUFFIX > RAY_SOCKET_MAX:
            raise HalluscopeError(
                f"the Ray temp folder {path} is {len(str(path))} characters; Ray's socket paths under it "
                f"would pass {RAY_SOCKET_MAX} bytes. Use a path of at most "
                f"{RAY_SOCKET_MAX - _RAY_SESSION_SUFFIX} characters, e.g. /tmp/hs-ray"
            )
        return path
    inside = Path(run_dir).resolve() / ".ray"
    if len(str(inside)) + _RAY_SESSION_SUFFIX <= RAY_SOCKET_MAX:
        return inside
    digest = sha256_hex(str(Path(run_dir).resolve()), 10)
    return Path(tempfile.gettempdir()) / f"hs-ray-{digest}"


def package_runtime_env() -> dict:
    """Ship this halluscope package to a remote cluster's workers (its dependencies must be installed there)."""
    package = Path(__file__).resolve().parents[2]  # src/halluscope (no import of the package itself: no cycle)
    return {
        "py_modules": [str(package)],
        "env_vars": {"RAY_USAGE_STATS_ENABLED": "0", "HF_HUB_OFFLINE": os.environ.get("HF_HUB_OFFLINE", "0")},
    }


@dataclass
class RayExecutor:
    """Items on Ray actors, results streamed back to the driver, which writes them (one writer).

    Each stage starts ``workers`` actors with its resources; the stage function (and its backend) is
    shipped once per actor. At most ``depth`` items wait per actor (backpressure: inputs are prepared only
    when submitted). A worker that dies is replaced by a new actor and its in-flight items are resubmitted;
    only the item it was running is charged with the death, and an item that kills ``max_item_attempts``
    workers is recorded as failed with the cause.
    """

    run_dir: str | Path
    address: str | None = None
    workers: int | None = None
    resources: Resources = field(default_factory=Resources)
    stage_resources: dict[str, Resources] = field(default_factory=dict)
    temp_dir: str | Path | None = None
    num_cpus: int | None = None  # CPUs of a local cluster started here (default: all)
    log_to_driver: bool = False
    depth: int = 2
    max_item_attempts: int = 3
    max_replacements: int = 32  # dead workers replaced per stage before the stage gives up
    name: str = "ray"
    _started: bool = field(default=False, init=False)
    _idle: dict[Resources, list] = field(default_factory=dict, init=False)  # live actors between stages
    worker_start_s: float = field(default=0.0, init=False)  # seconds spent waiting for workers to start and set up

    def _ray(self) -> Any:
        os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
        try:
            import ray
        except ImportError:
            raise MissingExtraError("ray", "ray") from None
        if not ray.is_initialized():
            address = self.address or os.environ.get("RAY_ADDRESS") or None
            kwargs: dict[str, Any] = {
                "include_dashboard": False,
                "log_to_driver": self.log_to_driver,
                "configure_logging": True,
                "logging_level": "warning",
            }
            if address:
                kwargs["runtime_env"] = package_runtime_env()
                ray.init(address=address, **kwargs)
            else:
                temp = ray_temp_dir(self.run_dir, self.temp_dir)
                temp.mkdir(parents=True, exist_ok=True)
                ray.init(num_cpus=self.num_cpus, _temp_dir=str(temp), **kwargs)
            self._started = True
        return ray

    def resources_for(self, stage: str) -> Resources:
        return self.stage_resources.get(stage, self.resources)

    def _n_workers(self, ray: Any, res: Resources, n_items: int) -> int:
        if self.workers:
            n = self.workers
        else:
            cluster = ray.cluster_resources()
            n = int(cluster.get("CPU", 1) // max(res.num_cpus, 1e-9))
            if res.num_gpus:
                n = min(n, int(cluster.get("GPU", 0) // res.num_gpus))
        return max(1, min(n, n_items))

    def _spawn(self, ray: Any, stage: str, fn: Callable[[Any], Any], n: int) -> list:
        """``n`` actors holding ``fn``, returned once all have run its setup (a worker that cannot start is a
        setup problem, not an item failure). Idle actors of earlier stages with the same resources are reused
        (no new process, no new imports); idle actors of other shapes are stopped so their CPUs are free."""
        from ray.exceptions import RayActorError, RayTaskError

        t0 = time.perf_counter()
        res = self.resources_for(stage)
        for shape in [k for k in self._idle if k != res]:
            for a in self._idle.pop(shape):
                ray.kill(a, no_restart=True)
        idle = self._idle.get(res, [])
        actors = [idle.pop() for _ in range(min(n, len(idle)))]
        opts: dict[str, Any] = {"num_cpus": res.num_cpus, "num_gpus": res.num_gpus, "max_restarts": 0}
        if res.memory_mb:
            opts["memory"] = res.memory_mb * 1024 * 1024
        cls = ray.remote(_Worker).options(**opts)
        actors += [cls.remote() for _ in range(n - len(actors))]
        try:
            loaded = ray.get([a.load.remote(fn, res) for a in actors])
            problem = next((reason for ok, reason in loaded if not ok), None)
        except (RayActorError, RayTaskError) as exc:
            problem = _first_line(exc)
        if problem is not None:
            for a in actors:
                ray.kill(a, no_restart=True)
            raise HalluscopeError(
                f"Ray workers for stage '{stage}' failed to start: {problem}. Is halluscope with "
                "its extras (and the model files) there where the workers run?"
            ) from None
        self.worker_start_s += time.perf_counter() - t0
        return actors

    def _release(self, stage: str, actors: list) -> None:
        """Keep finished actors for the next stage (``close`` stops them)."""
        self._idle.setdefault(self.resources_for(stage), []).extend(actors)

    def map(self, stage: str, fn: Callable[[Any], Any], items: Sequence[tuple[str, Any]]) -> Iterator[Outcome]:
        if not items:
            return
        ray = self._ray()
        from ray.exceptions import RayActorError, RayTaskError

        actors = self._spawn(ray, stage, fn, self._n_workers(ray, self.resources_for(stage), len(items)))
        pending = list(reversed(items))  # pop() from the end keeps the item order
        retry: list[tuple[str, Any, Any]] = []  # (item id, item, prepared payload) to resubmit
        deaths: dict[str, int] = {}
        gen = [0] * len(actors)  # each actor slot's incarnation: a dead actor is replaced by a new one
        queues: dict[tuple[int, int], list[int]] = {(k, 0): [] for k in range(len(actors))}  # calls in order
        bystanders: set[int] = set()  # calls queued behind a call that killed its worker
        inflight: dict[Any, tuple[int, int, int, str, Any, Any]] = {}  # ref -> (slot, gen, call, id, item, payload)
        calls = replaced = 0
        load = lambda k: len(queues[(k, gen[k])])
        try:
            while pending or retry or inflight:
                while (pending or retry) and min(map(load, range(len(actors)))) < self.depth:
                    k = min(range(len(actors)), key=load)
                    if retry:
                        item_id, x, payload = retry.pop()
                    else:
                        item_id, x = pending.pop()
                        ok, payload = _prepare(fn, x)
                        if not ok:
                            yield item_id, x, False, payload
                            continue
                    calls += 1
                    inflight[actors[k].run.remote(payload)] = (k, gen[k], calls, item_id, x, payload)
                    queues[(k, gen[k])].append(calls)
                if not inflight:
                    continue
                ready, _ = ray.wait(list(inflight), num_returns=1)
                for ref in ready:
                    k, g, call, item_id, x, payload = inflight.pop(ref)
                    queue = queues[(k, g)]
                    running = queue[0] == call and call not in bystanders  # an actor runs its calls in order
                    queue.remove(call)
                    try:
                        ok, value = ray.get(ref)
                    except RayActorError as exc:  # the worker died: replace it, resubmit its items
                        if running:  # this call killed it; the ones queued behind it are innocent
                            bystanders.update(queue)
                            deaths[item_id] = deaths.get(item_id, 0) + 1
                        if g == gen[k]:
                            replaced += 1
                            if replaced > self.max_replacements:
                                raise HalluscopeError(
                                    f"Ray workers of stage '{stage}' died {replaced} times; last: {_first_line(exc)}"
                                ) from None
                            ray.kill(actors[k], no_restart=True)
                            actors[k] = self._spawn(ray, stage, fn, 1)[0]
                            gen[k] += 1
                            queues[(k, gen[k])] = []
                        if deaths.get(item_id, 0) >= self.max_item_attempts:
                            yield (
                                item_id,
                                x,
                                False,
                                (
                                    f"Ray worker died {deaths[item_id]} times while processing "
                                    f"this item: {_first_line(exc)}"
                                ),
                            )
                        else:
                            retry.append((item_id, x, payload))
                        continue
                    except RayTaskError as exc:
                        ok, value = False, f"Ray task error: {_first_line(exc)}"
                    yield item_id, x, ok, value
            self._release(stage, actors)  # all calls answered: the actors are idle
            actors = []
        finally:
            for a in actors:  # interrupted with calls still queued on them: stop them
                ray.kill(a, no_restart=True)

    def pool(self, stage: str, fn: Callable[[Any], Any], workers: int | None = None) -> ActorPool:
        return ActorPool(self, stage, fn, workers)

    def close(self) -> None:
        if self._idle:
            import ray

            if ray.is_initialized():
                for a in (a for actors in self._idle.values() for a in actors):
                    ray.kill(a, no_restart=True)
            self._idle.clear()
        if self._started:
            import ray

            ray.shutdown()
            self._started = False

    def __enter__(self) -> RayExecutor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class ActorPool:
    """Ray actors holding one stage function, each loaded once; a call goes to the least busy actor.

    Used where the driver's own asyncio code decides what to run (the hf and hf-audio backends batch
    requests, then call the pool). An actor that dies is replaced (its ``setup`` runs again) and the call
    is retried; a call that kills ``max_item_attempts`` actors while it runs comes back as failed, with the
    cause (calls queued behind it on the same actor are retried without being charged).
    """

    def __init__(self, executor: RayExecutor, stage: str, fn: Callable[[Any], Any], workers: int | None = None) -> None:
        self.executor, self.stage, self.fn, self.workers = executor, stage, fn, workers
        self.actors: list = []
        self.size = 0
        self._gen: list[int] = []
        self._busy: list[int] = []
        self._queues: list[list[object]] = []
        self._locks: list[asyncio.Lock] = []
        self._replaced = 0

    async def start(self) -> None:
        ex = self.executor
        ray = ex._ray()
        n = self.workers or ex._n_workers(ray, ex.resources_for(self.stage), n_items=1 << 30)
        self.actors = await asyncio.to_thread(ex._spawn, ray, self.stage, self.fn, n)
        self.size = len(self.actors)
        self._gen, self._busy = [0] * self.size, [0] * self.size
        self._queues: list[list[object]] = [[] for _ in range(self.size)]
        self._locks = [asyncio.Lock() for _ in range(self.size)]

    async def call(self, payload: Any) -> tuple[bool, Any]:
        from ray.exceptions import RayActorError, RayTaskError

        ex, deaths, token = self.executor, 0, object()
        while True:
            k = min(range(self.size), key=self._busy.__getitem__)
            actor, gen, queue = self.actors[k], self._gen[k], self._queues[k]
            queue.append(token)  # an actor runs its calls in order: the head of its queue is the running one
            self._busy[k] += 1
            died = False
            try:
                ok, value = await actor.run.remote(payload)
                return ok, value
            except RayTaskError as exc:
                return False, f"Ray task error: {_first_line(exc)}"
            except RayActorError as exc:
                died = True  # the dead actor's queue keeps its tokens, so its head stays the call that was running
                if queue[0] is token:  # this call was running when its worker died; those behind it are innocent
                    deaths += 1
                async with self._locks[k]:  # one replacement per dead actor, however many calls saw it die
                    if gen == self._gen[k]:
                        self._replaced += 1
                        if self._replaced > ex.max_replacements:
                            raise HalluscopeError(
                                f"Ray workers of stage '{self.stage}' died {self._replaced} times; "
                                f"last: {_first_line(exc)}"
                            ) from None
                        ray = ex._ray()
                        ray.kill(actor, no_restart=True)
                        self.actors[k] = (await asyncio.to_thread(ex._spawn, ray, self.stage, self.fn, 1))[0]
                        self._gen[k] += 1
                        self._queues[k] = []
                if deaths >= ex.max_item_attempts:
                    return False, f"Ray worker died {deaths} times during this call: {_first_line(exc)}"
            finally:
                if not died:
                    queue.remove(token)
                self._busy[k] -= 1

    async def close(self) -> None:
        if self.actors:
            if any(self._busy):  # calls still running on them: stop them
                ray = self.executor._ray()
                for a in self.actors:
                    ray.kill(a, no_restart=True)
            else:
                self.executor._release(self.stage, self.actors)
            self.actors = []
