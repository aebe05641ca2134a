"""Train/dev/test splits by source article, so no article's variants leak across splits."""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Iterable

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
