"""End to end on a tiny corpus with real espeak-ng and real Whisper base."""

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time

import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from halluscope.cli.main import app
from halluscope.core.records import AudioRef, Transcript
from halluscope.core.store import Store
from halluscope.spoken import language_stages
from halluscope.spoken.build import BuildConfig, build_spoken


@pytest.fixture(scope="module")
def built(tmp_path_factory, request):
    from support.corpus_fixtures import EN, KK, RU, write_jsonl

    tmp = tmp_path_factory.mktemp("e2e")
    rows = [
        {"id": f"{lang}-{i}", "language": lang, "text": t, "date": "2024-05-01"}
        for lang, texts in (("en", EN[:3]), ("ru", RU), ("kk", KK))
        for i, t in enumerate(texts, 1)
    ]
    corpus = write_jsonl(tmp / "corpus.jsonl", rows)
    run = tmp / "run"
    cfg = BuildConfig(corpus=str(corpus), rewrites_per_article=1, seed=5)
    result = build_spoken(run, cfg, quiet=True)
    return run, cfg, result


def test_build_produces_every_modality(built):
    run, _, result = built
    assert not result.failures, result.failures
    assert len(result.samples) == 18  # 9 originals + 9 rewrites
    assert set(result.audio) == set(result.samples) == set(result.transcripts)
    table = pq.read_table(run / "dataset" / "samples.parquet").to_pylist()
    assert len(table) == 18 and all(r["transcript"] is not None for r in table)
    assert {r["language"] for r in table} == {"en", "ru", "kk"}
    for r in table:
        assert (run / r["audio_path"]).exists()


def test_rerun_does_no_finished_work(built):
    run, cfg, first = built
    again = build_spoken(run, cfg, quiet=True)
    with Store(run) as store:
        attempts = language_stages.attempts(store, first.stages, "asr")
    assert set(attempts.values()) == {1}
    assert again.transcripts == first.transcripts


def test_deleted_clip_is_regenerated_on_resume(built):
    run, cfg, first = built
    victim = sorted(first.audio.values(), key=lambda a: a.item_id)[0]
    (run / victim.path).unlink()
    again = build_spoken(run, cfg, quiet=True)
    assert (run / victim.path).exists()
    assert again.audio[victim.item_id].sha256 == victim.sha256  # espeak is deterministic


def test_detect_and_report_show_all_languages(built):
    run, _, _ = built
    runner = CliRunner()
    res = runner.invoke(app, ["detect", str(run), "--task", "all", "--input", "all"])
    assert res.exit_code == 0, res.output
    res = runner.invoke(app, ["report", str(run), "--json"])
    assert res.exit_code == 0, res.output
    head = json.loads(res.stdout)
    assert {r["language"] for r in head["tables"]["asr_wer_cer"]["rows"]} == {"en", "ru", "kk", "all"}
    assert all(r["wer"] is not None and r["cer"] is not None for r in head["tables"]["asr_wer_cer"]["rows"])
    cells = {(r["language"], r["task"], r["split"]) for r in head["tables"]["detection_long"]["rows"]}
    for lang in ("en", "ru", "kk"):
        for task in ("binary", "type", "severity"):
            assert (lang, task, "O") in cells and (lang, task, "T") in cells
    html = (run / "report" / "report.html").read_text()
    assert html.count("data:image/png;base64") >= 3
    assert "Table 2" in (run / "report" / "tables.md").read_text()


def test_kill_9_mid_stage_then_resume_loses_and_duplicates_nothing(tmp_path):
    from support.corpus_fixtures import EN, write_jsonl

    corpus = write_jsonl(
        tmp_path / "c.jsonl", [{"id": f"en-{i}", "language": "en", "text": t} for i, t in enumerate(EN, 1)]
    )
    run = tmp_path / "run"
    cmd = [
        sys.executable,
        "-m",
        "halluscope",
        "build",
        "spoken",
        "--corpus",
        str(corpus),
        "--out",
        str(run),
        "--langs",
        "en",
        "--rewrites-per-article",
        "1",
        "--allow-partial",  # the rules cannot make one of these short texts' rewrites
    ]
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    db = run / "halluscope.sqlite"
    deadline = time.time() + 300
    done_before = 0
    while time.time() < deadline:
        if db.exists():
            try:
                done_before = (
                    sqlite3.connect(db)
                    .execute("SELECT COUNT(*) FROM results WHERE stage='asr@en' AND status='ok'")
                    .fetchone()[0]
                )
            except sqlite3.OperationalError:
                done_before = 0
            if done_before >= 2:
                break
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    with Store(run) as store:
        manifest = store.latest_manifest("build spoken")
        total = len(store.done_ids("ingest", manifest.stages["ingest"])) + len(
            store.done_ids("generate", manifest.stages["generate"])
        )
    assert 2 <= done_before < total, "the kill must land in the middle of the ASR stage"
    with Store(run) as store:
        before = language_stages.attempts(store, manifest.stages, "asr")
    finished = subprocess.run(cmd, env=env, capture_output=True, text=True)
    assert finished.returncode == 0, finished.stderr
    with Store(run) as store:
        after = language_stages.attempts(store, manifest.stages, "asr")
        audio = language_stages.results(store, manifest.stages, "tts", AudioRef)
        transcripts = language_stages.results(store, manifest.stages, "asr", Transcript)
    assert len(after) == len(audio) == len(transcripts) == total
    assert set(transcripts) == set(audio)
    for item_id, n in before.items():
        assert after[item_id] == n  # finished before the kill: not redone
    assert not list(run.rglob("*.tmp"))
