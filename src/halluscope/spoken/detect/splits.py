"""Train/dev/test splits by source article, so no article's variants leak across splits."""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Iterable

from halluscope.core.errors import HalluscopeError
from halluscope.core.hashing import derived_seed
from halluscope.core.records import Variant

Split = str  # "train" | "dev" | "test"


def split_by_article(
    samples: Iterable[Variant], *, seed: int, fractions: tuple[float, float, float] = (0.6, 0.2, 0.2)
) -> dict[str, Split]:
    """article id -> split, per language, seeded; every split gets at least one article when there are three."""
    by_lang: dict[str, set[str]] = defaultdict(set)
    for v in samples:
        by_lang[v.language].add(v.article_id)
    out: dict[str, Split] = {}
    for lang, ids in sorted(by_lang.items()):
        order = sorted(ids)
        random.Random(derived_seed(seed, "split", lang)).shuffle(order)
        n = len(order)
        n_test = max(1, round(fractions[2] * n)) if n >= 3 else 0
        n_dev = max(1, round(fractions[1] * n)) if n >= 3 else 0
        for i, aid in enumerate(order):
            out[aid] = "test" if i < n_test else "dev" if i < n_test + n_dev else "train"
    return out


SPLITS = ("train", "dev", "test")


def split_counts(items: Iterable[Variant], splits: dict[str, Split]) -> dict[str, dict[str, int]]:
    """language -> split -> number of items (every split present, zero when empty)."""
    out: dict[str, dict[str, int]] = defaultdict(lambda: dict.fromkeys(SPLITS, 0))
    for v in items:
        out[v.language][splits[v.article_id]] += 1
    return dict(out)


def guard_splits(items: Iterable[Variant], splits: dict[str, Split], *, where: str, change: str, fix: str) -> None:
    """Re-check each language's train/dev/test after a split change (seed 000, 3.2 and App. B: the real-world
    negatives move to test; subsets): a trained detector needs items in all three splits (one class in train is
    the detector's to handle: TF-IDF predicts it). An empty split stops with one line naming the language, the
    change that emptied it and the fix (exit 2), before any detector sees an empty array."""
    items = list(items)
    counts = split_counts(items, splits)
    for lang in sorted(counts):
        c = counts[lang]
        shown = ", ".join(f"{s} {c[s]}" for s in SPLITS)
        empty = [s for s in SPLITS if c[s] == 0]
        if empty:
            raise HalluscopeError(
                f"{where}: language '{lang}' has no {' and no '.join(empty)} items after {change} "
                f"(items per split: {shown}). Fix: {fix}"
            )
