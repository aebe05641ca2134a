"""Helpers of the hostile-input suite: run the real CLI entry point, check failures, snapshot folders."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import pytest

from support import pythonpath

HERE = Path(__file__).resolve().parent

EN = [
    "The National Bank raised the base rate to 16.75 percent on March 12, 2024, because of inflation.",
    "Kazatomprom increased uranium output by 5.2 percent in 2023 after new wells opened in Turkistan.",
    "The Ministry of Energy approved a new tariff on June 3, 2024. Prices in Almaty rose by 12 percent.",
    "The city of Astana opened 3 new schools in September 2023 for 4,500 pupils.",
]


def flat(text: str) -> str:
    """Output with rich's box drawing and line wrapping removed, for substring checks."""
    return " ".join(re.sub(r"[│╭╮╰╯─┃━]", " ", text).split())


def run_cli(capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch, *args: str) -> tuple[int, str]:
    """``halluscope ARGS`` through halluscope.cli.main.main in this process: (exit code, stdout + stderr)."""
    from halluscope.cli.main import main

    monkeypatch.setattr(sys, "argv", ["halluscope", *map(str, args)])
    capsys.readouterr()
    with pytest.raises(SystemExit) as info:
        main()
    out = capsys.readouterr()
    code = info.value.code
    return (0 if code is None else code if isinstance(code, int) else 1), out.out + out.err


def assert_clean_failure(code: int, out: str, *needles: str) -> None:
    """Exit 2, no traceback, and every needle in the (flattened) message."""
    text = flat(out)
    assert code == 2, out
    assert "Traceback" not in out, out
    for needle in needles:
        assert flat(needle) in text, f"{needle!r} not in: {out}"


def snapshot(root: Path, skip: Path | None = None) -> set[str]:
    """Every path under ``root`` (relative), except those under ``skip``."""
    out = set()
    for p in root.rglob("*"):
        if skip is not None and (p == skip or skip in p.parents):
            continue
        out.add(str(p.relative_to(root)))
    return out


def subprocess_env() -> dict[str, str]:
    """For `python -c CODE` children that need the fake backends (see FAKE_MAIN)."""
    return {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": pythonpath()}


FAKE_MAIN = (
    "import sys; from support import hostile_fakes; hostile_fakes.register(); from halluscope.cli.main import main; "
    "sys.argv[0] = 'halluscope'; main()"
)
