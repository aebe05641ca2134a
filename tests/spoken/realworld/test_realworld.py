"""Real-world split: fakes loading, greedy TF-IDF matching, exclusion from train/dev, Tables 4 and 5."""

import json

import pytest

from halluscope.backends.llm import LLMConfig
from halluscope.core.errors import HalluscopeError, InputError
from halluscope.core.records import Article, RealWorldFake, RewriteLog
from halluscope.core.store import Store
from halluscope.metrics.rates import flag_rates
from halluscope.report import write_report
from halluscope.spoken.build import BuildConfig, build_spoken
from halluscope.spoken.detect.run import DETECTORS, DetectorKind, register_detector
from halluscope.spoken.provenance import FAITHFUL_LOG_STAGE, faithful_backend
from halluscope.spoken.realworld import (
    build_realworld,
    detect_realworld,
    load_fakes,
    load_realworld,
    match_key,
    match_negatives,
)
from halluscope.spoken.report import collect


def fake(id, lang="ru", topic=None, date=None, **kw):
    return RealWorldFake(
        id=id,
        language=lang,
        text=f"fake {id}",
        native_language=kw.pop("native", lang),
        translated=kw.pop("translated", False),
        topic=topic,
        date=date,
        **kw,
    )


def art(id, lang="ru", topic=None, date=None):
    return Article(id=id, language=lang, text=f"article {id}", topic=topic, date=date)


# -- loading -----------------------------------------------------------------------------------------


def test_load_fakes_defaults_and_all_problems_reported(tmp_path):
    good = tmp_path / "fakes.jsonl"
    good.write_text(
        "\n".join(
            json.dumps(r, ensure_ascii=False)
            for r in [
                {
                    "id": "s1-ru",
                    "language": "ru",
                    "text": "Фейк",
                    "pair_id": "s1",
                    "topic": "health",
                    "date": "2024-03-02",
                },
                {"id": "s1-kk", "language": "kz", "text": "Жалған", "translated": True, "pair_id": "s1"},
                {"id": "s2-kk", "language": "kk", "text": "Жалған 2", "near_parallel": "yes", "native_language": "kk"},
            ]
        ),
        encoding="utf-8",
    )
    fs = {f.id: f for f in load_fakes(good)}
    assert fs["s1-ru"].native_language == "ru" and not fs["s1-ru"].translated
    assert fs["s1-kk"].language == "kk" and fs["s1-kk"].native_language == "ru" and fs["s1-kk"].translated
    assert fs["s2-kk"].near_parallel and not fs["s2-kk"].translated
    assert [f.id for f in load_fakes(good, langs=("kk",))] == ["s1-kk", "s2-kk"]

    bad = tmp_path / "fakes.csv"
    bad.write_text(
        "id,language,text,translated,native_language\n"
        "a,ru,,false,ru\n"  # row 2: empty text
        "b,en,text,false,\n"  # row 3: English is not part of the split
        "c,ru,text,maybe,\n"  # row 4: bad flag
        "d,ru,text,true,ru\n"  # row 5: translated but native == language
        "d,kk,text,,\n",
        encoding="utf-8",
    )  # row 6: duplicate id
    with pytest.raises(InputError) as err:
        load_fakes(bad)
    msg = str(err.value)
    for where in (
        "row 2, field 'text'",
        "row 3, field 'language'",
        "row 4, field 'translated'",
        "row 5, field 'translated'",
        "row 6, field 'id'",
    ):
        assert where in msg, where
    assert "5 problem(s)" in msg and "Fix:" in msg
    with pytest.raises(InputError, match="file not found"):
        load_fakes(tmp_path / "missing.jsonl")


# -- matching ----------------------------------------------------------------------------------------


def test_match_key_tokens():
    assert match_key("Public health", "2024-05-17") == "t_public t_health y2024 m2024_05"
    assert match_key(None, "2023") == "y2023" and match_key(None, None) == ""


