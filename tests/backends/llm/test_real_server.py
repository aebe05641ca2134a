"""What a real local server showed (issue 18), against the scripted loopback server with the real openai SDK:
adaptive concurrency, timeouts that do not pile work up, retries that change the request, a bounded max_tokens,
truncation reported as truncation, the rewrite screen, total outages as one line, one model as two judges."""

import json
import socket
import threading
import time

import pytest

from halluscope.backends.llm import (
    Caller,
    GenerateOptions,
    LLMConfig,
    StageOutage,
    complete_all,
    create_backend,
)
from halluscope.backends.llm._adaptive import AdaptiveLimit
from halluscope.core.errors import ItemError
from halluscope.core.records import Article
from halluscope.core.store import Store
from halluscope.spoken.generate import LLMGenerator
from halluscope.spoken.generate.llm import check_rewrite, generation_messages, max_tokens_for
from support.chat_server import ChatServer, Reply, a1_reply, article_of, good_rewrite, type_of

FAST = {"backoff_base_s": 0.01, "backoff_max_s": 0.05}
EN = (
    "The National Bank of Kazakhstan raised the base rate to 16.75 percent on March 12, 2024, because of "
    "inflation. Governor Timur Suleimenov said prices rose sharply in Astana, and analysts expect another "
    "increase before the summer as food and fuel costs keep climbing across the country."
)
RU = (
    "Национальный банк Казахстана повысил базовую ставку до 16,75 процента 12 марта 2024 года из-за инфляции. "
    "Председатель банка заявил, что цены в Астане резко выросли, а аналитики ожидают нового повышения летом."
)


def serial_script(delay: float, content: str = "ok"):
    """A server that decodes one request at a time (like llama.cpp with one slot): the others wait in line."""
    gate, seen = threading.Lock(), {"peak": 0, "active": 0}
    count = threading.Lock()

    def script(req, n):
        with count:
            seen["active"] += 1
            seen["peak"] = max(seen["peak"], seen["active"])
        with gate:
            time.sleep(delay)
        with count:
            seen["active"] -= 1
        return Reply(content=content)

    return script, seen


def parallel_script(delay: float):
    return lambda req, n: Reply(content="ok", delay=delay)


def ask(b, n, store=None):
    return complete_all(b, [b.request([{"role": "user", "content": f"q{i}"}]) for i in range(n)], store=store)


# -- adaptive concurrency -------------------------------------------------------------------------


def test_adaptive_limit_overloads_halve_it_once_per_window_and_off_keeps_the_ceiling():
    """The growth logic is tested on a simulated clock (test_pacing.py); here what a timeout or 429 does."""
    hot = AdaptiveLimit(8, start=8)
    hot.overload("HTTP 429")
    hot.overload("timeout after 1 s")  # the same window: one cut for a burst of rejections
    assert hot.limit == 4 and [h[2] for h in hot.history] == ["start", "HTTP 429"] and not hot.slow_start
    off = AdaptiveLimit(8, adaptive=False)
    off.overload("HTTP 429")
    for _ in range(50):
        off.success(0.1)
    assert off.limit == 8 and off.changes == 0


def test_a_serial_server_gets_few_requests_at_a_time_and_no_resends(tmp_path):
    """Issue 18: at concurrency 8 a one-slot server got 19 HTTP calls for 10 requests: nothing is sent twice now
    (where the limit settles against a one-slot server is tested on a simulated clock in test_pacing.py)."""
    script, seen = serial_script(0.3)
    with ChatServer(script) as srv:
        b = create_backend("openai/m", config=LLMConfig(), base_url=srv.url, concurrency=8, timeout_s=30, **FAST)
        out, stats = ask(b, 12, store=Store(tmp_path / "run"))
    assert all(r.status == "ok" for r in out)
    assert srv.count == 12 and stats.calls == 12  # nothing sent twice
    assert seen["peak"] <= b.limit.peak <= 8


def test_a_server_with_capacity_gets_more_in_flight():
    with ChatServer(parallel_script(0.15)) as srv:
        b = create_backend("openai/m", config=LLMConfig(), base_url=srv.url, concurrency=4, timeout_s=30, **FAST)
        out, _ = ask(b, 24)
    assert all(r.status == "ok" for r in out) and b.limit.peak == 4  # slow start: +1 per reply up to the ceiling


