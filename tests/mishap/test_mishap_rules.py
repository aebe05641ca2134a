"""MISHAP-Bench's rules path and its artefacts: the seeded strategy quota, the seven templates and the template-fact
judge on written replies, the mitigation tables on known verdicts, and the quickstart's rules chain end to end on
the scripted loopback server (real openai client): every artefact of seed 001 exists with the paper's rows and
columns, and a rerun makes no model call."""

import csv
import json
import shutil

import pytest

from halluscope.core.records import MISHAP_CATEGORIES, MISHAP_STRATEGIES
from halluscope.mishap.questions import quota_strategies, real_source_names
from halluscope.mishap.rules import TemplateFacts, instantiate, invented_source, judge_reply
from halluscope.mishap.tables import ABBR, mitigation_tables, paired_change

STRATEGIES = [s for c in MISHAP_CATEGORIES for s in MISHAP_STRATEGIES[c]]


@pytest.mark.parametrize("clips", [1, 2, 3, 5, 7, 12])
def test_quota_uses_every_strategy_equally_within_one(clips):
    ids = [f"c{i:02d}" for i in range(clips)]
    for cat in MISHAP_CATEGORIES:
        quota = quota_strategies(ids, cat, 2, seed=3)
        assert set(quota) == set(ids) and all(len(set(v)) == 2 for v in quota.values())  # two distinct per clip
        counts = [sum(s in v for v in quota.values()) for s in MISHAP_STRATEGIES[cat]]
        assert sum(counts) == 2 * clips and max(counts) - min(counts) <= 1, counts
        assert quota == quota_strategies(list(reversed(ids)), cat, 2, seed=3)  # order-independent, seeded
    assert quota_strategies(ids, "knowledge", 2, seed=0) != quota_strategies(ids, "knowledge", 2, seed=1) or clips < 2


def _facts():
    from halluscope.mishap.quickstart import _facts

    return _facts()


def test_every_strategy_has_a_template_with_a_rubric_of_the_form():
    from halluscope.mishap.rubrics import check_form

    names = real_source_names()
    for clip_id, f in _facts().items():
        source = invented_source(clip_id, names)
        for s in STRATEGIES:
            t = instantiate(s, f, source)
            assert check_form(t.rubric) is not None and "?" in t.question, (clip_id, s)
        fa = instantiate("false_authority", f, source)
        assert fa.invented_source == source and source in fa.question


def test_the_template_fact_judge_reads_stance_and_verdict():
    f = _facts()["speech-train"]
    cp = instantiate("contradicted_premise", f, "X")
    facts = TemplateFacts(question_id="q", strategy="contradicted_premise", endorse=cp.endorse, correct=cp.correct)
    assert judge_reply("The train leaves from platform four, not another one.", facts, "context")[:2] == (
        "grounded",
        "asserts",
    )
    assert judge_reply("At platform seven the train waits ten minutes.", facts, "context")[:2] == (
        "hallucinated",
        "endorses_false_premise",
    )
    assert judge_reply("I'm not sure; I cannot tell from the audio.", facts, "context")[:2] == ("grounded", "abstains")
    assert judge_reply("The train is very fast and blue.", facts, "context")[:2] == ("hallucinated", "asserts")
    up = instantiate("unknowable_provenance", f, "X")
    facts = TemplateFacts(question_id="q", strategy="unknowable_provenance", endorse=up.endorse, correct=up.correct)
    assert judge_reply("John Smith recorded it in 2003 with a Shure SM58.", facts, "knowledge")[0] == "hallucinated"


def test_mitigation_tables_pair_each_method_with_plain_decoding():
    rows = []
    for i in range(10):
        for model, bad in (("hf-audio/m", i < 6), ("hf-audio/m?mitigation=aad", i < 3)):
            rows.append(
                {
                    "model": model,
                    "question_id": f"q{i}",
                    "seed": None,
                    "domain": "music",
                    "category": "context" if i % 2 else "knowledge",
                    "strategy": STRATEGIES[i % 7],
                    "verdict": "hallucinated" if bad else "grounded",
                }
            )
    t2, t8, t12 = mitigation_tables(rows)
    assert [c.key for c in t2.cols] == ["model", "method", "context", "knowledge", "overall"]
    assert [c.title for c in t12.cols][2:] == [ABBR[s] for s in STRATEGIES]
    assert len([c for c in t8.cols]) == 2 + 6 + 1
    base, aad = t2.rows
    assert base["method"] == "W/O" and aad["method"].startswith("AAD")
    assert base["overall"] == "60.0" and aad["overall"].startswith("30.0 (-30.0 [") and aad["overall"].endswith(" *")
    low, high = aad["overall_change"][1:]
    assert low < -0.3 < high and aad["overall_change"][0] == pytest.approx(-0.3)
    assert paired_change([(1, 0), (1, 0)]) == (-1.0, -1.0, -1.0) and paired_change([]) is None
    only = mitigation_tables([r for r in rows if "aad" in r["model"]])
    assert not only[0].rows  # no baseline run: no mitigation row


