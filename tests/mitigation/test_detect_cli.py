"""'halluscope detect ... -o mitigation=aad' end to end: recorded in the manifest and fingerprint, a separate row."""

import pytest

from support.tiny_audio_lm import qwen2_audio_dir  # noqa: F401 - fixture

pytest.importorskip("transformers")

from typer.testing import CliRunner

from halluscope.cli.main import app
from halluscope.core.records import Prediction
from halluscope.core.store import Store
from halluscope.spoken.report import collect
from support import fakes


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    return fakes.spoken_run(tmp_path_factory.mktemp("mit"))


def test_detect_with_aad_records_it_and_reports_a_separate_row(run_dir, qwen2_audio_dir):
    runner = CliRunner()
    spec = f"hf-audio/{qwen2_audio_dir}"
    base = [
        "detect",
        str(run_dir),
        "--detector",
        spec,
        "--task",
        "binary",
        "--input",
        "audio",
        "--max-tokens",
        "3",
        "-o",
        "audio_window_s=2.5",
    ]
    for extra in ([], ["-o", "mitigation=aad", "-o", "alpha=0.5"]):
        res = runner.invoke(app, base + extra)
        assert res.exit_code == 0, res.output
    with Store(run_dir) as store:
        m_plain, m_aad = [m for m in store.manifests() if m.command == "detect"][-2:]
        assert m_aad.config["options"]["mitigation"] == "aad" and "mitigation" not in m_plain.config["options"]
        assert m_plain.stages["detect"] != m_aad.stages["detect"]
        preds = store.results("detect", m_aad.stages["detect"], Prediction)
        calls = list(store.calls())
    assert preds and all(p.audio.delivered for p in preds.values())
    assert len(calls) == 2 * len(preds)  # each run asked every item once: no reply was reused across decodings
    res = runner.invoke(app, ["report", str(run_dir)])
    assert res.exit_code == 0, res.output
    section = next(s for s in collect(run_dir).sections if "Table 3" in s.title)
    rows = [r for r in section.rows("zeroshot_cells") if r["language"] == "all"]
    assert [r["mitigation"] for r in rows] == ["W/O", "AAD (alpha=0.5)"] and rows[0]["n"] == rows[1]["n"] == len(preds)
    md = (run_dir / "report" / "tables.md").read_text(encoding="utf-8")
    assert "AAD (alpha=0.5)" in md and "| method |" in md


def test_mitigation_on_a_remote_model_fails_before_any_work(run_dir):
    from halluscope.core.errors import HalluscopeError
    from halluscope.spoken.detect import detect

    with pytest.raises(HalluscopeError, match="needs logits of a local model"):
        detect(run_dir, detector="openai/gpt-4o-mini", task="binary", input="text", options={"mitigation": "aad"})
