"""Hostile corpora through the CLI: 'corpus check' and 'build spoken --corpus' exit 2 with file, row and field named,
print no traceback, and leave no run directory that looks complete (issue 13, items 8 and 11-12)."""

import json
import subprocess
import sys

import pytest

from halluscope.cli.main import main

GOOD = {"id": "a1", "language": "en", "text": "The bank raised its rate to 16 percent in 2024."}


def _jsonl(*rows) -> bytes:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows).encode()


CASES = {
    "latin1": (
        "c.jsonl",
        _jsonl(GOOD).replace(b"\n", b"") + b"\n" + '{"id": "a2", "language": "en", "text": "Café"}\n'.encode("latin-1"),
        ["row 2", "not UTF-8", "byte offset", "cp1252"],
    ),
    "binary": ("c.jsonl", bytes(range(256)) * 8, ["binary file", "NUL byte"]),
    "headerless": (
        "c.csv",
        b"a1,en,Hello world\r\na2,en,Bye\r\n",
        ["the first row is not a header", "expected columns id, language, text"],
    ),
    "id_number": (
        "c.jsonl",
        _jsonl(GOOD, {**GOOD, "id": 42}),
        ["row 2, field 'id'", "expected text", "got a number (42)"],
    ),
    "text_list": ("c.jsonl", _jsonl({**GOOD, "text": ["a"]}), ["row 1, field 'text'", "got a list"]),
    "text_object": ("c.jsonl", _jsonl({**GOOD, "text": {"en": "x"}}), ["row 1, field 'text'", "got an object"]),
    "language_bool": (
        "c.jsonl",
        _jsonl({**GOOD, "language": True}),
        ["row 1, field 'language'", "got a boolean (true)"],
    ),
    "oversized": (
        "c.jsonl",
        _jsonl(GOOD, {**GOOD, "id": "big", "text": "word " * 220_000}),
        ["row 2, field 'text'", "over the per-field limit of 1,000,000 bytes", "HALLUSCOPE_MAX_FIELD_BYTES"],
    ),
}


def _run_main(argv, monkeypatch, capsys) -> tuple[int, str]:
    monkeypatch.setattr(sys, "argv", ["halluscope", *argv])
    with pytest.raises(SystemExit) as exc:
        main()
    out = capsys.readouterr()
    return exc.value.code, out.out + out.err


def _looks_complete(run) -> bool:
    return run.exists() and any(
        p.name in ("manifest.json", "samples.parquet") or p.suffix == ".wav" for p in run.rglob("*")
    )


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("command", ["corpus check", "build spoken"])
def test_hostile_corpus_exits_2_naming_file_row_and_field(tmp_path, monkeypatch, capsys, case, command):
    name, data, expected = CASES[case]
    corpus = tmp_path / name
    corpus.write_bytes(data)
    run = tmp_path / "run"
    argv = (
        ["corpus", "check", str(corpus)]
        if command == "corpus check"
        else ["build", "spoken", "--corpus", str(corpus), "--out", str(run), "--langs", "en"]
    )
    code, out = _run_main(argv, monkeypatch, capsys)
    flat = " ".join(out.split())
    assert code == 2, out
    assert str(corpus) in flat and all(e in flat for e in expected), out
    assert "Traceback" not in out and "internal error" not in out
    assert not _looks_complete(run)


def test_a_directory_as_the_corpus(tmp_path, monkeypatch, capsys):
    (tmp_path / "corpus.jsonl").mkdir()
    for argv in (
        ["corpus", "check", str(tmp_path / "corpus.jsonl")],
        ["build", "spoken", "--corpus", str(tmp_path / "corpus.jsonl"), "--out", str(tmp_path / "run")],
    ):
        code, out = _run_main(argv, monkeypatch, capsys)
        assert code == 2 and "is a directory, expected a file" in out and "Traceback" not in out
    assert not _looks_complete(tmp_path / "run")


def test_the_real_process_prints_no_traceback(tmp_path):
    name, data, expected = CASES["latin1"]
    corpus = tmp_path / name
    corpus.write_bytes(data)
    for argv in (
        ["corpus", "check", str(corpus)],
        ["build", "spoken", "--corpus", str(corpus), "--out", str(tmp_path / "run")],
    ):
        res = subprocess.run([sys.executable, "-m", "halluscope", *argv], capture_output=True, text=True)
        out = res.stdout + res.stderr
        assert res.returncode == 2 and "Traceback" not in out and all(e in " ".join(out.split()) for e in expected)
    assert not _looks_complete(tmp_path / "run")
