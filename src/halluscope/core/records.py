"""Typed records that flow between stages (ARCHITECTURE.md: records are never bare dicts)."""

from __future__ import annotations

from typing import Literal

from pydantic import AliasChoices, BaseModel, ConfigDict, Field

from halluscope.core.hashing import json_sha256

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
    edits: tuple[int, int, int, int] | None = Field(
        default=None,
        description="(word edits, reference words, character edits, reference characters) after App. A.4's "
        "normalisation: what corpus WER and CER sum (None in runs built before it was kept).",
    )
    raw_edits: tuple[int, int, int, int] | None = Field(
        default=None,
        description="The same counts on the texts as written, split on whitespace (the normaliser's effect).",
    )


class AudioDelivery(Record):
    """How one item's audio went to an audio model: what was sent, what the model could hear, and under which policy."""

    audio_policy: Literal["truncate", "chunk", "skip"] = Field(
        validation_alias=AliasChoices("audio_policy", "policy"),  # 'policy' in records stored before the rename
        description="The run's --audio-policy for audio longer than the window.",
    )
    window_s: float | None = Field(description="Seconds of audio the model can hear per clip (None: not declared).")
    duration_s: float = Field(description="Length of the item's audio.")
    action: Literal["whole", "truncated", "chunked", "skipped"] = Field(description="What the policy did to this item.")
    chunks: int = Field(default=1, description="Clips attached to the call (0 when skipped).")
    sent_s: float = Field(default=0.0, description="Seconds of audio attached to the call.")
    heard_s: float | None = Field(
        default=None,
        description="Seconds the model received after its own front end "
        "(hf-audio: from the processor's feature mask; openai: min(sent, declared window)).",
    )
    delivered: bool | None = Field(
        default=None,
        description="Audio reached the model: audio features/tokens > 0 "
        "(hf-audio) or an audio part in the request body (openai); None when nothing was sent.",
    )


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


# -- model calls, self-assessments and judgements (seed 000, section 3.4 and App. A) --------------

ResponseStatus = Literal["ok", "unparsable", "refusal", "error"]


class ChatMessage(Record):
    """One turn of a chat-completions request."""

    role: Literal["system", "user", "assistant"]
    content: str

    def as_dict(self) -> dict[str, str]:
        """``model_dump()`` of the turn (its fields are plain strings) at a fraction of its cost: request keys and
        chat bodies build one per message per request."""
        return dict(self.__dict__)


class AudioClip(Record):
    """One clip attached to a request: 16-bit PCM WAV bytes (never stored in the key or the call log) and their hash."""

    sha256: str = Field(description="sha256 of the WAV bytes: what the request key holds.")
    seconds: float = Field(description="Duration of the clip.")
    sample_rate: int = 16_000
    wav: bytes = Field(default=b"", exclude=True, repr=False, description="The WAV file; left out of dumps.")


