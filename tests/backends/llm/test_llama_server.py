"""A real OpenAI-compatible server: llama-cpp-python's, on loopback, serving the SmolLM2-135M-Instruct GGUF, driven
through the real openai client by generation, judging, zero-shot detection prompts and a MISHAP-style question,
with a kill-and-resume check. Slow to build: marked 'llama_server', skipped unless scripts/build_llama_server.sh
has built .venv-llama (run: pytest -m llama_server tests/backends/llm/test_llama_server.py)."""

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[3]
PY = ROOT / ".venv-llama" / "bin" / "python"

pytestmark = pytest.mark.llama_server


def _built() -> bool:
    return (
        PY.exists()
        and subprocess.run([str(PY), "-c", "import llama_cpp.server"], capture_output=True, check=False).returncode == 0
    )


if not _built():
    pytest.skip("llama-cpp-python's server is not built: run scripts/build_llama_server.sh", allow_module_level=True)

from halluscope.backends.llm import GenerateOptions, LLMConfig, complete_all, create_backend
from halluscope.backends.llm._gguf import packaged_gguf
from halluscope.core.errors import ItemError
from halluscope.core.records import Article
from halluscope.core.store import Store
from halluscope.spoken.detect.zeroshot import messages as zero_shot_messages
from halluscope.spoken.detect.zeroshot_parse import parse_reply
from halluscope.spoken.generate import LLMGenerator
from halluscope.spoken.judge.prompt import JUDGE_PARAMS, judge_messages, parse_judgement

TEXT = (
    "The National Bank of Kazakhstan raised the base rate to 16.75 percent on March 12, 2024, because of "
    "inflation. Governor Timur Suleimenov said prices rose sharply in Astana."
)


