"""'openai/<model>' against a vLLM-style OpenAI-compatible server, text and audio content parts."""

import base64
import json
import os
import shlex
import stat
import sys

import numpy as np
import pytest

from halluscope.backends.audio_lm import create_audio_backend, plan_audio, with_audio
from halluscope.backends.llm import LLMConfig, complete_all
from halluscope.backends.vllm import serve, serving
from halluscope.core.errors import HalluscopeError
from halluscope.core.store import Store
from support import TESTS
from support.chat_server import ChatServer, Reply

VLLM_MODEL = "Qwen/Qwen2-Audio-7B-Instruct"  # vLLM serves a model under its hub name by default


def _clip():
    t = np.arange(16_000) / 16_000
    return plan_audio(
        (0.2 * np.sin(2 * np.pi * 440 * t)).astype(np.float32), 16_000, window_s=None, audio_policy="truncate"
    ).clips[0]


def test_openai_backend_reaches_a_vllm_server_by_environment(tmp_path, monkeypatch):
    clip = _clip()
    with ChatServer(lambda req, n: Reply(content='{"binary": "yes"}')) as srv:
        monkeypatch.setenv("OPENAI_BASE_URL", srv.url)
        monkeypatch.setenv("OPENAI_API_KEY", "EMPTY")  # what a vLLM server without --api-key accepts
        b = create_audio_backend(f"openai/{VLLM_MODEL}", config=LLMConfig(), max_retries=0)
        req = with_audio(
            b.request(
                [{"role": "user", "content": "Is there a hallucination?"}], params={"max_tokens": 64, "temperature": 0}
            ),
            [clip],
        )
        (r,), _ = complete_all(b, [req], store=Store(tmp_path))
    body = srv.requests[0]
    assert body["model"] == VLLM_MODEL and srv.headers[0]["authorization"] == "Bearer EMPTY"
    parts = body["messages"][0]["content"]
    assert [p["type"] for p in parts] == ["input_audio", "text"]
    assert base64.b64decode(parts[0]["input_audio"]["data"]) == clip.wav and parts[0]["input_audio"]["format"] == "wav"
    assert r.status == "ok" and r.text == '{"binary": "yes"}'


@pytest.fixture
def fake_vllm(tmp_path):
    exe = tmp_path / "vllm"
    # quoted: the clone may lie under a path with spaces
    exe.write_text(
        f'#!/bin/sh\nexec {shlex.quote(sys.executable)} {shlex.quote(str(TESTS / "support" / "fake_vllm.py"))} "$@"\n'
    )
    exe.chmod(exe.stat().st_mode | stat.S_IEXEC)
    return exe


def test_serve_starts_a_local_model_and_stops_it(tmp_path, fake_vllm, monkeypatch):
    monkeypatch.setenv("FAKE_VLLM_LOG", str(tmp_path / "requests.jsonl"))
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    clip = _clip()
    with serving("openai/local-audio", tmp_path / "weights", binary=str(fake_vllm), timeout_s=30) as url:
        assert os.environ["OPENAI_BASE_URL"] == url
        b = create_audio_backend("openai/local-audio", config=LLMConfig(), max_retries=0)
        req = with_audio(b.request([{"role": "user", "content": "hi"}]), [clip])
        (r,), _ = complete_all(b, [req], store=Store(tmp_path / "run"))
    assert "OPENAI_BASE_URL" not in os.environ  # restored
    assert r.text == "served"
    sent = json.loads((tmp_path / "requests.jsonl").read_text().splitlines()[0])
    assert sent["model"] == "local-audio" and sent["messages"][0]["content"][0]["type"] == "input_audio"
    import urllib.request

    with pytest.raises(OSError):  # the server is gone
        urllib.request.urlopen(url.removesuffix("/v1") + "/v1/models", timeout=2)


def test_serve_reports_a_server_that_dies(tmp_path):
    bad = tmp_path / "vllm"
    bad.write_text("#!/bin/sh\necho 'CUDA out of memory' >&2\nexit 3\n")
    bad.chmod(0o755)
    with pytest.raises(HalluscopeError, match="exited with code 3"):
        with serve(tmp_path, served_name="m", binary=str(bad), log=tmp_path / "log"):
            pass
    assert "out of memory" in (tmp_path / "log").read_text()
    with pytest.raises(HalluscopeError, match="openai/<name>"):
        with serving("hf/x", tmp_path):
            pass
