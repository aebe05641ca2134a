"""Where a stage's per-item work runs: in this process (default) or on Ray actors.

Two shapes of work: ``map`` runs a stage function over a list of items (TTS, ASR, encoder training per
language); ``pool`` keeps workers that hold a loaded model and answer calls the driver's asyncio code makes
(hf and hf-audio generation, which batch requests first). The driver stays the only writer: an executor
hands back ``(item_id, x, ok, value)`` as items finish and ``run_stage`` writes each one to the store under the same key an in-process run uses. A stage function
may be an :class:`ItemTask`, which splits the work by where it runs: ``prepare`` (driver: read input
files), ``__call__`` (worker: the heavy part) and ``finish`` (driver: write output files, build the
record). So workers need no shared storage: WAV bytes travel both ways with the results.
"""

from halluscope.core.executors.local import (
    LOCAL,
    Executor,
    ItemTask,
    LocalExecutor,
    LocalPool,
    Outcome,
    Pool,
    Resources,
    attempt,
    place,
    torch_threads,
)
from halluscope.core.executors.options import RESOURCE_STAGES, ExecutorOptions
from halluscope.core.executors.raycluster import (
    RAY_SOCKET_MAX,
    ActorPool,
    RayExecutor,
    package_runtime_env,
    ray_temp_dir,
)

__all__ = [
    "LOCAL",
    "RAY_SOCKET_MAX",
    "RESOURCE_STAGES",
    "ActorPool",
    "Executor",
    "ExecutorOptions",
    "ItemTask",
    "LocalExecutor",
    "LocalPool",
    "Outcome",
    "Pool",
    "RayExecutor",
    "Resources",
    "attempt",
    "package_runtime_env",
    "place",
    "ray_temp_dir",
    "torch_threads",
]
