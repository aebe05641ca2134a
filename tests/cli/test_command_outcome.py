"""Fail loudly: every engine spec is checked before any work, and a command whose step produced nothing or failed
on too many items exits 2 with one line naming the cause and the fix (core/outcome.py); --allow-partial keeps a
partial result. Each case runs the user's command through the real entry point."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from halluscope.backends.speech.route import PRESETS
from halluscope.core.errors import HalluscopeError
from halluscope.core.outcome import MAX_FAILED_SHARE, PartialFailure, StepOutcome, check_outcomes
from halluscope.core.store import Store
from support import fakes, scripted
from support.chat_server import ChatServer, Reply, user_text
from support.hostile_helpers import assert_clean_failure, flat, run_cli


def _build(run: Path, corpus: Path, *extra: str) -> list[str]:
    return ["build", "spoken", str(run), "--corpus", str(corpus), "--langs", "en", "--tts", "espeak", *extra]


@pytest.fixture
def corpus(tmp_path):
    return fakes.write_corpus(tmp_path / "corpus.jsonl")


# ---- the rule itself ----------------------------------------------------------------------------------------


def test_the_rule_fails_on_nothing_produced_and_on_more_than_the_share():
    n = 20
    over = int(n * MAX_FAILED_SHARE) + 1  # just over the share
    within = int(n * MAX_FAILED_SHARE)
    failed = {f"i{k}": "boom" for k in range(over)}
    with pytest.raises(PartialFailure, match=r"step 's' failed on .* of its items .*--allow-partial"):
        check_outcomes([StepOutcome("s", n, n - over, failed, fix="fix it")], command="c")
    notes = check_outcomes([StepOutcome("s", n, n - over, failed)], command="c", allow_partial=True)
    assert len(notes) == 1 and f"{n - over} of {n} items done, {over} failed" in notes[0]
    ok = {f"i{k}": "boom" for k in range(within)}
    assert len(check_outcomes([StepOutcome("s", n, n - within, ok)], command="c")) == (1 if within else 0)
    everything = {f"i{k}": "boom" for k in range(n)}
    for allow in (False, True):  # nothing to keep: --allow-partial does not help
        with pytest.raises(PartialFailure, match="produced nothing.*first: 'i0': boom.*Fix: fix it"):
            check_outcomes([StepOutcome("s", n, 0, everything, fix="fix it")], command="c", allow_partial=allow)
    assert check_outcomes([StepOutcome("s", 0, 0)], command="c") == []  # nothing asked: nothing failed


# ---- (a) every spec checked before any work -------------------------------------------------------------------


def test_an_unknown_engine_option_is_one_error_before_any_work(tmp_path, capsys, monkeypatch, corpus):
    run = tmp_path / "run"
    code, out = run_cli(capsys, monkeypatch, *_build(run, corpus, "--asr", "whisper/base?beam=5"))
    assert_clean_failure(code, out, "'whisper/base?beam=5'", "unknown option(s) beam", "beam_size", "Fix:")
    assert not run.exists()  # nothing written, no TTS work
    code, out = run_cli(capsys, monkeypatch, *_build(run, corpus, "--asr", "test-fixed", "-o", "bogus=1"))
    assert_clean_failure(code, out, "generator 'rules?bogus=1'", "unknown option(s) bogus", "tries", "Fix:")
    code, out = run_cli(
        capsys, monkeypatch, *_build(run, corpus, "--tts", "en=espeak?rate=200", "--asr", "whisper/base?beam=5")
    )
    # every engine's problem in the one error, the TTS's and the ASR's
    assert_clean_failure(code, out, "2 speech engines cannot be made", "unknown option(s) rate", "rate_wpm")
    assert "unknown option(s) beam" in flat(out) and not run.exists()


def test_the_paper_preset_without_weights_names_every_engine_before_any_work(tmp_path, capsys, monkeypatch, corpus):
    paths = [s.partition("/")[2].partition("?")[0] for kind in ("tts", "asr") for s in PRESETS["paper"][kind].values()]
    if any(Path(p).exists() for p in paths):
        pytest.skip("some of the paper's weights are installed here")
    run = tmp_path / "run"
    args = ["build", "spoken", str(run), "--corpus", str(corpus), "--tts", "paper", "--asr", "paper"]
    code, out = run_cli(capsys, monkeypatch, *args)
    # five distinct engines: xtts (en), silero (ru), espnet-tts (kk), whisper (en, ru), hf-asr (kk); not the first only
    assert_clean_failure(code, out, "5 speech engines cannot be made", "nothing was run", "Fix:")
    for engine in ("xtts", "silero", "espnet-tts", "whisper", "hf-asr"):
        assert f"{engine}/" in out or f"{engine}:" in out, (engine, out)
    assert not run.exists()


def test_a_glued_option_is_read_as_an_option_not_part_of_the_model_name():
    from halluscope.backends.speech.asr import ASR_BACKENDS

    asr = ASR_BACKENDS.create("whisper/base?beam_size=1")  # was: a model named 'base?beam_size=1', every clip failed
    assert (asr.model, asr.beam_size) == ("base", 1)
    assert asr.spec == "whisper/base?beam_size=1" and ASR_BACKENDS.create("whisper/base").spec == "whisper/base"
    assert "beam_size" in ASR_BACKENDS.options_of("whisper")
    with pytest.raises(HalluscopeError, match=r"'whisper/base\?beam_size=wide': beam_size: .*integer.*Fix: "):
        ASR_BACKENDS.create("whisper/base?beam_size=wide")  # a value of the wrong type: one line, the option named


# ---- (b) a step that produced nothing, or too little ----------------------------------------------------------


def test_build_whose_every_asr_item_fails_exits_2(tmp_path, capsys, monkeypatch, corpus):
    empty = tmp_path / "not-a-model"  # a folder without CTranslate2 weights: every clip's transcription fails
    empty.mkdir()
    run = tmp_path / "run"
    args = _build(run, corpus, "--asr", f"whisper/{empty}", "--rewrites-per-article", "0")
    code, out = run_cli(capsys, monkeypatch, *args)
    assert_clean_failure(code, out, "build spoken: step 'asr", "produced nothing: 0 of 3 items done, 3 failed", "Fix:")
    assert "transcripts in" not in out  # no 'built ... 0 transcripts'
    code, out = run_cli(capsys, monkeypatch, *args, "--allow-partial")  # nothing to keep: still exit 2
    assert_clean_failure(code, out, "produced nothing")


def _junk(req, n):
    return Reply(content="Sorry, I cannot help with that.")


def test_build_whose_every_rewrite_failed_exits_2_before_any_speech(tmp_path, capsys, monkeypatch, corpus):
    run = tmp_path / "run"
    args = [
        *_build(run, corpus, "--asr", "test-fixed", "--generator", "openai/gen", "--rewrites-per-article", "1"),
        "--llm-config",
        str(_no_retries(tmp_path)),
    ]
    fakes.register()
    with ChatServer(_junk) as srv:
        monkeypatch.setenv("OPENAI_BASE_URL", srv.url)
        monkeypatch.setenv("OPENAI_API_KEY", "k")
        code, out = run_cli(capsys, monkeypatch, *args)
    assert_clean_failure(code, out, "step 'generate' produced nothing: 0 of 3 items done, 3 failed", "openai/gen")
    assert srv.count > 0 and not (run / "audio").exists()  # stopped before the TTS work


def _no_retries(tmp_path: Path) -> Path:
    cfg = tmp_path / "llm.json"
    cfg.write_text(json.dumps({"openai": {"max_retries": 0, "backoff_base_s": 0}}), encoding="utf-8")
    return cfg


def test_mishap_clips_filter_without_an_api_key_fails_before_filtering(tmp_path, capsys, monkeypatch):
    manifest = scripted.write_clips(tmp_path / "data")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    run = tmp_path / "run"
    args = ["mishap", "clips", str(run), "--manifest", str(manifest), "--filter-llm", "openai/filter-model"]
    code, out = run_cli(capsys, monkeypatch, *args)
    assert_clean_failure(code, out, "no API key for openai/filter-model", "export OPENAI_API_KEY")
    assert "dropped" not in out
    with Store(run) as store:
        assert store.latest_manifest("mishap clips") is None  # the step is not recorded


def test_mishap_clips_filter_failing_on_too_many_clips_exits_2(tmp_path, capsys, monkeypatch):
    manifest = scripted.write_clips(tmp_path / "data")

    def half_down(req, n):  # the server fails the piano, doorbell and bottle clips' requests: 3 of 7
        if any(w in user_text(req) for w in ("piano", "doorbell", "bottle")):
            return Reply(status=500, body='{"error": {"message": "down"}}')
        return Reply(content=json.dumps({"informative": True, "reason": "scripted"}))

    run = tmp_path / "run"
    args = ["mishap", "clips", str(run), "--manifest", str(manifest), "--filter-llm", "openai/filter-model"]
    with ChatServer(half_down) as srv:
        monkeypatch.setenv("OPENAI_BASE_URL", srv.url)
        monkeypatch.setenv("OPENAI_API_KEY", "k")
        code, out = run_cli(capsys, monkeypatch, *args, "--llm-config", str(_no_retries(tmp_path)))
        assert_clean_failure(code, out, "mishap clips: step 'informativeness filter' failed on", "--allow-partial")
        with Store(run) as store:
            assert store.latest_manifest("mishap clips") is None  # the step is not recorded
        args[2] = str(tmp_path / "partial")  # a fresh run (a rerun of the first asks only the failed clips again)
        code, out = run_cli(capsys, monkeypatch, *args, "--llm-config", str(_no_retries(tmp_path)), "--allow-partial")
    assert code == 0, out
    assert "the informativeness filter failed on 3 clip(s)" in flat(out) and "4 kept" in flat(out)


def test_a_mishap_step_failing_on_too_many_items_exits_2_and_allow_partial_keeps_the_rest(
    tmp_path, capsys, monkeypatch
):
    manifest = scripted.write_clips(tmp_path / "data")
    base = scripted.make_script({})

    def writer_down_for_three_clips(req, n):  # the question writer fails on the piano, doorbell and bottle clips
        if "adversarial" in user_text(req) and any(w in user_text(req) for w in ("piano", "doorbell", "bottle")):
            return Reply(status=500, body='{"error": {"message": "down"}}')
        return base(req, n)

    cfg = str(_no_retries(tmp_path))
    with ChatServer(writer_down_for_three_clips) as srv:
        monkeypatch.setenv("OPENAI_BASE_URL", srv.url)
        monkeypatch.setenv("OPENAI_API_KEY", "k")
        for run, partial in ((tmp_path / "run", ()), (tmp_path / "partial", ("--allow-partial",))):
            code, out = run_cli(capsys, monkeypatch, "mishap", "clips", run, "--manifest", manifest)
            assert code == 0, out
            questions = ("mishap", "questions", run, "--generator", "openai/writer", "--llm-config", cfg)
            code, out = run_cli(capsys, monkeypatch, *questions, *partial)
            if not partial:
                assert_clean_failure(code, out, "mishap questions: step 'questions' failed on", "--allow-partial")
    assert code == 0 and "failed" in out, out  # kept what succeeded, said how many failed


def test_detect_failing_on_too_many_items_exits_2_and_allow_partial_keeps_the_rest(tmp_path, capsys, monkeypatch):
    run = fakes.spoken_run(tmp_path)  # six English samples: three originals, three rewrites

    def down_for_two_articles(req, n):  # the detector's server fails on two articles' texts (original and rewrite)
        if any(w in user_text(req) for w in ("Bank", "Kazatomprom")):
            return Reply(status=500, body='{"error": {"message": "down"}}')
        return Reply(content='{"binary": "no"}')

    with ChatServer(down_for_two_articles) as srv:
        monkeypatch.setenv("OPENAI_API_KEY", "k")
        args = ["detect", run, "--detector", "openai/zs", "--input", "text", "-o", f"base_url={srv.url}"]
        args += ["-o", "max_retries=0"]
        code, out = run_cli(capsys, monkeypatch, *args)
        assert_clean_failure(code, out, "detect: step 'detect openai/zs task=binary input=text' failed on", "Fix:")
        # other prompts: a detect run of its own that sends every request (a rerun of the first would send only
        # its failed items' requests, all failing: the server outage error)
        code, out = run_cli(capsys, monkeypatch, *args, "--prompting", "cot", "--allow-partial")
    assert code == 0 and "stored" in out, out
