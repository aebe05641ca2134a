"""Speech-quality annotation of synthesized clips (seed 000, section 3.4): listeners rate intelligibility and
faithfulness to the source text and may exclude a clip for audio quality. Append-only, per annotator (the latest
row per clip and annotator counts); the report gives per-language ratings, agreement and the share excluded, and
``drop_excluded`` writes the benchmark without excluded clips.
"""

from __future__ import annotations

import time
from collections import Counter, defaultdict
from itertools import combinations
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from halluscope.core.errors import HalluscopeError
from halluscope.core.store import Store, check_run_dir

# seed 000, 3.4: "mostly intelligible", "poorly intelligible", "fully unintelligible"; "minor"/"major" discrepancies
INTELLIGIBILITY = ("fully", "mostly", "poorly", "unintelligible")
FIDELITY = ("faithful", "minor", "major")
ANNOTATOR = r"^[\w .@-]{1,40}$"
MAX_NOTE = 2000


class QualityRequest(BaseModel):
    """The body of ``POST /api/quality``: strict JSON types, no unknown fields."""

    model_config = ConfigDict(extra="forbid", strict=True)

    save_id: str = Field(pattern=r"^[A-Za-z0-9_-]{8,64}$", description="Client-generated; a retry reuses it.")
    item_id: str = Field(min_length=1, max_length=1000)
    annotator: str = Field(pattern=ANNOTATOR, description="1-40 letters, digits, spaces, . @ _ -")
    intelligibility: Literal["fully", "mostly", "poorly", "unintelligible"]
    fidelity: Literal["faithful", "minor", "major"]
    excluded: bool = False
    note: str = Field(default="", max_length=MAX_NOTE)


class QualityLabels:
    """The append-only table in the run's store (the Store's rating methods; no run lock: the viewer runs beside
    other commands)."""

    def __init__(self, run_dir: str | Path, *, busy_s: float = 30.0) -> None:
        self._store = Store(check_run_dir(run_dir), create=False, lock=False, threads=True, busy_s=busy_s)
        try:
            self._store.ratings()  # the table exists (made on first use) and reads
        except HalluscopeError:
            self._store.close()
            raise

    def close(self) -> None:
        self._store.close()

    def save(self, req: QualityRequest) -> tuple[dict, bool]:
        """Store one rating; a ``save_id`` already stored returns that row and False (a retry stores nothing)."""
        row = {
            "item_id": req.item_id,
            "annotator": req.annotator,
            "intelligibility": req.intelligibility,
            "fidelity": req.fidelity,
            "excluded": req.excluded,
            "note": req.note,
            "created": time.time(),
        }
        return self._store.save_quality(row, req.save_id)

    def all(self) -> list[dict]:
        return self._store.ratings()


def latest_quality(run_dir: str | Path) -> dict[str, dict[str, dict]]:
    """item id -> annotator -> latest rating; read-only (an absent table is no rating)."""
    with Store(run_dir, create=False, readonly=True) as store:
        rows = store.ratings()
    out: dict[str, dict[str, dict]] = defaultdict(dict)
    for d in rows:
        out[d["item_id"]][d["annotator"]] = d
    return dict(out)


def quality_tables(latest: dict[str, dict[str, dict]], language_of: dict[str, str]) -> dict[str, list[dict]]:
    """Per-language shares of each rating, the share excluded, and pairwise annotator agreement (seed 000, 3.4)."""
    from halluscope.metrics.agreement import cohen_kappa

    by_lang: dict[str, list[dict]] = defaultdict(list)
    for item, per in latest.items():
        for r in per.values():
            by_lang[language_of.get(item, "?")].append(r)
    ratings = []
    for lang in sorted(by_lang):
        rs = by_lang[lang]
        n = len(rs)
        ic, fc = Counter(r["intelligibility"] for r in rs), Counter(r["fidelity"] for r in rs)
        ratings.append(
            {
                "language": lang,
                "ratings": n,
                "clips": len({r["item_id"] for r in rs}),
                **{f"intelligibility_{k}": ic[k] / n for k in INTELLIGIBILITY},
                **{f"fidelity_{k}": fc[k] / n for k in FIDELITY},
                "excluded": sum(r["excluded"] for r in rs) / n,
            }
        )
    agreement = []
    annotators = sorted({w for per in latest.values() for w in per})
    for a, b in combinations(annotators, 2):
        both = sorted(k for k, per in latest.items() if a in per and b in per)
        if not both:
            continue
        row = {"pair": f"{a} vs {b}", "n": len(both)}
        for dim, scale in (("intelligibility", INTELLIGIBILITY), ("fidelity", FIDELITY), ("excluded", (False, True))):
            x = [scale.index(latest[k][a][dim]) for k in both]
            y = [scale.index(latest[k][b][dim]) for k in both]
            row[f"{dim}_agreement"] = sum(i == j for i, j in zip(x, y)) / len(both)
            row[f"{dim}_kappa"] = (
                cohen_kappa(x, y, labels=range(len(scale)), weights="quadratic" if dim != "excluded" else None)
                if len(both) > 1
                else None
            )
        agreement.append(row)
    return {"speech_quality.csv": ratings, "speech_quality_agreement.csv": agreement}


def excluded_items(run_dir: str | Path) -> dict[str, list[str]]:
    """item id -> annotators whose latest rating excludes the clip."""
    return {
        k: sorted(w for w, r in per.items() if r["excluded"])
        for k, per in latest_quality(run_dir).items()
        if any(r["excluded"] for r in per.values())
    }


def drop_excluded(run_dir: str | Path) -> tuple[Path, int, int]:
    """RUN/dataset/samples.kept.parquet: samples.parquet without the clips any annotator excluded (and the
    original of a rewrite stays). Returns the path, rows kept and rows dropped."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from halluscope.core.fs import atomic_path

    src = Path(run_dir) / "dataset" / "samples.parquet"
    if not src.is_file():
        raise HalluscopeError(
            f"{src} does not exist; expected the dataset 'halluscope build spoken' writes. "
            f"Fix: run 'halluscope build spoken {run_dir} ...' first"
        )
    gone = excluded_items(run_dir)
    rows = pq.read_table(src).to_pylist()
    kept = [r for r in rows if r["id"] not in gone]
    out = src.with_name("samples.kept.parquet")
    with atomic_path(out) as tmp:
        pq.write_table(pa.Table.from_pylist(kept) if kept else pq.read_table(src).schema.empty_table(), tmp)
    return out, len(kept), len(rows) - len(kept)