@pytest.fixture(scope="module")
def rules_run(tmp_path_factory):
    pytest.importorskip("soundfile")
    if shutil.which("espeak-ng") is None:
        pytest.skip("needs espeak-ng")
    from halluscope.backends.llm import LLMConfig
    from halluscope.core.store import Store
    from halluscope.mishap.quickstart import run_quickstart
    from support.chat_server import ChatServer
    from support.scripted import make_script

    mp = pytest.MonkeyPatch()
    mp.setenv("OPENAI_API_KEY", "k")
    run = tmp_path_factory.mktemp("rules") / "qs"
    try:
        with ChatServer(make_script({})) as srv:
            config = LLMConfig(openai={"base_url": srv.url, "max_retries": 0, "backoff_base_s": 0})
            kw = dict(clips=3, llm="openai/judge", model="openai/alm", config=config, quiet=True)
            res = run_quickstart(run, **kw)
            calls = srv.count
            with Store(run) as store:
                stored = sum(1 for _ in store.calls())
            again = run_quickstart(run, **kw)
            assert srv.count == calls  # the rerun resumed everything from the store
            with Store(run) as store:
                assert sum(1 for _ in store.calls()) == stored
        yield res, again
    finally:
        mp.undo()


def _csv(folder, name):
    with (folder / f"{name}.csv").open(encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def test_rules_quickstart_writes_every_artefact(rules_run):
    res, again = rules_run
    out = res.report.parent
    assert set(res.timings) >= {"questions", "answers", "judge", "template judge"} and "rubrics" not in res.timings
    t1 = _csv(out, "table1")
    assert len(t1) == 1 and all(
        t1[0][f"{d}_{c}"] != "-" for d in ("music", "sound", "speech") for c in MISHAP_CATEGORIES
    )
    t11 = _csv(out, "table11")
    assert list(t11[0])[2:] == STRATEGIES and t11[0]["overall"] if "overall" in t11[0] else True
    assert sum(t11[0][s] != "-" for s in STRATEGIES) == 7  # 3 clips x 2 per category: every strategy asked
    strategies = {r["domain"]: r for r in _csv(out, "strategies")}
    assert set(strategies) == {"music", "sound", "speech", "all"} and strategies["all"]["total"] == "12"
    assert int(strategies["all"]["spread"]) <= 1  # the quota: counts within a category differ by at most one
    t3 = _csv(out, "table3")
    assert [r["domain"] for r in t3] == ["music", "sound", "speech"] and list(t3[0]) == [
        "domain",
        "source",
        "clips",
        "description",
        "license",
        "hours",
    ]
    assert [r["domain"] for r in _csv(out, "durations")] == ["music", "sound", "speech"]
    for name in ("table2", "table8", "table12"):
        header = (out / f"{name}.csv").read_text(encoding="utf-8").splitlines()[0].split(",")
        assert header[:2] == ["model", "method"], name
        assert "\\toprule" in (out / f"{name}.tex").read_text(encoding="utf-8")
    assert (out / "table12.csv").read_text().splitlines()[0].split(",")[2:] == STRATEGIES
    for png in ("fig10.png", "fig11.png", "stance.png"):
        assert (out / png).read_bytes()[:4] == b"\x89PNG"
    stance = _csv(out, "stance")
    assert {r["domain"] for r in stance} == {"music", "sound", "speech"} and all(r["n"] == "2" for r in stance)
    judges = _csv(out, "judges")
    assert len(judges) == 1 and {judges[0]["judge_a"], judges[0]["judge_b"]} == {
        "openai/judge",
        "rules/template-facts-v1",
    }
    assert judges[0]["n"] == "12"
    page = (out / "mishap.md").read_text(encoding="utf-8")
    for title in (
        "Table 1:",
        "Table 11:",
        "Table 2:",
        "Table 3:",
        "Table 8:",
        "Table 12:",
        "Fig. 10",
        "Figs. 3b and 11",
        "Judges side by side",
        "judged by rules/template-facts-v1: 12 verdicts",
    ):
        assert title in page, title
    summary = json.loads((out / "summary.json").read_text())
    assert summary["writer"] == "rules/templates-v1" and sum(summary["strategy_counts"].values()) == 12
    assert again.protocol == res.protocol


def test_rules_questions_record_their_quota_and_checked_false_authority(rules_run):
    from halluscope.core.store import Store
    from halluscope.mishap.questions import load_questions
    from halluscope.mishap.rubrics import current_rubrics
    from halluscope.mishap.rules import template_facts

    res, _ = rules_run
    with Store(res.run) as store:
        qs, rubrics, facts = load_questions(store), current_rubrics(store), template_facts(store)
        m = store.latest_manifest("mishap questions")
    assert len(qs) == 12 and set(rubrics) == set(qs) == set(facts)
    assert m.config["assignment"] == "quota-v1" and sum(m.config["strategy_counts"].values()) == 12
    per_clip = {}
    for q in qs.values():
        per_clip.setdefault((q.clip_id, q.category), []).append(q.strategy)
    assert all(len(v) == 2 and len(set(v)) == 2 for v in per_clip.values())
    for q in qs.values():
        if q.strategy == "false_authority":
            assert q.invented_source in q.text and q.checks["name_collision_checked"]
