"""Per-language speech specs: 'en=espeak/en-us,ru=festival/msu_ru_nsh_clunits,kk=espeak/kk' (or one spec for every
language, or a named preset) and the TTS/ASR backends that route each item to its language's engine.

seed 000, 3.3: TTS and ASR are chosen per language (best of breed); the stage key records each language's engine,
voice, engine version and input-cleaning rule, so changing any of them re-renders that run.
"""

from __future__ import annotations

import copy
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from halluscope.core.errors import HalluscopeError
from halluscope.core.records import LANGUAGES

# The best offline choice per language measured on the quickstart corpus (docs/tutorials/spoken.md): RHVoice's
# pools through Whisper base beat espeak-ng for English and Russian, and Festival for Russian; espeak-ng stays for
# Kazakh (no Kazakh voice in RHVoice or Festival; RHVoice's Kyrgyz voices measured no better).
PRESETS: dict[str, dict[str, dict[str, str]]] = {
    "offline-best": {
        "tts": {"en": "rhvoice", "ru": "rhvoice", "kk": "espeak"},
        "asr": {"en": "whisper/base", "ru": "whisper/base", "kk": "whisper/base"},
    },
}
# Lost in Speech (000, 3.3) as printed: XTTS-v2 (en), Silero (ru), KazakhTTS2 via ESPnet (kk); Whisper-large-v3
# (en, ru, CTranslate2) and a Kazakh wav2vec2-large with punctuation restoration. The weights are the user's: put
# them under $HALLUSCOPE_MODELS (default ~/.cache/halluscope/models) with these names (docs/lost-in-speech.md).
_MODELS = os.path.expanduser(os.environ.get("HALLUSCOPE_MODELS", "~/.cache/halluscope/models")).rstrip("/")
PRESETS["paper"] = {
    "tts": {
        "en": f"xtts/{_MODELS}/xtts-v2",
        "ru": f"silero/{_MODELS}/silero/v4_ru.pt",
        "kk": f"espnet-tts/{_MODELS}/kazakhtts2",
    },
    "asr": {
        "en": f"whisper/{_MODELS}/whisper-large-v3-ct2",
        "ru": f"whisper/{_MODELS}/whisper-large-v3-ct2",
        "kk": f"hf-asr/{_MODELS}/wav2vec2-large-kk?punct=hf-punct/{_MODELS}/punct-kk",
    },
}
_PART = re.compile(r"^\s*([a-z]{2})\s*=\s*(.+?)\s*$")


def resolve(value: str, *, kind: str, langs: Sequence[str], option: str) -> dict[str, str]:
    """Language -> engine spec for ``langs``, from a preset name, 'lang=spec,...' or one spec for every language."""
    value = value.strip()
    if value in PRESETS:
        return {lang: PRESETS[value][kind][lang] for lang in langs}
    parts = [p for p in value.split(",") if p.strip()]
    matches = [_PART.match(p) for p in parts]
    if not parts:
        raise HalluscopeError(
            f"{option} is empty; expected a spec such as 'espeak', 'lang=spec,...' or a preset ({', '.join(PRESETS)})"
        )
    if not any(matches):
        if len(parts) > 1:
            raise HalluscopeError(
                f"{option} '{value}': several specs need a language each, e.g. "
                f"'en={parts[0].strip()},ru={parts[1].strip()}'"
            )
        return {lang: value for lang in langs}
    bad = [p.strip() for p, m in zip(parts, matches) if m is None or m.group(1) not in LANGUAGES]
    if bad:
        raise HalluscopeError(
            f"{option} '{value}': expected 'lang=spec' parts with lang in {', '.join(LANGUAGES)}; "
            f"got {', '.join(repr(b) for b in bad)}. Fix: e.g. {option} "
            f"en=espeak/en-us,ru=festival/msu_ru_nsh_clunits,kk=espeak/kk"
        )
    got: dict[str, str] = {}
    for m in matches:
        assert m is not None
        if m.group(1) in got:
            raise HalluscopeError(f"{option} '{value}' names language '{m.group(1)}' twice; expected it once")
        got[m.group(1)] = m.group(2)
    missing = [lang for lang in langs if lang not in got]
    if missing:
        what = "to judge" if kind == "judge" else "building"  # a judge rates the languages a run holds
        raise HalluscopeError(
            f"{option} '{value}' has no engine for {', '.join(missing)} ({what} "
            f"{', '.join(langs)}). Fix: add {', '.join(f'{m}=<spec>' for m in missing)}"
            + ("" if kind == "judge" else " or drop the language from --langs")
        )
    return {lang: got[lang] for lang in langs}


def canonical(specs: dict[str, str]) -> str:
    """One string for a language -> spec map: the spec itself when every language shares it."""
    if len(set(specs.values())) == 1:
        return next(iter(specs.values()))
    return ",".join(f"{lang}={specs[lang]}" for lang in LANGUAGES if lang in specs)


class EngineProblems(HalluscopeError):
    """Every speech engine of a command that cannot be made (an unknown option, missing weights or program), in
    one error raised before any work."""


