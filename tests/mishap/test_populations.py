"""Provenance (issue 24, item 2): one MISHAP run holding MISHAP-Bench's own answers and imported validity responses
(HalluAudio), both labelled by two people; every agreement, ablation and validity table counts its own population.

The run is built on the scripted loopback server through the real openai client (tests/support/scripted.py)."""

import json

import pytest

from halluscope.backends.llm import LLMConfig
from halluscope.core.provenance import ANSWERS, IMPORTED
from halluscope.core.store import Store
from halluscope.current import population, provenance
from halluscope.mishap.ablation import LADDER, ablation_tables, run_configs
from halluscope.mishap.annotate import Annotations, annotation_items
from halluscope.mishap.judge import FULL
from halluscope.mishap.report import collect
from halluscope.mishap.validity import compare, import_validity
from support import scripted
from support.chat_server import ChatServer, Reply
from support.corpus_fixtures import write_jsonl

HALLU = [
    {
        "audio": f"s{i}.wav",
        "prompt": "Is there a dog barking?",
        "reference": "yes",
        "subset": "fsd_binary",
        "domain": "sound",
        "pred": "Yes, a dog is barking." if i % 2 else "There are four cats.",
    }
    for i in range(6)
]
N_ANSWERS_LABELLED, N_IMPORTED = 8, 6


def _script(state):
    base = scripted.make_script(state)

    def script(req, n):
        prompt = scripted.text_of(req)
        if prompt.startswith("You are a groundedness judge") and "The correct answer to" in prompt:
            verdict = "hallucinated" if "four cats" in prompt.rsplit("Response: ", 1)[1] else "grounded"
            return Reply(content=json.dumps({"verdict": verdict, "stance": "asserts", "explanation": "scripted"}))
        return base(req, n)

    return script


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("populations")
    with pytest.MonkeyPatch.context() as mp:
        run = scripted.build_run(tmp, mp, seeds=(0,))
        import_validity(run, "halluaudio", [write_jsonl(tmp / "halluaudio.jsonl", HALLU)], model="alm-1")
        items, _ = annotation_items(run)
        imported = [it for it in items if it["id"].startswith("validity~")]
        answers = [it for it in items if not it["id"].startswith("validity~")][:N_ANSWERS_LABELLED]
        assert len(imported) == N_IMPORTED
        ann = Annotations(run)
        for it in imported + answers:
            label = "hallucinated" if "four cats" in it["response"] or "cannot" not in it["response"] else "grounded"
            ann.add(answer_id=it["id"], annotator="ann1", label=label)
            ann.add(
                answer_id=it["id"],
                annotator="ann2",
                label=label
                if it is not answers[0]
                else {"grounded": "hallucinated", "hallucinated": "grounded"}[label],
            )
        ann.close()
        cfg = LLMConfig(openai={"max_retries": 0, "backoff_base_s": 0})
        with ChatServer(_script({})) as srv:
            mp.setenv("OPENAI_BASE_URL", srv.url)
            mp.setenv("OPENAI_API_KEY", "k")
            run_configs(run, "openai/judge", (FULL,), items="validity", config=cfg, quiet=True)
            run_configs(run, "openai/judge", LADDER, config=cfg, quiet=True)  # its last rung is FULL too
    return run


def test_every_response_has_its_provenance(run):
    with Store(run) as store:
        prov = provenance(store)
        assert len(population(store, IMPORTED)) == N_IMPORTED
        answers = population(store, ANSWERS)
    assert answers and all(prov[a] == f"{ANSWERS} openai/alm" for a in answers)
    assert {p for k, p in prov.items() if k not in answers} == {f"{IMPORTED} halluaudio/alm-1"}


def test_each_table_counts_the_n_of_its_own_population(run):
    pairs = 2 * N_ANSWERS_LABELLED  # (answer, annotator) pairs on MISHAP answers
    agreement = {r["pair"]: r for r in collect(run)["agreement"]}
    assert agreement["humans (pooled pairs)"]["n"] == N_ANSWERS_LABELLED  # not 8 + 6 imported
    pooled = agreement["judge vs humans (pooled)"]
    assert pooled["n"] + pooled["examples_left_out"] == pairs
    ablation = ablation_tables(run)["ablation"]
    assert [r["config"] for r in ablation] == [c.name for c in LADDER] + ["human-human"]
    # the last rung has the validity judge's config, but not its key nor its responses: every rung counts 16
    assert [r["n"] for r in ablation[:-1]] == [pairs] * len(LADDER)
    assert ablation[-1]["n"] == N_ANSWERS_LABELLED
    data = compare(run)
    rates = {r["benchmark"]: r for r in data["rates"]}
    assert rates["HalluAudio"]["responses"] == N_IMPORTED and rates["HalluAudio"]["human_labels"] == 2 * N_IMPORTED
    assert rates["MISHAP-Bench"]["labelled"] == N_ANSWERS_LABELLED
    agree = {(r["benchmark"], r["pair"]): r for r in data["agreement"]}
    assert agree[("HalluAudio", "judge vs original")]["n"] == N_IMPORTED