def test_a_timeout_halves_the_limit_and_the_retry_gets_twice_the_time(tmp_path):
    """The server is still computing the timed-out request: the retry does not hit the same deadline again."""

    def script(req, n):
        return Reply(content="late but fine", delay=0.9 if n == 1 else 0.0)

    with ChatServer(script) as srv:
        b = create_backend(
            "openai/m",
            config=LLMConfig(),
            base_url=srv.url,
            concurrency=4,
            adaptive="off",
            timeout_s=0.5,
            max_retries=2,
            **FAST,
        )
        store = Store(tmp_path / "run")
        out, stats = ask(b, 1, store=store)
    assert out[0].status == "ok" and out[0].attempts == 2
    calls = list(store.calls())
    assert [c["status"] for c in calls] == ["timeout", "ok"]
    assert [json.loads(c["request"])["timeout_s"] for c in calls] == [0.5, 1.0]
    assert b.limit.limit == 4 and stats.attempts == {"timeout": 1, "ok": 1}  # adaptive off: the ceiling stays
    assert "1 timeout, each sent again or given up" in stats.line()


# -- retries change the request -------------------------------------------------------------------


def test_protocol_retries_sample_differently_and_say_so(tmp_path):
    """A greedy model repeats itself: each rewrite retry carries a new temperature and seed (in its key)."""

    def script(req, n):
        prompt = req["messages"][0]["content"]
        t, lang = type_of(prompt)
        if req.get("temperature", 0) == 0:
            return Reply(content="1. Notes about the task only.")  # no full text: rejected
        return Reply(content=a1_reply(good_rewrite(article_of(prompt)), language=lang, type=t))

    with ChatServer(script) as srv:
        backend = create_backend("openai/gen", config=LLMConfig(), base_url=srv.url, params={"temperature": 0}, **FAST)
        gen = LLMGenerator(backend, GenerateOptions(retries=2))
        v = gen.rewrite(Article(id="a", language="en", text=EN), type="fabrication", severity="mild", seed=0)
    bodies = srv.requests
    assert v.text == good_rewrite(EN) and len(bodies) == 2
    assert (bodies[0]["temperature"], bodies[0].get("seed")) == (0, None)
    assert (bodies[1]["temperature"], bodies[1]["seed"]) == (0.7, 1)
    expected = (
        r"#1 rejected: .*\(retry 1: temperature 0.7, seed 1\); #2 rejected: .*\(retry 2: temperature 1.0, seed 2\)"
    )
    with ChatServer(lambda req, n: Reply(content="no header here")) as srv, pytest.raises(ItemError, match=expected):
        backend = create_backend("openai/gen", config=LLMConfig(), base_url=srv.url, **FAST)
        LLMGenerator(backend, GenerateOptions(retries=2)).rewrite(
            Article(id="b", language="en", text=EN), type="fabrication", severity="mild", seed=0
        )


# -- max_tokens and truncation --------------------------------------------------------------------


def test_generation_max_tokens_follows_the_article_is_configurable_and_in_the_key():
    short, long = Article(id="s", language="en", text="x" * 300), Article(id="l", language="en", text="x" * 3000)
    o = GenerateOptions()
    assert max_tokens_for(short, o) == 768 + 200 and max_tokens_for(long, o) == 768 + 2000
    assert max_tokens_for(long, GenerateOptions(max_tokens=900)) == 900
    assert max_tokens_for(short, GenerateOptions(max_tokens_base=100, max_tokens_per_token=1.0)) == 200
    seen = []

    def script(req, n):
        seen.append(req["max_tokens"])
        return Reply(content="1. Extraction\n2. Version\n3. Report:\n- Fluency: High\n", finish_reason="length")

    with ChatServer(script) as srv:
        backend = create_backend("openai/gen", config=LLMConfig(), base_url=srv.url, **FAST)
        gen = LLMGenerator(backend, GenerateOptions(retries=0, max_tokens=321))
        with pytest.raises(
            ItemError,
            match=r"#0 truncated: reply cut at max_tokens=321 \(finish_reason=length\) "
            r"before any text after a '\(full text\)' header",
        ):
            gen.rewrite(Article(id="a", language="en", text=EN), type="fabrication", severity="mild", seed=0)
    assert seen == [321] and gen.config()["max_tokens"] == 321
    assert GenerateOptions().max_tokens is None and LLMGenerator(backend).config()["max_tokens"] == {
        "base": 768,
        "per_token": 2.0,
    }
    r1 = backend.request(
        generation_messages(Article(id="a", language="en", text=EN), "fabrication", "mild"), params={"max_tokens": 100}
    )
    r2 = backend.request(r1.messages, params={"max_tokens": 200})
    assert r1.key() != r2.key()


# -- the rewrite screen ---------------------------------------------------------------------------


def _prompt(text, lang="en", type_="fabrication"):
    return generation_messages(Article(id="a", language=lang, text=text), type_, "mild")[0].content


