"""The App. A.1 generation protocol: prompts, extraction, self-assessment, checks, retries, resume."""

import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from halluscope.backends.llm import GenerateOptions, LLMConfig, create_backend
from halluscope.core.errors import ItemError
from halluscope.core.records import Article, RewriteLog
from halluscope.core.store import Store
from halluscope.prompts import template
from halluscope.prompts.protocol import DIMENSIONS
from halluscope.spoken.build import BuildConfig, build_spoken
from halluscope.spoken.generate import GENERATORS, LLMGenerator
from halluscope.spoken.generate.llm import (
    LOG_STAGE,
    check_rewrite,
    extract_full_text,
    generation_messages,
    parse_self_assessment,
    severity_description,
)
from support import pythonpath
from support.chat_server import CI_MARKERS, ChatServer, Reply, a1_reply, article_of, good_rewrite, type_of

HERE = Path(__file__).parent
EN_TEXT = (
    "The National Bank of Kazakhstan raised the base rate to 16.75 percent on March 12, 2024, because of "
    "inflation. Governor Timur Suleimenov said prices rose sharply in Astana."
)
RU_TEXT = "Национальный банк Казахстана повысил базовую ставку до 16,75 процента 12 марта 2024 года из-за инфляции."
KK_TEXT = "Қазақстан Ұлттық банкі 2024 жылғы 12 наурызда базалық мөлшерлемені 16,75 пайызға дейін көтерді."


def art(lang: str = "en", text: str = EN_TEXT, id: str = "a1") -> Article:
    return Article(id=id, language=lang, text=text)


# -- prompts ----------------------------------------------------------------------------------------


def test_english_canonical_prompt_is_verbatim():
    prompt = generation_messages(art(), "fabrication", "mild")[0].content
    assert prompt.startswith(
        "You are a professional news editor tasked with generating factual fabrications at "
        "varying levels. Here is the original news article:\n\nOriginal news: " + EN_TEXT
    )
    mild = severity_description("fabrication", "mild", "en", "by_language")
    for line in (
        "1. Extract the narrative, factual information, entities, and contextual data from the original news.",
        f"- {mild}",
        "- Satisfaction with fabrication level",
        "Evaluate each dimension as: Low, Very Low, Medium, High, Very High.",
        "4. Identify the fabricated sentences and explain the deviations.",
        "5. Make sure to provide the **full text of the news with fabrications**, without hyperlinks:",
        f"- {mild} (full text):",
        "Generate the answer strictly in English and strictly following this format.",
    ):
        assert line in prompt.splitlines(), line
    ctx = generation_messages(art(), "context_inconsistency", "severe")[0].content
    assert "- Output length must be within ±15% of the original article length." in ctx
    assert "Rate each using: Very Low, Low, Medium, High, Very High." in ctx
    assert ctx.rstrip().endswith("(full text):")


def test_russian_and_kazakh_deltas():
    ru = generation_messages(art("ru", RU_TEXT), "contradiction", "moderate")[0].content
    assert "from the original news in **Russian**." in ru
    assert "- **Ensure the length of the generated news text is similar to the original." in ru
    assert "Evaluate each dimension as: Низкая, Очень низкая, Средняя, Высокая, Очень высокая." in ru
    assert "- Factual accuracy:" in ru.splitlines() and "(полный текст):" in ru
    assert ru.rstrip().endswith(
        "The report evaluation and the full text with factual contradictions should be in **Russian**."
    )
    kk_fab = template("generate/fabrication.kk").text
    kk_con = template("generate/contradiction.kk").text
    assert "Evaluate each dimension as: Өте төмен, Төмен, Орташа, Жоғары, Өте жоғары\n" in kk_fab  # no final period
    assert "Evaluate each dimension as: Өте төмен, Төмен, Орташа, Жоғары, Өте жоғары.\n" in kk_con
    assert "(толық мәтін):" in kk_fab
    kk_ctx = generation_messages(art("kk", KK_TEXT), "context_inconsistency", "mild")[0].content
    assert "- Years and dates (e.g., 2023, 15 шілде)" in kk_ctx and "(толық мәтіні қазақ тілінде):" in kk_ctx
    ru_ctx = template("generate/context_inconsistency.ru").text
    assert "Rate each using: Очень низкий, Низкий, Средний, Высокий, Очень высокий." in ru_ctx
    assert "- Quantities (e.g., 5 000 сотрудников)" in ru_ctx


