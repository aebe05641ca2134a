"""The hf/<path> backend on a tiny random-weight Llama and a word-level tokenizer built here."""

import json

import pytest

pytest.importorskip("transformers")

from halluscope.backends.llm import GenerateOptions, LLMConfig, complete_all, create_backend  # noqa: E402
from halluscope.core.errors import HalluscopeError, ItemError  # noqa: E402
from halluscope.core.records import Article  # noqa: E402
from halluscope.core.store import Store  # noqa: E402
from halluscope.spoken.generate import LLMGenerator  # noqa: E402
from support.tiny_hf import build_tiny_lm  # noqa: E402


@pytest.fixture(scope="module")
def lm(tmp_path_factory):
    return build_tiny_lm(tmp_path_factory.mktemp("hf") / "tiny")


def _backend(lm, **options):
    return create_backend(f"hf/{lm}", config=LLMConfig(), **{"params": {"max_new_tokens": 6}, **options})


def _reqs(b, *texts):
    return [b.request([{"role": "system", "content": "be brief"}, {"role": "user", "content": t}]) for t in texts]


def test_batched_greedy_generation_with_the_chat_template(lm, tmp_path):
    b = _backend(lm, batch_size=2)
    store = Store(tmp_path)
    texts = ["hello bank", "the rate rose very high", "news"]
    out, stats = complete_all(b, _reqs(b, *texts), store=store)
    assert [r.status for r in out] == ["ok"] * 3 and stats.calls == 3
    assert all(r.usage.completion_tokens <= 6 and r.finish_reason in ("stop", "length") for r in out)
    payloads = [json.loads(c["request"]) for c in store.calls()]
    assert payloads[0]["prompt"] == "<|system|> be brief <|end|> <|user|> hello bank <|end|> <|assistant|> "
    assert sorted(p["batch"] for p in payloads) == [1, 2, 2]
    assert out[1].usage.prompt_tokens == len(payloads[1]["prompt"].split())
    alone, _ = complete_all(b, _reqs(b, texts[1]))  # greedy: the same reply without batch mates or padding
    assert alone[0].text == out[1].text


def test_rerun_is_served_from_the_store_without_loading_the_model(lm, tmp_path):
    store = Store(tmp_path)
    b = _backend(lm)
    first, _ = complete_all(b, _reqs(b, "hello", "bank"), store=store)
    fresh = _backend(lm)
    again, stats = complete_all(fresh, _reqs(fresh, "hello", "bank"), store=store)
    assert [r.text for r in again] == [r.text for r in first] and stats.calls == 0 and fresh._model is None


def test_seeded_sampling_is_reproducible(lm):
    def sample(seed):
        b = _backend(lm, params={"max_new_tokens": 8, "temperature": 1.5, "seed": seed})
        return complete_all(b, _reqs(b, "hello"))[0][0].text

    assert sample(1) == sample(1)
    assert len({sample(s) for s in range(4)}) > 1


def test_bad_path_and_parameters_are_explained(tmp_path, lm):
    with pytest.raises(HalluscopeError, match="expected 'hf/<directory>'"):
        b = _backend(tmp_path / "missing")
        complete_all(b, _reqs(b, "x"))
    with pytest.raises(HalluscopeError, match="unknown decoding parameters"):
        _backend(lm, params={"beams": 2}).request([{"role": "user", "content": "x"}])


def test_hf_generator_reports_unusable_replies(lm):
    gen = LLMGenerator(_backend(lm), GenerateOptions(retries=1))
    # a random tiny model runs into its 6-token limit: truncation, reported as such; the retry samples differently
    # (at temperature 0.7 it may stop early: then it is rejected for its missing '(full text)', also with its reason)
    with pytest.raises(
        ItemError,
        match=r"#0 truncated: reply cut at max_tokens=6 \(finish_reason=length\) before any "
        r"text after a '\(full text\)' header.*#1 (truncated: reply cut|rejected: no text "
        r"after a '\(full text\)' header).*\(retry 1: temperature 0.7, seed 1\)",
    ):
        gen.rewrite(
            Article(id="a", language="en", text="The bank rate rose."), type="fabrication", severity="mild", seed=0
        )


