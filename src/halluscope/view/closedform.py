"""The viewer's closed-form items: each predictions file loaded and scored in both modes, item by item."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from halluscope.core.errors import HalluscopeError
from halluscope.core.keys import DetectRunKey
from halluscope.report.links import closedform_item


@dataclass(frozen=True)
class Scored:
    """A predictions file already loaded and scored (``result``: a ScoreResult; ``asked``: each item id's question),
    as 'score ... --report' exports it: read with the options it was given (--domain, --sampling), not again."""

    fmt: str
    result: Any
    asked: dict


def scored(result: Any) -> Scored:
    """A ScoreResult (halluaudio, aha, yesno) as the viewer shows it, with each item's question."""
    items = result.loaded.items
    if result.benchmark == "halluaudio":
        asked = {i.id: i.prompt for i in items}
    elif result.benchmark == "aha":
        asked = {i.index: i.question for i in items}
    else:
        asked = {getattr(i, "id", ""): getattr(i, "question", "") for i in items}
    return Scored(result.benchmark, result, asked)


def _scored(spec: str) -> Scored:
    """``FORMAT=FILE[,FILE]`` loaded and scored."""
    from halluscope.closedform import loaders, score

    fmt, _, files = spec.partition("=")
    paths = [p for p in files.split(",") if p]
    if fmt not in ("halluaudio", "aha", "yesno") or not paths or (fmt == "yesno" and len(paths) != 2):
        raise HalluscopeError(
            f"closed-form predictions {spec!r}: expected halluaudio=FILE[,FILE...], aha=FILE[,FILE...] or "
            "yesno=QUESTIONS.csv,PREDICTIONS.csv"
        )
    if fmt == "halluaudio":
        return scored(score.score_halluaudio(loaders.load_halluaudio(paths), bootstrap=0))
    if fmt == "aha":
        return scored(score.score_aha(loaders.load_aha(paths), bootstrap=0))
    return scored(score.score_yesno(loaders.load_yesno(paths[0], paths[1]), bootstrap=0))


def load_closedform(specs: Sequence[str | Scored]) -> list[tuple[dict, Callable[[], dict]]]:
    """``FORMAT=FILE[,FILE]`` (halluaudio, aha, yesno=QUESTIONS,PREDICTIONS) or a file already Scored: every item
    as both modes score it."""
    if not specs:  # most views: the closed-form modules are not even imported (0.2 s of a first page)
        return []
    out = []
    for spec in specs:
        scored = spec if isinstance(spec, Scored) else _scored(spec)
        fmt, result, asked = scored.fmt, scored.result, scored.asked
        for it in result.items:
            uid = closedform_item(fmt, it.run, it.id)
            row = {
                "id": uid,
                "kind": "closedform",
                "lang": None,
                "type": it.kind,
                "severity": it.group,
                "label": None,
                "split": None,
                "wer": None,
                "audio": False,
                "transcript": False,
                "outcome": {
                    str(DetectRunKey(fmt, "strict")): "correct" if it.strict_correct else "wrong",
                    **(
                        {str(DetectRunKey(fmt, "compat")): "correct" if it.compat_correct else "wrong"}
                        if it.compat_scored
                        else {}
                    ),
                },
                "status": {"modes": "differ" if it.differs else "agree"},
                "models": [it.run] if it.run else [],
                "judged": False,
                "q": "",
                "differs": it.differs,
                "title": (asked.get(it.id) or it.reply or "")[:90],
            }

            def detail(it=it, uid=uid, fmt=fmt, question=asked.get(it.id)) -> dict:  # type: ignore[no-untyped-def]
                return {
                    "kind": "closedform",
                    "benchmark": fmt,
                    "question": question,
                    **it.as_row(),
                    "id": uid,  # the viewer's id (the page shows it), not the file's item id
                    "differs": it.differs,
                    "why": it.category if it.differs else None,
                    "compat_scored": it.compat_scored,
                }

            out.append((row, detail))
    return out
