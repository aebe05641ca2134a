"""Typed records of the closed-form benchmarks: one loaded item per prediction row, and load problems."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Generic, Literal, TypeVar

from pydantic import Field

from halluscope.core.errors import InputError
from halluscope.core.records import Record

Domain = Literal["speech", "sound", "music"]
DOMAINS: tuple[Domain, ...] = ("speech", "sound", "music")
# binary: yes/no reference; count: a number; choice: first/second clip; label: a class name;
# unanswerable: invalid audio (noise, no speaker) where abstaining or stating absence is the right answer
Kind = Literal["binary", "count", "choice", "label", "unanswerable"]
KINDS: tuple[Kind, ...] = ("binary", "count", "choice", "label", "unanswerable")
Sampling = Literal["random", "popular", "adversarial"]
SAMPLINGS: tuple[Sampling, ...] = ("random", "popular", "adversarial")


class LoadProblem(Record):
    """One bad input row or field; the row is left out of scoring and the problem is reported."""

    file: str = Field(description="File the problem is in.")
    row: int | None = Field(
        default=None,
        description="1-based line in the file (the header is line 1; CSV/TSV: the line a record starts on).",
    )
    field: str | None = Field(default=None, description="Field or column at fault.")
    message: str = Field(description="What was expected and what was found.")
    fix: str | None = Field(default=None, description="How to fix it.")

    def text(self) -> str:
        return str(InputError(self.message, file=self.file, row=self.row, field=self.field, fix=self.fix))


class HalluAudioItem(Record):
    """One HalluAudio prompt with the model's reply (published JSONL: audio, prompt, reference, subset, pred)."""

    id: str = Field(description="The row's 'id' if it has one, else '<file>:<line>'.")
    file: str = Field(description="Source file.")
    row: int = Field(description="1-based line in the source file.")
    audio: str = Field(description="Audio path as given.")
    prompt: str = Field(description="The question asked.")
    reference: str = Field(description="Ground truth as text ('none' for invalid-audio prompts without one).")
    subset: str = Field(description="HalluAudio subset name.")
    domain: Domain = Field(description="speech, sound or music.")
    kind: Kind = Field(description="How the reply is scored.")
    kind_source: Literal["known subset", "row field", "inferred from reference"] = Field(
        description="Where the kind came from; 'inferred' is reported in the notes."
    )
    pred: str = Field(description="The model's raw reply.")


class AhaItem(Record):
    """One AHa-Bench question in one run (published JSONL: index, type, question, answer, prediction[, prediction_match])."""

    run: str = Field(description="Run name: the file's stem.")
    file: str
    row: int
    index: str = Field(description="'<type id>_<audio id>_<question no>'.")
    type: str = Field(description="AHa-Bench question type, e.g. 'existence', 'homophone_en-en', 'asr_en'.")
    task: str = Field(description="Task group: type.split('_')[0], as the official scorer groups.")
    audio_key: str = Field(description="'<type id>_<audio id>': the questions of one audio, for consistency.")
    question: str
    answer: str = Field(description="Gold answer: Yes/No (or 是/否), a transcript for ASR types.")
    prediction: str = Field(description="The model's raw reply.")
    prediction_match: str | None = Field(
        default=None, description="A judge's Yes/No/Unknown reading of the reply, if present."
    )


class YesNoItem(Record):
    """One object-hallucination question (Kuan et al. 2024 style) joined with the model's response. Entry ids are
    unique only within a sampling strategy: an item is (sampling, entry_id)."""

    entry_id: str
    audio_index: str
    prompt_text: str
    object: str = Field(description="The sound object asked about.")
    attribute: str | None = Field(
        default=None, description="Kuan et al.: 'positive' (the object is in the clip) or 'negative'."
    )
    label: Literal["yes", "no"]
    sampling: Sampling = Field(description="How the negative object was sampled.")
    response: str = Field(description="The model's raw reply.")
    question_row: int = Field(description="Line of the question in the questions file.")
    prediction_row: int = Field(description="Line of the reply in the predictions file.")

    @property
    def key(self) -> str:
        """'<sampling>:<entry_id>', unique across the strategies of a merged file (core/keys.py ``YesNoItemKey``)."""
        from halluscope.core.keys import YesNoItemKey

        return YesNoItemKey(self.sampling, self.entry_id).encode()


T = TypeVar("T")


@dataclass(frozen=True)
class Loaded(Generic[T]):
    """Items that passed validation, every problem found, and notes on choices the loader made."""

    items: tuple[T, ...]
    problems: tuple[LoadProblem, ...] = ()
    notes: tuple[str, ...] = ()
    files: tuple[str, ...] = ()