def test_greedy_tfidf_matching_on_topic_and_period_without_replacement():
    fakes = [
        fake("f1", topic="politics", date="2024-05-01"),
        fake("f2", topic="politics", date="2024-05-20"),
        fake("f3", topic="health", date="2023-01-09"),
        fake("k1", "kk", topic="economy", date="2024-01-01"),
    ]
    arts = [
        art("a1", topic="politics", date="2024-05-03"),
        art("a2", topic="politics", date="2024-06-01"),
        art("a3", topic="health", date="2023-01-30"),
        art("a4", topic="sport", date="2020-01-01"),
        art("k-a", "kk", topic="sport", date="2019-02-02"),
        art("k-b", "kk", topic="economy", date="2024-01-05"),
    ]
    got = {m.fake_id: m for m in match_negatives(fakes, arts)}
    # f1 and f2 tie on a1 (cosine 1): the tie goes to the smaller fake id; f2 takes the next best, a2
    assert {k: m.article_id for k, m in got.items()} == {
        "fake~f1": "a1",
        "fake~f2": "a2",
        "fake~f3": "a3",
        "fake~k1": "k-b",
    }
    assert got["fake~f1"].similarity == pytest.approx(1.0) and got["fake~f3"].similarity == pytest.approx(1.0)
    assert 0 < got["fake~f2"].similarity < 1
    assert len({m.article_id for m in got.values()}) == len(got)  # without replacement
    ru_order = sorted((m.order, m.fake_id) for m in got.values() if m.language == "ru")
    assert [f for _, f in ru_order][-1] == "fake~f2"  # the weakest pair is taken last
    with pytest.raises(HalluscopeError, match="need as many truthful negatives"):
        match_negatives(fakes, arts[:2])


def test_text_weight_breaks_topic_ties_by_content():
    fakes = [
        RealWorldFake(
            id="f",
            language="ru",
            text="вакцина опасна для детей",
            native_language="ru",
            translated=False,
            topic="health",
        )
    ]
    arts = [
        Article(id="a", language="ru", text="бюджет утвердили", topic="health"),
        Article(id="b", language="ru", text="вакцина для детей прошла испытания", topic="health"),
    ]
    assert match_negatives(fakes, arts)[0].article_id == "a"  # tie on topic: first article id
    assert match_negatives(fakes, arts, text_weight=0.5)[0].article_id == "b"


# -- provenance --------------------------------------------------------------------------------------


def test_flag_rates_on_a_scripted_example():
    preds = {
        "t1": "original",
        "t2": "hallucinated",
        "t3": "original",
        "t4": "original",
        "f1": "hallucinated",
        "f2": "hallucinated",
        "r1": "hallucinated",
        "r2": None,
        "s1": "hallucinated",
        "s2": "hallucinated",
        "s3": "original",
    }
    cells = {
        "human/truthful": ["t1", "t2", "t3", "t4"],
        "human/false": ["f1", "f2"],
        "llm/truthful": ["r1", "r2", "r-missing"],
        "llm/false": ["s1", "s2", "s3"],
    }
    r = flag_rates(predictions=preds, cells=cells)
    assert (r["human/truthful"].rate, r["human/truthful"].n) == (0.25, 4)
    assert (r["human/false"].rate, r["human/false"].n) == (1.0, 2)
    assert (r["llm/truthful"].rate, r["llm/truthful"].n, r["llm/truthful"].invalid) == (0.5, 2, 1)
    assert r["llm/false"].rate == pytest.approx(2 / 3)
    assert flag_rates(predictions={}, cells={"human/false": ["x"]})["human/false"].rate is None


def test_faithful_rewrites_refuse_the_rules_generator():
    with pytest.raises(HalluscopeError, match="need an LLM generator"):
        faithful_backend("rules")


# -- the whole split on a built run --------------------------------------------------------------------

SPY: dict = {}


