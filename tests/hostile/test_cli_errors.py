"""Every CLI mistake is a message and exit 2; a bug is one line, exit 1, and a traceback file; readers create nothing."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from support.hostile_helpers import assert_clean_failure, flat, run_cli, snapshot

READERS = (
    ["report", "RUN"],
    ["detect", "RUN"],
    ["project", "RUN"],
    ["build", "judge", "RUN", "--judge", "openai/x"],
    ["build", "realworld", "RUN", "--fakes", "f.jsonl"],
    ["mishap", "questions", "RUN", "--llm", "openai/x"],
    ["mishap", "rubrics", "RUN"],
    ["mishap", "answer", "RUN", "--model", "openai/x"],
    ["mishap", "judge", "RUN", "--judge", "openai/x"],
    ["mishap", "annotate", "RUN"],
    ["mishap", "examples", "RUN", "--out", "x.json"],
    ["mishap", "report", "RUN"],
)


@pytest.mark.parametrize("command", READERS, ids=lambda c: " ".join(c[:2]))
def test_readers_given_a_mistyped_path_create_nothing(tmp_path, capsys, monkeypatch, command):
    missing = tmp_path / "runs" / "typo"
    code, out = run_cli(capsys, monkeypatch, *(missing if a == "RUN" else a for a in command))
    assert_clean_failure(code, out, f"no run at {missing}", "expected a directory made by `halluscope build ...`")
    assert list(tmp_path.iterdir()) == []


def test_a_folder_without_a_store_is_not_a_run_and_stays_empty(tmp_path, capsys, monkeypatch):
    code, out = run_cli(capsys, monkeypatch, "report", tmp_path)
    assert_clean_failure(code, out, f"no run at {tmp_path}", "holds no halluscope.sqlite")
    assert list(tmp_path.iterdir()) == []


def test_a_file_given_as_the_run_directory(tmp_path, capsys, monkeypatch):
    f = tmp_path / "notarun"
    f.write_text("x")
    for args in (
        ["report", f],
        ["detect", f],
        ["build", "spoken", "--corpus", "demo", "--out", f],
        ["build", "spoken", "--corpus", "demo", "--out", f / "sub"],
    ):
        code, out = run_cli(capsys, monkeypatch, *args)
        assert_clean_failure(code, out, str(f))
        assert "is a file, not a run directory" in flat(out) or "cannot create the run directory" in flat(out)
    assert f.read_text() == "x" and sorted(p.name for p in tmp_path.iterdir()) == ["notarun"]


def test_a_corrupt_store(tiny_runs, tmp_path, capsys, monkeypatch):
    import shutil

    run = tmp_path / "run"
    shutil.copytree(tiny_runs["ok"], run)
    for name in ("halluscope.sqlite-wal", "halluscope.sqlite-shm"):
        (run / name).unlink(missing_ok=True)
    (run / "halluscope.sqlite").write_bytes(b"this is not a database" * 100)
    for args in (["report", run], ["detect", run], ["project", run]):
        code, out = run_cli(capsys, monkeypatch, *args)
        assert_clean_failure(code, out, f"{run / 'halluscope.sqlite'}: cannot open the run store", "Fix:")


NOBODY = 65534


def _as_unprivileged(args: list) -> tuple[int, str]:
    """``halluscope ARGS`` in a child that file permissions apply to (uid nobody when the tests run as root)."""
    import shutil
    import subprocess
    import sys

    prefix: list[str] = []
    if os.geteuid() == 0:
        if shutil.which("setpriv") is None:
            pytest.skip("running as root without setpriv: file permissions cannot be tested")
        prefix = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"]
    proc = subprocess.run(
        [*prefix, sys.executable, "-m", "halluscope", *map(str, args)],
        capture_output=True,
        text=True,
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
        cwd="/",
    )
    return proc.returncode, proc.stdout + proc.stderr


@pytest.fixture
def shared_copy(tiny_runs):
    """A copy of a run in a folder every user can reach (pytest's tmp_path is private to root)."""
    import shutil
    import tempfile

    top = Path(tempfile.mkdtemp(prefix="hs-hostile-"))
    top.chmod(0o755)
    run = top / "run"
    shutil.copytree(tiny_runs["ok"], run)
    yield run
    for p in (run, *run.rglob("*")):
        p.chmod(0o755 if p.is_dir() else 0o644)
    shutil.rmtree(top)


def test_a_read_only_store(shared_copy):
    run = shared_copy
    if os.geteuid() == 0:
        os.chown(run, NOBODY, NOBODY)  # the folder is the user's, the store is not writable to them
    (run / "halluscope.sqlite").chmod(0o444)
    code, out = _as_unprivileged(["report", run])
    assert_clean_failure(code, out, f"{run / 'halluscope.sqlite'} is not a readable and writable file", "Fix:")


def test_a_read_only_run_directory(shared_copy):
    run = shared_copy
    if os.geteuid() == 0:
        os.chown(run, NOBODY, NOBODY)
    run.chmod(0o555)
    for args in (["report", run], ["detect", run]):
        code, out = _as_unprivileged(args)
        assert_clean_failure(code, out, f"{run} is not writable", "Fix:")
    assert not (run / "report").exists()


def test_an_output_folder_that_is_a_file_is_a_message(tiny_runs, tmp_path, capsys, monkeypatch):
    import shutil

    run = tmp_path / "run"
    shutil.copytree(tiny_runs["ok"], run)
    (run / "report").write_text("in the way")
    code, out = run_cli(capsys, monkeypatch, "report", run)
    assert_clean_failure(code, out, "FileExistsError", str(run / "report"), "Fix:")


@pytest.mark.parametrize("langs, needle", [("en,en", "en repeated"), ("en,xx", "xx unknown"), (",", "got ','")])
def test_langs_are_checked_up_front(tmp_path, capsys, monkeypatch, langs, needle):
    code, out = run_cli(
        capsys, monkeypatch, "build", "spoken", "--corpus", "demo", "--out", tmp_path / "r", "--langs", langs
    )
    assert_clean_failure(code, out, needle, "--langs")
    assert "duplicate item ids" not in out
    assert not (tmp_path / "r").exists()


def test_types_repeated(tmp_path, capsys, monkeypatch):
    code, out = run_cli(
        capsys,
        monkeypatch,
        "build",
        "spoken",
        "--corpus",
        "demo",
        "--out",
        tmp_path / "r",
        "--types",
        "contradiction,contradiction",
    )
    assert_clean_failure(code, out, "contradiction repeated")


def test_unknown_and_repeated_detector_options(tiny_runs, capsys, monkeypatch):
    code, out = run_cli(capsys, monkeypatch, "detect", tiny_runs["ok"], "-o", "C=3")
    assert_clean_failure(code, out, "detector 'tfidf' does not take -o C", "its options: none")
    code, out = run_cli(capsys, monkeypatch, "detect", tiny_runs["ok"], "--detector", "encoder/x", "-o", "epochz=3")
    assert_clean_failure(code, out, "epochz", "epochs")
    code, out = run_cli(capsys, monkeypatch, "detect", tiny_runs["ok"], "-o", "seed=1", "-o", "seed=2")
    assert_clean_failure(code, out, "seed is given twice")
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9")  # never reached: the options fail first
    code, out = run_cli(capsys, monkeypatch, "detect", tiny_runs["ok"], "--detector", "openai/m", "-o", "temprature=0")
    assert_clean_failure(code, out, "'openai/m' does not take option(s) temprature", "its options:", "timeout_s")


def test_detect_with_too_few_articles_says_what_is_needed(tiny_runs, capsys, monkeypatch):
    before = snapshot(tiny_runs["few"])
    code, out = run_cli(capsys, monkeypatch, "detect", tiny_runs["few"], "--task", "all", "--input", "all")
    assert_clean_failure(
        code, out, "language 'en' has 2 source article(s)", "at least 3 per language", "3 or more articles per language"
    )
    assert "predictions" not in out and "done" not in out
    assert snapshot(tiny_runs["few"]) == before


def test_detect_works_on_a_run_with_enough_articles(tiny_runs, capsys, monkeypatch):
    code, out = run_cli(capsys, monkeypatch, "detect", tiny_runs["ok"])
    assert code == 0, out
    n = int(re.search(r"(\d+) predictions", out).group(1))
    assert n > 0


def test_quickstart_with_too_few_articles_stops_before_building(tmp_path, capsys, monkeypatch):
    out_dir = tmp_path / "qs"
    code, out = run_cli(capsys, monkeypatch, "quickstart", "--out", out_dir, "--articles-per-language", "2")
    assert_clean_failure(code, out, "at least 3 articles per language", "got 2")
    assert "done" not in out and not out_dir.exists()


def test_an_unexpected_error_is_one_line_and_a_traceback_file(tiny_runs, capsys, monkeypatch):
    import halluscope.report

    def boom(run, **_):
        raise RuntimeError("boom\nsecond line")

    monkeypatch.setattr(halluscope.report, "write_report", boom)
    code, out = run_cli(capsys, monkeypatch, "report", tiny_runs["ok"])
    assert code == 1
    assert "Traceback" not in out
    lines = [line for line in out.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("internal error: RuntimeError: boom (full traceback: "), out
    log = Path(re.search(r"full traceback: (\S+?);", out).group(1))
    try:
        text = log.read_text()
        assert "Traceback" in text and "RuntimeError: boom" in text and "report" in text.splitlines()[0]
    finally:
        log.unlink()
