"""The viewer's closed-form items: each predictions file loaded and scored in both modes, item by item."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from halluscope.core.errors import HalluscopeError
from halluscope.report.links import closedform_item


def load_closedform(specs: Sequence[str]) -> list[tuple[dict, Callable[[], dict]]]:
    """``FORMAT=FILE[,FILE]`` (halluaudio, aha, yesno=QUESTIONS,PREDICTIONS): every item as both modes score it."""
    if not specs:  # most views: the closed-form modules are not even imported (0.2 s of a first page)
        return []
    from halluscope.closedform import loaders, score

    out = []
    for spec in specs:
        fmt, _, files = spec.partition("=")
        paths = [p for p in files.split(",") if p]
        if fmt not in ("halluaudio", "aha", "yesno") or not paths or (fmt == "yesno") != (len(paths) == 2):
            raise HalluscopeError(
                f"closed-form predictions {spec!r}: expected halluaudio=FILE[,FILE...], aha=FILE[,FILE...] or "
                "yesno=QUESTIONS.csv,PREDICTIONS.csv"
            )
        if fmt == "halluaudio":
            loaded = loaders.load_halluaudio(paths)
            result = score.score_halluaudio(loaded, bootstrap=0)
            asked = {i.id: i.prompt for i in loaded.items}
        elif fmt == "aha":
            loaded = loaders.load_aha(paths)
            result = score.score_aha(loaded, bootstrap=0)
            asked = {i.index: i.question for i in loaded.items}
        else:
            loaded = loaders.load_yesno(paths[0], paths[1])
            result = score.score_yesno(loaded, bootstrap=0)
            asked = {getattr(i, "id", ""): getattr(i, "question", "") for i in loaded.items}
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
                    f"{fmt}|strict": "correct" if it.strict_correct else "wrong",
                    **({f"{fmt}|compat": "correct" if it.compat_correct else "wrong"} if it.compat_scored else {}),
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
