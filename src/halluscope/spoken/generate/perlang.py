"""Per-language generators (seed 000, 3.1 and App. A: English rewritten by gpt-3.5-turbo/gpt-4, Russian and Kazakh
by gemini-2.0-flash-lite): '--generator en=openai/gpt-4,ru=openai/gemini-2.0-flash-lite,kk=...'.

Each language's rewrites go to its own generator; every Variant records the generator that wrote it
(``Variant.generator``), and the generate stage key holds every language's generator config, so changing one
language's model re-keys the stage. A single spec (no 'lang=' part) is the plain one-generator build, with the
same stage key as before.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from halluscope.core.errors import HalluscopeError
from halluscope.core.records import Article, HallucinationType, Severity, Variant
from halluscope.spoken.generate.base import GENERATORS, Assignment, Generator

_LANG_PART = re.compile(r"^\s*[a-z]{2}\s*=")


def is_per_language(value: str) -> bool:
    """'en=...,ru=...' (a spec per language) rather than one generator spec ('openai/m?temperature=0' is one)."""
    return bool(_LANG_PART.match(value))


def per_language_specs(value: str, langs: Sequence[str]) -> dict[str, str]:
    """language -> generator spec, every language of the build named once (the TTS/ASR '--tts' rules)."""
    from halluscope.backends.speech.route import resolve

    return resolve(value, kind="generator", langs=langs, option="--generator")


@dataclass
class PerLanguageGenerator:
    """One generator per language; an article goes to its language's generator."""

    generators: dict[str, Generator]

    @property
    def spec(self) -> str:
        from halluscope.backends.speech.route import canonical

        return canonical({lang: g.spec for lang, g in self.generators.items()})

    def config(self) -> dict:
        return {
            "generator": "per-language",
            "languages": {lang: g.config() for lang, g in sorted(self.generators.items())},
        }

    def _of(self, language: str) -> Generator:
        if language not in self.generators:
            raise HalluscopeError(
                f"--generator '{self.spec}' names no generator for language '{language}'; add {language}=<spec>"
            )
        return self.generators[language]

    def prepare(
        self, store: Any, stage: Any, assignments: Sequence[Assignment], *, seed: int, quiet: bool = False
    ) -> None:
        """LLM generators make their calls concurrently, each on its own language's assignments."""
        for lang, g in sorted(self.generators.items()):
            mine = [a for a in assignments if a.article.language == lang]
            if mine and hasattr(g, "prepare"):
                g.prepare(store, stage, mine, seed=seed, quiet=quiet)

    def rewrite(self, article: Article, *, type: HallucinationType, severity: Severity, seed: int) -> Variant:
        return self._of(article.language).rewrite(article, type=type, severity=severity, seed=seed)

    @property
    def stats(self) -> Any:
        """The LLM generators' calls added up (None when no generator made calls)."""
        made = [s for g in self.generators.values() if (s := getattr(g, "stats", None)) is not None]
        if not made:
            return None
        from halluscope.backends.llm import CallStats

        total = CallStats()
        for s in made:
            total.add(s)
        return total


def create_generator(value: str, langs: Sequence[str]) -> Generator:
    """The build's generator: one spec for every language, or 'lang=spec,...' with a generator per language
    (a spec shared by languages is made once)."""
    if not is_per_language(value):
        return GENERATORS.create(value)
    specs = per_language_specs(value, langs)
    made: dict[str, Generator] = {}
    for spec in dict.fromkeys(specs.values()):
        made[spec] = GENERATORS.create(spec)
    return PerLanguageGenerator({lang: made[spec] for lang, spec in specs.items()})
