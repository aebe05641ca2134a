"""Typed keys: the identity strings the store and the pages hold, each a frozen type with one encoder and one decoder.

The stored strings are the ones written before these types existed (byte for byte), so every stored run reads:

- ``StageName``: a store stage. ``tts``, ``asr``; a subject after ``[...]`` for the kinds in ``BRACKETED``
  (a compared ASR system, ``asr[whisper/small]``) or after ``:`` for the others (``judge:openai/gpt-4o``,
  ``answers:hf/x``); a language after ``@`` for a per-language stage (``tts@ru``, ``asr@kk[whisper/small]``).
- ``AnswerKey``: a MISHAP answer, ``<question id>~<model spec>~greedy`` or ``...~s<seed>``.
- ``DetectRunKey``: a detector run on a page, ``<detector>|<task>|<input>`` (the closed-form scorer's ``<format>|
  strict``: no input).
- ``YesNoItemKey``: a Kuan et al. question, ``<sampling>:<entry_id>`` (entry ids repeat across strategies).
- ``ClosedFormItemKey``: a closed-form run's item, ``<sampling>/<entry_id>`` (a file without strategies: the entry
  id alone).
- ``AudioKey``: a clip the viewer serves, ``<kind>:<item id>`` (``spoken:...``, ``clip:...``).

Free text (a model spec, a question id, an entry id) may hold the separators: each key puts such text where the
decoder finds it (the last or first part), and a part that must be decoded from both sides and holds its separator
is written escaped, behind a leading ``%`` (``%`` + the text with ``%`` and the separator percent-encoded). No key
written before these types had such a part, except ones that could not be read back unambiguously at all.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from halluscope.core.errors import HalluscopeError

if TYPE_CHECKING:
    from halluscope.core.spec import ModelSpec

ESCAPE = "%"
_LANGUAGE = re.compile(r"[a-z]{2,3}")
_SEED = re.compile(r"s(-?[0-9]+)")
STAGE_MARKS = "[:@"  # a stage kind holds none of them; the first one after the kind says what follows
BRACKETED = frozenset({"asr"})  # kinds whose subject is written 'kind[subject]' (the rest: 'kind:subject')


def escape(text: str, sep: str) -> str:
    """``text`` as it is, unless it holds ``sep`` or starts with ``%``: then ``%`` and the text with ``%`` and
    ``sep`` percent-encoded (the decoder sees the leading ``%``)."""
    if sep not in text and not text.startswith(ESCAPE):
        return text
    return ESCAPE + "".join(f"%{ord(c):02X}" if c in (ESCAPE, sep) else c for c in text)


def unescape(text: str, sep: str) -> str:
    if not text.startswith(ESCAPE):
        return text
    return re.sub(r"%([0-9A-F]{2})", lambda m: chr(int(m.group(1), 16)), text[1:])


def _refuse(what: str, got: str, expected: str) -> HalluscopeError:
    return HalluscopeError(f"{what} {got!r}: expected {expected}")


@dataclass(frozen=True)
class StageName:
    """A store stage: ``kind[@language][[subject]|:subject]``."""

    kind: str
    language: str | None = None
    subject: str | None = None

    def __post_init__(self) -> None:
        if not self.kind or any(c in self.kind for c in STAGE_MARKS):
            raise _refuse("stage kind", self.kind, f"a non-empty name without any of {STAGE_MARKS!r}")
        if self.language is not None and not _LANGUAGE.fullmatch(self.language):
            raise _refuse("stage language", self.language, "a language code such as en, ru or kk")

    def encode(self) -> str:
        out = self.kind + (f"@{self.language}" if self.language else "")
        if self.subject is None:
            return out
        return f"{out}[{self.subject}]" if self.kind in BRACKETED else f"{out}:{self.subject}"

    def __str__(self) -> str:
        return self.encode()

    @classmethod
    def decode(cls, name: str) -> StageName:
        at = next((i for i, c in enumerate(name) if c in STAGE_MARKS), len(name))
        kind, rest = name[:at], name[at:]
        language = None
        if rest.startswith("@"):
            end = next((i for i, c in enumerate(rest) if c in "[:"), len(rest))
            language, rest = rest[1:end], rest[end:]
        subject = None
        if rest:
            bracket = kind in BRACKETED
            if bracket and not (rest.startswith("[") and rest.endswith("]") and len(rest) >= 2):
                raise _refuse("stage name", name, f"'{kind}[<subject>]' (the subject in brackets)")
            if not bracket and not rest.startswith(":"):
                raise _refuse("stage name", name, f"'{kind}:<subject>'")
            subject = rest[1:-1] if bracket else rest[1:]
        return cls(kind, language, subject)

    @classmethod
    def parse(cls, name: str) -> StageName | None:
        """The decoded name, or None for a name this type does not read (a stage written by a plug-in)."""
        try:
            return cls.decode(name)
        except HalluscopeError:
            return None

    @property
    def whole(self) -> StageName:
        """The same stage over every language (its aggregate in a manifest)."""
        return StageName(self.kind, None, self.subject)

    def of(self, language: str) -> StageName:
        return StageName(self.kind, language, self.subject)

    def parts(self, stages: Mapping[str, str]) -> dict[str, str]:
        """Stage name -> fingerprint of the stored stages that make up this (whole) stage in a manifest's
        ``stages``: its languages' stages, or (a run built before they were split) the whole stage; {} if none."""
        whole = self.whole
        per = {
            k: fp
            for k, fp in stages.items()
            if (n := StageName.parse(k)) is not None and n.language is not None and n.whole == whole
        }
        if per:
            return per
        return {str(whole): stages[str(whole)]} if str(whole) in stages else {}


