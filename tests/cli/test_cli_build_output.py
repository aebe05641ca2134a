"""'build spoken' renders what the build returns: the LLM generator's calls, tokens and cost, each stage's counts
and the corpus notes, on stderr, each on one line (the library itself prints nothing)."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from halluscope.cli.main import app
from support import fakes
from support.chat_server import ChatServer, Reply, a1_reply, article_of, good_rewrite, type_of


def _script(req, n):
    prompt = req["messages"][0]["content"]
    t, lang = type_of(prompt)
    return Reply(content=a1_reply(good_rewrite(article_of(prompt)), language=lang, type=t))


def test_build_shows_the_generator_cost_line_and_the_stage_counts(tmp_path, monkeypatch):
    fakes.register()
    corpus = fakes.write_corpus(tmp_path / "corpus.jsonl")
    with corpus.open("a", encoding="utf-8") as f:  # one more column: the build notes it is ignored
        f.write(json.dumps({"id": "en-9", "language": "en", "text": fakes.EN[3], "editor": "x"}) + "\n")
    config = tmp_path / "llm.json"  # USD per million tokens: the line carries the cost
    config.write_text(json.dumps({"models": {"openai/gen-model": {"cost": {"input": 1.0, "output": 2.0}}}}))
    run = tmp_path / "a run dir with a long name" / "run"
    args = [
        "build",
        "spoken",
        str(run),
        "--corpus",
        str(corpus),
        "--generator",
        "openai/gen-model",
        "--tts",
        "test-silence",
        "--asr",
        "test-fixed",
        "--rewrites-per-article",
        "1",
        "--seed",
        "3",
        "--llm-config",
        str(config),
    ]
    with ChatServer(_script) as srv:
        monkeypatch.setenv("OPENAI_BASE_URL", srv.url)
        monkeypatch.setenv("OPENAI_API_KEY", "k")
        res = CliRunner().invoke(app, args)
        assert res.exit_code == 0, res.output
        assert srv.count == 10
        again = CliRunner().invoke(app, args)
        assert again.exit_code == 0 and srv.count == 10, again.output
    err = res.stderr.splitlines()
    # 10 rewrites, each reply 11 prompt + 7 completion tokens: 10 x (11 x 1 + 7 x 2) / 1e6 USD
    cost = "  openai/gen-model: 10 requests: 0 from the store, 10 model calls, 0 failed; 110+70 tokens, $0.0003"
    # the line goes on with the pacing the client kept (its in-flight limit and why)
    assert any(line == cost or line.startswith(cost + "; pacing ") for line in err), res.stderr
    assert "  generate  10 computed, 0 reused" in err and "  asr       20 computed, 0 reused" in err, res.stderr
    assert f"note: {corpus}: ignoring unknown column(s) ['editor']" in err, res.stderr
    assert any(line.startswith("built 20 samples, 20 transcripts in ") for line in err), res.stderr
    assert "openai/gen-model:" not in res.stdout and "computed" not in res.stdout
    # resumed: no call made, so no cost line; every stage reused
    assert "model calls" not in again.stderr and "  generate  0 computed, 10 reused" in again.stderr.splitlines()