def test_screen_rejects_prompt_echoes_report_headings_short_notes_and_other_languages():
    ok_checks, ok = check_rewrite(EN, good_rewrite(EN), "fabrication", prompt=_prompt(EN), language="en")
    assert ok == [] and ok_checks["no_prompt_echo"] and ok_checks["same_language"] and ok_checks["not_too_short"]
    notes = (
        "3. Evaluate the fabricated sentences and explain the deviations from the original news in a report "
        "with every dimension. " + good_rewrite(EN)
    )
    _, why = check_rewrite(EN, notes, "fabrication", prompt=_prompt(EN), language="en")
    assert any("echoes the prompt's instructions ('the fabricated sentences and" in w for w in why), why
    report = good_rewrite(EN) + "\nFactual accuracy: High\nCredibility: Medium\nFluency: High"
    _, why = check_rewrite(EN, report, "fabrication", prompt=_prompt(EN), language="en")
    assert any("contains the step-3 report (Factual accuracy, Credibility, Fluency)" in w for w in why), why
    _, why = check_rewrite(EN, "https://example.com/news/123", "fabrication", prompt=_prompt(EN), language="en")
    assert any(w.startswith("far too short: 1 word for a 46-word source") for w in why), why
    english = (
        "The National Bank of Kazakhstan raised its base rate to a record level on Tuesday, and the head of "
        "the bank said that prices in Astana had risen sharply while analysts expect more increases."
    )
    checks, why = check_rewrite(RU, english, "fabrication", prompt=_prompt(RU, "ru"), language="ru")
    assert not checks["same_language"] and any("written in 'en', the source in 'ru'" in w for w in why), why


# -- a stage that fails entirely ------------------------------------------------------------------


def closed_port_url() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def test_a_session_whose_every_call_failed_stops_with_one_line_and_a_reasons_file(tmp_path):
    import asyncio

    url = closed_port_url()
    b = create_backend("openai/m", config=LLMConfig(), base_url=url, max_retries=1, timeout_s=5, **FAST)
    store = Store(tmp_path / "run")

    async def main():
        async with Caller(b, store, stage=True) as caller:
            return await asyncio.gather(
                *(caller.complete(b.request([{"role": "user", "content": f"q{i}"}])) for i in range(3))
            )

    with pytest.raises(StageOutage) as err:
        asyncio.run(main())
    msg = str(err.value)
    assert msg.startswith(f"server unreachable at {url}/chat/completions: 3 of 3 calls failed; reasons in ")
    log = tmp_path / "run" / "logs" / "failed-calls-openai_m.jsonl"
    rows = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    assert str(log) in msg and len(rows) == 3 and all("connection error" in r["error"] for r in rows)
    assert "\n" not in msg
    # a session with at least one answer is not an outage
    with ChatServer(
        lambda req, n: Reply(content="ok") if "q0" in req["messages"][0]["content"] else Reply(status=400)
    ) as srv:
        b = create_backend("openai/m", config=LLMConfig(), base_url=srv.url, max_retries=0, **FAST)
        asyncio.run(_partial(b, store))


async def _partial(b, store):
    import asyncio

    async with Caller(b, store, stage=True) as caller:
        out = await asyncio.gather(
            *(caller.complete(b.request([{"role": "user", "content": f"q{i}"}])) for i in range(3))
        )
    assert [r.status for r in out] == ["ok", "error", "error"]


# -- one model, two judges ------------------------------------------------------------------------


def test_one_model_serves_under_two_names(tmp_path):
    with ChatServer(lambda req, n: Reply(content=req["model"])) as srv:
        config = LLMConfig(openai={"base_url": srv.url, **FAST}, models={"openai/judge-b": {"model": "judge-a"}})
        a, b = create_backend("openai/judge-a", config=config), create_backend("openai/judge-b", config=config)
        out, _ = complete_all(a, [a.request([{"role": "user", "content": "x"}])])
        out2, _ = complete_all(b, [b.request([{"role": "user", "content": "x"}])])
    assert out[0].text == out2[0].text == "judge-a" and srv.count == 2  # two specs, two calls, one model
    assert a.identity() != b.identity() and b.identity()["model"] == "judge-a"


def test_naming_one_judge_twice_says_how_to_use_one_model_twice(tmp_path):
    from halluscope.core.errors import HalluscopeError
    from halluscope.spoken.judge import build_judge

    with pytest.raises(
        HalluscopeError,
        match=r"got openai/x twice\. To use one model as two judges, give it a second "
        r"name in the LLM config: \[models\.\"openai/x-b\"\] with model = ",
    ):
        build_judge(tmp_path, ["openai/x", "openai/x"])


