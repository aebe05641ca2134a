"""Clips, informativeness filter, questions (adherence, regeneration, name collisions) and rubrics against the
scripted loopback chat-completions server; resume makes no calls."""

import json

import pytest

from halluscope.backends.llm import LLMConfig
from halluscope.core.errors import InputError
from halluscope.core.records import MISHAP_STRATEGIES
from halluscope.core.store import Store
from halluscope.mishap.clips import import_clips, kept_clips, load_manifest
from halluscope.mishap.questions import assign_strategies, make_questions, name_collision, parse_questions
from halluscope.mishap.rubrics import (
    check_form,
    current_rubrics,
    export_rubrics,
    import_rubrics,
    make_rubrics,
    rubric_history,
)
from support import scripted
from support.chat_server import ChatServer
from support.corpus_fixtures import write_jsonl

CFG = LLMConfig(openai={"max_retries": 0, "backoff_base_s": 0})


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("mishap")
    manifest = scripted.write_clips(tmp / "data")
    real = tmp / "real_sources.txt"
    real.write_text("# real names\nThe Grove Dictionary of Music\nMridangam Rhythm Atlas\n", encoding="utf-8")
    state = {
        "authority": ["Mridangam Rhythm Atlas", "Carnatic Percussion Ledger"],
        "bad_niche": True,
        "bad_rubric_once": True,
    }
    run = tmp / "run"
    with ChatServer(scripted.make_script(state)) as srv, pytest.MonkeyPatch.context() as mp:
        mp.setenv("OPENAI_BASE_URL", srv.url)
        mp.setenv("OPENAI_API_KEY", "k")
        clips = import_clips(run, manifest, filter_llm="openai/filter", config=CFG, quiet=True)
        qs = make_questions(run, "openai/writer", per_category=2, real_sources=real, config=CFG, quiet=True)
        rubrics = make_rubrics(run, "openai/rubric", config=CFG, quiet=True)
        first = srv.count
        again = (
            import_clips(run, manifest, filter_llm="openai/filter", config=CFG, quiet=True),
            make_questions(run, "openai/writer", per_category=2, real_sources=real, config=CFG, quiet=True),
            make_rubrics(run, "openai/rubric", config=CFG, quiet=True),
        )
        calls_on_rerun = srv.count - first
        requests = list(srv.requests)
    return {
        "run": run,
        "clips": clips,
        "questions": qs,
        "rubrics": rubrics,
        "again": again,
        "calls_on_rerun": calls_on_rerun,
        "requests": requests,
        "manifest": manifest,
        "real": real,
    }


def test_clips_filter_and_balance(built):
    c = built["clips"]
    assert len(c.clips) == 7 and c.dropped.keys() == {"vague"} and "uninformative" in c.dropped["vague"]
    by_domain = {r["domain"]: r for r in c.balance if r["source"] == "(all)"}
    assert {d: (r["clips"], r["kept"]) for d, r in by_domain.items()} == {
        "music": (2, 2),
        "sound": (3, 2),
        "speech": (2, 2),
    }
    assert by_domain["music"]["share_kept"] == pytest.approx(1 / 3)
    with Store(built["run"]) as store:
        kept = kept_clips(store)
    assert list(kept) == ["music-0", "music-1", "sound-0", "sound-1", "speech-0", "speech-1"]
    assert kept["speech-0"].duration_s > 1 and len(kept["speech-0"].sha256) == 64


def test_manifest_errors_name_the_row(tmp_path):
    bad = tmp_path / "m.jsonl"
    bad.write_text(
        json.dumps({"id": "a", "domain": "noise", "source": "s", "audio": "x.wav", "description": "d"}) + "\n"
    )
    with pytest.raises(InputError, match="row 1.*domain"):
        load_manifest(bad)
    bad.write_text(
        json.dumps({"id": "a", "domain": "sound", "source": "s", "audio": "x.wav", "description": "d"}) + "\n"
    )
    with pytest.raises(InputError, match="not found"):
        load_manifest(bad)


