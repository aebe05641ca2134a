"""Typed records that flow between stages (ARCHITECTURE.md: records are never bare dicts)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

# the model-call and MISHAP-Bench records live in their own modules; imported from here as before
from halluscope.core.call_records import (
    AudioClip as AudioClip,
    AudioDelivery as AudioDelivery,
    ChatMessage as ChatMessage,
    ModelRequest as ModelRequest,
    ModelResponse as ModelResponse,
    Usage as Usage,
)
from halluscope.core.mishap_records import (
    MISHAP_CATEGORIES as MISHAP_CATEGORIES,
    MISHAP_DOMAINS as MISHAP_DOMAINS,
    MISHAP_STRATEGIES as MISHAP_STRATEGIES,
    STANCES as STANCES,
    EvidenceSearch as EvidenceSearch,
    Groundedness as Groundedness,
    GroundednessJudgement as GroundednessJudgement,
    Informativeness as Informativeness,
    MishapAnnotation as MishapAnnotation,
    MishapAnswer as MishapAnswer,
    MishapCategory as MishapCategory,
    MishapClip as MishapClip,
    MishapQuestion as MishapQuestion,
    MishapRubric as MishapRubric,
    MishapStrategy as MishapStrategy,
    ValidityBenchmark as ValidityBenchmark,
    ValidityItem as ValidityItem,
)
from halluscope.core.record_base import Record as Record
from halluscope.core.spec import ModelSpec, SpecText

RECORDS_VERSION = 1

Language = Literal["en", "ru", "kk"]
LANGUAGES: tuple[Language, ...] = ("en", "ru", "kk")
# spellings read as the codes above (corpora, ASR pairs, --langs): 'kz' is Kazakh's country code, not its language's
LANGUAGE_ALIASES = {"kz": "kk", "eng": "en", "rus": "ru", "kaz": "kk"}


def language_code(value: str) -> str:
    """A language as written in an input file, as halluscope's code ('KZ ' -> 'kk')."""
    code = value.strip().lower()
    return LANGUAGE_ALIASES.get(code, code)


# seed 000, section 3.1: three hallucination types x three severity levels
HallucinationType = Literal["fabrication", "contradiction", "context_inconsistency"]
TYPES: tuple[HallucinationType, ...] = ("fabrication", "contradiction", "context_inconsistency")
Severity = Literal["mild", "moderate", "severe"]
SEVERITIES: tuple[Severity, ...] = ("mild", "moderate", "severe")
Task = Literal["binary", "type", "severity"]
TASKS: tuple[Task, ...] = ("binary", "type", "severity")
InputKind = Literal["text", "transcript", "audio"]


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
    asr: SpecText = Field(description="ASR backend spec, e.g. 'whisper/base'.")
    audio_sha256: str
    audio_duration_s: float
    processing_s: float = Field(description="Wall time the ASR call took.")
    wer: float | None = Field(default=None, description="Item-level WER against its source text (normalised).")
    cer: float | None = Field(default=None, description="Item-level CER against its source text (normalised).")
    edits: tuple[int, int, int, int] | None = Field(
        default=None,
        description="(word edits, reference words, character edits, reference characters) after App. A.4's "
        "normalisation: what corpus WER and CER sum (None in runs built before it was kept).",
    )
    raw_edits: tuple[int, int, int, int] | None = Field(
        default=None,
        description="The same counts on the texts as written, split on whitespace (the normaliser's effect).",
    )

    @property
    def spec(self) -> ModelSpec:
        """The ASR system, parsed."""
        return ModelSpec.parse(self.asr)


class Prediction(Record):
    """A detector's prediction for one item of one task and input kind."""

    item_id: str
    detector: SpecText
    task: Task
    input: InputKind
    split: Literal["train", "dev", "test"]
    gold: str
    predicted: str | None = Field(description="None when the detector produced no usable label.")
    status: Literal["ok", "unparsable", "refusal", "error"] = "ok"
    answer: str | None = Field(
        default=None,
        description="Zero-shot: the answer as parsed from the reply (e.g. 'none', "
        "which is no label and counts as an error).",
    )
    reason: str | None = Field(default=None, description="Why the status is not ok, or why there is no label.")
    call_key: str | None = Field(
        default=None, description="ModelRequest.key() of the call behind it; the raw reply is in the store."
    )
    zero_shot: bool = Field(default=False, description="No training: predicted on every split (Table 3, not Table 2).")
    audio: AudioDelivery | None = Field(
        default=None, description="Audio input only: what the model was sent and heard."
    )

    @property
    def spec(self) -> ModelSpec:
        """The detector, parsed."""
        return ModelSpec.parse(self.detector)


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
    inputs: dict[str, str] = Field(default_factory=dict, description="Digests of what it read (core/provenance.py).")


