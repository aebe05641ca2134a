"""The paper-scale projection on a scripted store: every figure checkable by hand."""

import json
import sqlite3

import pytest
from typer.testing import CliRunner

from halluscope.cli.main import app
from halluscope.core.errors import HalluscopeError
from halluscope.core.records import AudioRef, RunManifest, Transcript
from halluscope.core.store import Store
from halluscope.spoken.project import project


def _store(run):
    with Store(run) as store:
        store.add_manifest(
            RunManifest(
                command="build spoken",
                created="2024-01-01",
                config={},
                versions={},
                seeds={},
                stages={"tts": "t1", "asr": "a1"},
                platform="test",
            )
        )
        for i in range(4):
            store.put(
                "tts",
                "t1",
                f"s{i}",
                AudioRef(
                    item_id=f"s{i}",
                    path=f"a/s{i}.wav",
                    sha256="0" * 64,
                    sample_rate=16000,
                    duration_s=10.0,
                    engine="espeak",
                    voice="en-us",
                    text_sha256="0" * 64,
                ),
            )
            store.put(
                "asr",
                "a1",
                f"s{i}",
                Transcript(
                    item_id=f"s{i}",
                    language="en",
                    text="x",
                    asr="whisper/base",
                    audio_sha256="0" * 64,
                    audio_duration_s=10.0,
                    processing_s=2.0,
                    wer=0.1,
                    cer=0.05,
                ),
            )
        for i in range(8):  # two calls per item, 1.5 s each, 300 tokens each
            store.log_call(
                key=f"k{i}",
                backend="openai/m",
                request={},
                status="ok",
                latency_s=1.5,
                response={"body": json.dumps({"usage": {"prompt_tokens": 200, "completion_tokens": 100}})},
            )
    con = sqlite3.connect(run / "halluscope.sqlite")
    for i in range(4):  # one clip finished every 0.5 s
        con.execute("UPDATE results SET updated=? WHERE stage='tts' AND item_id=?", (100.0 + 0.5 * i, f"s{i}"))
    con.commit()
    con.close()


def test_projection_from_stored_timings(tmp_path):
    _store(tmp_path)
    p = project(
        tmp_path, samples=1000, audio_s=100.0, workers=(1, 10), rate_limit_per_min=60, concurrency=4, usd_per_mtok=2.0
    )
    s = {x.stage: x for x in p.stages}
    assert s["asr"].per_unit_s == 0.2 and s["asr"].per_item_s == 20.0  # RTF 2/10, times 100 s
    assert s["asr"].total_hours == round(1000 * 20 / 3600, 2) and s["asr"].wall_hours["10 workers"] == round(
        20000 / 3600 / 10, 2
    )
    assert s["tts"].per_unit_s == 0.05  # 1.5 s of gaps over 30 s of audio
    api = s["calls openai/m"]
    assert api.calls_per_item == 2 and api.per_unit_s == 1.5 and api.tokens_per_call == 300
    # 2000 calls: 3000 s at 4 in flight = 0.21 h; at 60/min the limit rules: 2000/60 min = 0.56 h
    assert api.wall_hours == {"4 in flight": round(2000 * 1.5 / 3600 / 4, 2), "60/min limit": round(2000 / 60 / 60, 2)}
    assert api.cost_usd == round(2000 * 300 * 2.0 / 1e6, 2)


def test_project_command_prints_a_table_and_json(tmp_path):
    _store(tmp_path)
    res = CliRunner().invoke(app, ["project", str(tmp_path), "--json"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert data["samples"] == 12013 and data["audio_s"] == 96.0
    assert {s["stage"] for s in data["stages"]} == {"tts", "asr", "calls openai/m"}
    res = CliRunner().invoke(app, ["project", str(tmp_path), "--workers", "2"])
    assert res.exit_code == 0 and "asr" in res.output


def test_projection_needs_a_run(tmp_path):
    with pytest.raises(HalluscopeError, match="no halluscope.sqlite"):
        project(tmp_path / "nope")