def test_questions_per_category_strategies_and_checks(built):
    qs = built["questions"].results
    assert not built["questions"].failed
    assert len(qs) == 6 * 4  # 2 per category, 4 per clip
    for q in qs.values():
        assert q.strategy in MISHAP_STRATEGIES[q.category]
        assert q.checks.get("adherence") is True
    per_clip = {}
    for q in qs.values():
        per_clip.setdefault((q.clip_id, q.category), []).append(q.strategy)
    assert all(len(set(v)) == 2 for v in per_clip.values())  # distinct strategies within a clip and category
    # false authority: the first name collides with the real list and is regenerated with a fresh one
    fa = [q for q in qs.values() if q.strategy == "false_authority"]
    assert fa and all(q.invented_source == "Carnatic Percussion Ledger" and q.attempts == 2 for q in fa)
    assert all("collides with the real source 'Mridangam Rhythm Atlas'" in q.rejected[0] for q in fa)
    assert all(q.checks["name_collision_free"] for q in fa)
    # niche specifics: the adherence check rejects the first question, a regeneration passes
    niche = [q for q in qs.values() if q.strategy == "niche_specifics"]
    assert niche and all(q.attempts == 2 and "does not adhere" in q.rejected[0] for q in niche)
    assert all("BADQ" not in q.text for q in niche)


def test_question_requests_carry_description_and_strategies(built):
    gens = [r for r in built["requests"] if scripted.text_of(r).startswith("You write adversarial")]
    first = [r for r in gens if "I told William" in scripted.text_of(r)]
    cats = {c for r in first for c in ("context", "knowledge") if f"Question category: {c}." in scripted.text_of(r)}
    assert cats == {"context", "knowledge"}
    assert all("Transcript" in scripted.text_of(r) or "transcript" in scripted.text_of(r) for r in first)
    assert all(r["temperature"] == 0.7 for r in gens)


def test_rubrics_form_retry_and_versions(built, tmp_path):
    r = built["rubrics"]
    assert len(r.results) == 24 and not r.failed
    assert all(
        x.text.startswith("Hallucinated if") and " Grounded if " in x.text and x.version == 1
        for x in r.results.values()
    )
    out = tmp_path / "rubrics.jsonl"
    assert export_rubrics(built["run"], out) == 24
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    rows[0]["rubric"] = "Hallucinated if it names any instrument. Grounded if it says none can be identified."
    rows[1]["rubric"] = "This is not a rubric"
    write_jsonl(out, rows)
    with pytest.raises(InputError, match="Hallucinated if"):
        import_rubrics(built["run"], out, author="ann")
    rows[1]["rubric"] = r.results[rows[1]["question_id"]].text  # unchanged: no new version
    write_jsonl(out, rows)
    new = import_rubrics(built["run"], out, author="ann")
    assert [x.question_id for x in new] == [rows[0]["question_id"]]
    with Store(built["run"]) as store:
        hist = rubric_history(store)[rows[0]["question_id"]]
        cur = current_rubrics(store)
    assert [h.version for h in hist] == [1, 2] and hist[1].author == "ann" and hist[0].author == "llm:openai/rubric"
    assert cur[rows[0]["question_id"]].text.startswith("Hallucinated if it names any instrument")
    assert import_rubrics(built["run"], out, author="ann") == []  # unchanged: no new version


def test_rerun_makes_no_calls(built):
    assert built["calls_on_rerun"] == 0
    assert built["again"][1].results == built["questions"].results


def test_helpers():
    assert assign_strategies("c1", "knowledge", 2, seed=0) == assign_strategies("c1", "knowledge", 2, seed=0)
    assert len(set(assign_strategies("c1", "context", 3, seed=0))) == 3
    assert len(assign_strategies("c1", "context", 5, seed=0)) == 5
    assert name_collision("the grove dictionary of music!", ["The Grove Dictionary of Music"]) is not None
    assert name_collision("Carnatic Percussion Ledger", ["The Grove Dictionary of Music"]) is None
    assert check_form("Hallucinated if x. Grounded if y") == "Hallucinated if x. Grounded if y."
    assert check_form("Grounded if y.") is None
    got = parse_questions('[{"strategy": "absent premise", "question": "q1 is long enough"}]', ["absent_premise"])
    assert got == [{"question": "q1 is long enough", "invented_source": None}]
    assert parse_questions("no json", ["absent_premise"]) == [None]