def test_configured_max_new_tokens_wins_over_a_callers_max_tokens():
    """The config outranks the caller under either name (it used to lose when the caller said max_tokens)."""
    from halluscope.backends.llm._base import local_params

    defaults = {"max_new_tokens": 512, "temperature": 0.0}
    assert local_params("hf/x", defaults, {"max_tokens": 64}, {"max_new_tokens": 3}) == {
        "max_new_tokens": 3,
        "temperature": 0.0,
    }
    assert local_params("hf/x", defaults, {"max_tokens": 64, "mitigation": "aad"}, {}) == {
        "max_new_tokens": 64,
        "temperature": 0.0,
    }  # a caller cannot switch a mitigation on
    with pytest.raises(HalluscopeError, match="unknown decoding parameters \\['beams'\\]"):
        local_params("hf/x", defaults, {"beams": 5}, {})
    # the model card's top-k and repetition penalty pass, and only when given (seed 001, Table 5)
    assert local_params("hf/x", defaults, {"top_k": 5, "repetition_penalty": 1.1}, {}) == {
        "max_new_tokens": 512,
        "temperature": 0.0,
        "top_k": 5,
        "repetition_penalty": 1.1,
    }


def test_a_shared_prompt_prefix_is_computed_once_with_the_same_replies(lm):
    """prefix_cache (llm/_prefix.py): requests sharing long instructions (a judge's examples) get the plain batched
    greedy replies, token for token, while the shared prefix runs through the model once."""
    import random

    from support.tiny_hf import WORDS

    rng = random.Random(0)
    shared = " ".join(rng.choice(WORDS) for _ in range(150))
    texts = [f"{shared} {' '.join(rng.choice(WORDS) for _ in range(rng.randint(3, 12)))}" for _ in range(6)]
    plain, cached = _backend(lm, batch_size=3), _backend(lm, batch_size=3, prefix_cache=True)
    params = {"max_new_tokens": 12}
    want, _ = complete_all(plain, [plain.request([{"role": "user", "content": t}], params=params) for t in texts])
    got, _ = complete_all(cached, [cached.request([{"role": "user", "content": t}], params=params) for t in texts])
    assert [r.text for r in got] == [r.text for r in want] and any(r.text for r in want)
    assert [r.usage.prompt_tokens for r in got] == [r.usage.prompt_tokens for r in want]
    prefixes = cached._prefixes
    assert len(prefixes.entries) == 1 and len(prefixes.entries[0][0]) >= 150
    assert prefixes.reused_tokens >= 6 * 150  # every request reused the prefix instead of running it again
    assert plain._prefixes is None  # off by default
    sampled, _ = complete_all(
        cached,
        [cached.request([{"role": "user", "content": texts[0]}], params={**params, "temperature": 0.7, "seed": 1})],
    )
    assert sampled[0].status == "ok" and prefixes.reused_tokens < 7 * 150  # sampling takes the plain path


def test_two_prompt_families_each_get_their_longest_shared_prefix(lm, monkeypatch):
    """Context and knowledge judge prompts share a header, then each its own examples: a cached header does not stop
    each family from getting its own, longer prefix; replies stay the plain ones."""
    import random

    from halluscope.backends.llm import _prefix
    from support.tiny_hf import WORDS

    monkeypatch.setattr(_prefix, "MIN_TOKENS", 20)
    rng = random.Random(1)
    words = lambda n: " ".join(rng.choice(WORDS) for _ in range(n))  # noqa: E731
    header, fam = words(30), {"a": words(40), "b": words(40)}
    texts = [f"{header} {fam[f]} {words(rng.randint(2, 6))}" for f in ("a", "b", "a", "b", "a", "b")]
    plain, cached = _backend(lm, batch_size=2), _backend(lm, batch_size=2, prefix_cache=True)
    params = {"max_new_tokens": 8}
    order = [0, 1, 2, 3, 4, 5]  # the first batch mixes the families: only the header is shared within it
    want, _ = complete_all(
        plain, [plain.request([{"role": "user", "content": texts[i]}], params=params) for i in order]
    )
    got, _ = complete_all(
        cached, [cached.request([{"role": "user", "content": texts[i]}], params=params) for i in order]
    )
    assert [r.text for r in got] == [r.text for r in want]
    lengths = sorted(len(p) for p, _ in cached._prefixes.entries)
    assert lengths[-1] >= 70 and lengths[-2] >= 70  # one long prefix per family (header + its 40 words)
