"""How store_before_renames/ was made: with the code before the renames of issue 24 item 6 (main at 33b1a3a),
  PYTHONPATH=src:tests python tests/core/data/store_before_renames/make_store.py /tmp/x old
then /tmp/x/run and /tmp/x/corpus.jsonl copied here. An LLM-generated build ([generate] max_attempts = 2, now
retries = 1) and a zero-shot detect run with -o max_new_tokens=32 (now max_tokens). Prints the calls it made.
tests/core/test_names.py replays it with the current spellings ('new') and asserts no call is made."""

import json
import os
import sys
from pathlib import Path

from halluscope.spoken.build import BuildConfig, build_spoken
from halluscope.spoken.detect.run import detect
from support import fakes
from support.chat_server import ChatServer, Reply, a1_reply, article_of, good_rewrite, type_of


def script(req, n):
    prompt = req["messages"][-1]["content"]
    if "Text to analyze" in prompt:
        return Reply(content="yes" if n % 2 else "no")
    t, lang = type_of(prompt)
    return Reply(content=a1_reply(good_rewrite(article_of(prompt)), language=lang, type=t))


def make(root: Path, old: bool) -> dict:
    """Build and detect in ``root`` (a store there is resumed); the calls made and the stage keys."""
    root.mkdir(parents=True, exist_ok=True)
    fakes.register()
    corpus = root / "corpus.jsonl"
    corpus.write_text(
        json.dumps({"id": "en-1", "language": "en", "text": fakes.ARTICLES["en"][0]})
        + "\n"
        + json.dumps({"id": "en-2", "language": "en", "text": fakes.ARTICLES["en"][1]})
        + "\n",
        encoding="utf-8",
    )
    cfgfile = root / "llm.json"
    cfgfile.write_text(json.dumps({"generate": {"max_attempts": 2} if old else {"retries": 1}}), encoding="utf-8")
    os.environ["HALLUSCOPE_LLM_CONFIG"] = str(cfgfile)
    with ChatServer(script) as srv:
        os.environ["OPENAI_BASE_URL"] = srv.url
        os.environ["OPENAI_API_KEY"] = "sk-test"
        cfg = BuildConfig(
            corpus=str(corpus),
            langs=("en",),
            generator="openai/gen",
            tts="test-silence",
            asr="test-fixed",
            rewrites_per_article=1,
            seed=3,
        )
        b = build_spoken(root / "run", cfg, quiet=True)
        d = detect(
            root / "run",
            detector="openai/det",
            task="binary",
            input="text",
            options={("max_new_tokens" if old else "max_tokens"): 32},
        )
        return {
            "calls": srv.count,
            "generate": b.stages["generate"],
            "detect": d.stage_fingerprint,
            "predictions": len(d.predictions),
        }


if __name__ == "__main__":
    print(json.dumps(make(Path(sys.argv[1]), sys.argv[2] == "old")))
