"""The output of 'score captions': text lines and a report folder, every ECHO_I / ECHO_S / Cover figure beside its
human floor (the clips' AudioCaps reference captions scored by the same extractor), pooled and per caption."""

from __future__ import annotations

import json
from pathlib import Path

from halluscope.core.fs import atomic_write
from halluscope.report.sections import Section
from halluscope.report.table import Column, Table

_SCORES = ("echo_i", "echo_s", "cover")
_TITLES = {"echo_i": "ECHO_I", "echo_s": "ECHO_S", "cover": "Cover"}
MODES = {
    "pooled": ("metrics", "pooled over captions (halluscope)"),
    "compat": ("metrics_compat", "the authors' per-caption averages (Kuan et al.'s evaluation.py), percent"),
}


def _num(v: object, compat: bool) -> str:
    if v is None:
        return "-"
    return f"{v:.2f}" if compat else f"{v:.3f}"


def text_lines(result: dict, *, compat: bool = False) -> list[str]:
    """The headline mode first (``compat``: the authors' averages), then the other, then the notes; each score is
    followed by its human floor in brackets."""
    order = ("compat", "pooled") if compat else ("pooled", "compat")
    lines = []
    for mode in order:
        key, title = MODES[mode]
        lines.append(f"{title}; [human: the reference captions of the same clips]:")
        for prompt, m in result[key].items():
            counts = ", ".join(
                f"{k}={m[k]}" for k in ("n_captions", "objects_named", "unscored", "refusals", "no_object") if k in m
            )
            scores = ", ".join(
                f"{k}={_num(m[k], mode == 'compat')} [human {_num(m['human_' + k], mode == 'compat')}]" for k in _SCORES
            )
            lines.append(f"  {prompt}: {counts}, {scores}")
    return lines + list(result["notes"])


def _table(result: dict, mode: str) -> Table:
    key, title = MODES[mode]
    digits = 2 if mode == "compat" else 3
    cols = [Column("prompt", "prompt"), Column("n_captions", "captions"), Column("refusals", "refusals")]
    cols += [Column("objects_named", "objects")] if mode == "pooled" else [Column("no_object", "no object")]
    for k in _SCORES:
        cols += [Column(k, _TITLES[k], digits), Column(f"human_{k}", f"{_TITLES[k]} human", digits)]
    rows = [{"prompt": p, **m} for p, m in result[key].items()]
    return Table(f"captions_{mode}", cols, rows, title=title)


def captions_section(result: dict) -> Section:
    items = [
        {k: r.get(k) for k in ("youtube_id", "prompt", "prediction", "status", "named", "hallucinated", "covered")}
        for r in [*result["items"], *result["human_items"]]
    ]
    item_cols = [(k, k) for k in ("youtube_id", "prompt", "prediction", "named", "hallucinated", "covered")]
    return Section(
        f"Kuan et al. generative captions (extractor: {result['extractor']})",
        [
            _table(result, "pooled"),
            _table(result, "compat"),
            *result["notes"],
            *(f"problem: {p}" for p in result["problems"][:20]),
            Table("captions_items", item_cols, items, title="captions and their objects", limit=200),
        ],
    )


def write_captions_report(result: dict, report: str | Path) -> Path:
    """tables.md, report.html, one CSV per table and summary.json (the whole result) into the folder ``report``;
    returns the HTML path."""
    from halluscope.report.page import write_folder

    out = Path(report)
    path = write_folder(
        out, [captions_section(result)], title="halluscope captions report: kuan_generative", json_name=None
    )
    atomic_write(out / "summary.json", json.dumps(result, indent=2, ensure_ascii=False))
    return path
