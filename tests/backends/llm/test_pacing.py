"""The in-flight limit (llm._adaptive) and the budget (llm._pacing) on a simulated clock: every figure here is
simulated seconds, so nothing depends on how busy the machine is (the real-time figures are
benchmarks/bench_llm_backend.py's)."""

from __future__ import annotations

import asyncio
import math
import random

import pytest
from pacing_sim import Clock, simulate

from halluscope.backends.llm._pacing import Pacing, TokenBucket, estimate_tokens, reset_seconds


def test_a_wide_server_is_filled_to_the_ceiling_within_a_second():
    for ceiling in (32, 64):
        run = simulate(ceiling, 3000, lambda t: 0.1)
        assert run.first_time_at(0.9 * ceiling / 0.1) < 1.2  # slow start: doubles per round trip from 1
        assert run.limiter.limit == ceiling and run.limiter.peak == ceiling
        assert "ceiling" in run.limiter.history[-1][2]


def test_jittered_latency_is_not_mistaken_for_queueing():
    """Lognormal latency (sigma 0.6) on an unlimited server: the old limiter stopped at 10 of 32 here."""
    for seed in (1, 2, 3):
        rng = random.Random(seed)
        adaptive = simulate(32, 3000, lambda t: 0.1 * math.exp(rng.gauss(0, 0.6)))
        rng = random.Random(seed)
        fixed = simulate(32, 3000, lambda t: 0.1 * math.exp(rng.gauss(0, 0.6)), adaptive=False)
        assert fixed.end / adaptive.end >= 0.9, (seed, adaptive.limiter.history[-5:])
        assert sum(lim for _, lim in adaptive.limits) / len(adaptive.limits) >= 0.9 * 32


@pytest.mark.parametrize("jitter", [0.0, 0.2])
def test_a_one_slot_server_keeps_a_short_queue_and_full_throughput(jitter):
    rng = random.Random(0)
    run = simulate(32, 300, lambda t: 0.1 * (1 - jitter / 2 + jitter * rng.random()), width=1)
    assert run.rate(5, run.end) >= 0.98 * 10  # the slot is never idle
    late = [lim for t, lim in run.limits if t > 10]
    assert max(late) <= 12, run.limiter.history[-5:]  # a queue of a few, not the ceiling of 32


def test_a_server_of_width_8_gets_its_width_without_a_long_queue():
    rng = random.Random(0)
    run = simulate(32, 3000, lambda t: 0.1 * (0.9 + 0.2 * rng.random()), width=8)
    assert run.rate(3, run.end) >= 0.97 * 80
    assert any("queueing" in h[2] for h in run.limiter.history)


def test_after_a_slow_spell_the_limit_is_back_within_seconds():
    """Latency x5 from t=10 to t=20 s, then as before: the bound again within 3 s of the recovery."""
    run = simulate(32, 9000, lambda t: 0.5 if 10 <= t < 20 else 0.1)
    assert run.rate(23, 26) >= 0.9 * 320
    assert any("queueing" in h[2] or "slower" in h[2] for h in run.limiter.history if 10 <= h[0] < 21)


def test_a_short_slow_spell_ends_in_a_re_probe_by_slow_start():
    """Latency x5 for 3 s: the limit is cut and the baseline moves up to the slow server; the first fast window after
    it says the spell is over, and slow start (not a quarter a window) finds the width again: the bound within 1 s."""
    run = simulate(32, 12000, lambda t: 0.5 if 20 <= t < 23 else 0.1)
    low = min(lim for t, lim in run.limits if 20 <= t < 23.5)
    assert low <= 16, run.limiter.history[-12:]  # the spell did cut it
    again = [h for h in run.limiter.history if "server faster again" in h[2]]
    assert again and 23 <= again[0][0] < 23.5, run.limiter.history[-12:]
    assert run.rate(24, 30) >= 0.97 * 320
    assert max(run.rate(t, t + 0.5) for t in (23.5, 23.6, 23.7)) >= 0.9 * 320


def test_429s_cut_the_limit_and_it_grows_back():
    run = simulate(32, 3000, lambda t: 0.1, overload=lambda t, busy: 3 <= t < 3.02)
    assert run.overloads >= 1 and any(h[2] == "HTTP 429" for h in run.limiter.history)
    assert run.limiter.limit == 32 and run.rate(5, run.end) >= 0.9 * 320


# -- the budget ---------------------------------------------------------------------------------------------------


