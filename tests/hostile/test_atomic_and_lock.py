"""Nothing half-written, no shared temp names, one writer per run directory."""

from __future__ import annotations

import os
import subprocess
import sys
import threading

import pyarrow.parquet as pq
import pytest

from halluscope.core.fs import atomic_path, atomic_write
from halluscope.core.store import Store
from support.corpus_fixtures import write_jsonl
from support.hostile_helpers import EN, FAKE_MAIN, flat, subprocess_env


def test_concurrent_atomic_writes_of_one_file_never_collide(tmp_path):
    target = tmp_path / "report.html"
    payloads = [bytes([65 + k]) * 200_000 for k in range(8)]
    errors: list[BaseException] = []

    def writer(blob: bytes) -> None:
        try:
            for _ in range(10):
                atomic_write(target, blob)
        except BaseException as exc:  # noqa: BLE001 - collected for the assert
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(p,)) for p in payloads]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert target.read_bytes() in payloads  # one whole payload, never a mix or a truncation
    assert [p.name for p in tmp_path.iterdir()] == ["report.html"]  # no temp file left behind


def test_a_failed_write_leaves_the_old_file_and_no_temp(tmp_path):
    target = tmp_path / "samples.parquet"
    target.write_bytes(b"complete")
    with pytest.raises(RuntimeError), atomic_path(target) as tmp:
        tmp.write_bytes(b"half")
        raise RuntimeError("killed mid-write")
    assert target.read_bytes() == b"complete"
    assert [p.name for p in tmp_path.iterdir()] == ["samples.parquet"]


def _build_cmd(corpus, run) -> list[str]:
    return [
        sys.executable,
        "-c",
        FAKE_MAIN,
        "build",
        "spoken",
        "--corpus",
        str(corpus),
        "--out",
        str(run),
        "--langs",
        "en",
        "--tts",
        "hostile-tts",
        "--asr",
        "hostile-asr",
        "--rewrites-per-article",
        "2",
        "--allow-partial",  # the rules cannot make every rewrite of these short texts
    ]


def test_a_second_writer_stops_with_the_holder_named(tmp_path):
    corpus = write_jsonl(
        tmp_path / "c.jsonl", [{"id": f"en-{i}", "language": "en", "text": t} for i, t in enumerate(EN)]
    )
    run = tmp_path / "run"
    with Store(run):  # this process holds the run
        proc = subprocess.run(_build_cmd(corpus, run), env=subprocess_env(), capture_output=True, text=True)
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    assert f"is in use by pid {os.getpid()}" in flat(proc.stderr) and "use another run directory" in flat(proc.stderr)
    assert not (run / "dataset").exists()
    # released: the same command now runs
    proc = subprocess.run(_build_cmd(corpus, run), env=subprocess_env(), capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


def test_two_concurrent_builds_on_one_run(tmp_path):
    corpus = write_jsonl(
        tmp_path / "c.jsonl", [{"id": f"en-{i}", "language": "en", "text": t} for i, t in enumerate(EN)]
    )
    run = tmp_path / "run"
    procs = [
        subprocess.Popen(
            _build_cmd(corpus, run), env=subprocess_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        for _ in range(2)
    ]
    results = [(p.wait(), p.communicate()[1]) for p in procs]
    for code, err in results:
        assert "Traceback" not in err, err
        assert code == 0 or (code == 2 and "is in use by pid" in flat(err)), err
    assert any(code == 0 for code, _ in results)
    rows = pq.read_table(run / "dataset" / "samples.parquet").to_pylist()
    with Store(run) as store:
        m = store.latest_manifest("build spoken")
        expected = len(store.done_ids("ingest", m.stages["ingest"])) + len(
            store.done_ids("generate", m.stages["generate"])
        )
    assert len(rows) == expected and all(r["transcript"] for r in rows)
    assert not list(run.rglob("*.tmp"))
