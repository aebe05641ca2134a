"""Answers from an openai audio model, the groundedness judge (category prompts, 3+3 examples, FTS5 evidence
tool, unscored replies) and the evidence tool on a small local collection."""

import json

from halluscope.backends.llm import LLMConfig
from halluscope.mishap.answers import collect_answers
from halluscope.mishap.clips import import_clips
from halluscope.mishap.evidence import FtsEvidence, fts_query
from halluscope.mishap.judge import judge_messages, load_examples, parse_verdict, run_judge
from halluscope.mishap.questions import make_questions
from halluscope.mishap.rubrics import make_rubrics
from support import scripted
from support.chat_server import ChatServer

CFG = LLMConfig(openai={"max_retries": 0, "backoff_base_s": 0})
DOCS = [
    {
        "id": "atlas",
        "title": "Mridangam references",
        "text": "No reference work called the Mridangam Rhythm Atlas "
        "exists; standard sources are treatises on Carnatic percussion.",
    },
    {"id": "alberta", "title": "Alberta", "text": "Alberta is a province of Canada, bordered by British Columbia."},
    {"id": "nagasaki", "title": "Nagasaki", "text": "The second atomic bomb struck Nagasaki on 9 August 1945."},
]


def write_docs(path):
    path.write_text("".join(json.dumps(d) + "\n" for d in DOCS), encoding="utf-8")
    return path


def test_fts_evidence_ranks_and_sanitises(tmp_path):
    tool = FtsEvidence(write_docs(tmp_path / "docs.jsonl"), index=tmp_path / "idx.sqlite")
    assert [e.doc_id for e in tool.search("Mridangam Rhythm Atlas", 2)][0] == "atlas"
    assert tool.search("Alberta province")[0].doc_id == "alberta"
    assert tool.search('"; DROP TABLE docs; -- NEAR( OR') == []  # quoted words only: never a syntax error
    assert tool.search("") == [] and fts_query("a ; ") is None
    assert "Nagasaki" in tool.search("atomic bomb second")[0].snippet
    again = FtsEvidence(write_docs(tmp_path / "docs.jsonl"), index=tmp_path / "idx.sqlite")
    assert again.identity() == tool.identity() and again.search("Alberta")[0].doc_id == "alberta"
    folder = tmp_path / "folder"
    folder.mkdir()
    (folder / "a.md").write_text("# Doorbells\nA doorbell chimes twice.", encoding="utf-8")
    assert FtsEvidence(folder).search("doorbell")[0].title == "Doorbells"


def test_examples_and_prompts():
    ex = load_examples()
    for cat in ("context", "knowledge"):
        assert [e["verdict"] for e in ex[cat]].count("grounded") == 3
        msg = judge_messages(
            category=cat,
            question="Q?",
            response="R.",
            description="D.",
            rubric="Hallucinated if a. Grounded if b.",
            examples=ex,
            max_searches=2,
        )[0].content
        assert "Examine every claim" in msg or "examine every claim" in msg.lower()
        assert msg.count("Judgement: {") == 6 and "Reference rubric: Hallucinated if a. Grounded if b." in msg
        assert ("SEARCH: <query>" in msg) == (cat == "knowledge")
    no_tool = judge_messages(
        category="knowledge", question="Q", response="R", description="D", rubric="x", examples=ex, max_searches=0
    )[0].content
    assert "SEARCH:" not in no_tool
    assert parse_verdict('blah {"verdict": "Hallucinated", "stance": "asserts"}') == ("hallucinated", "asserts", None)
    assert parse_verdict("Verdict: grounded.")[0] == "grounded"
    assert parse_verdict("I think it is fine.")[0] is None


