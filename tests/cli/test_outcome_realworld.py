"""The one outcome rule (core/outcome.py) on the real-world split: 'build realworld' whose faithful rewrites fail
exits 2 before any speech and records no split; 'detect -o realworld=true' failing on too many items exits 2;
--allow-partial keeps what succeeded. Each case runs the user's command against a scripted loopback server."""

from __future__ import annotations

import json
import threading

import pytest

from halluscope.core.records import Prediction
from halluscope.core.store import Store
from halluscope.spoken.build import BuildConfig, build_spoken
from halluscope.spoken.realworld import load_realworld
from support.chat_server import ChatServer, Reply, user_text
from support.hostile_helpers import assert_clean_failure, flat, run_cli
from support.tiny_encoder import register_text_speech


def _fakes(path):
    rows = []
    for i, (topic, date) in enumerate(
        [("economy", "2024-02-10"), ("politics", "2023-11-02"), ("technology", "2024-11-20")], 1
    ):
        rows.append(
            {
                "id": f"s{i}-ru",
                "language": "ru",
                "text": f"Ложь номер {i}: вакцины вызывают чипирование.",
                "pair_id": f"s{i}",
                "topic": topic,
                "date": date,
            }
        )
        rows.append(
            {
                "id": f"s{i}-kk",
                "language": "kk",
                "text": f"Жалған ақпарат {i}: вакциналар чип салады.",
                "pair_id": f"s{i}",
                "translated": True,
                "topic": topic,
                "date": date,
            }
        )
    path.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows), encoding="utf-8")
    return path


@pytest.fixture
def built(tmp_path):
    register_text_speech()
    cfg = BuildConfig(
        corpus="demo",
        langs=("ru", "kk"),
        tts="test-bytes",
        asr="test-bytes",
        seed=2,
        rewrites_per_article=1,
        articles_per_language=10,
    )
    build_spoken(tmp_path / "run", cfg, quiet=True)
    llm = tmp_path / "llm.json"
    llm.write_text(json.dumps({"openai": {"max_retries": 0, "backoff_base_s": 0}}), encoding="utf-8")
    return tmp_path / "run", _fakes(tmp_path / "fakes.jsonl"), llm


def _faithful(req, n):  # a faithful rewrite the protocol accepts: the source with its first word upper-cased
    source = user_text(req).split("Original news article:\n", 1)[1].split("\n\nAnswer with", 1)[0]
    words = source.split()
    return Reply(content="(full text):\n" + " ".join([words[0].upper(), *words[1:]]))


def _junk(req, n):
    return Reply(content="Sorry, I cannot rewrite this.")


def _down(req, n):
    return Reply(status=500, body='{"error": {"message": "down"}}')


def test_build_realworld_whose_faithful_rewrites_fail_exits_2_and_allow_partial_keeps_the_rest(
    built, capsys, monkeypatch
):
    run, fakes, llm = built
    args = ["build", "realworld", run, "--fakes", fakes, "--faithful", "openai/faithful", "--llm-config", llm]
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    with ChatServer(_junk) as srv:  # every reply rejected by the faithful-rewrite checks
        monkeypatch.setenv("OPENAI_BASE_URL", srv.url)
        code, out = run_cli(capsys, monkeypatch, *args)
    assert_clean_failure(code, out, "build realworld: step 'realworld_faithful' produced nothing: 0 of 3", "Fix:")
    assert srv.count > 0
    with Store(run) as store:
        assert load_realworld(store) is None  # no split recorded, no speech made for it
        assert store.count("realworld_tts@ru") == store.count("realworld_tts@kk") == 0

    first: list[str] = []  # the first article the server sees fails every time: 1 of 3 rewrites (more than 10%)
    lock = threading.Lock()

    def one_down(req, n):
        source = user_text(req).split("Original news article:\n", 1)[1][:80]
        with lock:
            first.append(source) if not first else None
        return _junk(req, n) if source == first[0] else _faithful(req, n)

    args[args.index("openai/faithful")] = (
        "openai/faithful-2"  # another generator (the first one's rejected replies are stored: asked again, the same)
    )
    with ChatServer(one_down) as srv:
        monkeypatch.setenv("OPENAI_BASE_URL", srv.url)
        code, out = run_cli(capsys, monkeypatch, *args)
        assert_clean_failure(
            code,
            out,
            "step 'realworld_faithful' failed on 33% of its items",
            "2 of 3 items done, 1 failed",
            "what succeeded is kept in",
            "--allow-partial",
        )
        with Store(run) as store:
            assert load_realworld(store) is None
        code, out = run_cli(capsys, monkeypatch, *args, "--allow-partial")
    assert code == 0, out
    with Store(run) as store:
        split = load_realworld(store)
    assert split is not None and len(split.faithful) == 2 and len(split.failures["realworld_faithful"]) == 1
    assert set(split.transcripts) == set(split.fakes) | set(split.faithful)  # the rest went through TTS -> ASR
    assert "1 failed" in flat(out)


def test_detect_realworld_failing_on_too_many_items_exits_2_and_allow_partial_keeps_the_rest(
    built, capsys, monkeypatch
):
    run, fakes, _ = built
    code, out = run_cli(capsys, monkeypatch, "build", "realworld", run, "--fakes", fakes)
    assert code == 0, out

    def fakes_down(req, n):  # the detector's server fails on every fake (6 items of the real-world run's test)
        if any(w in user_text(req) for w in ("Ложь номер", "Жалған ақпарат")):
            return _down(req, n)
        return Reply(content='{"binary": "no"}')

    monkeypatch.setenv("OPENAI_API_KEY", "k")
    with ChatServer(fakes_down) as srv:
        args = ["detect", run, "--detector", "openai/zs", "--input", "text", "-o", "realworld=true"]
        args += ["-o", f"base_url={srv.url}", "-o", "max_retries=0"]
        code, out = run_cli(capsys, monkeypatch, *args)
        assert_clean_failure(
            code, out, "detect: step 'detect openai/zs task=binary input=text realworld=true' failed on"
        )
        assert "6 failed" in flat(out) and "--allow-partial" in flat(out)
        code, out = run_cli(capsys, monkeypatch, *args, "--prompting", "cot", "--allow-partial")
    assert code == 0, out
    with Store(run) as store:
        m = store.latest_manifest("detect realworld")
        preds = store.results("detect_realworld", m.stages["detect_realworld"], Prediction)
    kept = [k for k, p in preds.items() if p.status != "error"]
    assert kept and not any(k.startswith("fake~") for k in kept)  # what succeeded, the fakes not among it
