"""Typed records that flow between stages (ARCHITECTURE.md: records are never bare dicts)."""

from __future__ import annotations

import hashlib
import json
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
InputKind = Literal["text", "transcript", "audio"]


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


# -- model calls, self-assessments and judgements (seed 000, section 3.4 and App. A) --------------

ResponseStatus = Literal["ok", "unparsable", "refusal", "error"]


class ChatMessage(Record):
    """One turn of a chat-completions request."""

    role: Literal["system", "user", "assistant"]
    content: str


class ModelRequest(Record):
    """A text-LLM request; its key (backend, messages, params, nonce) decides whether the store can answer it."""

    backend: str = Field(description="Backend spec, e.g. 'openai/gpt-4o-mini' or 'hf//models/qwen'.")
    messages: tuple[ChatMessage, ...]
    params: dict = Field(default_factory=dict, description="Decoding parameters sent with the request (temperature, max_tokens, seed, ...).")
    nonce: int = Field(default=0, description="Protocol-level retry number; a retry after a rejected output is a new request.")
    tag: str | None = Field(default=None, description="What the call is for (e.g. 'generate:<variant id>'); kept for audit, not part of the key.")

    def key(self) -> str:
        """sha256 of everything that can change the reply; the tag is left out on purpose."""
        blob = json.dumps({"backend": self.backend, "messages": [m.model_dump() for m in self.messages],
                           "params": self.params, "nonce": self.nonce}, sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(blob.encode("utf-8")).hexdigest()


class Usage(Record):
    """Token counts as the backend reported them."""

    prompt_tokens: int = 0
    completion_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


class ModelResponse(Record):
    """What a backend returned for one request; the raw text is always kept, whatever the status."""

    key: str = Field(description="ModelRequest.key() of the request.")
    backend: str
    status: ResponseStatus = Field(description="ok; unparsable (the body was no chat completion); refusal; error (no answer after all retries).")
    text: str | None = Field(default=None, description="Message content (or refusal text, or the unreadable body).")
    error: str | None = Field(default=None, description="Why the status is not ok.")
    finish_reason: str | None = None
    usage: Usage | None = None
    latency_s: float | None = Field(default=None, description="Wall time of the answering call (None when served from the store).")
    attempts: int = Field(default=0, description="Transport attempts made (0 when served from the store).")
    cached: bool = Field(default=False, description="Served from the store without a call.")
    cost_usd: float | None = Field(default=None, description="From the backend's cost table, if configured.")


class SelfAssessment(Record):
    """A generator's in-prompt report on its own rewrite (seed 000, App. A.1 step 3), mapped to 1..5."""

    item_id: str
    generator: str
    language: Language
    type: HallucinationType
    severity: Severity
    ratings: dict[str, int] = Field(default_factory=dict, description="Dimension abbreviation (FA, Cr, IC, ...) -> 1..5.")
    verbal: dict[str, str] = Field(default_factory=dict, description="Dimension abbreviation -> the rating word as written.")
    unrated: tuple[str, ...] = Field(default=(), description="Dimensions of the type the report did not rate readably.")


class RewriteAttempt(Record):
    """One protocol attempt of an LLM rewrite and why it was rejected, if it was."""

    nonce: int
    call_key: str
    status: Literal["accepted", "rejected", "unparsable", "refusal", "error"]
    reason: str | None = None


class RewriteLog(Record):
    """Every attempt behind one LLM rewrite, with the self-assessment of the accepted one."""

    item_id: str
    generator: str
    attempts: tuple[RewriteAttempt, ...]
    accepted: bool
    self_assessment: SelfAssessment | None = None
    usage: Usage = Field(default_factory=Usage, description="Summed over the replies of every attempt.")
    cost_usd: float | None = None


class Judgement(Record):
    """One judge's reading of one item: scores (or a verdict), the raw text, or why it is unscored."""

    item_id: str
    judge: str = Field(description="Judge backend spec.")
    status: Literal["ok", "unscored"]
    scores: dict[str, int] = Field(default_factory=dict, description="Dimension abbreviation -> 1..5.")
    verdict: str | None = Field(default=None, description="For verdict-style judges; None for scoring judges.")
    raw_text: str | None = Field(default=None, description="The judge's last reply, kept verbatim.")
    unscored_reason: str | None = None
    attempts: int = Field(default=1, description="Calls made, counting parse retries.")
    call_keys: tuple[str, ...] = ()
