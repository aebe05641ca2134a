"""What every closed-form loader shares: the problems list, the loaded result, the UTF-8 check."""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from dataclasses import asdict
from pathlib import Path

from halluscope.closedform.records import (
    Loaded,
    LoadProblem,
)
from halluscope.core.errors import Problem, Problems
from halluscope.core.inputs import read_text


def _problems() -> Problems:
    # every problem is kept: they all go to the report's problems.csv
    return Problems(keep=sys.maxsize)


def _loaded(
    items: list, problems: Problems, notes: list[str], files: Sequence[str | Path], fix: str | Mapping[str, str]
) -> Loaded:
    """The loader's result; a problem the reader gave no fix (a missing field) gets the file's ``fix``."""

    def fix_of(x: Problem) -> str | None:
        return x.fix or (fix if isinstance(fix, str) else fix.get(x.file or ""))

    listed = sorted(problems.items, key=lambda x: (x.file or "", x.row or 0))
    return Loaded(
        tuple(items),
        tuple(LoadProblem(**{**asdict(x), "fix": fix_of(x)}) for x in listed),
        tuple(notes),
        tuple(map(str, files)),
    )


def _not_utf8(path: Path, what: str) -> None:
    """A file that is not UTF-8 is refused whole (file, line, byte offset, likely encoding): leaving its undecodable
    rows out would drop whole languages (the zh types of AHa-Bench) rather than stray rows."""
    read_text(path, what=what)
