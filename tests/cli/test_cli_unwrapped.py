"""Console output never wraps inside a path or a message: an error naming a long path prints it whole on one
line, whatever the terminal width (a fresh clone at a long path once failed a test on a wrapped message)."""

from __future__ import annotations

import sys

import pytest


def _main(capsys, monkeypatch, *args: str) -> tuple[int, str]:
    from halluscope.cli.main import main

    monkeypatch.setattr(sys, "argv", ["halluscope", *args])
    capsys.readouterr()
    with pytest.raises(SystemExit) as info:
        main()
    out = capsys.readouterr()
    return info.value.code, out.out + out.err


@pytest.fixture
def long_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("COLUMNS", "40")  # a narrow terminal: rich and click would wrap at 40
    path = tmp_path
    for part in ("a-rather-long-folder-name-" * 3, "another-long-folder-name-" * 3, "run"):
        path = path / part
    return path


def test_halluscope_error_names_a_long_path_whole(capsys, monkeypatch, long_dir):
    code, out = _main(capsys, monkeypatch, "report", str(long_dir))
    assert code == 2
    assert f"no run at {long_dir}" in out, out
    assert any(str(long_dir) in line for line in out.splitlines())


def test_usage_error_is_plain_and_unwrapped(capsys, monkeypatch, long_dir):
    value = "en," + "x" * 150
    code, out = _main(capsys, monkeypatch, "build", "spoken", str(long_dir), "--corpus", "demo", "--langs", value)
    assert code == 2
    assert "╭" not in out and "│" not in out  # no rich panel (it hard-wraps its text)
    assert f"got '{value}'" in out, out
    assert not long_dir.exists()  # nothing written
