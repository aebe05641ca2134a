"""MISHAP-Bench's records (seed 001): clips, questions, rubrics, answers, groundedness verdicts, human labels, and the
validity study's closed-form items."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from halluscope.core.call_records import AudioDelivery, ResponseStatus
from halluscope.core.record_base import Record
from halluscope.core.spec import ModelSpec, SpecText

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
    model: SpecText = Field(description="The model's spec as given (a ModelSpec is stored as its text).")
    seed: int | None = Field(default=None, description="Sampling seed; None for greedy decoding.")
    status: ResponseStatus | Literal["skipped"]
    text: str | None = None
    error: str | None = None
    call_key: str | None = None
    audio: AudioDelivery | None = None

    @property
    def spec(self) -> ModelSpec:
        """The model that answered, parsed."""
        return ModelSpec.parse(self.model)

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
    judge: SpecText
    status: Literal["ok", "unscored"]
    verdict: Groundedness | None = None
    stance: Stance | None = Field(default=None, description="abstains, asserts an answer, endorses a false premise.")
    raw_text: str | None = None
    unscored_reason: str | None = None
    searches: tuple[EvidenceSearch, ...] = ()
    call_keys: tuple[str, ...] = ()
    answer_sha256: str | None = Field(default=None, description="Digest of the response text read (None: older).")
    prompt: str | None = Field(default=None, description="The judge prompt's version and the digest of its files.")

    @property
    def spec(self) -> ModelSpec:
        """The judge, parsed."""
        return ModelSpec.parse(self.judge)


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