class ModelRequest(Record):
    """A text-LLM request; its key (backend, messages, params, nonce) decides whether the store can answer it."""

    backend: str = Field(description="Backend spec, e.g. 'openai/gpt-4o-mini' or 'hf//models/qwen'.")
    messages: tuple[ChatMessage, ...]
    params: dict = Field(
        default_factory=dict,
        description="Decoding parameters sent with the request (temperature, max_tokens, seed, ...).",
    )
    nonce: int = Field(
        default=0, description="Protocol-level retry number; a retry after a rejected output is a new request."
    )
    tag: str | None = Field(
        default=None,
        description="What the call is for (e.g. 'generate:<variant id>'); kept for audit, not part of the key.",
    )
    audio: tuple[AudioClip, ...] = Field(default=(), description="Clips attached to the last user turn (audio models).")

    def key(self) -> str:
        """sha256 of everything that can change the reply; the tag is left out on purpose."""
        content = {
            "backend": self.backend,
            "messages": [m.as_dict() for m in self.messages],
            "params": self.params,
            "nonce": self.nonce,
        }
        if self.audio:  # text-only keys stay what they were before audio existed
            content["audio"] = [a.sha256 for a in self.audio]
        return json_sha256(content)


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
    status: ResponseStatus = Field(
        description="ok; unparsable (the body was no chat completion); refusal; error (no answer after all retries)."
    )
    text: str | None = Field(default=None, description="Message content (or refusal text, or the unreadable body).")
    error: str | None = Field(default=None, description="Why the status is not ok.")
    finish_reason: str | None = None
    usage: Usage | None = None
    latency_s: float | None = Field(
        default=None, description="Wall time of the answering call (None when served from the store)."
    )
    attempts: int = Field(default=0, description="Transport attempts made (0 when served from the store).")
    cached: bool = Field(default=False, description="Served from the store without a call.")
    cost_usd: float | None = Field(default=None, description="From the backend's cost table, if configured.")
    audio_sent_s: float | None = Field(
        default=None, description="Seconds of audio attached to the request (None: none)."
    )
    audio_heard_s: float | None = Field(default=None, description="Seconds the model could hear of it (None: unknown).")
    audio_delivered: bool | None = Field(
        default=None, description="Audio reached the model (see AudioDelivery.delivered)."
    )


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
    judge: str = Field(description="Judge backend spec.")
    status: Literal["ok", "unscored"]
    scores: dict[str, int] = Field(default_factory=dict, description="Dimension abbreviation -> 1..5.")
    verdict: str | None = Field(default=None, description="For verdict-style judges; None for scoring judges.")
    raw_text: str | None = Field(default=None, description="The judge's last reply, kept verbatim.")
    unscored_reason: str | None = None
    attempts: int = Field(default=1, description="Calls made, counting parse retries.")
    call_keys: tuple[str, ...] = ()


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


# -- MISHAP-Bench (seed 001): clips, questions, rubrics, answers, groundedness verdicts -------------

MishapDomain = Literal["music", "sound", "speech"]
MISHAP_DOMAINS: tuple[MishapDomain, ...] = ("music", "sound", "speech")
MishapCategory = Literal["context", "knowledge"]
MISHAP_CATEGORIES: tuple[MishapCategory, ...] = ("context", "knowledge")
MishapStrategy = Literal[
    "contradicted_premise",
    "absent_premise",
    "false_negation",
    "niche_specifics",
    "unknowable_provenance",
    "false_authority",
    "false_premise",
]
# seed 001, section 3.2: three context and four knowledge strategies
MISHAP_STRATEGIES: dict[MishapCategory, tuple[MishapStrategy, ...]] = {
    "context": ("contradicted_premise", "absent_premise", "false_negation"),
    "knowledge": ("niche_specifics", "unknowable_provenance", "false_authority", "false_premise"),
}
Stance = Literal["abstains", "asserts", "endorses_false_premise"]
STANCES: tuple[Stance, ...] = ("abstains", "asserts", "endorses_false_premise")
Groundedness = Literal["grounded", "hallucinated"]


class MishapClip(Record):
    """An audio clip with its source-provided description (seed 001, section 3.1)."""

    id: str = Field(description="Unique clip id within the manifest.")
    domain: MishapDomain
    source: str = Field(description="Source dataset, e.g. 'clotho', 'librispeech'.")
    audio: str = Field(description="WAV path, absolute or relative to the manifest's folder.")
    description: str = Field(description="Caption, transcript or metadata: the audio-derived evidence.")
    description_kind: Literal["caption", "transcript", "metadata"] = "caption"
    duration_s: float | None = Field(default=None, description="Clip length, read from the file at import.")
    sha256: str | None = Field(default=None, description="sha256 of the audio file at import.")
    source_id: str | None = Field(default=None, description="The clip's id in its source dataset (importers keep it).")
    license: str | None = Field(default=None, description="The clip's licence as the source states it.")
    split: str | None = Field(default=None, description="The source dataset's split (e.g. development, dev-clean).")


class Informativeness(Record):
    """The App. A.1 filter's reading of one description: informative, not, or unscored with the raw text."""

    clip_id: str
    status: Literal["ok", "unscored"]
    informative: bool | None = None
    reason: str | None = None
    raw_text: str | None = None
    call_keys: tuple[str, ...] = ()


