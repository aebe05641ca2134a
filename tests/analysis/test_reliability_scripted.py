"""Judge reliability in 'halluscope report' of a MISHAP run built on the scripted loopback server: two judges (the
real openai client; the script reads verdicts off each answer, so the two agree) and two human annotators."""

import json

import pytest
from typer.testing import CliRunner

from halluscope.backends.llm import LLMConfig
from halluscope.cli.main import app
from halluscope.core.records import GroundednessJudgement, MishapAnnotation
from halluscope.core.store import Store
from halluscope.mishap.judge import run_judge
from support import scripted
from support.chat_server import ChatServer


@pytest.mark.slow  # the scripted MISHAP build: espeak-ng clips, about 40 s on the busy 2-core machine
def test_report_of_a_judged_mishap_run_has_judge_reliability(tmp_path, monkeypatch):
    run = scripted.build_run(tmp_path, monkeypatch, judge=True, seeds=(0,), per_category=1)
    with ChatServer(scripted.make_script({})) as srv:
        monkeypatch.setenv("OPENAI_BASE_URL", srv.url)
        run_judge(run, "openai/judge2", config=LLMConfig(openai={"max_retries": 0}), quiet=True)
    with Store(run) as store:
        fp = store.latest_manifest("mishap judge").stages["judge"]
        verdicts = {g.answer_id: g.verdict for g in store.results("mishap.judge", fp, GroundednessJudgement).values()}
        ids = sorted(verdicts)
        for n, aid in enumerate(ids):  # ann agrees with the judges everywhere, bob flips every other answer
            store.save_label(MishapAnnotation(answer_id=aid, annotator="ann", label=verdicts[aid], created=1.0))
            flip = {"grounded": "hallucinated", "hallucinated": "grounded"}[verdicts[aid]] if n % 2 else verdicts[aid]
            store.save_label(MishapAnnotation(answer_id=aid, annotator="bob", label=flip, created=1.0))
    res = CliRunner().invoke(app, ["report", str(run), "--json"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.output[res.output.index("{") :])
    assert any(s["title"].startswith("Judge reliability") for s in doc["sections"])
    row = doc["tables"]["judge_alpha"]["rows"][0]
    assert (row["judges"], row["humans"], row["items"]) == (2, 2, len(ids))
    assert row["alpha_judges"] == pytest.approx(1.0) and row["alpha"] < 1.0  # bob's flips lower it
    # the humans tie on every flipped answer, so the reference is the unflipped half, where no judge errs
    panel = {r["judge"]: r for r in doc["tables"]["judge_panel"]["rows"]}
    assert panel["panel (majority of 2)"]["n_reference"] == (len(ids) + 1) // 2
    assert all(r["accuracy"] == 1.0 for r in panel.values())
