"""Listening sets (issue 29; seed 000, 3.4): 'view RUN --listen N --lang kk --seed S' draws a seeded sample of
clips, stores it, and gives every listener the same clips."""

import csv

import pytest

from halluscope.spoken.build import BuildConfig, build_spoken
from support.hostile_helpers import assert_clean_failure, run_cli


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    from support.tiny_encoder import register_text_speech

    register_text_speech()
    out = tmp_path_factory.mktemp("listen") / "run"
    build_spoken(
        out,
        BuildConfig(
            corpus="demo",
            langs=("en", "kk"),
            tts="test-bytes",
            asr="test-bytes",
            seed=1,
            rewrites_per_article=1,
            articles_per_language=6,
        ),
        quiet=True,
    )
    return out


def rows(path):
    return list(csv.DictReader(path.open(encoding="utf-8")))


def test_seeded_set_is_stored_and_the_same_for_every_listener(run, capsys, monkeypatch):
    code, out = run_cli(capsys, monkeypatch, "view", run, "--listen", "5", "--lang", "kk", "--seed", "7")
    assert code == 0 and "drawn and stored" in out, out
    path = run / "listening" / "kk-5-seed7.csv"
    first = rows(path)
    assert len(first) == 5 and len({r["item_id"] for r in first}) == 5
    assert all(
        r["item_id"].startswith("kk") and (run / r["clip"]).is_file() and r["intelligibility"] == "" for r in first
    )
    path.unlink()  # a second listener: the set comes back from the run, identical
    code, out = run_cli(capsys, monkeypatch, "view", run, "--listen", "5", "--lang", "kk", "--seed", "7")
    assert code == 0 and "read back from the run" in out, out
    assert rows(path) == first
    code, _ = run_cli(capsys, monkeypatch, "view", run, "--listen", "5", "--lang", "kk", "--seed", "8")
    other = rows(run / "listening" / "kk-5-seed8.csv")
    assert code == 0 and [r["item_id"] for r in other] != [r["item_id"] for r in first]


def test_too_many_or_a_missing_language_is_one_line(run, capsys, monkeypatch):
    code, out = run_cli(capsys, monkeypatch, "view", run, "--listen", "500", "--lang", "kk")
    assert_clean_failure(code, out, "has only 12 'kk' clips", "--listen 12 or fewer")
    code, out = run_cli(capsys, monkeypatch, "view", run, "--listen", "3", "--lang", "ru")
    assert_clean_failure(code, out, "no clips in language 'ru'", "en, kk")