def test_both_fabrication_wordings_selectable():
    en_batch = severity_description("fabrication", "severe", "en", "by_language")
    ru_batch = severity_description("fabrication", "severe", "ru", "by_language")
    assert en_batch.startswith("Severe fabrication: Rewrite the article by introducing clearly false")
    assert "avoid overtly fantastical" in ru_batch
    assert severity_description("fabrication", "severe", "ru", "en") == en_batch
    assert severity_description("fabrication", "severe", "en", "ru_kk") == ru_batch
    assert severity_description("fabrication", "mild", "en", "en") == severity_description(
        "fabrication", "mild", "kk", "ru_kk"
    )


# -- reading replies ----------------------------------------------------------------------------------


@pytest.mark.parametrize("lang,type_", [(l, t) for l in ("en", "ru", "kk") for t in DIMENSIONS])
def test_extraction_and_self_assessment_in_every_language(lang, type_):
    reply = a1_reply("New text.\n\nSecond paragraph.", language=lang, type=type_, ratings=(1, 2, 3, 4, 5, 4, 3))
    assert extract_full_text(reply, lang) == "New text.\n\nSecond paragraph."
    sa = parse_self_assessment(reply, item_id="x", generator="g", language=lang, type=type_, severity="mild")
    assert sa.unrated == ()
    assert list(sa.ratings.values()) == [1, 2, 3, 4, 5, 4, 3]
    assert list(sa.ratings) == [d.abbr for d in DIMENSIONS[type_]]


def test_extraction_variants():
    assert extract_full_text("report...\n**Mild fabrication (Full Text):** The bank said.", "en") == "The bank said."
    assert extract_full_text("- (full text):\n```\nText here.\n```\n", "en") == "Text here."
    assert extract_full_text("x (full text):\n\n", "en") is None
    assert extract_full_text("Full text of the news:\nThe bank said.", "en") is None  # no '(full text)' header
    assert extract_full_text("(full text):\nEnglish header kept.", "kk") == "English header kept."
    assert extract_full_text(f"{CI_MARKERS['ru']}:\nТекст.", "ru") == "Текст."


def test_self_assessment_positional_fallback_and_unrated():
    odd = "\n".join(
        f"- Показатель {i}: {w}"
        for i, w in enumerate(["Высокая", "Низкая", "Средняя", "Высокая", "Очень высокая", "Средняя", "Высокая"])
    )
    sa = parse_self_assessment(
        odd + "\n(полный текст):\nТекст.",
        item_id="x",
        generator="g",
        language="ru",
        type="fabrication",
        severity="mild",
    )
    assert sa.ratings == {"FA": 4, "Cr": 2, "Fl": 3, "Co": 4, "Re": 5, "Sa": 3, "AT": 4}
    partial = (
        "Evaluate each dimension as: Low, Very Low, Medium, High, Very High.\n- Fluency: High\n"
        "- Sentence 2: the high rate\n(full text): T"
    )
    sa = parse_self_assessment(partial, item_id="x", generator="g", language="en", type="fabrication", severity="mild")
    assert sa.ratings == {"Fl": 4} and set(sa.unrated) == {"FA", "Cr", "Co", "Re", "Sa", "AT"}


def test_context_inconsistency_checks():
    ok, reasons = check_rewrite(EN_TEXT, good_rewrite(EN_TEXT), "context_inconsistency")
    assert reasons == [] and ok["numbers_preserved"] and ok["length_within_15pct"]
    changed = EN_TEXT.replace("16.75", "17.25")
    checks, reasons = check_rewrite(EN_TEXT, changed, "context_inconsistency")
    assert not checks["numbers_preserved"] and "missing ['16.75'], added ['17.25']" in reasons[0]
    checks, reasons = check_rewrite(EN_TEXT, EN_TEXT + " " + EN_TEXT, "context_inconsistency")
    assert not checks["length_within_15pct"] and "2.00x" in reasons[-1]
    checks, reasons = check_rewrite(EN_TEXT, EN_TEXT + " " + EN_TEXT, "fabrication")  # no length rule
    assert reasons == [] and "numbers_preserved" not in checks
    assert check_rewrite(EN_TEXT, EN_TEXT, "fabrication")[1] == ["rewrite identical to the source"]
    assert "token limit" in check_rewrite(EN_TEXT, "x", "fabrication", finish_reason="length")[1][0]


# -- the protocol against a server --------------------------------------------------------------------


def _generator(url, **gen) -> LLMGenerator:
    backend = create_backend("openai/gen", config=LLMConfig(), base_url=url, timeout_s=2, backoff_base_s=0.01)
    return LLMGenerator(backend, GenerateOptions(**gen))


