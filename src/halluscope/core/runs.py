"""Typed run manifests and the one query for "the latest run of each kind".

A manifest's ``config`` is stored as JSON (old run directories keep reading); ``config_of(manifest)`` reads it as
the pydantic model of its command (``CONFIGS``), so readers use fields, not raw lookups. ``latest_runs(store,
kind, **filters)`` is the one place that decides which runs a report, the viewer or a paired test sees: the
latest run of each distinct identity (by default the whole config but the display ``name``), so two runs that
differ in any option (``--system``, ``--audio-policy``, ``-o subset``, a seed) are both kept, and a rerun of the
same config replaces the earlier one. ``variant_labels`` names what differs between runs of one model.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, field_validator

from halluscope.core.hashing import json_sha256
from halluscope.core.names import STORED_AS
from halluscope.core.records import RunManifest
from halluscope.core.store import Store


class RunConfig(BaseModel):
    """A command's config; unknown keys are kept (``extra``), so an older or newer manifest still reads."""

    model_config = ConfigDict(extra="allow")
    # fields whose values make two runs distinct (None: every field but IGNORED)
    IDENTITY: ClassVar[tuple[str, ...] | None] = None
    IGNORED: ClassVar[tuple[str, ...]] = ("name",)

    def identity(self) -> str:
        data = self.model_dump(mode="json")
        keys = self.IDENTITY if self.IDENTITY is not None else tuple(k for k in data if k not in self.IGNORED)
        return json_sha256({k: data.get(k) for k in keys})


class DetectConfig(RunConfig):
    """'detect' and 'detect realworld': one detector on one task and input (seed 000, 3.4)."""

    detector: str = Field(description="The detector spec as given (full; labels use display_name).")
    task: str
    input: str
    seed: int = 0
    options: dict[str, Any] = Field(default_factory=dict, description="Every -o option and role flag of the run.")
    transcripts: str | None = Field(
        default=None, description="A compared ASR system's transcripts (None: the build's)."
    )
    name: str | None = Field(default=None, description="Display name given with -o name=... (not part of the key).")

    @field_validator("options", mode="before")
    @classmethod
    def _current_names(cls, options: Any) -> Any:
        """A run stored before a rename reads under the current key (its identity and row label unchanged)."""
        if not isinstance(options, dict):
            return options
        return {STORED_AS.get(k, k): v for k, v in options.items()}


class AnswerConfig(RunConfig):
    """'mishap answer': one audio LM's answers to the MISHAP-Bench questions."""

    model: str
    seeds: list[int | None] = Field(default_factory=list)
    max_tokens: int | None = None
    system: str | None = None
    repetition_penalty: float | None = None
    audio_policy: str | None = Field(
        default=None,
        validation_alias=AliasChoices("audio_policy", "policy"),
        description="Stored as 'policy' by older runs.",
    )
    name: str | None = None
    replace: bool = Field(default=False, description="--replace: these answers replace the model's in the tables.")
    IGNORED: ClassVar[tuple[str, ...]] = ("name", "replace")


class ClipsConfig(RunConfig):
    """'mishap clips': the curated clips."""

    kept: list | dict = Field(default_factory=list, description="The kept clips (ids, or id -> detail).")
    dropped: list | dict = Field(default_factory=dict, description="The dropped clips (id -> why).")
    balance: list = Field(default_factory=list)
    manifest: str | None = None


class MishapJudgeConfig(RunConfig):
    """'mishap judge': the judge and its in-context example answers (left out of judge-human agreement)."""

    judge: str | None = None
    example_answer_ids: list[str] = Field(default_factory=list)


class AblationConfig(RunConfig):
    """'mishap ablation' / 'mishap validity judge': judge configurations by name (seed 001, E.2)."""

    configs: dict[str, dict] = Field(default_factory=dict)
    example_answer_ids: list[str] = Field(default_factory=list)


class ValidityImportConfig(RunConfig):
    """'mishap validity import': one benchmark's responses of one model; a later import of both replaces it."""

    IDENTITY: ClassVar[tuple[str, ...] | None] = ("benchmark", "model")
    benchmark: str
    model: str


class QuestionsConfig(RunConfig):
    """'mishap questions': the question writer (an LLM spec, or 'rules') and its checker."""

    generator: str | None = None
    checker: str | None = None


class SweepConfig(RunConfig):
    """'mitigation sweep': one method over strengths and seeds on one model; the latest per (model, method)."""

    IDENTITY: ClassVar[tuple[str, ...] | None] = ("model", "method")
    model: str
    method: str
    strengths: list[float] = Field(default_factory=list)
    seeds: list[int] = Field(default_factory=list)
    temperature: float = 0.0
    top_p: float | None = None
    max_tokens: int | None = None
    audio_policy: str | None = Field(
        default=None,
        validation_alias=AliasChoices("audio_policy", "policy"),
        description="Stored as 'policy' by older runs.",
    )
    judge: str | None = None
    arms: list[dict] = Field(default_factory=list, description="arm, model, strength, seeds, answers (stage key).")
    judge_stages: list[str] = Field(default_factory=list)


