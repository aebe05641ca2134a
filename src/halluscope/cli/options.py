"""The '-o KEY=VALUE' options shared by every command that passes settings to a backend or detector."""

from __future__ import annotations

import functools
import inspect
import json
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, List, Optional

import typer

from halluscope.core.executors import RESOURCE_STAGES, ExecutorOptions


def parse_kv_options(values: list[str]) -> dict:
    """KEY=VALUE strings to a dict; a value is parsed as JSON when it can be (so 3, true, "cot" work)."""
    options: dict = {}
    for kv in values:
        key, sep, value = kv.partition("=")
        if not sep or not key:
            raise typer.BadParameter(f"--option expects KEY=VALUE, got '{kv}'")
        if key in options:
            raise typer.BadParameter(f"--option {key} is given twice ('{kv}'); expected each key once")
        try:
            options[key] = json.loads(value)
        except json.JSONDecodeError:
            options[key] = value
    return options


def existing_run(value: Path) -> Path:
    """Typer callback of a RUN argument that must already exist: commands that read a run never create one; a
    mistyped path stops here with 'no run at PATH' (exit 2) and nothing is written."""
    from halluscope.core.store import check_run_dir

    return check_run_dir(value)


# The --executor family, shared by every command with heavy local work (one place for names, defaults, help).
Executor = Annotated[str, typer.Option(
    help="Where the heavy work runs: 'local' (in-process) or 'ray' (Ray actors for TTS, ASR, encoder training per "
         "language and hf/hf-audio generation, models loaded once per worker; a local cluster, or the one at "
         "--ray-address / $RAY_ADDRESS). Same records either way; API calls (openai/) are made from the driver.")]
RayAddress = Annotated[Optional[str], typer.Option(
    help="Ray cluster to connect to, e.g. 10.0.0.5:6379 or auto (default: $RAY_ADDRESS, else start a local one).")]
RayWorkers = Annotated[Optional[int], typer.Option(help="Ray workers per stage (default: cluster CPUs / CPUs per worker).")]
RayCpus = Annotated[float, typer.Option(help="CPUs per Ray worker; also its ASR and torch threads.")]
RayGpus = Annotated[float, typer.Option(help="GPUs per Ray worker (fractions share a GPU).")]
RayMemory = Annotated[Optional[int], typer.Option(help="Memory per Ray worker in MB (a scheduling request).")]
RayResources = Annotated[List[str], typer.Option(
    help="Per-stage override STAGE:cpus=N[,gpus=N][,memory_mb=N] (repeatable); stages: "
         f"{', '.join(RESOURCE_STAGES)}, e.g. hf-audio:gpus=1")]
RayTempDir = Annotated[Optional[str], typer.Option(
    help="Ray's temp folder for a local cluster (default: RUN/.ray, or /tmp/hs-ray-<hash> when RUN's path is too "
         "long for Ray's sockets).")]


_EXECUTOR_PARAMS = (("executor", Executor, "local"), ("ray_address", RayAddress, None), ("ray_workers", RayWorkers, None),
                    ("ray_cpus_per_worker", RayCpus, 1.0), ("ray_gpus_per_worker", RayGpus, 0.0),
                    ("ray_memory_mb", RayMemory, None), ("ray_resources", RayResources, []),
                    ("ray_temp_dir", RayTempDir, None))


def with_executor(command: Callable) -> Callable:
    """Give a typer command the --executor family of options; it receives them as one ``executor: ExecutorOptions``
    argument (``with executor.create(run_dir) as ex: ...``)."""
    sig = inspect.signature(command, eval_str=True)
    extra = [inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=annotation)
             for name, annotation, default in _EXECUTOR_PARAMS]

    @functools.wraps(command)
    def wrapper(*args: object, **kwargs: object) -> object:
        values = {name: kwargs.pop(name) for name, _, _ in _EXECUTOR_PARAMS}
        values["ray_resources"] = tuple(values["ray_resources"])  # type: ignore[arg-type]
        return command(*args, executor=ExecutorOptions(**values), **kwargs)  # type: ignore[arg-type]

    wrapper.__signature__ = sig.replace(  # type: ignore[attr-defined]
        parameters=[p for p in sig.parameters.values() if p.name != "executor"] + extra)
    return wrapper
