"""'halluscope mitigation sweep' end to end: a tiny random-weight Qwen2-Audio (tests/support/tiny_audio_lm) answers a
scripted MISHAP run's questions plain (greedy, sampled) and under AAD at two strengths over two seeds, a scripted
groundedness judge on the loopback server reads them, a rerun asks nothing new, and the report shows the card."""

import json

import pytest
from typer.testing import CliRunner

from halluscope.cli.main import app
from halluscope.core.store import Store
from support import scripted
from support.chat_server import ChatServer
from support.tiny_audio_lm import qwen2_audio_dir  # noqa: F401 - fixture


@pytest.mark.slow  # about 90 s on the busy 2-core machine (espeak clips, the tiny model, 84 + 84 AAD generations)
def test_sweep_runs_the_grid_resumes_and_reports_a_card(tmp_path, monkeypatch, qwen2_audio_dir):  # noqa: F811
    run = scripted.build_run(tmp_path, judge=False, seeds=(0,), per_category=1)
    args = [
        "mitigation",
        "sweep",
        str(run),
        "--model",
        f"hf-audio/{qwen2_audio_dir}",
        "--method",
        "aad",
        "--strength",
        "0,1",
        "--seeds",
        "0,1",
        "--judge",
        "openai/judge",
        "--max-tokens",
        "4",
        "--json",
    ]
    with ChatServer(scripted.make_script({})) as srv:
        monkeypatch.setenv("OPENAI_BASE_URL", srv.url)
        monkeypatch.setenv("OPENAI_API_KEY", "k")
        res = CliRunner().invoke(app, args)
        assert res.exit_code == 0, res.output
        cfg = json.loads(res.output[res.output.index("{") :])
        with Store(run) as store:
            calls = sum(1 for _ in store.calls())
        again = CliRunner().invoke(app, args)  # resumable: every answer and verdict comes from the store
        assert again.exit_code == 0, again.output
        with Store(run) as store:
            assert sum(1 for _ in store.calls()) == calls
    assert [a["arm"] for a in cfg["arms"]] == ["plain greedy", "plain sampled", "aad alpha=0", "aad alpha=1"]
    assert len(cfg["judge_stages"]) == 1  # the sweep judges its own arms once (core/provenance.py)
    res = CliRunner().invoke(app, ["report", str(run), "--json"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.output[res.output.index("{") :])
    rows = {r["arm"]: r for r in doc["tables"]["mitigation_card_aad"]["rows"]}
    n_questions = rows["plain greedy"]["answers"]
    assert n_questions > 0 and rows["plain sampled"]["answers"] == 2 * n_questions
    assert all(r["judged"] == r["answers"] for r in rows.values())  # the scripted judge reads every answer
    # random-weight text never abstains ('cannot', 'not aware') nor cites ('According to'): the scripted judge
    # calls every answer hallucinated, so every arm's rate is 1 and no strength changes it
    assert all(r["rate"] == 1.0 for r in rows.values())
    assert rows["aad alpha=0"]["rate_change"] == 0.0 and rows["aad alpha=1"]["rate_change"] == 0.0
    # alpha 0 samples through the mitigation decoder's own seeded generator, not generate()'s: measured, not assumed
    assert 0.0 <= rows["aad alpha=0"]["agreement"] <= 1.0
    assert rows["aad alpha=1"]["pairs"] == 2 * n_questions and rows["aad alpha=1"]["ms_per_token"] > 0
    assert rows["aad alpha=1"]["cost_ratio"] is not None