@pytest.fixture(autouse=True)
def _only_when_asked(request):
    """Behind its marker: the default run skips these minutes-long tests even when the server is built."""
    if "llama_server" not in (request.config.option.markexpr or ""):
        pytest.skip("run with -m llama_server")


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start(port: int) -> subprocess.Popen:
    proc = subprocess.Popen(
        [
            str(PY),
            "-m",
            "llama_cpp.server",
            "--model",
            str(packaged_gguf("smollm2-135m-instruct")),
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--n_ctx",
            "2048",
            "--n_threads",
            "1",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    for _ in range(600):  # polled, not a wall-clock bound on the test: the server says when it is up
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/models", timeout=1)
            return proc
        except OSError:
            if proc.poll() is not None:
                raise RuntimeError(f"the llama.cpp server exited with {proc.returncode}") from None
            time.sleep(0.5)
    proc.kill()
    raise RuntimeError("the llama.cpp server did not come up")


def stop(proc: subprocess.Popen) -> None:
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()


@pytest.fixture(scope="module")
def server():
    port = _port()
    proc = start(port)
    yield port, proc
    if proc.poll() is None:
        stop(proc)


def backend(port: int, **options):
    return create_backend(
        "openai/smollm2",
        config=LLMConfig(),
        base_url=f"http://127.0.0.1:{port}/v1",
        **{"timeout_s": 120, "backoff_base_s": 0.05, "max_retries": 1, **options},
    )


def test_generation_judging_and_zero_shot_through_the_real_server(server, tmp_path):
    port, _ = server
    b = backend(port)
    gen = LLMGenerator(b, GenerateOptions(retries=1, max_tokens=24))
    with pytest.raises(ItemError, match=r"#0 truncated: reply cut at max_tokens=24.*#1 truncated: .*retry 1"):
        gen.rewrite(Article(id="a", language="en", text=TEXT), type="fabrication", severity="mild", seed=0)
    judge = b.request(
        judge_messages(original=TEXT, rewritten=TEXT.replace("16.75", "18"), type="fabrication", severity="mild"),
        params={**JUDGE_PARAMS, "max_tokens": 48},
    )
    zs = b.request(
        zero_shot_messages("binary", medium="text", prompting="direct", system=None, text=TEXT),
        params={"max_tokens": 32, "temperature": 0},
    )
    question = b.request(
        [{"role": "user", "content": "Write one question about a recording of a dog barking."}],
        params={"max_tokens": 32},
    )
    out, stats = complete_all(b, [judge, zs, question], store=Store(tmp_path / "run"))
    assert [r.status for r in out] == ["ok", "ok", "ok"] and stats.calls == 3 and all(r.text for r in out)
    scores, why = parse_judgement(out[0].text, "fabrication")
    assert (why is None) == bool(scores)
    assert parse_reply(out[1].text, "binary").status in ("ok", "unparsable", "refusal")
    again, stats = complete_all(b, [judge, zs, question], store=Store(tmp_path / "run"))
    assert stats.calls == 0 and [r.text for r in again] == [r.text for r in out]


def test_zero_shot_detect_on_a_built_run_through_the_real_server(server, tmp_path):
    """The 'detect' stage itself: zero-shot binary detection of a small rules build, every reply read or reported."""
    from halluscope.spoken.build import BuildConfig, build_spoken
    from halluscope.spoken.detect import detect
    from support.tiny_encoder import register_text_speech

    port, _ = server
    register_text_speech()
    run = tmp_path / "spoken"
    build_spoken(
        run,
        BuildConfig(
            corpus="demo",
            langs=("en",),
            tts="test-bytes",
            asr="test-bytes",
            seed=3,
            rewrites_per_article=1,
            articles_per_language=3,
        ),
        quiet=True,
    )
    options = {"base_url": f"http://127.0.0.1:{port}/v1", "timeout_s": 300, "max_tokens": 24}
    res = detect(run, detector="openai/smollm2", task="binary", input="text", options=options)
    assert res.predictions and all(p.status in ("ok", "unparsable", "refusal") for p in res.predictions.values())
    again = detect(run, detector="openai/smollm2", task="binary", input="text", options=options)
    assert again.predictions == res.predictions


def test_mishap_steps_through_the_real_server(server, tmp_path):
    """Every MISHAP LLM step (questions and their check, rubrics, the cascade's answers, the judge) on the server,
    through the MISHAP quickstart's chain with openai/ specs; the protocol section counts what the model did."""
    from halluscope.mishap.quickstart import protocol_summary, run_quickstart

    port, _ = server
    config = LLMConfig(openai={"base_url": f"http://127.0.0.1:{port}/v1", "timeout_s": 300, "max_retries": 1})
    res = run_quickstart(
        tmp_path / "mishap",
        clips=1,
        llm="openai/smollm2",
        model="cascade/whisper/base+openai/smollm2?language=en",
        config=config,
        quiet=True,
    )
    rows = {r["step"]: r for r in res.protocol}
    assert rows["questions"]["calls"] >= 2 and rows["questions"]["accepted"] + rows["questions"]["failed"] == 2
    assert all(r["call_errors"] == 0 for r in rows.values())  # the server answered every call
    with Store(tmp_path / "mishap") as store:
        calls = list(store.calls())
    backends = {c["backend"].partition("/")[0] for c in calls}
    if rows["questions"]["accepted"]:  # a question got through: every later step asked the server
        assert backends == {"openai", "cascade"} and rows["rubrics"]["calls"] and rows["judge"]["calls"]
    else:  # SmolLM2-135M wrote none (seen here): the report says where the chain stopped
        assert backends == {"openai"}
        page = (res.report.parent / "mishap.md").read_text(encoding="utf-8")
        assert "The chain stopped at questions: none of its 2 items was accepted" in page
    again = run_quickstart(
        tmp_path / "mishap",
        clips=1,
        llm="openai/smollm2",
        model="cascade/whisper/base+openai/smollm2?language=en",
        config=config,
        quiet=True,
    )
    assert again.protocol == protocol_summary(tmp_path / "mishap")
    with Store(tmp_path / "mishap") as store:
        assert len(list(store.calls())) == len(calls)  # a rerun is served from the store


def test_cascade_answers_through_the_real_server(server, tmp_path):
    """The MISHAP answers step's model, cascade/whisper/base+openai/smollm2: Whisper base hears an espeak-ng clip
    (the quickstart's own), the server answers from the transcript; a rerun is served from the store."""
    import json

    from halluscope.backends.audio_lm import clip_of, create_audio_backend, with_audio
    from halluscope.mishap.quickstart import RATE, SPEECH, speech

    port, _ = server
    spec = "cascade/whisper/base+openai/smollm2?language=en"
    b = create_audio_backend(
        spec, config=LLMConfig(openai={"base_url": f"http://127.0.0.1:{port}/v1", "timeout_s": 300, "max_retries": 1})
    )
    ask = [{"role": "user", "content": "Which city does the train go to?"}]
    req = with_audio(b.request(ask, params={"max_tokens": 32}), [clip_of(speech(SPEECH[0]), RATE)])
    store = Store(tmp_path / "run")
    (out,), stats = complete_all(b, [req], store=store)
    assert out.status == "ok" and out.text and out.audio_delivered is True and stats.calls == 1
    (logged,) = [json.loads(c["request"]) for c in store.calls()]
    assert "paris" in logged["transcripts"][0].lower() and "Transcript of audio clip 1:" in json.dumps(logged)
    (again,), stats = complete_all(b, [req], store=Store(tmp_path / "run"))
    assert stats.calls == 0 and again.text == out.text


def test_kill_and_resume_loses_nothing_and_resends_nothing(tmp_path):
    """The server dies mid-run: answered requests stay answered; the rest fail, then resume on a new server."""
    port = _port()
    proc = start(port)
    try:
        b = backend(port, max_retries=0)
        reqs = [
            b.request([{"role": "user", "content": f"Say the number {i}."}], params={"max_tokens": 8}) for i in range(6)
        ]
        store = Store(tmp_path / "run")
        first, _ = complete_all(b, reqs[:3], store=store)
    finally:
        stop(proc)
    down, _ = complete_all(b, reqs, store=store)
    assert [r.status for r in down[:3]] == ["ok"] * 3 and all(r.cached for r in down[:3])
    assert all(r.status == "error" for r in down[3:])
    proc = start(port)
    try:
        up, stats = complete_all(b, reqs, store=store)
    finally:
        stop(proc)
    assert stats.from_store == 3 and stats.calls == 3 and all(r.status == "ok" for r in up)
    assert [r.text for r in up[:3]] == [r.text for r in first]


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-m", "llama_server", "-q"]))