def _spy(ctx):
    SPY["train"] = {v.id for v in ctx.items if ctx.split_of(v) == "train"}
    SPY["dev"] = {v.id for v in ctx.items if ctx.split_of(v) == "dev"}
    DETECTORS["tfidf"].run(ctx)


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    from support.chat_server import ChatServer, Reply
    from support.tiny_encoder import register_text_speech

    register_text_speech()
    if "test-spy" not in DETECTORS:
        register_detector("test-spy", DetectorKind(run=_spy))
    tmp = tmp_path_factory.mktemp("rw")
    cfg = BuildConfig(
        corpus="demo",
        langs=("ru", "kk"),
        tts="test-bytes",
        asr="test-bytes",
        seed=2,
        rewrites_per_article=1,
        articles_per_language=10,
    )
    build = build_spoken(tmp / "run", cfg, quiet=True)
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
                "near_parallel": i == 1,
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
    fakes = tmp / "fakes.jsonl"
    fakes.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows), encoding="utf-8")

    def script(req, n):
        text = req["messages"][-1]["content"]
        source = text.split("Original news article:\n", 1)[1].split("\n\nAnswer with", 1)[0]
        if n == 1:  # the first reply drops the numbers: rejected, asked again
            return Reply(content="(full text):\n" + "".join(c for c in source if not c.isdigit()))
        words = source.split()
        words[0] = words[0].upper()
        return Reply(content="(full text):\n" + " ".join(words))

    with ChatServer(script) as srv:
        from halluscope.backends.llm import create_backend  # noqa: F401 - the server must be up while rewriting

        config = LLMConfig()
        import os

        os.environ["OPENAI_BASE_URL"] = srv.url
        os.environ.setdefault("OPENAI_API_KEY", "k")
        try:
            split = build_realworld(tmp / "run", fakes, faithful="openai/faithful-test", llm_config=config, quiet=True)
        finally:
            os.environ.pop("OPENAI_BASE_URL", None)
        calls = srv.count
    return tmp / "run", build, split, fakes, calls


def test_build_realworld_renders_every_new_item_and_matches_one_negative_per_fake(built):
    run, build, split, _, calls = built
    assert not split.failures, split.failures
    assert len(split.fakes) == 6 and len(split.matches) == 6
    negs = split.negatives
    assert len(negs) == 6 and all(build.samples[a].label == 0 for a in negs)  # originals of the run
    assert {build.samples[a].language for a in negs} == {"ru", "kk"}
    assert all(
        build.samples[a].language == split.matches[k].language for k, m in split.matches.items() for a in [m.article_id]
    )
    # the ru fakes match the demo's articles of the same topic and month
    assert split.matches["fake~s1-ru"].similarity == pytest.approx(1.0)
    # faithful LLM rewrites of the ru negatives only (the spec's analysis is Russian), through TTS -> ASR too
    assert set(split.faithful) == {a + "~faithful" for a, lg in negs.items() if lg == "ru"} and calls == 6
    with Store(run) as store:
        logs = store.results(FAITHFUL_LOG_STAGE, split.stages["realworld_faithful"], RewriteLog)
    assert len(logs) == 3 and all(
        lg.accepted
        and [t.status for t in lg.attempts] == ["rejected", "accepted"]
        and "numbers changed" in lg.attempts[0].reason
        for lg in logs.values()
    )
    assert all(v.label == 0 and v.generator == "openai/faithful-test" for v in split.faithful.values())
    assert set(split.transcripts) == set(split.fakes) | set(split.faithful)
    assert split.transcripts["fake~s1-ru"].text == split.fakes["fake~s1-ru"].text.lower()  # the text-carrying ASR
    with Store(run) as store:
        again = load_realworld(store)
    assert again.matches == split.matches and again.transcripts == split.transcripts


def test_negatives_are_excluded_from_train_and_dev(built):
    run, build, split, _, _ = built
    res = detect_realworld(run, detector="test-spy", input="text")
    neg_items = {k for k, v in build.samples.items() if v.article_id in split.negatives}
    assert neg_items and not (neg_items & SPY["train"]) and not (neg_items & SPY["dev"])
    assert not (set(split.variants) & (SPY["train"] | SPY["dev"]))
    assert SPY["train"] and SPY["dev"]  # the rest still trains and selects
    assert all(res.predictions[k].split == "test" for k in neg_items | set(split.variants))
    with pytest.raises(HalluscopeError, match="binary labels only"):
        detect_realworld(run, detector="tfidf", task="type")


