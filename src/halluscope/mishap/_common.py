"""Shared plumbing of the MISHAP steps: prompt files and step manifests (stages run on halluscope.backends.runner;
replies are read by halluscope.reply)."""

from __future__ import annotations

import json
from functools import lru_cache
from importlib import resources
from typing import Any

from halluscope.core.errors import HalluscopeError
from halluscope.core.hashing import named_files_sha256
from halluscope.core.store import Store
from halluscope.prompts import Template, prompt_files, template

VERSION = 1
# one command name per step; a step finds its upstream through the latest manifest of the step before it
COMMANDS = {
    "clips": "mishap clips",
    "questions": "mishap questions",
    "rubrics": "mishap rubrics",
    "answer": "mishap answer",
    "judge": "mishap judge",
}

STEP_FIX = (
    "check the model's server or weights and the reasons stored in the run ('halluscope view RUN'), then run the "
    "same command again"
)
STEP_KEPT = "in the run's store (a rerun retries only the failed items)"


def check_step(summary: Any, *, command: str, step: str, allow_partial: bool | None) -> list[str]:
    """The one rule of core/outcome.py over a step's calls (a CallSummary), applied before the step is recorded so
    that a failed step is never recorded as complete; nothing when ``allow_partial`` is None (the library default).
    ``command``: the manifest the step records (a sweep's answers and judge runs are named as 'mitigation sweep',
    the command the user ran). Returns the notes of a step that failed on some items."""
    if allow_partial is None:
        return []
    from halluscope.core.outcome import StepOutcome, check_outcomes
    from halluscope.core.provenance import SWEEP_ANSWERS, SWEEP_JUDGE

    said = "mitigation sweep" if command in (SWEEP_ANSWERS, SWEEP_JUDGE) else command
    outcome = StepOutcome.of(summary, step=step, fix=STEP_FIX)
    return check_outcomes([outcome], command=said, allow_partial=allow_partial, kept=STEP_KEPT)


def prompt(name: str) -> Template:
    return template(f"mishap/{name}")


@lru_cache(maxsize=None)
def strategy_texts() -> dict:
    """Category and strategy definitions, domain informativeness rubrics and stance definitions (data, not code)."""
    return json.loads(
        (resources.files("halluscope") / "prompts" / "mishap" / "strategies.json").read_text(encoding="utf-8")
    )


@lru_cache(maxsize=None)
def prompts_hash() -> str:
    """sha256 over every MISHAP prompt and data file: part of each stage fingerprint that sends prompts."""
    return named_files_sha256(prompt_files("mishap", (".txt", ".json")))


def upstream(store: Store, step: str) -> dict[str, str]:
    """Stage fingerprints recorded by the latest run of ``step``; a clear error when it has not run."""
    manifest = store.latest_manifest(COMMANDS[step])
    if manifest is None:
        raise HalluscopeError(
            f"{store.run_dir} has no '{COMMANDS[step]}' run yet; run 'halluscope {COMMANDS[step]} "
            f"{store.run_dir} ...' first"
        )
    return manifest.stages
