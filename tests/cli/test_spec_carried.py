"""A model spec given on the command line reaches the records as the same ModelSpec: 'mishap answer', 'mishap judge'
and 'detect' parse each model option once and carry it; the record stores the name as written (its JSON as before)
and its ``spec`` property gives the ModelSpec back."""

import json

import pytest
from typer.testing import CliRunner

from halluscope.cli.main import app
from halluscope.core.keys import StageName
from halluscope.core.records import GroundednessJudgement, MishapAnswer, Prediction
from halluscope.core.spec import ModelSpec
from halluscope.core.store import Store
from halluscope.mishap.answers import STAGE as ANSWERS
from halluscope.mishap.judge import STAGE as JUDGE
from support import fakes, scripted
from support.chat_server import ChatServer, Reply


def invoke(*args: str) -> None:
    res = CliRunner().invoke(app, [*args])
    assert res.exit_code == 0, res.output


def stored(run, command: str, stage: str, cls, key: str | None = None):
    """The records the latest manifest of ``command`` made (``stage``, its fingerprint under ``key``)."""
    with Store(run) as store:
        m = [m for m in store.manifests() if m.command == command][-1]
        records = store.results(stage, m.stages[key or stage], cls)
    return list(records.values())


@pytest.fixture
def mishap_run(tmp_path, monkeypatch):
    """A scripted MISHAP run (clips, questions, rubrics, one answered model) with the server left running."""
    run = scripted.build_run(tmp_path, monkeypatch, judge=False, seeds=(), per_category=1)
    cfg = tmp_path / "llm.json"
    cfg.write_text(json.dumps({"openai": {"max_retries": 0, "backoff_base_s": 0}}))
    monkeypatch.setenv("HALLUSCOPE_LLM_CONFIG", str(cfg))
    with ChatServer(scripted.make_script({})) as srv:
        monkeypatch.setenv("OPENAI_BASE_URL", srv.url)
        monkeypatch.setenv("OPENAI_API_KEY", "k")
        yield run


@pytest.mark.parametrize(
    "given, flags",
    [
        ("openai/alm-b?name=Model%20B", []),  # the glued form
        ("openai/alm-b", ["-o", "name=Model B"]),  # the same spec with the option on the command line
        ("openai/alm-b?concurrency=2", []),  # a backend option glued into the name stays in it
    ],
)
def test_answer_records_carry_the_model_spec(mishap_run, given, flags):
    invoke("mishap", "answer", str(mishap_run), "--model", given, *flags)
    expected = ModelSpec.parse(given, {"name": "Model B"} if flags else None)
    text = given if not flags else str(expected)
    key = str(StageName("answers", subject=text))
    answers = stored(mishap_run, "mishap answer", ANSWERS, MishapAnswer, key)
    assert answers and {a.spec for a in answers} == {expected}
    # stored as the name as written (the glued form) or the canonical form of the parsed one (-o)
    assert {a.model for a in answers} == {text}
    assert all(MishapAnswer.model_validate_json(a.model_dump_json()) == a for a in answers)


@pytest.mark.parametrize("glued", [True, False])
def test_judge_records_carry_the_judge_spec_with_its_options(mishap_run, glued):
    args = ["--judge", "openai/judge?concurrency=2"] if glued else ["--judge", "openai/judge", "-o", "concurrency=2"]
    invoke("mishap", "judge", str(mishap_run), *args)
    verdicts = stored(mishap_run, "mishap judge", JUDGE, GroundednessJudgement, "judge")
    assert verdicts and {v.spec for v in verdicts} == {ModelSpec("openai", "judge", {"concurrency": 2})}
    assert {v.judge for v in verdicts} == {"openai/judge?concurrency=2"}


@pytest.fixture(scope="module")
def spoken_run(tmp_path_factory):
    return fakes.spoken_run(tmp_path_factory.mktemp("carried"))


def detector_script(req: dict, n: int) -> Reply:
    return Reply(content='{"binary": "no"}')


@pytest.mark.parametrize(
    "given, flags, expected",
    [
        ("openai/det?concurrency=2", [], "openai/det?concurrency=2"),
        ("openai/det?concurrency=3&name=D", [], "openai/det?concurrency=3"),  # the display name is not stored
        ("openai/det?concurrency=3", ["-o", "name=D"], "openai/det?concurrency=3"),
    ],
)
def test_detect_records_carry_the_detector_spec(spoken_run, monkeypatch, given, flags, expected):
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    with ChatServer(detector_script) as srv:
        monkeypatch.setenv("OPENAI_BASE_URL", srv.url)
        invoke("detect", str(spoken_run), "--detector", given, *flags, "--task", "binary", "--input", "text")
    preds = stored(spoken_run, "detect", "detect", Prediction)
    assert preds and {p.spec for p in preds} == {ModelSpec.parse(expected)}
    assert {p.detector for p in preds} == {expected}


def test_a_record_refuses_a_model_that_is_no_spec():
    with pytest.raises(ValueError, match="model"):
        MishapAnswer(id="q~x~greedy", question_id="q", model="?x", status="ok")


def test_a_carried_spec_keeps_the_name_as_written():
    spec = ModelSpec.parse("hf/m?b=1&a=2")
    assert spec == ModelSpec.parse("hf/m?a=2&b=1") and spec.text == "hf/m?b=1&a=2" and str(spec) == "hf/m?a=2&b=1"
    answer = MishapAnswer(id="q~m~greedy", question_id="q", model=spec, status="ok")
    assert answer.model == "hf/m?b=1&a=2" and answer.spec == spec
    assert json.loads(answer.model_dump_json())["model"] == "hf/m?b=1&a=2"
    assert spec.with_options(c=3).text == "hf/m?a=2&b=1&c=3"  # a spec made in code: its canonical form
