"""The one outcome rule (core/outcome.py) is applied by a step before it records itself: 'mishap answer', 'mitigation
sweep' and 'canary' failing on more than the share exit 2 with one line and record nothing (the report's tables,
the sweep's card and the canary's verdict never read a failed step as complete); --allow-partial keeps and records
what succeeded. Each case runs the user's command against a scripted loopback server on a MISHAP run."""

from __future__ import annotations

import json

from halluscope.core.store import Store
from support import scripted
from support.chat_server import ChatServer, Reply
from support.hostile_helpers import assert_clean_failure, flat, run_cli
from support.tiny_audio_lm import qwen2_audio_dir  # noqa: F401 - fixture

DOWN = Reply(status=500, body='{"error": {"message": "down"}}')


def _question(req) -> str:
    return scripted.text_of(req).rsplit("Question: ", 1)[-1]


def _down_on(words: tuple[str, ...], *, judge: bool):
    """The scripted MISHAP server, failing the answer (or judge) requests about the clips named by ``words``."""
    base = scripted.make_script({})

    def script(req, n):
        is_judge = scripted.text_of(req).startswith("You are a groundedness judge")
        if is_judge == judge and any(w in _question(req) for w in words):
            return DOWN
        return base(req, n)

    return script


MUSIC = ("piano", "Mridangam")  # the two music clips' questions: 3 or 4 of 12 (more than 10%)


def _llm_config(tmp_path, monkeypatch):
    cfg = tmp_path / "llm.json"
    cfg.write_text(json.dumps({"openai": {"max_retries": 0, "backoff_base_s": 0}}), encoding="utf-8")
    monkeypatch.setenv("HALLUSCOPE_LLM_CONFIG", str(cfg))
    monkeypatch.setenv("OPENAI_API_KEY", "k")


def _answer_stages(run, command: str) -> set[str]:
    with Store(run) as store:
        return {k for m in store.manifests() if m.command == command for k in m.stages if k.startswith("answers")}


def test_mishap_answer_failing_on_too_many_questions_is_not_recorded(tmp_path, capsys, monkeypatch):
    run = scripted.build_run(tmp_path, monkeypatch, judge=False, seeds=(0,), per_category=1)
    _llm_config(tmp_path, monkeypatch)
    before = _answer_stages(run, "mishap answer")
    args = ["mishap", "answer", run, "--model", "openai/alm-2"]
    with ChatServer(_down_on(MUSIC, judge=False)) as srv:
        monkeypatch.setenv("OPENAI_BASE_URL", srv.url)
        code, out = run_cli(capsys, monkeypatch, *args)
    assert_clean_failure(code, out, "mishap answer: step 'answers of openai/alm-2' failed on", "--allow-partial")
    assert "what succeeded is kept in the run's store" in flat(out)
    assert _answer_stages(run, "mishap answer") == before  # not recorded: the tables do not read these answers
    # the rerun asks only the failed questions again; the server now fails the piano clip's only
    with ChatServer(_down_on(("piano",), judge=False)) as srv:
        monkeypatch.setenv("OPENAI_BASE_URL", srv.url)
        code, out = run_cli(capsys, monkeypatch, *args, "--allow-partial")
    assert code == 0, out
    assert _answer_stages(run, "mishap answer") - before  # recorded, with what succeeded


def test_mitigation_sweep_whose_judge_fails_on_too_many_answers_is_not_recorded(
    tmp_path,
    capsys,
    monkeypatch,
    qwen2_audio_dir,  # noqa: F811
):
    # a tiny random-weight Qwen2-Audio answers 3 arms (plain greedy, plain sampled, aad alpha=0) x 12 questions
    run = scripted.build_run(tmp_path, monkeypatch, judge=False, seeds=(0,), per_category=1)
    _llm_config(tmp_path, monkeypatch)
    args = ["mitigation", "sweep", run, "--model", f"hf-audio/{qwen2_audio_dir}", "--method", "aad"]
    args += ["--strength", "0", "--seeds", "0", "--judge", "openai/judge", "--max-tokens", "2"]
    # no card from a failed sweep; the rerun judges only the failed answers again
    _fails_then_kept(capsys, monkeypatch, run, args, "mitigation sweep", "step 'judgements'", judge=True)


def test_canary_failing_on_too_many_calls_is_not_recorded(tmp_path, capsys, monkeypatch):
    run = scripted.build_run(tmp_path, monkeypatch, judge=False, seeds=(0,), per_category=1)
    _llm_config(tmp_path, monkeypatch)
    args = ["canary", run, "--model", "openai/alm", "--n", "12"]
    # the real clip and the three ablations of 3-4 questions fail; no verdict from a failed canary; the rerun asks
    # only the failed calls again
    _fails_then_kept(capsys, monkeypatch, run, args, "canary", "step 'canary openai/alm (mishap)'", judge=False)


def _fails_then_kept(capsys, monkeypatch, run, args, command: str, step: str, *, judge: bool) -> None:
    """``command`` fails (exit 2, one line) when the server is down on the music clips and records nothing; with
    ``--allow-partial``, against a server down on fewer clips, it succeeds and records itself."""
    with ChatServer(_down_on(MUSIC, judge=judge)) as srv:
        monkeypatch.setenv("OPENAI_BASE_URL", srv.url)
        code, out = run_cli(capsys, monkeypatch, *args)
    assert_clean_failure(code, out, f"{command}: {step} failed on", "--allow-partial")
    with Store(run) as store:
        assert store.latest_manifest(command) is None
    with ChatServer(_down_on(("piano",), judge=judge)) as srv:
        monkeypatch.setenv("OPENAI_BASE_URL", srv.url)
        code, out = run_cli(capsys, monkeypatch, *args, "--allow-partial")
    assert code == 0, out
    with Store(run) as store:
        assert store.latest_manifest(command) is not None