def test_rejected_replies_are_retried_then_accepted_or_failed(tmp_path):
    def script(req, n):
        prompt = req["messages"][0]["content"]
        t, lang = type_of(prompt)
        source = article_of(prompt)
        if "16,75" in source and n == 1:  # ru: first reply lacks the full-text header
            return Reply(content=a1_reply(good_rewrite(source), language=lang, type=t, marker=False))
        if "16.75" in source and t == "context_inconsistency":  # en: every reply changes a number
            return Reply(content=a1_reply(good_rewrite(source).replace("16.75", "18"), language=lang, type=t))
        return Reply(content=a1_reply(good_rewrite(source), language=lang, type=t))

    with ChatServer(script) as srv:
        gen = _generator(srv.url, retries=2)
        ru = gen.rewrite(art("ru", RU_TEXT, "r1"), type="fabrication", severity="mild", seed=1)
        assert ru.text == good_rewrite(RU_TEXT) and ru.generator == "openai/gen" and all(ru.checks.values())
        assert srv.count == 2
        with pytest.raises(ItemError, match=r"after 3 attempt\(s\).*#0 rejected: numbers changed: missing \['16.75'\]"):
            gen.rewrite(art(), type="context_inconsistency", severity="mild", seed=1)
        assert srv.count == 5
        kk = gen.rewrite(art("kk", KK_TEXT, "k1"), type="context_inconsistency", severity="severe", seed=1)
        assert kk.checks["numbers_preserved"] and kk.checks["length_within_15pct"]


@pytest.fixture
def corpus(tmp_path):
    from support import fakes

    return fakes.write_corpus(tmp_path / "corpus.jsonl")


def _script(req, n):
    prompt = req["messages"][0]["content"]
    t, lang = type_of(prompt)
    source = article_of(prompt)
    if "Kazatomprom" in source and n == 1:  # one English article: the first reply misses the header
        return Reply(content=a1_reply(good_rewrite(source), language=lang, type=t, marker=False))
    return Reply(content=a1_reply(good_rewrite(source), language=lang, type=t), delay=0.02)


