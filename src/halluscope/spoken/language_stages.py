"""The speech stages of a build, one per language: ``tts@en``, ``asr@ru``, ``asr@kk[whisper/small]``.

seed 000, 3.3 chooses TTS and ASR per language; each language's stage key holds only that language's engine,
voices and options, so changing one language's engine (``--tts ru=festival/...``) recomputes that language and
reuses the others. Items are keyed by content within a stage: a clip is reused while it spoke the item's text now,
a transcript while it heard the item's clip now, so an edited article or a new generator re-renders only the
items whose text changed. A manifest also holds each kind's aggregate (``tts``, ``asr``, ``asr[spec]``):
the fingerprint over its languages' stages, which downstream stages (detect, realworld, listening sets) name as
their upstream. Runs built before the stages were split hold the whole stage only (``tts``, with every item under
it); ``parts`` reads either shape.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from halluscope.backends.speech.audio import SAMPLE_RATE
from halluscope.core.keys import StageName
from halluscope.core.records import LANGUAGES, Record
from halluscope.core.stages import Stage, StageSummary
from halluscope.core.store import Store

R = TypeVar("R", bound=Record)


@dataclass(frozen=True)
class LanguageStages:
    """One stage per language under one name, and ``whole``: the stage over every language as it was keyed before
    the split (its config holds every language's engine). Its fingerprint is the aggregate the manifest keeps as
    ``name`` and downstream stages name as their upstream, so their keys did not change with the split."""

    name: StageName
    stages: Mapping[str, Stage]  # language -> its stage
    whole: Stage

    @property
    def fingerprint(self) -> str:
        return self.whole.fingerprint

    def manifest(self) -> dict[str, str]:
        """The manifest's entries: each language's stage, then the aggregate."""
        return {**{s.name: s.fingerprint for _, s in sorted(self.stages.items())}, str(self.name): self.fingerprint}

    def adopt(self, store: Store, cls: type[Record], language_of: Mapping[str, str]) -> int:
        """Copy the items a run stored under the whole stage before the split (same config: the same fingerprint)
        into their language's stage, so that run resumes with no new work; returns how many were copied."""
        old = store.results(self.whole.name, self.whole.fingerprint, cls)
        copied = 0
        for lang, stage in self.stages.items():
            done = store.done_ids(stage.name, stage.fingerprint) if old else set()
            for k, record in old.items():
                if language_of.get(k) == lang and k not in done:
                    store.put(stage.name, stage.fingerprint, k, record)
                    copied += 1
        return copied


def _order(language: str) -> tuple[int, str]:
    """The paper's language order (en, ru, kk), then any other language by code."""
    return (LANGUAGES.index(language) if language in LANGUAGES else len(LANGUAGES), language)


def tts_config(tts: Any, voices: Mapping[str, list[str]], seed: int) -> dict:
    """The TTS config over every language of ``voices`` (the whole stage's key): each language's engine, voice,
    engine version and input-cleaning rule (``config()`` of the engine)."""
    return {
        "tts": tts.spec,
        "engines": {lang: c for lang, c in tts.config().items() if lang in voices},
        "voices": dict(voices),
        "seed": seed,
        "sample_rate": SAMPLE_RATE,
    }


def asr_config(asr: Any) -> dict:
    """The ASR config over every language (the whole stage's key)."""
    return {"asr": asr.spec, "options": asr.options()}


def tts_stages(
    tts: Any, voices: Mapping[str, list[str]], seed: int, upstream: Iterable[str], *, kind: str = "tts"
) -> LanguageStages:
    """One TTS stage per language of ``voices``: its engine (spec, version, input-cleaning rule), voices, seed. Not
    its upstream: each clip is reused while the text it spoke is the item's text now (``AudioRef.text_sha256``,
    checked by the build), so a new generator or corpus re-renders the items whose text changed, no others.
    ``upstream`` keys the whole stage (the aggregate downstream stages name)."""
    engines = tts.config()
    name = StageName(kind)
    return LanguageStages(
        name,
        {
            lang: Stage(
                str(name.of(lang)),
                {
                    "tts": tts.spec_for(lang),
                    "engine": engines.get(lang, {}),
                    "voices": list(voices[lang]),
                    "seed": seed,
                    "sample_rate": SAMPLE_RATE,
                },
            )
            for lang in sorted(voices, key=_order)
        },
        Stage(str(name), tts_config(tts, voices, seed), tuple(upstream)),
    )


def asr_stages(asr: Any, tts: LanguageStages, *, kind: str = "asr", system: str | None = None) -> LanguageStages:
    """One ASR stage per language of ``tts``, each downstream of that language's TTS stage only (each transcript is
    reused while its clip is the item's clip now, ``Transcript.audio_sha256``, checked by the build); ``system``: a
    compared ASR system's spec (``asr@en[spec]``)."""
    options = asr.options()
    name = StageName(kind, subject=system)
    return LanguageStages(
        name,
        {
            lang: Stage(
                str(name.of(lang)),
                {"asr": asr.spec_for(lang), "options": options.get(lang, {})},
                (stage.fingerprint,),
            )
            for lang, stage in tts.stages.items()
        },
        Stage(str(name), asr_config(asr), (tts.fingerprint,)),
    )


def parts(stages: Mapping[str, str], name: str | StageName) -> dict[str, str]:
    """Stage name -> fingerprint of the stored stages that make up ``name`` in a manifest's ``stages``: its
    languages' stages, or (a run built before they were split) the whole stage; {} when the run has none."""
    return (name if isinstance(name, StageName) else StageName.decode(name)).parts(stages)


def part_for(stages: Mapping[str, str], name: str | StageName, language: str) -> tuple[str, str] | None:
    """The (stage name, fingerprint) holding ``language``'s items of ``name`` (the whole stage in an older run)."""
    whole = name if isinstance(name, StageName) else StageName.decode(name)
    own = str(whole.of(language))
    if own in stages:
        return own, stages[own]
    split = any(k != str(whole) for k in parts(stages, whole))
    return (str(whole), stages[str(whole)]) if str(whole) in stages and not split else None


def results(store: Store, stages: Mapping[str, str], name: str | StageName, cls: type[R]) -> dict[str, R]:
    """Every item of ``name`` over its parts (``parts``)."""
    out: dict[str, R] = {}
    for stage, fp in parts(stages, name).items():
        out.update(store.results(stage, fp, cls))
    return out


def merged(summaries: Mapping[str, StageSummary[R]]) -> dict[str, R]:
    """The results of one kind's per-language stage runs as one item -> result map."""
    out: dict[str, R] = {}
    for s in summaries.values():
        out.update(s.results)
    return out


def attempts(store: Store, stages: Mapping[str, str], name: str | StageName) -> dict[str, int]:
    """Item -> how many times it was run, over the parts of ``name``."""
    out: dict[str, int] = {}
    for stage, fp in parts(stages, name).items():
        out.update(store.attempts(stage, fp))
    return out


def failures(store: Store, stages: Mapping[str, str], name: str | StageName) -> dict[str, str]:
    """Item -> why it failed, over the parts of ``name``."""
    out: dict[str, str] = {}
    for stage, fp in parts(stages, name).items():
        out.update(store.failures(stage, fp))
    return out