def test_answers_and_judge_end_to_end(tmp_path, monkeypatch):
    manifest = scripted.write_clips(tmp_path / "data", uninformative=False)
    docs = write_docs(tmp_path / "docs.jsonl")
    state: dict = {}
    run = tmp_path / "run"
    with ChatServer(scripted.make_script(state)) as srv:
        monkeypatch.setenv("OPENAI_BASE_URL", srv.url)
        monkeypatch.setenv("OPENAI_API_KEY", "k")
        import_clips(run, manifest, config=CFG, quiet=True)
        make_questions(run, "openai/writer", per_category=2, checker="none", config=CFG, quiet=True)
        make_rubrics(run, "openai/rubric", config=CFG, quiet=True)
        ans = collect_answers(
            run,
            "openai/alm",
            seeds=[0, 1],
            temperature=0.7,
            config=CFG,
            quiet=True,
            backend_options={"audio_window_s": 1.5},
        )
        assert len(ans.results) == 24 * 2 and not ans.failed
        a = next(iter(ans.results.values()))
        assert a.audio is not None and a.audio.delivered and a.call_key
        long = [x for x in ans.results.values() if x.question_id.startswith("sound-1")]  # a 2 s clip, window 1.5 s
        assert all(x.audio.action == "truncated" and x.audio.sent_s == 1.5 for x in long)
        bodies = [r for r in srv.requests if isinstance(r["messages"][-1]["content"], list)]
        assert {r["seed"] for r in bodies} == {0, 1} and all(r["temperature"] == 0.7 for r in bodies)
        assert all(r["messages"][-1]["content"][0]["type"] == "input_audio" for r in bodies)
        res = run_judge(run, "openai/judge", evidence=docs, max_searches=2, config=CFG, quiet=True)
        n_calls = srv.count
        res2 = run_judge(run, "openai/judge", evidence=docs, max_searches=2, config=CFG, quiet=True)
        assert srv.count == n_calls and res2.results == res.results  # resumed from the store
    js = res.results
    assert len(js) == 48 and not res.failed
    # false-authority answers led the judge to search once, then the evidence made them grounded
    fa = [j for aid, j in js.items() if "Atlas" in (ans.results[aid].text or "")]
    assert fa and all(
        j.verdict == "grounded" and len(j.searches) == 1 and j.searches[0].results[0] == "atlas" for j in fa
    )
    xss = [j for aid, j in js.items() if "<script>" in (ans.results[aid].text or "")]
    assert xss and all(j.verdict == "hallucinated" and j.stance == "asserts" for j in xss)
    endorse = [j for aid, j in js.items() if "three cat meows" in (ans.results[aid].text or "")]
    assert endorse and all(j.stance == "endorses_false_premise" for j in endorse)
    judge_prompts = [
        c
        for r in srv.requests
        if isinstance(c := r["messages"][0]["content"], str) and c.startswith("You are a groundedness judge")
    ]
    assert any("knowledge question" in p for p in judge_prompts) and any(
        "question about an audio clip" in p for p in judge_prompts
    )
    assert all("Reference rubric: Hallucinated if the response accepts the premise." in p for p in judge_prompts)


def test_unreadable_judge_reply_is_unscored(tmp_path, monkeypatch):
    import asyncio

    from halluscope.backends.llm import Caller, create_backend
    from halluscope.core.records import MishapAnswer, MishapClip, MishapQuestion, MishapRubric
    from halluscope.mishap.judge import GroundednessJudge

    with ChatServer(scripted.make_script({})) as srv:
        backend = create_backend("openai/judge", config=CFG, base_url=srv.url, api_key_env="NOPE_KEY")
        monkeypatch.setenv("NOPE_KEY", "k")
        gj = GroundednessJudge(backend, examples=load_examples(), retries=1)
        q = MishapQuestion(
            id="c~context~0",
            clip_id="c",
            domain="sound",
            category="context",
            strategy="absent_premise",
            text="How many meows?",
            generator="x",
        )
        clip = MishapClip(id="c", domain="sound", source="s", audio="/x.wav", description="A doorbell.")
        ans = MishapAnswer(id="a1", question_id=q.id, model="m", status="ok", text="UNREADABLE words")
        rub = MishapRubric(question_id=q.id, version=1, text="Hallucinated if a. Grounded if b.", author="x")

        async def go():
            async with Caller(backend) as caller:
                return await gj.judge(caller, ans, q, clip, rub)

        j = asyncio.run(go())
    assert j.status == "unscored" and j.verdict is None and j.raw_text == "I think it is fine."
    assert j.unscored_reason.count("no verdict") == 2 and len(j.call_keys) == 2
