"""'halluscope mitigation sweep' answers and judges a population of its own (core/provenance.py): on a scripted MISHAP
run already answered by openai/alm and judged by openai/judge, a sweep of a tiny random-weight Qwen2-Audio
(tests/support/tiny_audio_lm) with another judge leaves every MISHAP table of the report as it was (Tables 1, 2, 8,
11, 12, the counts, the judge), asks its judge about its own answers only, and its card reads them."""

import json

from typer.testing import CliRunner

from halluscope.cli.main import app
from halluscope.core.records import MishapAnswer
from halluscope.core.runs import latest_runs
from halluscope.core.store import Store
from halluscope.mishap.answers import judgeable
from support import scripted
from support.chat_server import ChatServer
from support.tiny_audio_lm import qwen2_audio_dir  # noqa: F401 - fixture


def _report(run) -> dict:
    res = CliRunner().invoke(app, ["report", str(run), "--json"])
    assert res.exit_code == 0, res.output
    return json.loads(res.output[res.output.index("{") :])


def _mishap_tables(doc: dict) -> dict:
    return {k: t["rows"] for k, t in doc["tables"].items() if k.startswith("mishap_")}


def test_a_sweep_changes_no_other_table_and_judges_only_its_own_answers(tmp_path, monkeypatch, qwen2_audio_dir):  # noqa: F811
    run = scripted.build_run(tmp_path, monkeypatch, seeds=(), per_category=1)  # openai/alm, judged by openai/judge
    before = _report(run)
    assert before["tables"]["mishap_table1"]["rows"]
    with Store(run) as store:
        judge_runs = [m for m in store.manifests() if m.command == "mishap judge"]
    args = ["mitigation", "sweep", str(run), "--model", f"hf-audio/{qwen2_audio_dir}", "--method", "aad"]
    args += ["--strength", "1", "--seeds", "0", "--judge", "openai/sweep-judge", "--max-tokens", "2"]
    with ChatServer(scripted.make_script({})) as srv:
        monkeypatch.setenv("OPENAI_BASE_URL", srv.url)
        res = CliRunner().invoke(app, args)
        assert res.exit_code == 0, res.output
        asked = [scripted.text_of(r) for r in srv.requests if r["model"] == "sweep-judge"]
    after = _report(run)
    assert _mishap_tables(after) == _mishap_tables(before)  # Tables 1, 2, 8, 11, 12, counts: as they were
    with Store(run) as store:
        assert [m for m in store.manifests() if m.command == "mishap judge"] == judge_runs  # the report's judge
    card = {r["arm"]: r for r in after["tables"]["mitigation_card_aad"]["rows"]}
    with Store(run) as store:  # the sweep's own answers, by arm, as its manifest records them
        sweep = next(r for r in latest_runs(store, "mitigation sweep"))
        judgeable_n = {
            a["arm"]: sum(judgeable(x) for x in store.results("mishap.answers", a["answers"], MishapAnswer).values())
            for a in sweep.config.arms
        }
    assert set(card) == set(judgeable_n) and sum(judgeable_n.values()) > 0
    assert all(card[arm]["judged"] == k for arm, k in judgeable_n.items())
    # the sweep's judge read each judgeable answer of the sweep's arms once, never openai/alm's answers
    assert len(asked) == sum(judgeable_n.values()) and not any("cannot establish more" in t for t in asked)


def test_a_sweep_arm_with_the_options_of_a_models_answers_leaves_them_in_the_tables(
    tmp_path, monkeypatch, qwen2_audio_dir
):  # noqa: F811
    """The sweep's plain greedy arm of a model answered greedily with the same --max-tokens is the same stage, reused:
    those answers stay the model's population in the tables (the sweep's arm is recorded apart, not taken from it)."""
    run = scripted.build_run(tmp_path, monkeypatch, seeds=(), per_category=1)
    local = f"hf-audio/{qwen2_audio_dir}"
    with ChatServer(scripted.make_script({})) as srv:
        monkeypatch.setenv("OPENAI_BASE_URL", srv.url)
        for args in (
            ["mishap", "answer", str(run), "--model", local, "--max-tokens", "2"],
            ["mishap", "judge", str(run), "--judge", "openai/judge"],
        ):
            res = CliRunner().invoke(app, args)
            assert res.exit_code == 0, res.output
        before = _report(run)
        answered = before["tables"]["mishap_counts"]["rows"][0]["answers"]
        args = ["mitigation", "sweep", str(run), "--model", local, "--method", "aad", "--strength", "1"]
        res = CliRunner().invoke(app, [*args, "--seeds", "0", "--judge", "openai/judge", "--max-tokens", "2"])
        assert res.exit_code == 0, res.output
    after = _report(run)
    assert after["tables"]["mitigation_card_aad"]["rows"]
    assert after["tables"]["mishap_counts"]["rows"][0]["answers"] == answered  # openai/alm's and the local model's
    assert _mishap_tables(after) == _mishap_tables(before)
