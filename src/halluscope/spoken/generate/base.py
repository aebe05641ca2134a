"""The generator interface and the balanced type x severity plan (seed 000, section 3.1 and Table 1)."""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from halluscope.core.errors import HalluscopeError
from halluscope.core.hashing import derived_seed
from halluscope.core.records import SEVERITIES, TYPES, Article, HallucinationType, Severity, Variant
from halluscope.core.registry import Registry


class Generator(Protocol):
    """Turns a source article into one hallucinated rewrite of a given type and severity."""

    spec: str

    def config(self) -> dict:
        """Everything that changes the output (part of the stage fingerprint)."""
        ...

    def rewrite(self, article: Article, *, type: HallucinationType, severity: Severity, seed: int) -> Variant:
        """Raise ItemError when no acceptable rewrite can be made; never return the source unchanged."""
        ...


GENERATORS: Registry[Generator] = Registry("generator", "halluscope.generators")


@dataclass(frozen=True)
class Assignment:
    article: Article
    type: HallucinationType
    severity: Severity

    @property
    def variant_id(self) -> str:
        return variant_id(self.article.id, self.type, self.severity)


def variant_id(article_id: str, type: str, severity: str) -> str:
    return f"{article_id}~{type}~{severity}"


def plan_rewrites(
    articles: Sequence[Article],
    *,
    per_article: int,
    seed: int,
    types: Sequence[HallucinationType] = TYPES,
    severities: Sequence[Severity] = SEVERITIES,
) -> list[Assignment]:
    """Give each article ``per_article`` distinct type x severity cells, balanced within each language.

    Cells are cycled in a seeded order, so every cell gets the same count up to one per language.
    """
    cells = [(t, s) for t in types for s in severities]
    if not cells:
        raise HalluscopeError("no type x severity cells: pass at least one type and one severity")
    if not 0 <= per_article <= len(cells):
        raise HalluscopeError(
            f"--rewrites-per-article must be between 0 and {len(cells)} (the number of type x severity cells), got {per_article}"
        )
    by_lang: dict[str, list[Article]] = defaultdict(list)
    for a in articles:
        by_lang[a.language].append(a)
    plan: list[Assignment] = []
    for lang in sorted(by_lang):
        rng = random.Random(derived_seed(seed, "plan", lang))
        order = cells[:]
        rng.shuffle(order)
        group = sorted(by_lang[lang], key=lambda a: a.id)
        rng.shuffle(group)
        for i, article in enumerate(group):
            for j in range(per_article):
                t, s = order[(i * per_article + j) % len(order)]
                plan.append(Assignment(article, t, s))
    return plan
