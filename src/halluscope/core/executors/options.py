"""The --executor family of options, validated before any work."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from halluscope.core.errors import HalluscopeError
from halluscope.core.executors.local import LocalExecutor, Resources
from halluscope.core.executors.raycluster import RayExecutor

RESOURCE_STAGES = ("tts", "asr", "encoder", "hf", "hf-audio")  # names --ray-resources can address


@dataclass(frozen=True)
class ExecutorOptions:
    """The --executor family of options, validated before any work."""

    executor: str = "local"
    ray_address: str | None = None
    ray_workers: int | None = None
    ray_cpus_per_worker: float = 1.0
    ray_gpus_per_worker: float = 0.0
    ray_memory_mb: int | None = None
    ray_resources: tuple[str, ...] = ()  # 'stage:cpus=2,gpus=0.5'
    ray_temp_dir: str | None = None
    ray_log_to_driver: bool = False

    def create(self, run_dir: str | Path) -> LocalExecutor | RayExecutor:
        if self.executor == "local":
            return LocalExecutor()
        if self.executor != "ray":
            raise HalluscopeError(f"executor {self.executor!r}: expected 'local' (in-process) or 'ray'")
        base = Resources(self.ray_cpus_per_worker, self.ray_gpus_per_worker, self.ray_memory_mb)
        per_stage: dict[str, Resources] = {}
        for spec in self.ray_resources:
            stage, sep, rest = spec.partition(":")
            if not sep or stage.strip() not in RESOURCE_STAGES:
                raise HalluscopeError(
                    f"Ray resources {spec!r}: expected STAGE:cpus=N[,gpus=N][,memory_mb=N] with STAGE "
                    f"one of {', '.join(RESOURCE_STAGES)}, e.g. asr:cpus=2"
                )
            per_stage[stage.strip()] = Resources.parse(rest, base)
        if self.ray_workers is not None and self.ray_workers < 1:
            raise HalluscopeError(f"Ray workers {self.ray_workers}: expected at least 1")
        return RayExecutor(
            run_dir,
            address=self.ray_address,
            workers=self.ray_workers,
            resources=base,
            stage_resources=per_stage,
            temp_dir=self.ray_temp_dir,
            log_to_driver=self.ray_log_to_driver,
        )