def test_build_spoken_with_an_llm_generator_resumes_with_zero_calls(tmp_path, corpus, monkeypatch):
    from support import fakes

    fakes.register()
    with ChatServer(_script) as srv:
        monkeypatch.setenv("OPENAI_BASE_URL", srv.url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-secret-for-build")
        cfg = BuildConfig(
            corpus=str(corpus),
            generator="openai/gen-model",
            tts="test-silence",
            asr="test-fixed",
            rewrites_per_article=2,
            seed=3,
        )
        result = build_spoken(tmp_path / "run", cfg, quiet=True)
        first = srv.count
        assert not result.failures and sum(v.label for v in result.samples.values()) == 18
        assert first == 20  # 18 rewrites + a retry for each of the 2 whose first reply lacked the header
        again = build_spoken(tmp_path / "run", cfg, quiet=True)
        assert srv.count == first and again.samples.keys() == result.samples.keys()
    with Store(tmp_path / "run") as store:
        logs = store.results(LOG_STAGE, result.stages["generate"], RewriteLog)
        assert len(logs) == 18 and all(lg.accepted and lg.self_assessment.unrated == () for lg in logs.values())
        retried = [lg for lg in logs.values() if len(lg.attempts) == 2]
        assert len(retried) == 2 and retried[0].attempts[0].status == "rejected"
        calls = list(store.calls())
        assert len(calls) == 20 and all(json.loads(c["request"])["tag"].startswith("generate:") for c in calls)
    for path in (tmp_path / "run").rglob("*"):
        if path.is_file():
            assert b"sk-secret-for-build" not in path.read_bytes()


def test_failures_are_reported_and_cost_no_calls_on_rerun(tmp_path, corpus, monkeypatch):
    from support import fakes

    fakes.register()

    def script(req, n):
        prompt = req["messages"][0]["content"]
        t, lang = type_of(prompt)
        return Reply(content=a1_reply(good_rewrite(article_of(prompt)), language=lang, type=t, marker=lang != "kk"))

    config = tmp_path / "llm.json"
    config.write_text(json.dumps({"generate": {"retries": 1}}), encoding="utf-8")
    monkeypatch.setenv("HALLUSCOPE_LLM_CONFIG", str(config))
    with ChatServer(script) as srv:
        monkeypatch.setenv("OPENAI_BASE_URL", srv.url)
        cfg = BuildConfig(
            corpus=str(corpus),
            generator="openai/gen-model",
            tts="test-silence",
            asr="test-fixed",
            rewrites_per_article=1,
            seed=3,
        )
        result = build_spoken(tmp_path / "run", cfg, quiet=True)
        failed = result.failures["generate"]
        assert len(failed) == 3 and all(k.startswith("kk-") for k in failed)
        assert all("#1 rejected: no text after a '(full text)' header" in r for r in failed.values())
        n = srv.count
        assert n == 6 + 3 * 2  # six accepted at once, three Kazakh items asked twice
        build_spoken(tmp_path / "run", cfg, quiet=True)  # failed items are retried, from the store
        assert srv.count == n
    # the report counts the protocol's outcomes, with examples
    from halluscope.spoken.report import collect

    section = next(s for s in collect(tmp_path / "run").sections if s.title.startswith("LLM generation protocol"))
    rows = {r["status"]: r for r in section.rows("generation_attempts")}
    assert (
        rows["accepted"]["attempts"] == 6
        and rows["rejected"]["attempts"] == 6
        and set(rows) == {"accepted", "rejected"}
    )
    assert "no text after a '(full text)' header" in rows["rejected"]["examples"]
    assert "openai/gen-model: 6 item(s) accepted, 3 failed after every attempt" in section.markdown


def test_resume_after_sigkill_repeats_no_finished_call(tmp_path, corpus):
    """Kill a generating 'halluscope build spoken' midway; the rerun asks the server only for unfinished items."""
    answered = threading.Event()

    def script(req, n):
        prompt = req["messages"][0]["content"]
        t, lang = type_of(prompt)
        if srv.count >= 6:
            answered.set()
        return Reply(content=a1_reply(good_rewrite(article_of(prompt)), language=lang, type=t), delay=0.1)

    config = tmp_path / "llm.json"
    config.write_text(json.dumps({"openai": {"concurrency": 2, "timeout_s": 5}}), encoding="utf-8")
    with ChatServer(script) as srv:
        env = {
            **os.environ,
            "OPENAI_BASE_URL": srv.url,
            "OPENAI_API_KEY": "k",
            "HALLUSCOPE_LLM_CONFIG": str(config),
            "HF_HUB_OFFLINE": "1",
            "PYTHONPATH": pythonpath(),
        }
        code = "import sys; from support import fakes; fakes.register(); from halluscope.cli.main import main; sys.argv[0] = 'halluscope'; main()"
        args = [
            sys.executable,
            "-c",
            code,
            "build",
            "spoken",
            "--corpus",
            str(corpus),
            "--out",
            str(tmp_path / "run"),
            "--generator",
            "openai/gen-model",
            "--tts",
            "test-silence",
            "--asr",
            "test-fixed",
            "--seed",
            "3",
        ]
        proc = subprocess.Popen(args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        assert answered.wait(60), proc.stderr.read().decode()[-2000:]
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        before = dict(srv.per_prompt)
        with Store(tmp_path / "run") as store:
            finished = {
                json.loads(c["request"])["body"]["messages"][0]["content"] for c in store.calls() if c["status"] == "ok"
            }
        assert 4 <= len(finished) < 18

        from support import fakes

        fakes.register()
        os.environ.update({"OPENAI_BASE_URL": srv.url, "HALLUSCOPE_LLM_CONFIG": str(config)})
        try:
            result = build_spoken(
                tmp_path / "run",
                BuildConfig(
                    corpus=str(corpus), generator="openai/gen-model", tts="test-silence", asr="test-fixed", seed=3
                ),
                quiet=True,
            )
        finally:
            for k in ("OPENAI_BASE_URL", "HALLUSCOPE_LLM_CONFIG"):
                os.environ.pop(k, None)
    assert not result.failures and sum(v.label for v in result.samples.values()) == 18
    prompts = {p for p in srv.per_prompt}
    assert len(prompts) == 18
    for prompt in finished:
        assert srv.per_prompt[prompt] == 1, "a finished call was repeated"
    repeated = [p for p in prompts if srv.per_prompt[p] > 1]
    assert len(repeated) <= 2 and all(before.get(p, 0) == 1 for p in repeated)  # only calls in flight at the kill


def test_registered_generators_build_without_a_model():
    for name in ("openai", "hf"):
        gen = GENERATORS.create(name)
        assert isinstance(gen, LLMGenerator) and gen.config()["generator"] == "llm"
