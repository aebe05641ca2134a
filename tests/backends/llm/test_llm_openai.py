"""The openai/<model> backend against a real loopback chat-completions server, with the real openai SDK."""

import json
import threading
import time

import pytest

from halluscope.backends.llm import (
    BackendError,
    LLMConfig,
    complete_all,
    create_backend,
    load_llm_config,
    retry_after_s,
)
from halluscope.core.errors import InputError
from halluscope.core.store import Store
from support.chat_server import ChatServer, Reply, completion

FAST = {"timeout_s": 5.0, "backoff_base_s": 0.01, "backoff_max_s": 0.05, "max_retries": 3}
SECRET = "sk-test-0123456789-do-not-store"


def backend(url, **options):
    return create_backend("openai/test-model", config=LLMConfig(), base_url=url, **{**FAST, **options})


def ask(b, *texts, store=None, **params):
    reqs = [b.request([{"role": "user", "content": t}], params=params or None) for t in texts]
    return complete_all(b, reqs, store=store)


def test_request_payload_usage_and_cost(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    with ChatServer(lambda req, n: Reply(content="hi back")) as srv:
        b = backend(srv.url, params={"temperature": 0}, cost={"input": 1.0, "output": 2.0})
        (r,), stats = ask(b, "hi", store=Store(tmp_path), max_tokens=5)
    assert srv.requests == [
        {"model": "test-model", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 5, "temperature": 0}
    ]
    assert srv.headers[0]["authorization"] == f"Bearer {SECRET}"
    assert (r.status, r.text, r.attempts, r.cached) == ("ok", "hi back", 1, False)
    assert (r.usage.prompt_tokens, r.usage.completion_tokens) == (11, 7)
    assert r.cost_usd == pytest.approx((11 * 1.0 + 7 * 2.0) / 1e6)
    assert stats.calls == 1 and stats.cost_usd == pytest.approx(r.cost_usd)
    # the key reaches the server but never the run directory
    for path in tmp_path.rglob("*"):
        if path.is_file():
            assert SECRET.encode() not in path.read_bytes(), path


def test_retries_429_with_retry_after_500s_stalls_truncation_and_bad_bodies(tmp_path):
    times: dict[str, list[float]] = {}

    def script(req, n):
        text = req["messages"][0]["content"]
        times.setdefault(text, []).append(time.monotonic())
        first = n == 1
        if text == "429":
            return (
                Reply(status=429, headers={"Retry-After": "0.4"}, body='{"error": "rate"}')
                if first
                else Reply(content="ok 429")
            )
        if text == "500":
            return Reply(status=500, body="oops") if n < 3 else Reply(content="ok 500")
        if text == "stall":
            return Reply(content="late", delay=2.0) if first else Reply(content="ok stall")
        if text == "truncated":
            return Reply(content="x" * 200, truncate=True) if first else Reply(content="ok truncated")
        if text == "not-json":
            return Reply(body="<html>502 bad gateway</html>") if first else Reply(content="ok not-json")
        return Reply(content="?")

    with ChatServer(script) as srv:
        store = Store(tmp_path)
        out, stats = ask(backend(srv.url, timeout_s=0.6), "429", "500", "stall", "truncated", "not-json", store=store)
    assert [r.text for r in out] == ["ok 429", "ok 500", "ok stall", "ok truncated", "ok not-json"]
    assert [r.attempts for r in out] == [2, 3, 2, 2, 2]
    assert times["429"][1] - times["429"][0] >= 0.4  # Retry-After honoured although the backoff is 10 ms
    statuses = [c["status"] for c in store.calls()]
    assert statuses.count("http_429") == 1 and statuses.count("http_500") == 2
    assert {"timeout", "connection", "bad_body"} <= set(statuses) and statuses.count("ok") == 5
    bad = next(c for c in store.calls() if c["status"] == "bad_body")
    assert json.loads(bad["response"])["body"] == "<html>502 bad gateway</html>"  # the raw reply, kept
    assert stats.calls == len(statuses) == 11


def test_exhausted_retries_are_errors_and_are_retried_next_run(tmp_path):
    with ChatServer(lambda req, n: Reply(status=503, body="down")) as srv:
        store = Store(tmp_path)
        (r,), _ = ask(backend(srv.url, max_retries=2), "x", store=store)
        assert r.status == "error" and "HTTP 503" in r.error and r.attempts == 3 and r.text == "down"
        ask(backend(srv.url, max_retries=2), "x", store=store)
    assert srv.count == 6  # a failure is never served from the store


def test_persistent_garbage_is_unparsable_not_cached(tmp_path):
    with ChatServer(lambda req, n: Reply(body='{"choices": [')) as srv:
        (r,), _ = ask(backend(srv.url, max_retries=1), "x", store=Store(tmp_path))
    assert r.status == "unparsable" and "not JSON" in r.error and r.text == '{"choices": ['
    assert srv.count == 2


def test_refusal_and_missing_content(tmp_path):
    def script(req, n):
        text = req["messages"][0]["content"]
        if text == "refuse":
            return Reply(refusal="I can't help with that")
        return Reply(body=completion(None, finish_reason="content_filter"))

    with ChatServer(script) as srv:
        (a, b), _ = ask(backend(srv.url), "refuse", "filtered", store=Store(tmp_path))
    assert (a.status, a.text) == ("refusal", "I can't help with that")
    assert b.status == "refusal" and "content filter" in b.error


def test_rejected_key_stops_the_run():
    with ChatServer(lambda req, n: Reply(status=401, body='{"error": {"message": "bad key"}}')) as srv:
        with pytest.raises(BackendError, match="rejected the API key.*OPENAI_API_KEY"):
            ask(backend(srv.url), "x")
    assert srv.count == 1


def test_identical_requests_are_served_from_the_store(tmp_path):
    with ChatServer(lambda req, n: Reply(content="answer " + req["messages"][0]["content"])) as srv:
        store = Store(tmp_path)
        b = backend(srv.url)
        first, s1 = ask(b, "a", "b", "a", store=store)  # the duplicate in flight shares one call
        again, s2 = ask(b, "a", "b", store=store)
        other, _ = ask(b, "a", store=store, temperature=0.5)  # other params: another request
    assert srv.count == 3
    assert s1.calls == 2 and s2.calls == 0 and s2.from_store == 2
    assert [r.text for r in again] == ["answer a", "answer b"] and all(r.cached for r in again)
    nonce = b.request([{"role": "user", "content": "a"}], nonce=1)
    assert nonce.key() != b.request([{"role": "user", "content": "a"}]).key()


def test_a_cancelled_sender_does_not_cancel_those_waiting_on_its_identical_request():
    """Identical requests in flight share one call; when the task that sent it is cancelled (a stage torn down,
    a timeout around it), the others send it themselves and get their reply: nothing is lost, nothing hangs."""
    import asyncio

    from halluscope.backends.llm import Caller

    def script(req, n):
        time.sleep(0.3)
        return Reply(content="ok")

    with ChatServer(script) as srv:
        b = backend(srv.url)

        async def run():
            async with Caller(b) as caller:
                req = b.request([{"role": "user", "content": "same"}])
                sender = asyncio.ensure_future(caller.complete(req))
                await asyncio.sleep(0.05)  # the sender's call is out
                waiters = [asyncio.ensure_future(caller.complete(req)) for _ in range(2)]
                await asyncio.sleep(0.05)
                sender.cancel()
                done = await asyncio.gather(*waiters)
                with pytest.raises(asyncio.CancelledError):
                    await sender
                return done, caller.stats

        done, stats = asyncio.run(run())
    assert [r.text for r in done] == ["ok", "ok"]
    assert stats.sent == 2  # the cancelled one, then one of the waiters' (the other shared it)


def test_concurrency_limit_holds():
    active, peak, lock = [0], [0], threading.Lock()

    def script(req, n):
        with lock:
            active[0] += 1
            peak[0] = max(peak[0], active[0])
        time.sleep(0.15)
        with lock:
            active[0] -= 1
        return Reply(content="ok")

    with ChatServer(script) as srv:
        out, _ = ask(backend(srv.url, concurrency=3, adaptive="off"), *[f"q{i}" for i in range(7)])
    assert all(r.status == "ok" for r in out) and peak[0] == 3


def test_retry_after_forms():
    assert retry_after_s({"retry-after": "2"}) == 2.0
    assert retry_after_s({"retry-after-ms": "250", "retry-after": "9"}) == 0.25
    assert 0 <= retry_after_s({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}) == 0.0
    assert retry_after_s({}) is None and retry_after_s({"retry-after": "soon"}) is None


def test_config_file_env_and_base_url(tmp_path, monkeypatch):
    cfg = tmp_path / "llm.toml"
    cfg.write_text(
        '[openai]\nconcurrency = 4\n[models."openai/judge"]\nbase_url_env = "JUDGE_URL"\n'
        'api_key_env = "JUDGE_KEY"\nparams = { temperature = 0 }\ncost = { input = 0.27, output = 1.1 }\n'
        '[generate]\nretries = 4\nfabrication_wording = "en"\n',
        encoding="utf-8",
    )
    monkeypatch.setenv("HALLUSCOPE_LLM_CONFIG", str(cfg))
    config = load_llm_config()
    assert config.generate.retries == 4
    b = create_backend("openai/judge")
    assert b.options.concurrency == 4 and b.options.params == {"temperature": 0} and b.options.cost.output == 1.1
    with ChatServer(lambda req, n: Reply(content="ok")) as srv:
        monkeypatch.setenv("JUDGE_URL", srv.url)
        monkeypatch.setenv("JUDGE_KEY", "k2")
        (r,), _ = ask(b, "x")
    assert r.status == "ok" and srv.headers[0]["authorization"] == "Bearer k2"
    (tmp_path / "bad.json").write_text('{"models": {"openai/x": {"api_key": "sk-1"}}}', encoding="utf-8")
    with pytest.raises(InputError, match="keys are never read from config files"):
        load_llm_config(tmp_path / "bad.json")


def test_no_key_for_the_default_server_says_what_to_do(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    b = create_backend("openai/gpt-4o-mini", config=LLMConfig())
    with pytest.raises(BackendError, match="export OPENAI_API_KEY"):
        ask(b, "x")