def drive(coro_fn, clock: Clock):
    """Run ``coro_fn`` with asyncio.sleep advancing the simulated clock instead of waiting."""
    real_sleep = asyncio.sleep

    async def fake_sleep(s: float) -> None:
        clock.now += s
        await real_sleep(0)

    asyncio.sleep = fake_sleep  # type: ignore[assignment]
    try:
        return asyncio.run(coro_fn())
    finally:
        asyncio.sleep = real_sleep  # type: ignore[assignment]


def test_the_request_bucket_paces_to_the_budget():
    clock = Clock()
    bucket = TokenBucket(600, clock=clock)  # 10 a second, a second's burst

    async def go():
        times = []
        for _ in range(200):
            await bucket.take(1)
            times.append(clock.now)
        return times

    times = drive(go, clock)
    assert times[9] == 0.0 and 19.0 <= times[-1] <= 19.2  # the burst, then 10/s


def test_the_token_bucket_corrects_its_estimate_and_follows_the_servers_count():
    clock = Clock()
    pacing = Pacing(None, 6000, clock=clock)  # 100 tokens a second
    body = {"messages": [{"role": "user", "content": "x" * 40}], "max_tokens": 90}
    assert estimate_tokens(body, 256) == 100

    guess = {"messages": body["messages"]}  # no max_tokens: the reply's share is the mean so far (256)

    async def go():
        taken = await pacing.before(body)
        pacing.after(taken, 20, 10, {}, 200)  # max_tokens was sent: the provider counts it, nothing given back
        level = pacing.tokens.level
        clock.now += 60
        taken = await pacing.before(guess)
        pacing.after(taken, 20, 10, {}, 200)  # a guess: 266 taken, 20 used, the rest given back
        return level, pacing.tokens.level

    assert drive(go, clock) == pytest.approx((0.0, 80.0))
    pacing.after((0, False), None, None, {"x-ratelimit-remaining-tokens": "0", "x-ratelimit-reset-tokens": "6m0s"}, 429)
    assert pacing.tokens.wait_s(1) == pytest.approx(360.0) and pacing.rejected == 1
    learnt = Pacing(None, None, clock=clock)
    learnt.after((0, False), None, None, {"x-ratelimit-limit-requests": "500"}, 200)
    assert learnt.requests is not None and learnt.record()["learnt_from_headers"] == {"rpm": 500.0}
    assert "500 rpm (from the server)" in learnt.budget_line()


def test_reset_durations():
    assert [reset_seconds(v) for v in ("1s", "6m0s", "20ms", "0.5", "1h2m", "soon", None)] == [
        1.0,
        360.0,
        0.02,
        0.5,
        3720.0,
        None,
        None,
    ]


# -- what a run shows ---------------------------------------------------------------------------------------------


def test_a_budgeted_run_shows_its_pacing_in_the_progress_line_and_the_stage_line(tmp_path):
    """The real client against the loopback server, which answers with x-ratelimit-* headers and one 429 with
    Retry-After: the progress status names in flight, req/s, the limit and the budget; the stage line and the
    stats record keep the limit's history and the 429."""
    from halluscope.backends.llm import Caller, LLMConfig, create_backend
    from halluscope.core.store import Store
    from support.chat_server import ChatServer, Reply

    hdr = {
        "x-ratelimit-limit-requests": "6000",
        "x-ratelimit-remaining-requests": "5000",
        "x-ratelimit-reset-requests": "10ms",
    }

    def script(req, n):
        if "q3" in req["messages"][-1]["content"] and n == 1:
            return Reply(
                status=429, body='{"error": {"message": "slow down"}}', headers={**hdr, "retry-after-ms": "50"}
            )
        return Reply(content="ok", headers=hdr)

    seen = []
    with ChatServer(script) as srv:
        b = create_backend(
            "openai/m", config=LLMConfig(), base_url=srv.url, concurrency=4, rpm=3000, backoff_base_s=0.01, timeout_s=30
        )

        async def go():
            async with Caller(b, Store(tmp_path / "run")) as caller:

                async def one(i):
                    r = await caller.complete(b.request([{"role": "user", "content": f"q{i}"}]))
                    seen.append(caller.pacing_status())
                    return r

                out = await asyncio.gather(*(one(i) for i in range(12)))
            return out, caller.stats

        out, stats = asyncio.run(go())
    assert all(r.status == "ok" for r in out)
    status = seen[-1]
    for part in ("in flight", "req/s", "k tok/min", "limit ", "/4 (", "budget 3,000 rpm"):
        assert part in status, status
    rec = stats.pacing["openai/m"]
    assert rec["http_429"] == 1 and rec["rpm"] == 3000 and rec["ceiling"] == 4
    assert any(h[2] == "HTTP 429" for h in rec["history"])
    line = stats.line()
    assert "pacing openai/m: in flight limit" in line and "budget 3,000 rpm" in line and "1 HTTP 429" in line


