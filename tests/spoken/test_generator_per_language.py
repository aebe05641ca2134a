"""Per-language generators (issue 29; seed 000, 3.1: English by GPT, Russian and Kazakh by Gemini):
'--generator en=...,ru=...' routes each article to its language's generator and records it per item."""

import pytest

from halluscope.core.errors import HalluscopeError
from halluscope.core.records import Article
from halluscope.core.store import Store
from halluscope.spoken.generate import PerLanguageGenerator, RulesGenerator, create_generator
from support.chat_server import ChatServer, Reply, a1_reply, article_of, good_rewrite, type_of
from support.hostile_helpers import run_cli


def test_single_spec_is_the_plain_generator_and_errors_name_the_language():
    assert isinstance(create_generator("rules", ("en", "ru")), RulesGenerator)  # same stage key as before
    gen = create_generator("en=rules,ru=rules", ("en", "ru"))
    assert isinstance(gen, PerLanguageGenerator) and gen.generators["en"] is gen.generators["ru"]
    with pytest.raises(HalluscopeError, match="has no engine for kk"):
        create_generator("en=rules,ru=rules", ("en", "ru", "kk"))
    with pytest.raises(HalluscopeError, match="names language 'en' twice"):
        create_generator("en=rules,en=rules", ("en",))
    with pytest.raises(HalluscopeError, match="unknown generator 'rulez'"):
        create_generator("en=rulez,ru=rules", ("en", "ru"))


def test_per_language_build_records_each_items_generator(tmp_path, monkeypatch, capsys):
    from support import fakes

    fakes.register()
    corpus = fakes.write_corpus(tmp_path / "corpus.jsonl")
    models: list[str] = []

    def script(req, n):
        models.append(req["model"])
        prompt = req["messages"][0]["content"]
        t, lang = type_of(prompt)
        return Reply(content=a1_reply(good_rewrite(article_of(prompt)), language=lang, type=t))

    with ChatServer(script) as srv:
        monkeypatch.setenv("OPENAI_BASE_URL", srv.url)
        monkeypatch.setenv("OPENAI_API_KEY", "k")
        run = tmp_path / "run"
        code, out = run_cli(
            capsys,
            monkeypatch,
            "build",
            "spoken",
            run,
            "--corpus",
            corpus,
            "--langs",
            "en,ru",
            "--generator",
            "en=openai/gpt-x,ru=rules",
            "--tts",
            "test-silence",
            "--asr",
            "test-fixed",
            "--seed",
            "3",
            "--json",
            "--allow-partial",  # the rules cannot make every severe rewrite of these short Russian texts
        )
    assert code == 0, out
    with Store(run, create=False) as store:
        from halluscope.spoken.build import load_build

        build = load_build(store)
        manifest = store.latest_manifest("build spoken")
    rewrites = [v for v in build.samples.values() if v.label == 1]
    by_lang = {lang: {v.generator for v in rewrites if v.language == lang} for lang in ("en", "ru")}
    assert by_lang == {"en": {"openai/gpt-x"}, "ru": {"rules"}}
    assert models and set(models) == {"gpt-x"}  # only English went to the server
    assert len(models) == sum(v.language == "en" for v in rewrites)
    assert manifest.config["generator"] == "en=openai/gpt-x,ru=rules"
    # the stage key holds both languages' generators: another English model re-keys it
    a = create_generator("en=openai/gpt-x,ru=rules", ("en", "ru")).config()
    b = create_generator("en=openai/gpt-y,ru=rules", ("en", "ru")).config()
    assert a["languages"]["ru"] == b["languages"]["ru"] and a["languages"]["en"] != b["languages"]["en"]


def test_rewrite_goes_to_the_articles_language():
    gen = PerLanguageGenerator({"en": RulesGenerator()})
    with pytest.raises(HalluscopeError, match="no generator for language 'ru'"):
        gen.rewrite(Article(id="a", language="ru", text="x"), type="fabrication", severity="mild", seed=0)
