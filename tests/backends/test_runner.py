"""The one runner of model-calling stages and the one ask-until-parsed loop, over the real openai client and the
scripted loopback chat server: resume without calling again, failed vs unscored, retries that change the request."""

from __future__ import annotations

import asyncio

import pytest

from halluscope.backends.llm import Caller, LLMConfig, StageOutage, create_backend
from halluscope.backends.runner import ask_until_parsed, run_calls
from halluscope.core.records import Judgement
from halluscope.core.stages import Stage
from halluscope.core.store import Store
from support.chat_server import ChatServer, Reply, user_text

FAST = {"backoff_base_s": 0.01, "backoff_max_s": 0.05, "max_retries": 1, "timeout_s": 10}


def backend(url: str):
    return create_backend("openai/m", config=LLMConfig(), base_url=url, params={"temperature": 0}, **FAST)


def parse_score(resp):
    text = (resp.text or "").strip()
    return (int(text), None) if text.isdigit() else (None, f"not a number: {text[:20]!r}")


def stage_fn(b):
    async def fn(caller: Caller, item: str) -> Judgement | str:
        asked = await ask_until_parsed(
            caller, b.request([{"role": "user", "content": item}], tag=f"t:{item}"), parse_score, 2
        )
        if asked.status == "failed":
            return asked.failure
        return Judgement(
            item_id=item,
            judge=b.spec,
            status="ok" if asked.ok else "unscored",
            scores={"x": asked.value} if asked.ok else {},
            raw_text=asked.raw_text,
            unscored_reason=None if asked.ok else asked.reason,
            attempts=len(asked.keys),
            call_keys=asked.keys,
        )

    return fn


def script(req, n):
    text = user_text(req)
    if text.startswith("good"):
        return Reply(content="4")
    if text.startswith("late"):  # readable only when the request changed (a retry samples differently)
        return Reply(content="5" if req.get("temperature", 0) > 0 else "five")
    if text.startswith("never"):
        return Reply(content="no idea")
    return Reply(status=500, body="{}")  # 'down': no reply at all


ITEMS = [(i, i) for i in ("good-1", "good-2", "late-1", "never-1", "down-1")]


def test_failed_unscored_retried_and_resumed_without_calls(tmp_path):
    stage = Stage("t", {"v": 1})
    with ChatServer(script) as srv, Store(tmp_path) as store:
        b = backend(srv.url)
        res = run_calls(store, stage, ITEMS, b, stage_fn(b), Judgement, description="t", quiet=True)
        first = srv.count
        # one meaning each: failed = no reply (stored as a failure); unscored = replies, none readable
        assert set(res.failed) == {"down-1"} and "down-1" not in res.results
        assert res.results["never-1"].status == "unscored" and res.results["never-1"].raw_text == "no idea"
        assert res.results["never-1"].unscored_reason.count("not a number") == 3
        assert "(retry 2: temperature 1.0, seed 2)" in res.results["never-1"].unscored_reason
        assert res.results["late-1"].scores == {"x": 5} and res.results["late-1"].attempts == 2
        assert res.counts() == {"results": 4, "computed": 4, "reused": 0, "failed": 1, "unscored": 1, "retried": 3}
        assert store.failures("t", stage.fingerprint).keys() == {"down-1"}

        # a second run: the four done items are reused without a call; only the failed one is asked again, and as
        # every call it sent failed the stage says so (its summary rides on the error)
        with pytest.raises(StageOutage) as outage:
            run_calls(store, stage, ITEMS, b, stage_fn(b), Judgement, description="t", quiet=True)
        again = outage.value.summary
        assert (again.reused, again.computed) == (4, 0) and set(again.failed) == {"down-1"}
        assert srv.per_prompt["good-1"] == 1 and srv.per_prompt["never-1"] == 3
        assert srv.count > first  # down-1 was retried
        assert again.results == res.results


def test_a_retry_changes_the_request_and_its_key(tmp_path):
    with ChatServer(lambda req, n: Reply(content="no idea")) as srv, Store(tmp_path) as store:
        b = backend(srv.url)

        async def main():
            async with Caller(b, store) as caller:
                return await ask_until_parsed(caller, b.request([{"role": "user", "content": "q"}]), parse_score, 2)

        asked = asyncio.run(main())
        # the store answers a repeat of the same attempts: no new call
        again = asyncio.run(main())
    assert asked.status == "unscored" and len(set(asked.keys)) == 3
    assert [(r.get("temperature"), r.get("seed")) for r in srv.requests] == [(0, None), (0.7, 1), (1.0, 2)]
    assert [a.nonce for a in asked.attempts] == [0, 1, 2] and asked.attempts[0].note == ""
    assert again.keys == asked.keys and srv.count == 3
    # a retry's key is the one the backend itself gives for that nonce
    assert asked.keys[1] == b.request([{"role": "user", "content": "q"}], nonce=1).key()


def test_an_async_parser_and_a_follow_up_turn(tmp_path):
    """A tool call continues the same attempt (the MISHAP judge's evidence search); the parser may await."""

    def script(req, n):
        last = req["messages"][-1]["content"]
        return Reply(content="3" if "RESULT" in last else "SEARCH: x")

    with ChatServer(script) as srv, Store(tmp_path) as store:
        b = backend(srv.url)

        async def parse(resp):
            await asyncio.sleep(0)
            return parse_score(resp)

        def follow(resp, req):
            if "SEARCH" not in (resp.text or ""):
                return None
            msgs = [*req.messages, {"role": "assistant", "content": resp.text}, {"role": "user", "content": "RESULT"}]
            return b.request(msgs, nonce=req.nonce)

        async def main():
            async with Caller(b, store) as caller:
                return await ask_until_parsed(
                    caller, b.request([{"role": "user", "content": "q"}]), parse, 2, follow=follow
                )

        asked = asyncio.run(main())
    assert asked.ok and asked.value == 3 and len(asked.keys) == 2 and len(asked.attempts) == 1