# -- self-assessments and judgements (seed 000, section 3.4 and App. A) --------------------------


class SelfAssessment(Record):
    """A generator's in-prompt report on its own rewrite (seed 000, App. A.1 step 3), mapped to 1..5."""

    item_id: str
    generator: str
    language: Language
    type: HallucinationType
    severity: Severity
    ratings: dict[str, int] = Field(
        default_factory=dict, description="Dimension abbreviation (FA, Cr, IC, ...) -> 1..5."
    )
    verbal: dict[str, str] = Field(
        default_factory=dict, description="Dimension abbreviation -> the rating word as written."
    )
    unrated: tuple[str, ...] = Field(default=(), description="Dimensions of the type the report did not rate readably.")


class RewriteAttempt(Record):
    """One protocol attempt of an LLM rewrite and why it was rejected, if it was."""

    nonce: int
    call_key: str
    status: Literal["accepted", "rejected", "truncated", "unparsable", "refusal", "error"]
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
    judge: SpecText = Field(description="Judge backend spec.")
    status: Literal["ok", "unscored"]
    scores: dict[str, int] = Field(default_factory=dict, description="Dimension abbreviation -> 1..5.")
    verdict: str | None = Field(default=None, description="For verdict-style judges; None for scoring judges.")
    raw_text: str | None = Field(default=None, description="The judge's last reply, kept verbatim.")
    unscored_reason: str | None = None
    attempts: int = Field(default=1, description="Calls made, counting parse retries.")
    call_keys: tuple[str, ...] = ()

    @property
    def spec(self) -> ModelSpec:
        """The judge, parsed."""
        return ModelSpec.parse(self.judge)


# -- fine-tuned encoders, the real-world split (seed 000, sections 3.2, 4.1 and 4.3) ---------------


class EncoderTraining(Record):
    """How one fine-tuned encoder was trained and which checkpoint was kept (best dev macro-F1)."""

    group: str = Field(description="Language trained on, or 'all' for one multilingual model.")
    model: str = Field(description="The base checkpoint (hub name or local path).")
    n_train: int
    n_dev: int
    n_predicted: int = Field(description="Dev and test items predicted by the kept checkpoint.")
    labels: tuple[str, ...]
    dev_macro_f1: tuple[float, ...] = Field(default=(), description="Dev macro-F1 after each evaluation, in order.")
    train_loss: tuple[float, ...] = Field(default=(), description="Mean training loss of each epoch, in order.")
    best_dev_macro_f1: float | None = None
    best_checkpoint: str | None = Field(default=None, description="Trainer checkpoint kept (None without a dev split).")
    saved_to: str | None = Field(
        default=None, description="Directory of the kept model, relative to the run directory."
    )
    device: str
    seconds: float
    options: dict = Field(default_factory=dict)


class RealWorldFake(Record):
    """A fact-checked fake news item in one language (seed 000, section 3.2)."""

    id: str = Field(description="Item id as given in the fakes file (unique per row).")
    language: Literal["ru", "kk"]
    text: str
    native_language: Literal["ru", "kk"] = Field(description="Language the fake circulated in.")
    translated: bool = Field(description="True when this text is a translation of the native item.")
    pair_id: str | None = Field(default=None, description="Story id shared by the ru and kk versions of one fake.")
    near_parallel: bool = Field(default=False, description="Independently fact-checked in both languages.")
    url: str | None = None
    date: str | None = Field(default=None, description="Publication or fact-check date, ISO 8601.")
    topic: str | None = None


class RealWorldMatch(Record):
    """A truthful negative matched to one fake by greedy TF-IDF cosine over topic and period."""

    fake_id: str = Field(description="Sample id of the fake ('fake~<id>').")
    article_id: str = Field(description="The original article chosen as its truthful negative.")
    language: Literal["ru", "kk"]
    similarity: float
    order: int = Field(description="Position in the greedy assignment (0 = most similar pair).")