@dataclass(frozen=True)
class AnswerKey:
    """A MISHAP answer: the question, the model spec (its canonical string) and the decoding (None: greedy)."""

    question: str
    model: str
    seed: int | None = None

    SEP = "~"

    def encode(self) -> str:
        decoding = "greedy" if self.seed is None else f"s{self.seed}"
        return f"{self.question}{self.SEP}{escape(self.model, self.SEP)}{self.SEP}{decoding}"

    def __str__(self) -> str:
        return self.encode()

    @property
    def spec(self) -> ModelSpec:
        """The model as a ModelSpec (the key holds its canonical string)."""
        from halluscope.core.spec import ModelSpec

        return ModelSpec.parse(self.model)

    @classmethod
    def decode(cls, key: str) -> AnswerKey:
        head, sep, decoding = key.rpartition(cls.SEP)
        question, sep2, model = head.rpartition(cls.SEP)
        if not (sep and sep2 and question and model):
            raise _refuse("answer id", key, "'<question id>~<model>~greedy' or '...~s<seed>'")
        if decoding == "greedy":
            seed = None
        elif m := _SEED.fullmatch(decoding):
            seed = int(m.group(1))
        else:
            raise _refuse("answer id", key, f"'greedy' or 's<seed>' after the last '~', not {decoding!r}")
        return cls(question, unescape(model, cls.SEP), seed)


@dataclass(frozen=True)
class DetectRunKey:
    """A detector run on the report's links and the viewer's pages: detector, task and input (None: the closed-form
    scorer's '<format>|<mode>', which has no input)."""

    detector: str
    task: str
    input: str | None = None

    SEP = "|"

    def __post_init__(self) -> None:
        for what, value in (("task", self.task), ("input", self.input)):
            if value is not None and (not value or self.SEP in value):
                raise _refuse(f"detect run {what}", value, f"a name without {self.SEP!r}")

    def encode(self) -> str:
        parts = [escape(self.detector, self.SEP), self.task, *([self.input] if self.input is not None else [])]
        return self.SEP.join(parts)

    def __str__(self) -> str:
        return self.encode()

    @classmethod
    def decode(cls, key: str) -> DetectRunKey:
        parts = key.split(cls.SEP)
        if len(parts) not in (2, 3) or not parts[0]:
            raise _refuse("detect run key", key, "'<detector>|<task>|<input>' or '<format>|<mode>'")
        return cls(unescape(parts[0], cls.SEP), parts[1], parts[2] if len(parts) == 3 else None)


@dataclass(frozen=True)
class YesNoItemKey:
    """A Kuan et al. yes/no question: its sampling strategy and its entry id (unique within a strategy only)."""

    sampling: str
    entry_id: str

    SEP = ":"

    def __post_init__(self) -> None:
        if not self.sampling or self.SEP in self.sampling:
            raise _refuse("sampling", self.sampling, f"a strategy name without {self.SEP!r}")

    def encode(self) -> str:
        return f"{self.sampling}{self.SEP}{self.entry_id}"

    def __str__(self) -> str:
        return self.encode()

    @classmethod
    def decode(cls, key: str) -> YesNoItemKey:
        sampling, sep, entry = key.partition(cls.SEP)
        if not sep or not sampling:
            raise _refuse("yes/no item key", key, "'<sampling>:<entry_id>'")
        return cls(sampling, entry)


@dataclass(frozen=True)
class ClosedFormItemKey:
    """A closed-form run's item (closedform/run.py): the entry id, behind its sampling strategy where the file has
    strategies (Kuan et al.'s entry ids repeat across them)."""

    entry_id: str
    sampling: str | None = None

    SEP = "/"

    def __post_init__(self) -> None:
        if self.sampling is not None and (not self.sampling or self.SEP in self.sampling):
            raise _refuse("sampling", self.sampling, f"a strategy name without {self.SEP!r}")

    def encode(self) -> str:
        if self.sampling is None:
            return escape(self.entry_id, self.SEP)  # alone, an entry id holding '/' would read as a strategy
        return f"{self.sampling}{self.SEP}{self.entry_id}"

    def __str__(self) -> str:
        return self.encode()

    @classmethod
    def decode(cls, key: str) -> ClosedFormItemKey:
        if key.startswith(ESCAPE) and cls.SEP not in key:  # an escaped entry id never holds a bare '/'
            return cls(unescape(key, cls.SEP))
        sampling, sep, entry = key.partition(cls.SEP)
        if not sep:
            return cls(key)
        if not sampling:
            raise _refuse("closed-form item key", key, "'<sampling>/<entry_id>' or '<entry_id>'")
        return cls(entry, sampling)


@dataclass(frozen=True)
class AudioKey:
    """A clip the viewer serves and exports: the kind of item (``spoken``, ``clip``) and its id."""

    kind: str
    item: str

    SEP = ":"

    def __post_init__(self) -> None:
        if not self.kind or self.SEP in self.kind:
            raise _refuse("audio kind", self.kind, f"a name without {self.SEP!r}")

    def encode(self) -> str:
        return f"{self.kind}{self.SEP}{self.item}"

    def __str__(self) -> str:
        return self.encode()

    @classmethod
    def decode(cls, key: str) -> AudioKey:
        kind, sep, item = key.partition(cls.SEP)
        if not sep or not kind:
            raise _refuse("audio key", key, "'<kind>:<item id>'")
        return cls(kind, item)
