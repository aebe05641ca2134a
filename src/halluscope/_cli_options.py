"""The '-o KEY=VALUE' options shared by every command that passes settings to a backend or detector."""

from __future__ import annotations

import json
from typing import Annotated, List, Optional

import typer

from halluscope.executors import RESOURCE_STAGES, ExecutorOptions


def parse_kv_options(values: list[str]) -> dict:
    """KEY=VALUE strings to a dict; a value is parsed as JSON when it can be (so 3, true, "cot" work)."""
    options: dict = {}
    for kv in values:
        key, sep, value = kv.partition("=")
        if not sep or not key:
            raise typer.BadParameter(f"--option expects KEY=VALUE, got '{kv}'")
        try:
            options[key] = json.loads(value)
        except json.JSONDecodeError:
            options[key] = value
    return options


# The --executor family, shared by 'build spoken' and 'detect' (one place for names, defaults and help).
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


def executor_options(executor: str, ray_address: str | None, ray_workers: int | None, ray_cpus_per_worker: float,
                     ray_gpus_per_worker: float, ray_memory_mb: int | None, ray_resources: list[str],
                     ray_temp_dir: str | None) -> ExecutorOptions:
    return ExecutorOptions(executor=executor, ray_address=ray_address, ray_workers=ray_workers,
                           ray_cpus_per_worker=ray_cpus_per_worker, ray_gpus_per_worker=ray_gpus_per_worker,
                           ray_memory_mb=ray_memory_mb, ray_resources=tuple(ray_resources), ray_temp_dir=ray_temp_dir)