def test_report_tables_4_and_5_with_coverage(built):
    run, *_ = built
    for inp in ("text", "transcript"):
        detect_realworld(run, detector="tfidf", input=inp)
    data = collect(run)
    sec = next(s for s in data.sections if s.title.startswith("Real-world split"))
    t4, t5, pairs = (
        [r for r in sec.rows(k) if r["detector"] == "tfidf"]
        for k in ("table4_realworld", "table5_provenance", "realworld_pair_disagreement")
    )
    real_ru = next(r for r in t4 if r["language"] == "ru" and r["data"] == "Real")
    assert real_ru["O_n"] == real_ru["T_n"] == 6  # 3 fakes + 3 negatives
    synth_ru = next(r for r in t4 if r["language"] == "ru" and r["data"] == "Synth (test)")
    assert synth_ru["O_n"] >= 6  # augmented with the 3 negatives and their rewrites
    ru_text = next(r for r in t5 if r["language"] == "ru" and r["input"] == "text")
    assert (ru_text["human/truthful_n"], ru_text["human/false_n"], ru_text["llm/truthful_n"]) == (3, 3, 3)
    assert ru_text["llm/false_n"] >= 3
    kk_text = next(r for r in t5 if r["language"] == "kk" and r["input"] == "text")
    assert kk_text["llm/truthful_n"] == 0 and kk_text["llm/truthful"] is None
    assert {p["pairs"] for p in pairs} == {3} and all(p["near_parallel_pairs"] == 1 for p in pairs)
    # the dedicated run never enters Table 2
    assert not data.detection
    out = write_report(run).html
    html = out.read_text(encoding="utf-8")
    assert "Table 5: provenance x veracity" in html and "Table 4: synthetic test vs real-world" in html
    assert (out.parent / "table5_provenance.csv").exists() and (out.parent / "table4_realworld.csv").exists()


def test_paired_o_vs_t_section_for_table2(built):
    from halluscope.spoken.detect import detect

    run, *_ = built
    for inp in ("text", "transcript"):
        detect(run, detector="tfidf", input=inp)
    data = collect(run)
    sec = next(s for s in data.sections if s.title == "Table 2 paired tests")
    rows = sec.rows("table2_paired_o_vs_t")
    assert {r["language"] for r in rows} == {"ru", "kk", "all"}
    for r in rows:
        assert r["n"] > 0 and 0 <= r["mcnemar_p"] <= 1 and 0 <= r["randomization_p"] <= 1


def test_cli_build_realworld_resumes(built):
    from typer.testing import CliRunner

    from halluscope.cli.main import app

    run, _, split, fakes, _ = built
    res = CliRunner().invoke(app, ["build", "realworld", str(run), "--fakes", str(fakes), "--langs", "ru,kk"])
    assert res.exit_code == 0, res.output
    with Store(run) as store:
        again = load_realworld(store)
    assert again.matches == split.matches and not again.faithful  # no --faithful this time
    res = CliRunner().invoke(
        app, ["detect", str(run), "--detector", "tfidf", "--input", "text", "-o", "realworld=true"]
    )
    assert res.exit_code == 0, res.output


def test_encoder_on_the_realworld_split(built, tmp_path):
    pytest.importorskip("accelerate")
    from support.tiny_encoder import build_tiny_encoder

    run, build, _, _, _ = built
    with Store(run) as store:
        split = load_realworld(store)  # the latest build of the split
    texts = [v.text for v in build.samples.values()] + [v.text for v in split.variants.values()]
    model = build_tiny_encoder(tmp_path / "enc", texts)
    res = detect_realworld(
        run,
        detector=f"encoder/{model}",
        input="transcript",
        options={"epochs": 1, "batch_size": 8, "max_length": 64, "keep_model": False},
    )
    assert {k for k in split.variants} <= set(res.predictions)
    assert all(res.predictions[k].split == "test" for k in split.variants)