def _engines(
    registry: Any, specs: dict[str, str], *, option: str = "", problems: list[str] | None = None
) -> dict[str, Any]:
    """One backend per distinct spec (a model shared by languages loads once). Making it checks its options and
    weights; with ``problems``, each engine that cannot be made adds a line there instead of raising."""
    made: dict[str, Any] = {}
    for spec in dict.fromkeys(specs.values()):
        try:
            made[spec] = registry.create(spec)
        except HalluscopeError as exc:
            if problems is None:
                raise
            langs = ",".join(lang for lang, s in specs.items() if s == spec)
            named = "" if spec in str(exc) else f" '{spec}'"
            problems.append(f"{option} ({langs}){named}: {exc}")
    return {lang: made[spec] for lang, spec in specs.items() if spec in made}


def make_speech(
    *, tts: str, asr: str, compare_asr: Sequence[str] = (), langs: Sequence[str]
) -> tuple[PerLanguageTts, PerLanguageAsr, list[PerLanguageAsr]]:
    """The TTS, the ASR and the compared ASR systems of a build, every engine of every language (each one a
    preset names, not only the first) made and checked before any work: one EngineProblems lists them all."""
    from halluscope.backends.speech.asr import ASR_BACKENDS
    from halluscope.backends.speech.tts import TTS_BACKENDS

    problems: list[str] = []
    wanted = [(tts, "tts", "--tts"), (asr, "asr", "--asr"), *((v, "asr", "--compare-asr") for v in compare_asr)]
    made: list[Any] = []
    for value, kind, option in wanted:
        try:
            specs = resolve(value, kind=kind, langs=langs, option=option)
        except HalluscopeError as exc:
            problems.append(str(exc))
            continue
        registry, cls = (TTS_BACKENDS, PerLanguageTts) if kind == "tts" else (ASR_BACKENDS, PerLanguageAsr)
        made.append(cls(_engines(registry, specs, option=option, problems=problems)))
    if len(problems) == 1:
        raise EngineProblems(problems[0])
    if problems:
        raise EngineProblems(
            f"{len(problems)} speech engines cannot be made (found before any work; nothing was run):\n  "
            + "\n  ".join(problems)
        )
    return made[0], made[1], made[2:]


def _backend_config(backend: Any) -> dict:
    if hasattr(backend, "config"):
        return backend.config()
    return {"spec": backend.spec, "options": getattr(backend, "options", dict)()}


@dataclass
class _PerLanguage:
    """One engine per language; the lookup, spec and pickling shared by the TTS and the ASR router."""

    backends: dict[str, Any]
    KIND: ClassVar[str] = ""  # 'TTS' or 'ASR', for messages and the option name

    def backend(self, language: str) -> Any:
        if language not in self.backends:
            raise HalluscopeError(
                f"the {self.KIND} spec '{self.spec}' has no engine for language '{language}'; "
                f"add {language}=<spec> to --{self.KIND.lower()}"
            )
        return self.backends[language]

    @property
    def spec(self) -> str:
        return canonical({lang: b.spec for lang, b in self.backends.items()})

    def spec_for(self, language: str) -> str:
        return self.backend(language).spec

    def __getstate__(self) -> dict:
        return {**self.__dict__, "backends": _unloaded(self.backends)}


@dataclass
class PerLanguageTts(_PerLanguage):
    """A TTS backend made of one engine per language."""

    KIND: ClassVar[str] = "TTS"

    @classmethod
    def create(cls, value: str, langs: Sequence[str]) -> PerLanguageTts:
        from halluscope.backends.speech.tts import TTS_BACKENDS

        return cls(_engines(TTS_BACKENDS, resolve(value, kind="tts", langs=langs, option="--tts")))

    def config(self) -> dict:
        return {lang: {"spec": b.spec, **_backend_config(b)} for lang, b in sorted(self.backends.items())}

    def voices(self, language: str) -> list[str]:
        return self.backend(language).voices(language)

    def synthesize(self, text: str, *, language: str, voice: str) -> np.ndarray:
        return self.backend(language).synthesize(text, language=language, voice=voice)


@dataclass
class PerLanguageAsr(_PerLanguage):
    """An ASR backend made of one engine per language."""

    KIND: ClassVar[str] = "ASR"

    @classmethod
    def create(cls, value: str, langs: Sequence[str], *, option: str = "--asr") -> PerLanguageAsr:
        from halluscope.backends.speech.asr import ASR_BACKENDS

        return cls(_engines(ASR_BACKENDS, resolve(value, kind="asr", langs=langs, option=option)))

    def options(self) -> dict:
        return {
            lang: {"asr": b.spec, "options": getattr(b, "options", dict)()} for lang, b in sorted(self.backends.items())
        }

    def set_threads(self, n: int) -> None:
        for b in self.backends.values():
            if hasattr(b, "threads"):
                b.threads = n

    def transcribe(self, samples: np.ndarray, *, language: str) -> str:
        return self.backend(language).transcribe(samples, language=language)


def _unloaded(backends: dict[str, Any]) -> dict[str, Any]:
    """Copies without loaded weights: a worker loads its own models, weights never travel (shared engines stay
    shared)."""
    copies: dict[int, Any] = {}
    for b in backends.values():
        if id(b) not in copies:
            c = copy.copy(b)
            for attr in ("_model", "_pipe", "_restorer", "_tok"):
                if getattr(c, attr, None) is not None:
                    setattr(c, attr, None)
            copies[id(b)] = c
    return {lang: copies[id(b)] for lang, b in backends.items()}
