"""Tiny prediction files of the three formats, written per test."""

from __future__ import annotations

from pathlib import Path

import pytest

from support.closedform_files import (  # noqa: F401 - the tests import the rows from here
    HALLUAUDIO_ROWS,
    YESNO_QUESTIONS,
    YESNO_RESPONSES,
    write_aha,
    write_halluaudio,
    write_yesno,
)
from support.corpus_fixtures import write_jsonl


@pytest.fixture(name="write_jsonl")
def write_jsonl_fixture():
    return write_jsonl


@pytest.fixture
def halluaudio_file(tmp_path: Path) -> Path:
    return write_halluaudio(tmp_path / "halluaudio_preds.jsonl")


@pytest.fixture
def aha_files(tmp_path: Path) -> list[Path]:
    return write_aha(tmp_path / "model_aha_0.jsonl", tmp_path / "model_aha_1.jsonl")


@pytest.fixture
def yesno_files(tmp_path: Path) -> tuple[Path, Path]:
    return write_yesno(tmp_path / "questions.tsv", tmp_path / "responses.csv")
