"""'corpus dedup': near-duplicate removal by MinHash LSH (datasketch), per language (seed 000, 3.1-3.2: duplicate
texts removed before building). The first article by id is kept; every removed pair is listed with its estimated
and exact Jaccard similarity over word shingles, and the threshold, shingle size and permutations are recorded."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from halluscope.core.errors import HalluscopeError, MissingExtraError


def _datasketch() -> Any:
    try:
        import datasketch
    except ImportError:
        raise MissingExtraError("datasketch", "collect") from None
    return datasketch


def shingles(text: str, k: int) -> set[str]:
    words = re.findall(r"\w+", text.lower())
    if len(words) < k:
        return {" ".join(words)} if words else set()
    return {" ".join(words[i : i + k]) for i in range(len(words) - k + 1)}


def dedup(
    rows: Sequence[dict], *, threshold: float = 0.8, shingle: int = 3, num_perm: int = 128, seed: int = 1
) -> tuple[list[dict], dict]:
    """Kept rows (input order) and the report: settings, counts and the removed pairs."""
    if not 0.0 < threshold <= 1.0:
        raise HalluscopeError(f"--threshold expects a Jaccard similarity in (0, 1], got {threshold}")
    ds = _datasketch()
    removed: dict[str, dict] = {}
    for lang in sorted({r["language"] for r in rows}):
        group = sorted((r for r in rows if r["language"] == lang), key=lambda r: r["id"])
        lsh = ds.MinHashLSH(threshold=threshold, num_perm=num_perm)
        sets: dict[str, set[str]] = {}
        hashes: dict[str, Any] = {}
        for r in group:
            sh = shingles(r["text"], shingle)
            m = ds.MinHash(num_perm=num_perm, seed=seed)
            m.update_batch([s.encode("utf-8") for s in sorted(sh)])
            candidates = sorted(lsh.query(m))
            best = None
            for c in candidates:  # confirm on the exact Jaccard: the LSH only proposes
                union = sh | sets[c]
                exact = len(sh & sets[c]) / len(union) if union else 1.0
                if exact >= threshold and (best is None or exact > best[1]):
                    best = (c, exact)
            if best is not None:
                removed[r["id"]] = {
                    "language": lang,
                    "kept": best[0],
                    "removed": r["id"],
                    "jaccard_estimate": round(float(m.jaccard(hashes[best[0]])), 4),
                    "jaccard_exact": round(best[1], 4),
                }
                continue
            lsh.insert(r["id"], m)
            sets[r["id"]], hashes[r["id"]] = sh, m
    kept = [r for r in rows if r["id"] not in removed]
    report = {
        "method": "MinHash LSH (datasketch), exact Jaccard confirmation",
        "datasketch": ds.__version__,
        "threshold": threshold,
        "shingle_words": shingle,
        "num_perm": num_perm,
        "seed": seed,
        "input": len(rows),
        "kept": len(kept),
        "removed": len(removed),
        "pairs": sorted(removed.values(), key=lambda p: (p["language"], p["removed"])),
    }
    return kept, report
