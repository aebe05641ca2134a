"""A 'build spoken --executor ray' driver killed mid-ASR resumes like an in-process run."""

import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time

import pytest

from halluscope.core.executors import ray_temp_dir
from halluscope.core.records import AudioRef, Transcript
from halluscope.core.store import Store
from halluscope.spoken import language_stages


def _ok(db, stage: str) -> int:
    try:
        return (
            sqlite3.connect(db)
            .execute("SELECT COUNT(*) FROM results WHERE stage=? AND status='ok'", (stage,))
            .fetchone()[0]
        )
    except sqlite3.OperationalError:
        return 0


def _kill_orphans(temp_dir) -> None:
    """Ray agents of the killed driver outlive it; end them (only processes with files in its temp dir)."""
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            fds = os.listdir(f"/proc/{pid}/fd")
            held = any(os.readlink(f"/proc/{pid}/fd/{fd}").startswith(str(temp_dir)) for fd in fds)
        except OSError:
            continue
        if held and int(pid) != os.getpid():
            os.kill(int(pid), signal.SIGKILL)


@pytest.mark.slow  # Ray on 2 cores: over 10 s; run with -m slow
def test_driver_kill_9_mid_asr_then_resume(tmp_path):
    from support.corpus_fixtures import EN, write_jsonl

    corpus = write_jsonl(
        tmp_path / "c.jsonl", [{"id": f"en-{i}", "language": "en", "text": t} for i, t in enumerate(EN[:3], 1)]
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
        "--executor",
        "ray",
        "--ray-workers",
        "2",
        "--allow-partial",  # the rules cannot make one of these short texts' rewrites
    ]
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
    env.update(HF_HUB_OFFLINE="1", RAY_USAGE_STATS_ENABLED="0")
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    db = run / "halluscope.sqlite"
    deadline = time.time() + 180
    while time.time() < deadline and proc.poll() is None and not (db.exists() and _ok(db, "asr") >= 1):
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    time.sleep(0.5)
    _kill_orphans(ray_temp_dir(run))
    with Store(run) as store:
        manifest = store.latest_manifest("build spoken")
        before = language_stages.attempts(store, manifest.stages, "asr")
        total = len(store.done_ids("ingest", manifest.stages["ingest"])) + len(
            store.done_ids("generate", manifest.stages["generate"])
        )
    assert 1 <= len(before) < total, "the kill must land in the middle of the ASR stage"
    assert ray_temp_dir(run).name.startswith("hs-ray-")  # the run's path is long: Ray's files go to /tmp
    finished = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    assert finished.returncode == 0, finished.stderr[-3000:]
    with Store(run) as store:
        after = language_stages.attempts(store, manifest.stages, "asr")
        audio = language_stages.results(store, manifest.stages, "tts", AudioRef)
        transcripts = language_stages.results(store, manifest.stages, "asr", Transcript)
        tts_attempts = language_stages.attempts(store, manifest.stages, "tts")
        failures = {
            **language_stages.failures(store, manifest.stages, "tts"),
            **language_stages.failures(store, manifest.stages, "asr"),
        }
    assert not failures, failures
    assert len(after) == len(audio) == len(transcripts) == total and set(transcripts) == set(audio)
    for item_id, n in before.items():
        assert after[item_id] == n  # finished before the kill: not redone
    assert set(tts_attempts.values()) == {1}
    assert all(t.text for t in transcripts.values())
    assert not list(run.rglob("*.tmp"))
    shutil.rmtree(ray_temp_dir(run), ignore_errors=True)


@pytest.mark.slow  # Ray on 2 cores: over 10 s; run with -m slow
def test_build_against_a_cluster_address_ships_the_package(tmp_path, ray_cluster):
    """A second driver reaches the tests' cluster by RAY_ADDRESS; workers get halluscope via py_modules."""
    from support.corpus_fixtures import EN, write_jsonl

    corpus = write_jsonl(tmp_path / "c.jsonl", [{"id": "en-1", "language": "en", "text": EN[2]}])
    run = tmp_path / "run"
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "RAY_ADDRESS": ray_cluster.get_runtime_context().gcs_address}
    env.pop("PYTHONPATH", None)
    res = subprocess.run(
        [
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
            "0",
            "--executor",
            "ray",
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert res.returncode == 0, res.stderr[-3000:]
    with Store(run) as store:
        manifest = store.latest_manifest("build spoken")
        transcripts = language_stages.results(store, manifest.stages, "asr", Transcript)
    assert list(transcripts) == ["en-1"] and "electricity" in transcripts["en-1"].text.lower()
    assert not (run / ".ray").exists()  # a remote cluster keeps its own temp dir


@pytest.mark.slow  # Ray on 2 cores: over 10 s; run with -m slow
def test_detect_driver_kill_9_mid_generation_then_resume(tmp_path):
    """'detect --executor ray' with a tiny hf model: killed mid-stage, rerun; nothing redone, nothing twice."""
    import json
    from collections import Counter

    import pytest

    pytest.importorskip("transformers")
    from halluscope.core.records import Prediction
    from halluscope.spoken.build import BuildConfig, build_spoken
    from support.tiny_encoder import register_text_speech
    from support.tiny_hf import build_tiny_lm

    register_text_speech()
    run = tmp_path / "run"
    build = build_spoken(
        run,
        BuildConfig(
            corpus="demo",
            langs=("en", "ru"),
            tts="test-bytes",
            asr="test-bytes",
            seed=3,
            rewrites_per_article=1,
            articles_per_language=10,
        ),
        quiet=True,
    )
    total = len(build.transcripts)
    lm = build_tiny_lm(tmp_path / "lm")
    cmd = [
        sys.executable,
        "-m",
        "halluscope",
        "detect",
        str(run),
        "--detector",
        f"hf/{lm}",
        "--max-tokens",
        "40",
        "-o",
        "batch_size=1",
        "--executor",
        "ray",
        "--ray-workers",
        "2",
    ]
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
    env.update(HF_HUB_OFFLINE="1", RAY_USAGE_STATS_ENABLED="0")
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    db = run / "halluscope.sqlite"

    def calls() -> int:
        try:
            return sqlite3.connect(db).execute("SELECT COUNT(*) FROM calls WHERE status='ok'").fetchone()[0]
        except sqlite3.OperationalError:
            return 0

    deadline = time.time() + 180
    while time.time() < deadline and proc.poll() is None and calls() < 3:
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    time.sleep(0.5)
    _kill_orphans(ray_temp_dir(run))
    before = calls()
    assert 3 <= before < total, "the kill must land in the middle of the detect stage"
    finished = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    assert finished.returncode == 0, finished.stderr[-3000:]
    with Store(run) as store:
        fp = [m for m in store.manifests() if m.command == "detect"][-1].stages["detect"]
        preds = store.results("detect", fp, Prediction)
        ok = Counter(c["key"] for c in store.calls() if c["status"] == "ok")
        replies = [json.loads(c["response"])["text"] for c in store.calls() if c["status"] == "ok"]
    assert len(preds) == total and len(ok) == total  # every item predicted, each request answered
    assert set(ok.values()) == {1}  # the replies stored before the kill were read back, not generated again
    assert all(isinstance(r, str) for r in replies)
    shutil.rmtree(ray_temp_dir(run), ignore_errors=True)
