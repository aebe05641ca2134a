"""CLI end to end: 'halluscope score halluaudio | aha | yesno' on tiny files, JSON on stdout, report directory."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from halluscope.cli.main import app
from halluscope.core.errors import InputError

runner = CliRunner()


def _json(args: list[str]) -> dict:
    result = runner.invoke(app, args)
    assert result.exit_code == 0, (result.output, result.exception)
    return json.loads(result.stdout)


def test_halluaudio_json(halluaudio_file: Path) -> None:
    d = _json(["score", "halluaudio", str(halluaudio_file), "--json", "--bootstrap", "100"])
    assert d["benchmark"] == "halluaudio" and d["mode"] == "strict" and d["n_items"] == 11
    assert d["metrics"]["sound"]["accuracy"] == 0.25 and d["metrics"]["sound"]["yes_p_ratio"] == 0.5
    lo, hi = d["metrics"]["all"]["ci95"]["accuracy"]
    assert lo <= d["metrics"]["all"]["accuracy"] <= hi
    assert d["other_mode"]["mode"] == "compat" and d["other_mode"]["metrics"]["sound"]["accuracy"] == 0.75
    assert d["comparison"]["n_differ"] == 6
    assert d["problems"]["count"] == 1 and "row 12" in d["problems"]["items"][0]
    assert d["extraction"]["classes"]["unknown"] == 1
    assert {r["subset"] for r in d["tables"]["subsets"]} >= {"fsd_binary", "commonvoice_word_count"}


def test_halluaudio_compat_flag(halluaudio_file: Path) -> None:
    d = _json(["score", "halluaudio", str(halluaudio_file), "--json", "--compat", "--bootstrap", "0"])
    assert d["mode"] == "compat" and d["metrics"]["sound"]["accuracy"] == 0.75
    assert d["other_mode"]["metrics"]["sound"]["accuracy"] == 0.25


def test_halluaudio_report(halluaudio_file: Path, tmp_path: Path) -> None:
    out = tmp_path / "rep"
    result = runner.invoke(
        app, ["score", "halluaudio", str(halluaudio_file), "--report", str(out), "--bootstrap", "50"]
    )
    assert result.exit_code == 0, result.output
    for name in (
        "report.html",
        "tables.md",
        "metrics_strict.csv",
        "metrics_compat.csv",
        "items.csv",
        "diff.csv",
        "problems.csv",
        "subsets.csv",
        "summary.json",
    ):
        assert (out / name).exists(), name
    page = (out / "report.html").read_text(encoding="utf-8")
    assert page.count("data:image/png;base64,") == 2  # per-domain bars and yes-ratio scatter
    assert "6 of 11 items scored differently" in page
    md = (out / "tables.md").read_text(encoding="utf-8")
    assert "| sound | 4 | 25.000 |" in md  # seed 002: accuracy in percent
    assert len((out / "diff.csv").read_text(encoding="utf-8").strip().splitlines()) == 1 + 6
    assert "strict vs compatible: 6 of 11" in result.output  # the human-readable summary (stderr)


def test_halluaudio_unknown_subset_needs_domain(tmp_path: Path, write_jsonl) -> None:
    f = write_jsonl(
        tmp_path / "p.jsonl",
        [
            {"audio": "a", "prompt": "?", "reference": "yes", "subset": "fsd", "pred": "Yes"},
            {"audio": "b", "prompt": "?", "reference": "no", "subset": "fsd", "pred": "No"},
        ],
    )
    result = runner.invoke(app, ["score", "halluaudio", str(f), "--json"])
    assert isinstance(result.exception, InputError) and "no valid HalluAudio rows" in str(result.exception)
    d = _json(["score", "halluaudio", str(f), "--json", "--domain", "sound", "--bootstrap", "0"])
    assert d["metrics"]["sound"]["accuracy"] == 1.0 and any("fsd" in n for n in d["notes"])


def test_aha_json_and_report(aha_files: list[Path], tmp_path: Path) -> None:
    d = _json(["score", "aha", *map(str, aha_files), "--json", "--bootstrap", "0", "--report", str(tmp_path / "r")])
    assert d["benchmark"] == "aha" and d["metrics"]["all"]["runs"] == 2
    assert d["metrics"]["existence"]["bias"] == pytest.approx(0.25)
    assert d["comparison"]["n_skipped_by_official"] == 2
    assert (tmp_path / "r" / "report.html").exists()
    c = _json(["score", "aha", *map(str, aha_files), "--json", "--compat", "--bootstrap", "0"])
    assert c["metrics"]["existence"]["accuracy"] == pytest.approx(2 / 3)


def test_yesno_json(yesno_files: tuple[Path, Path]) -> None:
    q, p = yesno_files
    d = _json(["score", "yesno", str(q), str(p), "--json", "--bootstrap", "0"])
    assert d["metrics"]["all"]["accuracy"] == pytest.approx(5 / 6) and d["metrics"]["all"]["positive"] == "yes"
    assert set(d["metrics"]) == {"random", "adversarial", "all"}
    assert d["other_mode"]["metrics"]["all"]["as_published_percent"]["accuracy"] == 33.33
    neg = _json(["score", "yesno", str(q), str(p), "--json", "--bootstrap", "0", "--positive", "no"])
    assert neg["metrics"]["all"]["positive"] == "no"


def test_yesno_errors(yesno_files: tuple[Path, Path], tmp_path: Path) -> None:
    q, p = yesno_files
    bad = runner.invoke(app, ["score", "yesno", str(q), str(p), "--positive", "maybe"])
    assert bad.exit_code == 2 and "expected 'yes' or 'no'" in bad.output
    missing = runner.invoke(app, ["score", "yesno", str(q), str(tmp_path / "none.csv"), "--json"])
    assert isinstance(missing.exception, InputError) and "file not found" in str(missing.exception)


def test_main_prints_input_errors_and_exits_2(tmp_path: Path, monkeypatch, capsys) -> None:
    import sys

    from halluscope.cli.main import main

    monkeypatch.setattr(sys, "argv", ["halluscope", "score", "aha", str(tmp_path / "missing.jsonl")])
    with pytest.raises(SystemExit) as exit_:
        main()
    assert exit_.value.code == 2
    assert "file not found" in capsys.readouterr().err
