"""The example plug-in package (examples/halluscope-modem) installed as a distribution and used by the real command
line: its entry points, read from its own pyproject.toml, are written to a dist-info folder on sys.path (what
'pip install' leaves behind), and 'halluscope build spoken --tts modem --asr modem' speaks and transcribes with it."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import tomllib

from support.hostile_helpers import run_cli

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "halluscope-modem"


@pytest.fixture
def installed(tmp_path, monkeypatch):
    project = tomllib.loads((EXAMPLE / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    info = tmp_path / f"{project['name'].replace('-', '_')}-{project['version']}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {project['name']}\nVersion: {project['version']}\n", encoding="utf-8"
    )
    groups = project["entry-points"]
    (info / "entry_points.txt").write_text(
        "".join(
            f"[{group}]\n" + "".join(f"{name} = {target}\n" for name, target in eps.items()) + "\n"
            for group, eps in groups.items()
        ),
        encoding="utf-8",
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.syspath_prepend(str(EXAMPLE / "src"))
    sys.modules.pop("halluscope_modem", None)
    yield groups
    sys.modules.pop("halluscope_modem", None)


def test_the_example_plugin_declares_a_tts_and_an_asr_engine(installed):
    from halluscope.backends.speech import ASR_BACKENDS, TTS_BACKENDS

    assert set(installed) == {"halluscope.tts", "halluscope.asr"}
    assert "modem" in TTS_BACKENDS.names and "modem" in ASR_BACKENDS.names
    assert "halluscope_modem" not in sys.modules  # listed from the metadata, imported on first use
    assert TTS_BACKENDS.entry("modem").dist == "halluscope-modem 0.1.0"
    tts, asr = TTS_BACKENDS.create("modem/clear"), ASR_BACKENDS.create("modem")
    samples = tts.synthesize("Астана, 16.75%", language="ru", voice="clear")
    assert samples.dtype.name == "float32" and asr.transcribe(samples, language="ru") == "Астана, 16.75%"


def test_a_spoken_build_runs_through_the_plugin_engines(installed, tmp_path, capsys, monkeypatch):
    import pyarrow.parquet as pq

    run = tmp_path / "run"
    args = (
        "build",
        "spoken",
        run,
        "--corpus",
        "demo",
        "--langs",
        "en,ru",
        "--articles-per-language",
        "1",
        "--tts",
        "modem",
        "--asr",
        "modem",
    )
    code, out = run_cli(capsys, monkeypatch, *args)
    assert code == 0, out
    assert "speech (modem/plain)" in out and "tts       6 computed, 0 reused" in out
    rows = pq.read_table(run / "dataset" / "samples.parquet").to_pylist()
    assert len(rows) == 6 and {r["language"] for r in rows} == {"en", "ru"}
    assert {r["tts"] for r in rows} == {"modem/plain"} and {r["asr"] for r in rows} == {"modem"}
    # the clips went through halluscope's WAV files and came back exactly
    assert all(r["transcript"] == r["text"] and r["wer"] == 0.0 for r in rows)
    assert all((run / r["audio_path"]).is_file() or Path(r["audio_path"]).is_file() for r in rows)
    code, out = run_cli(capsys, monkeypatch, *args)  # resumed: nothing spoken twice
    assert code == 0 and "tts       0 computed, 6 reused" in out, out
