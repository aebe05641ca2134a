"""Typed records that flow between stages (ARCHITECTURE.md: records are never bare dicts)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

RECORDS_VERSION = 1

Language = Literal["en", "ru", "kk"]
LANGUAGES: tuple[Language, ...] = ("en", "ru", "kk")
# seed 000, section 3.1: three hallucination types x three severity levels
HallucinationType = Literal["fabrication", "contradiction", "context_inconsistency"]
TYPES: tuple[HallucinationType, ...] = ("fabrication", "contradiction", "context_inconsistency")
Severity = Literal["mild", "moderate", "severe"]
SEVERITIES: tuple[Severity, ...] = ("mild", "moderate", "severe")
Task = Literal["binary", "type", "severity"]
TASKS: tuple[Task, ...] = ("binary", "type", "severity")
InputKind = Literal["text", "transcript"]


class Record(BaseModel):
    """Base of all records: frozen, extra fields forbidden so a typo never passes silently."""

    model_config = ConfigDict(frozen=True, extra="forbid")


class Article(Record):
    """A source news article, treated as the factual reference (seed 000, section 3.1)."""

    id: str = Field(description="Unique article id within the corpus.")
    language: Language = Field(description="ISO 639-1 code: en, ru or kk.")
    text: str = Field(description="The article body, plain text.")
    url: str | None = Field(default=None, description="Source URL, if published.")
    outlet: str | None = Field(default=None, description="Publishing outlet.")
    date: str | None = Field(default=None, description="Publication date, ISO 8601.")
    topic: str | None = Field(default=None, description="Topic, e.g. economy, politics, technology.")


class Change(Record):
    """One edit a generator made: what stood in the source and what replaced it."""

    kind: str = Field(description="Edit operation, e.g. number, entity, antonym, insert, reorder.")
    before: str = Field(description="Source span (empty for an insertion).")
    after: str = Field(description="Replacement span (empty for a deletion).")
    sentence: int = Field(description="Index of the affected sentence in the source (-1 if global).")


class Variant(Record):
    """A benchmark sample: an original article or one hallucinated rewrite of it."""

    id: str = Field(description="Sample id: '<article>' for an original, '<article>~<type>~<severity>' otherwise.")
    article_id: str = Field(description="Id of the source article (the split unit).")
    language: Language
    text: str
    label: Literal[0, 1] = Field(description="Binary label: 0 original, 1 hallucinated.")
    type: HallucinationType | None = Field(default=None, description="None for originals.")
    severity: Severity | None = Field(default=None, description="None for originals.")
    generator: str = Field(description="Generator spec that produced the text ('original' for sources).")
    seed: int | None = Field(default=None, description="Seed the generator used.")
    changes: tuple[Change, ...] = Field(default=(), description="Edits relative to the source article.")
    checks: dict[str, bool] = Field(default_factory=dict, description="Post-generation checks and their outcome.")


class AudioRef(Record):
    """A synthesized clip on disk, with enough metadata to verify it later."""

    item_id: str
    path: str = Field(description="WAV path relative to the run directory.")
    sha256: str
    sample_rate: int
    duration_s: float
    engine: str = Field(description="TTS backend spec, e.g. 'espeak/ru+f3'.")
    voice: str
    text_sha256: str = Field(description="sha256 of the text that was spoken.")


class Transcript(Record):
    """An ASR transcript of one clip."""

    item_id: str
    language: Language
    text: str
    asr: str = Field(description="ASR backend spec, e.g. 'whisper/base'.")
    audio_sha256: str
    audio_duration_s: float
    processing_s: float = Field(description="Wall time the ASR call took.")
    wer: float | None = Field(default=None, description="Item-level WER against its source text (normalised).")
    cer: float | None = Field(default=None, description="Item-level CER against its source text (normalised).")


class Prediction(Record):
    """A detector's prediction for one item of one task and input kind."""

    item_id: str
    detector: str
    task: Task
    input: InputKind
    split: Literal["train", "dev", "test"]
    gold: str
    predicted: str | None = Field(description="None when the detector produced no usable label.")
    status: Literal["ok", "unparsable", "refusal", "error"] = "ok"


class RunManifest(Record):
    """What a command ran with: config, package versions, seeds, stage fingerprints."""

    version: int = RECORDS_VERSION
    command: str
    created: str
    config: dict
    versions: dict[str, str]
    seeds: dict[str, int]
    stages: dict[str, str] = Field(default_factory=dict, description="stage name -> config fingerprint")
    platform: str