def test_a_stage_run_against_a_budgeted_server_shows_its_pacing_on_screen_and_in_its_summary(tmp_path, monkeypatch):
    """A stage run as every command runs one (runner.run_calls, progress on): the real client against the loopback
    server answering with x-ratelimit-* headers and one 429 with Retry-After. What the progress display drew on the
    terminal names the requests in flight, req/s, the limit and the budget; the stage line printed at the end and
    the stats a run records keep the limit's history and the 429."""
    import io

    from rich.console import Console

    from halluscope.backends.llm import LLMConfig, create_backend
    from halluscope.backends.runner import run_calls
    from halluscope.core import stages
    from halluscope.core.store import Store
    from support.chat_server import ChatServer, Reply

    screen = io.StringIO()
    monkeypatch.setattr(stages, "console", Console(file=screen, force_terminal=True, width=400))
    hdr = {
        "x-ratelimit-limit-requests": "6000",
        "x-ratelimit-remaining-requests": "5000",
        "x-ratelimit-reset-requests": "10ms",
    }

    def script(req, n):
        if "q5" in req["messages"][-1]["content"] and n == 1:
            return Reply(
                status=429, body='{"error": {"message": "slow down"}}', headers={**hdr, "retry-after-ms": "50"}
            )
        return Reply(content="ok", headers=hdr)

    async def fn(caller, i):
        return await caller.complete(caller.backend.request([{"role": "user", "content": f"q{i}"}]))

    with ChatServer(script) as srv:
        b = create_backend(
            "openai/m", config=LLMConfig(), base_url=srv.url, concurrency=4, rpm=3000, backoff_base_s=0.01, timeout_s=30
        )
        with Store(tmp_path / "run") as store:
            summary = run_calls(store, None, [(f"i{i}", i) for i in range(16)], b, fn, description="asking")
    assert len(summary.results) == 16 and not summary.failed
    drawn = screen.getvalue()
    assert "asking" in drawn and "16/16" in drawn, drawn[-800:]
    for part in ("in flight", "req/s", "tok/min", "limit ", "/4 (", "budget 3,000 rpm"):
        assert part in drawn, (part, drawn[-800:])
    line = summary.line("requests")
    assert "pacing openai/m: in flight limit" in line and "budget 3,000 rpm" in line and "1 HTTP 429" in line, line
    rec = summary.stats.as_dict()["pacing"]["openai/m"]
    assert rec["rpm"] == 3000 and rec["http_429"] == 1 and any(h[2] == "HTTP 429" for h in rec["history"])


def test_a_client_short_of_cpu_does_not_read_its_own_lag_as_server_queueing():
    """A client that needs 5 ms of its core per reply (at most 200/s) against a wide server (L = 100 ms, 64 wide):
    its latency grows with the requests in flight because replies wait for the client, not the server. The limit
    is held there, not cut towards the few requests a client-bound run needs (which cost more per request on a real
    client: pooled connections sit idle), and the throughput is the client's whole capacity."""
    run = simulate(64, 3000, lambda t: 0.1, client_cpu=0.005)
    fixed = simulate(64, 3000, lambda t: 0.1, client_cpu=0.005, adaptive=False)
    assert run.rate(2, run.end) >= 0.98 * fixed.rate(2, fixed.end)  # after slow start's first few round trips
    assert run.limiter.limit >= 48, run.limiter.history[-5:]
    assert "client CPU-bound" in run.limiter.reason
    assert not any(why.startswith("queueing") for _, _, why in run.limiter.history)


def test_an_open_caller_makes_full_collections_rarer_and_restores_the_thresholds(tmp_path):
    """Nested sessions (two stages at once) each restore what they found; after the last the process is as before."""
    import gc

    from halluscope.backends.llm import Caller, LLMConfig, create_backend
    from halluscope.core.gctune import FULL_EVERY as GC_FULL_EVERY

    before = gc.get_threshold()
    backend = create_backend("openai/m", config=LLMConfig(), base_url="http://127.0.0.1:9/v1")

    async def run():
        async with Caller(backend):
            inside = gc.get_threshold()
            async with Caller(backend):
                assert gc.get_threshold() == inside
            assert gc.get_threshold() == inside
        return inside

    inside = asyncio.run(run())
    assert inside == (before[0], before[1], max(before[2], GC_FULL_EVERY))
    assert gc.get_threshold() == before
