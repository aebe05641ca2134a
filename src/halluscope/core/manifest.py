"""Run manifests: config, package versions, seeds and stage fingerprints of every command."""

from __future__ import annotations

import json
import platform
import sys
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path

from halluscope.core.fs import atomic_write
from halluscope.core.records import RunManifest
from halluscope.core.store import Store

_PACKAGES = (
    "halluscope",
    "pydantic",
    "numpy",
    "scikit-learn",
    "jiwer",
    "faster-whisper",
    "ctranslate2",
    "pyarrow",
    "matplotlib",
    "typer",
    "rich",
)


def package_versions() -> dict[str, str]:
    out = {"python": sys.version.split()[0]}
    for name in _PACKAGES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return out


def record_manifest(
    store: Store,
    *,
    command: str,
    config: dict,
    seeds: dict[str, int],
    stages: dict[str, str],
    extra_versions: dict[str, str] | None = None,
    inputs: dict[str, str] | None = None,
) -> RunManifest:
    """Store the manifest and mirror it to manifest.json for humans (the store is the source of truth); ``inputs``:
    the digests of the content the command read (core/provenance.py)."""
    manifest = RunManifest(
        command=command,
        created=datetime.now(timezone.utc).isoformat(timespec="seconds"),
        config=config,
        versions={**package_versions(), **(extra_versions or {})},
        seeds=seeds,
        stages=stages,
        platform=platform.platform(),
        inputs=inputs or {},
    )
    store.add_manifest(manifest)
    all_manifests = [m.model_dump() for m in store.manifests()]
    atomic_write(Path(store.run_dir) / "manifest.json", json.dumps(all_manifests, indent=2, ensure_ascii=False))
    return manifest
