"""The one outcome rule (core/outcome.py) on 'mishap validity judge' and 'mishap ablation': a judge failing on more
than the share exits 2 with one line and records no run; --allow-partial keeps and records what was judged. Each
case runs the user's command against a scripted loopback server."""

from __future__ import annotations

import json

from halluscope.core.store import Store
from halluscope.mishap.ablation import COMMANDS
from support import scripted
from support.chat_server import ChatServer, Reply
from support.corpus_fixtures import write_jsonl
from support.hostile_helpers import assert_clean_failure, flat, run_cli

HALLU = [  # four HalluAudio responses (the validity study's input)
    {"audio": "s1.wav", "prompt": "Is there a dog barking?", "reference": "yes", "subset": "fsd_binary",
     "domain": "sound", "pred": "Yes, a dog is barking."},
    {"audio": "s2.wav", "prompt": "Is there a siren?", "reference": "yes", "subset": "fsd_binary",
     "domain": "sound", "pred": "I cannot tell from this audio whether there is a siren."},
    {"audio": "m1.wav", "prompt": "How many instruments?", "reference": "3", "subset": "multiple_music_count",
     "pred": "I cannot say how many instruments there are."},
    {"audio": "m2.wav", "prompt": "How many instruments?", "reference": "1", "subset": "single_music_count",
     "pred": "There are four instruments: piano, drums, violin and flute."},
]  # fmt: skip

DOWN = Reply(status=500, body='{"error": {"message": "down"}}')


def _no_retries(tmp_path, monkeypatch):
    cfg = tmp_path / "llm.json"
    cfg.write_text(json.dumps({"openai": {"max_retries": 0, "backoff_base_s": 0}}), encoding="utf-8")
    monkeypatch.setenv("HALLUSCOPE_LLM_CONFIG", str(cfg))
    monkeypatch.setenv("OPENAI_API_KEY", "k")


def _case(prompt: str) -> str:
    return prompt.rsplit("Response: ", 1)[1].split("\n", 1)[0]  # the response judged, not the examples'


def test_validity_judge_failing_on_too_many_responses_exits_2_and_allow_partial_keeps_the_rest(
    tmp_path, capsys, monkeypatch
):
    _no_retries(tmp_path, monkeypatch)
    hallu = write_jsonl(tmp_path / "halluaudio.jsonl", HALLU)
    for run in (tmp_path / "study", tmp_path / "partial"):
        code, out = run_cli(capsys, monkeypatch, "mishap", "validity", "import", run, hallu, "--benchmark",
                            "halluaudio", "--model", "alm-1")  # fmt: skip
        assert code == 0, out
    run = tmp_path / "study"

    def down_on_one(req, n):  # the judge's server fails on the 'four instruments' response: 1 of 4
        case = _case(scripted.text_of(req))
        if "four instruments" in case:
            return DOWN
        return Reply(content=json.dumps({"verdict": "grounded", "stance": "asserts", "explanation": "scripted"}))

    args = ["mishap", "validity", "judge", run, "--judge", "openai/judge", "--retries", "0"]
    with ChatServer(down_on_one) as srv:
        monkeypatch.setenv("OPENAI_BASE_URL", srv.url)
        code, out = run_cli(capsys, monkeypatch, *args)
        assert_clean_failure(
            code, out, "mishap validity judge: step 'judge: ", "failed on 25% of its items",
            "3 of 4 items done, 1 failed", "openai/judge", "--allow-partial",
        )  # fmt: skip
        with Store(run) as store:
            assert store.latest_manifest(COMMANDS["validity"]) is None  # a failed judge run is not recorded
        # a fresh study (a rerun of the first asks only the failed response again, which fails: the outage error)
        run = args[3] = tmp_path / "partial"
        code, out = run_cli(capsys, monkeypatch, *args, "--allow-partial")
    assert code == 0, out
    assert "3 judged, 1 failed" in flat(out)
    with Store(run) as store:
        assert store.latest_manifest(COMMANDS["validity"]) is not None  # what succeeded, recorded


def test_ablation_failing_on_too_many_answers_exits_2_and_allow_partial_keeps_the_rest(tmp_path, capsys, monkeypatch):
    run = scripted.build_run(tmp_path, monkeypatch, judge=False, seeds=(0,), per_category=1)
    _no_retries(tmp_path, monkeypatch)
    base = scripted.make_script({})

    def music_down(req, n):  # the judge's server fails on the two music clips' questions: 3 or 4 of 12 answers
        prompt = scripted.text_of(req)
        question = prompt.rsplit("Question: ", 1)[-1].split("\n", 1)[0]
        if prompt.startswith("You are a groundedness judge") and any(w in question for w in ("piano", "Mridangam")):
            return DOWN
        return base(req, n)

    args = ["mishap", "ablation", run, "--judge", "openai/judge", "--configs", "prompts", "--all-answers"]
    args += ["--retries", "0"]
    with ChatServer(music_down) as srv:
        monkeypatch.setenv("OPENAI_BASE_URL", srv.url)
        code, out = run_cli(capsys, monkeypatch, *args)
        assert_clean_failure(code, out, "mishap ablation: step 'judge: prompt v1' failed on", "--allow-partial")
        with Store(run) as store:
            assert store.latest_manifest(COMMANDS["ablation"]) is None
        # a fresh run (a rerun asks only the failed answers again, which fail: the server outage error)
        run = args[2] = scripted.build_run(tmp_path / "partial", monkeypatch, judge=False, seeds=(0,), per_category=1)
        monkeypatch.setenv("OPENAI_BASE_URL", srv.url)
        code, out = run_cli(capsys, monkeypatch, *args, "--allow-partial")
    assert code == 0, out
    assert "prompt v1:" in out and "failed" in out
    with Store(run) as store:
        assert store.latest_manifest(COMMANDS["ablation"]) is not None
