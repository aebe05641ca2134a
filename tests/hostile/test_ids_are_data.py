"""Ids are data, never paths: hostile corpus ids build, nothing lands outside RUN, every id survives."""

from __future__ import annotations

import os
import shutil
import sqlite3
import unicodedata
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from halluscope.core.fs import PathEscapeError, id_file_name, safe_join
from support.corpus_fixtures import write_jsonl
from support.hostile_helpers import EN, run_cli, snapshot

NFC = unicodedata.normalize("NFC", "caf\u00e9")
NFD = unicodedata.normalize("NFD", NFC)


def hostile_ids(outside: Path) -> list[str]:
    return [
        "../../escaped",
        "../../../../../../escaped",
        str(outside / "abs" / "path"),
        "sub/dir/x",
        "..",
        ".",
        "con",
        "x" * 400,
        "Case",
        "case",
        NFC,
        NFD,
        "tab\there",
        "~",
        "a\\b",
        ".hidden",
    ]


def test_id_file_names_are_plain_distinct_and_short(tmp_path):
    ids = hostile_ids(tmp_path)
    names = [id_file_name(i, ".wav") for i in ids]
    assert len(set(names)) == len(ids)
    assert len({n.lower() for n in names}) == len(ids)  # distinct on case-insensitive file systems too
    for n in names:
        assert "/" not in n and "\\" not in n and not n.startswith(".") and len(n) <= 64, n
        assert n.endswith(".wav") and n not in ("con.wav",)
    assert id_file_name("en-1", ".wav").startswith("en-1-")  # still readable


def test_safe_join_refuses_every_way_out(tmp_path):
    root = tmp_path / "run"
    (root / "audio").mkdir(parents=True)
    (root / "link").symlink_to(tmp_path)
    assert safe_join(root, "audio", "a.wav") == (root / "audio" / "a.wav").resolve()
    for bad in ("../x.wav", "/etc/passwd", "audio/../../x", "link/x.wav"):
        with pytest.raises(PathEscapeError, match="leaves"):
            safe_join(root, bad)


@pytest.mark.skipif(shutil.which("espeak-ng") is None, reason="needs espeak-ng")
def test_hostile_ids_build_inside_run_and_survive(tmp_path, capsys, monkeypatch):
    outside = tmp_path / "outside"
    ids = hostile_ids(outside)
    corpus = write_jsonl(
        tmp_path / "c.jsonl", [{"id": i, "language": "en", "text": EN[n % len(EN)]} for n, i in enumerate(ids)]
    )
    run = tmp_path / "deep" / "er" / "run"  # so '../../escaped' would still land inside tmp_path
    before = snapshot(tmp_path)
    code, out = run_cli(
        capsys,
        monkeypatch,
        "build",
        "spoken",
        "--corpus",
        corpus,
        "--out",
        run,
        "--langs",
        "en",
        "--generator",
        "rules",
        "--tts",
        "espeak/en-us",
        "--asr",
        "hostile-asr",
        "--rewrites-per-article",
        "1",
        "--allow-partial",  # the rules cannot alter every one of these articles (too few facts)
    )
    assert code == 0, out
    new_outside = snapshot(tmp_path, skip=run) - before - {"deep", "deep/er"}
    assert not new_outside, f"written outside RUN: {sorted(new_outside)}"
    assert not outside.exists() and not Path("/abs/path.wav").exists()
    table = pq.read_table(run / "dataset" / "samples.parquet").to_pylist()
    assert set(ids) <= {r["id"] for r in table}  # every original kept its id, byte for byte
    assert {r["article_id"] for r in table} == set(ids)
    assert len(table) > len(ids)  # and rewrites (the rules generator skips what it cannot rewrite)
    for r in table:
        assert r["audio_path"] and not r["audio_path"].startswith("/") and ".." not in r["audio_path"].split("/")
        clip = safe_join(run, r["audio_path"])
        assert clip.is_file() and clip.parent.parent.parent == (run / "audio").resolve()
    assert len({r["audio_path"] for r in table}) == len(table)
    assert not list(run.rglob("*.tmp"))


def test_resume_reads_old_layout_and_regenerates_escaping_records(tmp_path):
    """Runs built before safe names keep their clips (same TTS stage key); a record pointing outside is redone."""
    from halluscope.core.store import Store
    from halluscope.spoken import language_stages
    from halluscope.spoken.build import BuildConfig, build_spoken

    corpus = write_jsonl(
        tmp_path / "c.jsonl", [{"id": f"en-{i}", "language": "en", "text": t} for i, t in enumerate(EN[:3])]
    )
    run = tmp_path / "run"
    cfg = BuildConfig(corpus=str(corpus), langs=("en",), tts="hostile-tts", asr="hostile-asr", rewrites_per_article=0)
    first = build_spoken(run, cfg, quiet=True)
    tts_name, tts_fp = language_stages.part_for(first.stages, "tts", "en")  # English's TTS stage
    db = sqlite3.connect(run / "halluscope.sqlite")
    rows = db.execute(
        "SELECT item_id, payload FROM results WHERE stage=? AND fingerprint=?", (tts_name, tts_fp)
    ).fetchall()
    import json

    for item_id, payload in rows:  # move each clip to the pre-fix layout audio/<fp>/<lang>/<id>.wav
        ref = json.loads(payload)
        old = f"audio/{tts_fp[:8]}/en/{item_id}.wav"
        os.replace(run / ref["path"], run / old)
        ref["path"] = old if item_id != "en-2" else "../../outside.wav"
        db.execute(
            "UPDATE results SET payload=? WHERE stage=? AND fingerprint=? AND item_id=?",
            (json.dumps(ref), tts_name, tts_fp, item_id),
        )
    db.commit()
    db.close()
    again = build_spoken(run, cfg, quiet=True)
    assert again.stages[tts_name] == tts_fp
    assert again.audio["en-0"].path == f"audio/{tts_fp[:8]}/en/en-0.wav"  # reused where it lies
    assert again.audio["en-2"].path == f"audio/{tts_fp[:8]}/en/{id_file_name('en-2', '.wav')}"  # regenerated inside
    assert len(again.transcripts) == 3
    with Store(run) as store:
        assert store.attempts(tts_name, tts_fp)["en-0"] == 1 and store.attempts(tts_name, tts_fp)["en-2"] == 3
