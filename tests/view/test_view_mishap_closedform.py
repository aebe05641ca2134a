"""The viewer's data for MISHAP runs (a scripted run: clips -> questions -> rubrics -> answers -> judge) and for
closed-form prediction files (strict vs compat readings), through the served API."""

import json

import pytest

from support.corpus_fixtures import write_jsonl
from support.view_helpers import http_get, index_rows

TOKEN = "view-mishap-token-1"
AUTH = {"X-Halluscope-Token": TOKEN}
ROWS = [  # a HalluAudio prediction file: one answer the two modes read alike, one they read differently
    {
        "audio": "s1.wav",
        "prompt": "Is there a dog barking?",
        "reference": "yes",
        "subset": "fsd_binary",
        "domain": "sound",
        "pred": "Yes, a dog is barking.",
    },
    {
        "audio": "s2.wav",
        "prompt": "Is there a dog barking?",
        "reference": "no",
        "subset": "fsd_binary",
        "domain": "sound",
        "pred": "I don't know.",
    },
]


@pytest.fixture(scope="module")
def mishap_run(tmp_path_factory):
    from support import scripted

    return scripted.build_run(tmp_path_factory.mktemp("view-mishap"), judge=True)


def test_mishap_questions_show_every_answer_verdict_and_clip(mishap_run, tmp_path):
    from halluscope.core.store import Store
    from halluscope.mishap.answers import load_answers
    from halluscope.view.server import ViewServer
    from support import scripted

    with Store(mishap_run, create=False, lock=False) as store:
        answers = load_answers(store)
    preds = tmp_path / "halluaudio.jsonl"
    write_jsonl(preds, ROWS)
    with ViewServer(mishap_run, token=TOKEN, closedform=[f"halluaudio={preds}"]) as srv:
        status, body, _ = http_get(srv, "/api/index", AUTH)
        index = index_rows(json.loads(body))
        questions = [r for r in index if r["kind"] == "mishap"]
        assert len(questions) == len({a.question_id for a in answers.values()}) and questions
        seen = {}
        for n in range(-(-len(index) // 50)):
            seen.update(json.loads(http_get(srv, f"/api/chunk/{n}", AUTH)[1])["items"])
        q = seen[questions[0]["id"]]
        mine = sorted(a.id for a in answers.values() if a.question_id == q["id"])
        assert sorted(a["id"] for a in q["answers"]) == mine
        assert {a["decoding"] for a in q["answers"]} == {"sampled (seed 0)", "sampled (seed 1)"}
        assert all(a["verdict"] in ("grounded", "hallucinated") and a["judge"] == "openai/judge" for a in q["answers"])
        assert q["rubric"] and q["clip"]["description"]
        status, wav, _ = http_get(srv, "/audio/" + q["clip"]["src"].rsplit("/", 1)[1], AUTH)
        assert status == 200 and wav[:4] == b"RIFF"
        xss = [a for q in seen.values() if q["kind"] == "mishap" for a in q["answers"] if a["text"] == scripted.XSS]
        assert xss  # kept verbatim in the data; the page renders it with textContent

        cf = [seen[r["id"]] for r in index if r["kind"] == "closedform"]
        assert len(cf) == 2 and {c["question"] for c in cf} == {"Is there a dog barking?"}
        yes = next(c for c in cf if c["reply"].startswith("Yes"))
        assert yes["strict"] == "yes" and yes["strict_correct"] and not yes["differs"]
        dunno = next(c for c in cf if c["reply"] == "I don't know.")
        assert not dunno["strict_correct"]
        if dunno["differs"]:
            assert dunno["why"]  # a disagreement always says why