class MishapQuestion(Record):
    """An adversarial open-ended question for one clip (seed 001, section 3.2)."""

    id: str = Field(description="'<clip>~<category>~<n>'.")
    clip_id: str
    domain: MishapDomain
    category: MishapCategory
    strategy: MishapStrategy
    text: str
    invented_source: str | None = Field(default=None, description="False authority only: the invented source name.")
    generator: str = Field(description="Backend spec that wrote the question.")
    attempts: int = Field(default=1, description="Generations made, counting regenerations after failed checks.")
    checks: dict[str, bool] = Field(default_factory=dict, description="adherence, name_collision_free, ...")
    rejected: tuple[str, ...] = Field(default=(), description="Why earlier generations were rejected.")


class MishapRubric(Record):
    """'Hallucinated if ... Grounded if ...' for one question; every edit is a new version (seed 001, 3.3)."""

    question_id: str
    version: int = Field(ge=1)
    text: str
    author: str = Field(description="'llm:<spec>' for generated rubrics, the editor's name for edits.")
    note: str | None = None


class MishapAnswer(Record):
    """One audio-LM response to one question (raw text always kept)."""

    id: str = Field(description="'<question>~<model>~s<seed>'.")
    question_id: str
    model: str
    seed: int | None = Field(default=None, description="Sampling seed; None for greedy decoding.")
    status: ResponseStatus | Literal["skipped"]
    text: str | None = None
    error: str | None = None
    call_key: str | None = None
    audio: AudioDelivery | None = None

    @property
    def judgeable(self) -> bool:
        """Answers with text are judged (a refusal is a response too); skipped and empty ones are reported apart."""
        return self.status in ("ok", "refusal") and bool((self.text or "").strip())


class EvidenceSearch(Record):
    """One evidence-tool call the judge made: its query and the documents returned."""

    query: str
    results: tuple[str, ...] = Field(default=(), description="Document ids in rank order.")


class GroundednessJudgement(Record):
    """The groundedness judge's verdict on one answer, with the raw text, or why it is unscored."""

    answer_id: str
    judge: str
    status: Literal["ok", "unscored"]
    verdict: Groundedness | None = None
    stance: Stance | None = Field(default=None, description="abstains, asserts an answer, endorses a false premise.")
    raw_text: str | None = None
    unscored_reason: str | None = None
    searches: tuple[EvidenceSearch, ...] = ()
    call_keys: tuple[str, ...] = ()
    answer_sha256: str | None = Field(default=None, description="Digest of the response text read (None: older).")
    prompt: str | None = Field(default=None, description="The judge prompt's version and the digest of its files.")


class MishapAnnotation(Record):
    """One human label (append-only: a relabel is a new row; the latest row per annotator counts)."""

    answer_id: str
    annotator: str
    label: Groundedness
    note: str = ""
    mode: Literal["independent", "side_by_side"] = "independent"
    created: float = Field(description="Unix time the label was stored.")
    answer_sha256: str | None = Field(default=None, description="Digest of the response text labelled (None: older).")


ValidityBenchmark = Literal["halluaudio", "aha", "kuan"]


class ValidityItem(Record):
    """One closed-form response prepared for the groundedness judge, with its benchmark's own verdict."""

    id: str = Field(description="'validity~<benchmark>~<model>~<item id>'.")
    benchmark: ValidityBenchmark
    model: str
    item_id: str = Field(description="The item's id in its benchmark file(s).")
    domain: MishapDomain
    question: str
    response: str
    reference: str = Field(description="The gold answer as the file gives it.")
    kind: str = Field(description="How the benchmark scores it: binary, count, choice, label, unanswerable, asr.")
    description: str = Field(description="The judge's evidence: the gold answer stated as a fact about the clip.")
    rubric: str = Field(description="'Hallucinated if ... Grounded if ...' derived from the gold answer.")
    original: Groundedness | None = Field(
        description="The benchmark scorer's verdict as a hallucination label "
        "(wrong = hallucinated); None where the official scorer skips the item."
    )
    original_rule: str = Field(description="Which official rule decided it.")
    audio: str | None = Field(default=None, description="The audio path or key the file gives.")