# -- the judge report when nothing was scored -----------------------------------------------------


def test_judge_tables_with_nothing_scored_say_why_link_nothing_unwritten_and_drop_stale_files(tmp_path):
    import csv

    from halluscope.spoken.judge.tables import write_tables

    out = tmp_path / "report" / "judge"
    out.mkdir(parents=True)
    (out / "table10_openai_old-judge.csv").write_text("stale", encoding="utf-8")
    (out / "heatmap_openai_old-judge.png").write_bytes(b"stale")
    summary = {
        "sampled": 4,
        "per_cell": 1,
        "short_cells": [],
        "judges": [{"judge": "openai/j", "scored": 0, "unscored": 3, "failed": 1, "calls": 4, "from_store": 0}],
    }
    unscored = [{"judge": "openai/j", "item_id": "a", "reason": "#0 no ratings"}]
    files = write_tables(
        out, agreement=[], quality={"openai/j": []}, self_assessment=[], summary=summary, unscored=unscored
    )
    names = sorted(p.name for p in out.iterdir())
    assert "table10_openai_old-judge.csv" not in names and "heatmap_openai_old-judge.png" not in names
    assert not any(n.startswith("heatmap_") for n in names)
    md = (out / "judge.md").read_text(encoding="utf-8")
    assert "Table 9 needs two or more judges; this run has 1" in md
    assert "No scored items by openai/j (3 unscored, 1 failed" in md and "heatmap_" not in md
    for name, first in (
        ("table9_agreement.csv", "judge_a"),
        ("table10_openai_j.csv", "type"),
        ("self_assessment.csv", "type"),
    ):
        header = next(csv.reader((out / name).open(encoding="utf-8")))
        assert header[0] == first, (name, header)
    assert all(p.exists() for p in files)
    two = {**summary, "judges": [*summary["judges"], {**summary["judges"][0], "judge": "openai/k"}]}
    write_tables(out, agreement=[], quality={}, self_assessment=[], summary=two, unscored=[])
    assert "Table 9 is empty: no item was scored by two judges (openai/j: 0 scored" in (out / "judge.md").read_text(
        encoding="utf-8"
    )


def test_a_judge_reply_cut_at_the_token_limit_is_unscored_as_truncated(tmp_path):
    import asyncio

    from halluscope.core.records import Variant
    from halluscope.spoken.judge.run import _judge_one

    with ChatServer(
        lambda req, n: Reply(content="Factual accuracy: High\nCredibility:", finish_reason="length")
    ) as srv:
        b = create_backend("openai/j", config=LLMConfig(), base_url=srv.url, **FAST)
        v = Variant(
            id="a~fabrication~mild",
            article_id="a",
            language="en",
            text=EN + " More.",
            label=1,
            type="fabrication",
            severity="mild",
            generator="rules",
            seed=0,
        )

        async def run():
            async with Caller(b, Store(tmp_path / "run")) as caller:
                return await _judge_one(caller, b, v, EN, retries=1)

        j = asyncio.run(run())
    assert j.status == "unscored" and j.attempts == 2
    assert "#0" in j.unscored_reason and "(reply cut at the token limit, finish_reason=length)" in j.unscored_reason
    assert "(retry 1: temperature 0.7, seed 1)" in j.unscored_reason


def test_hf_specs_second_names_and_gguf_forms(tmp_path):
    from halluscope.backends.llm._gguf import gguf_source
    from halluscope.core.errors import HalluscopeError

    config = LLMConfig(models={"hf/judge-b": {"path": str(tmp_path)}})
    b = create_backend("hf/judge-b", config=config)
    assert b.path == str(tmp_path) and b.identity()["path"] == str(tmp_path) and b.spec == "hf/judge-b"
    q = create_backend(f"hf/{tmp_path}?gguf=model.gguf", config=LLMConfig())
    assert q.path == str(tmp_path) and q.options.gguf == "model.gguf" and q.identity()["gguf"] == "model.gguf"
    with pytest.raises(
        HalluscopeError,
        match=r"no GGUF file at .*model\.gguf; expected 'hf/<file>\.gguf', "
        r"'hf/<dir>\?gguf=<file>' or one of smollm2-135m-instruct",
    ):
        gguf_source(q.path, q.options.gguf)
    (tmp_path / "m.gguf").write_bytes(b"GGUF")
    assert gguf_source(str(tmp_path / "m.gguf"), None) == tmp_path / "m.gguf"
    assert gguf_source(str(tmp_path), None) is None  # a plain transformers directory
