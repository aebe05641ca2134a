"""openai/<model> with input_audio content parts against a real loopback chat-completions server."""

import base64
import json

from halluscope.backends.audio_lm import (
    audio_window_s,
    create_audio_backend,
    plan_audio,
    with_audio,
)
from halluscope.backends.llm import LLMConfig, complete_all
from halluscope.core.store import Store
from support.chat_server import ChatServer, Reply
from support.tiny_audio_lm import clip45, espeak, omni_dir, qwen2_audio_dir  # noqa: F401 - fixtures


def test_audio_parts_payload_store_and_delivery(tmp_path, monkeypatch):
    clip = plan_audio(espeak("Hello there, this is a test."), 16_000, window_s=None, audio_policy="truncate").clips[0]
    with ChatServer(lambda req, n: Reply(content='{"binary": "no"}')) as srv:
        b = create_audio_backend(
            "openai/audio-model", config=LLMConfig(), base_url=srv.url, audio_window_s=30.0, max_retries=0
        )
        assert audio_window_s(b) == 30.0
        req = with_audio(
            b.request(
                [{"role": "user", "content": "Is there a hallucination?"}], params={"max_tokens": 256, "temperature": 0}
            ),
            [clip],
        )
        (r,), stats = complete_all(b, [req], store=Store(tmp_path))
        (r2,), stats2 = complete_all(b, [req], store=Store(tmp_path))
    body = srv.requests[0]
    parts = body["messages"][0]["content"]
    assert [p["type"] for p in parts] == ["input_audio", "text"]
    assert parts[0]["input_audio"]["format"] == "wav"
    assert base64.b64decode(parts[0]["input_audio"]["data"]) == clip.wav  # the WAV itself, byte for byte
    assert parts[1]["text"] == "Is there a hallucination?" and body["max_tokens"] == 256
    assert (r.status, r.text, r.audio_sent_s, r.audio_heard_s, r.audio_delivered) == (
        "ok",
        '{"binary": "no"}',
        clip.seconds,
        clip.seconds,
        True,
    )
    assert stats.calls == 1 and stats2.calls == 0 and srv.count == 1 and r2.audio_delivered
    logged = json.loads(next(Store(tmp_path).calls())["request"])
    assert logged["body"]["messages"][0]["content"][0]["input_audio"]["data"] == f"sha256:{clip.sha256}"


def test_text_requests_keep_their_keys_and_payload(tmp_path):
    with ChatServer(lambda req, n: Reply(content="ok")) as srv:
        b = create_audio_backend("openai/m", config=LLMConfig(), base_url=srv.url)
        req = b.request([{"role": "user", "content": "hi"}])
        (r,), _ = complete_all(b, [req])
    assert srv.requests[0]["messages"] == [{"role": "user", "content": "hi"}]
    assert r.audio_sent_s is None and audio_window_s(b) is None
    assert "audio" not in json.dumps(req.model_dump(mode="json")["audio"])  # empty: the key is the pre-audio key