class CanaryConfig(RunConfig):
    """'canary': the audio-reliance check of one model on one source; the latest per (model, source)."""

    IDENTITY: ClassVar[tuple[str, ...] | None] = ("model", "source")
    model: str
    source: str
    n: int | None = None
    seed: int | None = None
    audio_policy: str | None = Field(
        default=None,
        validation_alias=AliasChoices("audio_policy", "policy"),
        description="Stored as 'policy' by older runs.",
    )
    window_s: float | None = None


CONFIGS: dict[str, type[RunConfig]] = {
    "detect": DetectConfig,
    "detect realworld": DetectConfig,
    "mishap answer": AnswerConfig,
    "mitigation sweep answer": AnswerConfig,
    "mitigation sweep judge": MishapJudgeConfig,
    "mishap clips": ClipsConfig,
    "mishap judge": MishapJudgeConfig,
    "mishap ablation": AblationConfig,
    "mishap validity judge": AblationConfig,
    "mishap validity import": ValidityImportConfig,
    "mishap questions": QuestionsConfig,
    "mitigation sweep": SweepConfig,
    "canary": CanaryConfig,
}


def config_of(manifest: RunManifest) -> RunConfig:
    """The manifest's config as its command's model (RunConfig for a command without one)."""
    return CONFIGS.get(manifest.command, RunConfig).model_validate(manifest.config)


@dataclass(frozen=True)
class Run:
    """One recorded run: its manifest and its typed config."""

    manifest: RunManifest
    config: Any  # the RunConfig subclass of its command

    @property
    def stages(self) -> dict[str, str]:
        return self.manifest.stages


def runs(store: Store, kind: str) -> list[Run]:
    """Every run of ``kind`` (a command name), oldest first."""
    return [Run(m, config_of(m)) for m in store.manifests() if m.command == kind]


def latest_runs(store: Store, kind: str, **filters: Any) -> list[Run]:
    """The latest run of each distinct config of ``kind`` whose fields equal ``filters``, in the order each
    config first ran. Runs differing in any identity field are all kept; a rerun replaces its earlier run.

    Runs that read other records (detect runs read the build) may be stale: a table reads them through
    ``halluscope.current.select`` (``detect_runs``), which keeps per config the latest run consistent with what the
    run holds now."""
    latest: dict[str, Run] = {}
    for r in runs(store, kind):
        if all(getattr(r.config, k, None) == v for k, v in filters.items()):
            latest[r.config.identity()] = r
    return list(latest.values())


def latest_run(store: Store, kind: str, **filters: Any) -> Run | None:
    """The most recent run of ``kind`` matching ``filters`` (None when there is none)."""
    found = [r for r in runs(store, kind) if all(getattr(r.config, k, None) == v for k, v in filters.items())]
    return found[-1] if found else None


def _shown(value: Any) -> str:
    """An option value as a label shows it: a model spec naming a local directory by its display name."""
    from halluscope.core.errors import HalluscopeError
    from halluscope.core.spec import ModelSpec, _looks_local, display_name, format_value

    if isinstance(value, str) and "/" in value:
        try:
            local = _looks_local(ModelSpec.written(value)[1])
        except HalluscopeError:  # not a model spec (an absolute path, say)
            local = False
        if local:
            return display_name(value)
    if isinstance(value, str) and _looks_local(value):
        from pathlib import PurePath

        return PurePath(value).name
    return format_value(value)


def _flat(config: RunConfig, skip: Iterable[str]) -> dict[str, str]:
    data = config.model_dump(mode="json")
    opts = data.pop("options", None) or {}
    flat = {**{k: v for k, v in data.items() if v is not None}, **opts}
    return {k: _shown(v) for k, v in flat.items() if k not in skip}


def variant_labels(items: Sequence[RunConfig], *, group: str, skip: Iterable[str] = ()) -> list[str]:
    """For each config, what sets it apart from the other configs of the same ``group`` field value (e.g. the
    same detector): 'k=v, k=v' over the keys this config sets whose values differ within the group ('' when
    none: the model's default run keeps its bare name).
    ``skip``: keys shown in their own column (task, input, prompting, the mitigation's)."""
    skip = {group, "name", *skip}
    flats = [_flat(c, skip) for c in items]
    out = []
    for c, flat in zip(items, flats):
        peers = [f for other, f in zip(items, flats) if getattr(other, group) == getattr(c, group)]
        keys = sorted({k for f in peers for k in f})
        differ = [k for k in keys if len({f.get(k) for f in peers}) > 1]
        out.append(", ".join(f"{k}={flat[k]}" for k in differ if k in flat))  # a default is not named
    return out


def model_label(spec: str, name: str | None = None, variant: str = "") -> str:
    """A model's row label: its display name, then what sets this run apart in brackets ('' when nothing)."""
    from halluscope.core.spec import display_name

    return display_name(spec, name) + (f" [{variant}]" if variant else "")


def labelled_runs(items: Sequence[Run], *, group: str = "detector", skip: Iterable[str] = ()) -> list[tuple[str, Run]]:
    """(row label, run) of each run: the model's display name plus what differs from its other runs."""
    configs = [r.config for r in items]
    variants = variant_labels(configs, group=group, skip=skip)
    return [
        (model_label(getattr(r.config, group), getattr(r.config, "name", None), v), r) for r, v in zip(items, variants)
    ]
