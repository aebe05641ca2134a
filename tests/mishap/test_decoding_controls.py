"""Decoding controls of seed 001, Table 5 (temperature, top_p, top_k, repetition penalty, max new tokens, seeds) on
every answer path: the server body (scripted loopback server, real openai client), a local hf model (tiny random
weights: top_k=1 sampling is greedy; a strong repetition penalty changes the reply) and the mitigation loop's
sampler; per-model presets with a source for every value."""

import json

import pytest

from halluscope.core.errors import HalluscopeError, InputError
from halluscope.mishap.answers import apply_preset, decoding_params
from halluscope.mishap.presets import KEYS, load_presets, preset


def test_presets_name_a_source_for_every_value_and_extend_by_file(tmp_path):
    presets = load_presets()
    assert {"smollm2-135m-instruct", "qwen2-audio-instruct", "gemini-3.7-flash"} <= set(presets)
    for p in presets.values():
        assert set(p.values) == set(KEYS) and all(p.sources[k].strip() for k in KEYS)
    assert presets["smollm2-135m-instruct"].given() == {"temperature": 0.2, "top_p": 0.9, "seeds": [0, 1, 2]}
    assert "could not be read" in presets["qwen2-audio-instruct"].sources["top_k"]
    extra = tmp_path / "p.json"
    extra.write_text(json.dumps({"mine": {"model": "m", "top_k": {"value": 20, "source": "my card"}}}))
    assert preset("mine", extra).given() == {"top_k": 20}
    extra.write_text(json.dumps({"bad": {"model": "m", "top_k": {"value": 20}}}))
    with pytest.raises(InputError, match="every value names its source"):
        load_presets(extra)
    with pytest.raises(InputError, match="unknown decoding preset 'nope'"):
        preset("nope")
    settings, used = apply_preset(
        "smollm2-135m-instruct",
        temperature=0.7,
        top_p=None,
        top_k=None,
        repetition_penalty=None,
        max_tokens=None,
        seeds=None,
    )
    assert settings["temperature"] == 0.7 and settings["top_p"] == 0.9 and settings["seeds"] == [0, 1, 2]
    assert set(used["used"]) == {"top_p", "seeds"}  # the caller's temperature wins


def test_decoding_params_send_only_what_is_set():
    assert decoding_params(seed=None, temperature=0, top_p=None, max_tokens=8) == {"temperature": 0, "max_tokens": 8}
    assert decoding_params(seed=1, temperature=0.7, top_p=0.8, max_tokens=8, top_k=20, repetition_penalty=1.05) == {
        "temperature": 0.7,
        "max_tokens": 8,
        "seed": 1,
        "top_p": 0.8,
        "top_k": 20,
        "repetition_penalty": 1.05,
    }
    assert decoding_params(seed=None, temperature=0, top_p=None, max_tokens=8, repetition_penalty=1.1) == {
        "temperature": 0,
        "max_tokens": 8,
        "repetition_penalty": 1.1,
    }
    with pytest.raises(HalluscopeError, match="repetition penalty must be > 0"):
        decoding_params(seed=None, temperature=0, top_p=None, max_tokens=8, repetition_penalty=0)


def test_server_answers_carry_the_controls_and_the_preset(tmp_path, monkeypatch):
    from halluscope.backends.llm import LLMConfig
    from halluscope.core.store import Store
    from halluscope.mishap.answers import collect_answers
    from support import scripted
    from support.chat_server import ChatServer
    from support.scripted import make_script

    run = scripted.build_run(tmp_path, monkeypatch, judge=False, seeds=(), per_category=1)
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    with ChatServer(make_script({})) as srv:
        config = LLMConfig(openai={"base_url": srv.url, "max_retries": 0, "backoff_base_s": 0})
        res = collect_answers(
            run,
            "openai/alm",
            seeds=[0, 1],
            temperature=0.7,
            top_p=0.8,
            top_k=20,
            repetition_penalty=1.05,
            max_tokens=33,
            config=config,
            quiet=True,
        )
        bodies = [b for b in srv.requests if b["model"] == "alm"]
        assert (
            res.results
            and {(b["top_k"], b["repetition_penalty"], b["top_p"], b["max_tokens"]) for b in bodies}
            == {(20, 1.05, 0.8, 33)}
            and {b["seed"] for b in bodies} == {0, 1}
        )
        n = len(srv.requests)
        collect_answers(run, "openai/alm2", preset="smollm2-135m-instruct", config=config, quiet=True)
        sent = [b for b in srv.requests[n:] if b["model"] == "alm2"]
    assert (
        sent
        and {(b["temperature"], b["top_p"]) for b in sent} == {(0.2, 0.9)}
        and {b["seed"] for b in sent} == {0, 1, 2}
        and all("top_k" not in b for b in sent)
    )
    with Store(run) as store:
        m = store.latest_manifest("mishap answer")
    assert m.config["preset"]["preset"] == "smollm2-135m-instruct" and m.config["seeds"] == [0, 1, 2]
    assert m.config["preset"]["used"]["top_p"]["source"].startswith("model card")


@pytest.mark.slow  # builds and loads a tiny hf model (about 40 s on the busy 2-core machine)
def test_local_hf_generation_takes_top_k_and_repetition_penalty(tmp_path_factory):
    pytest.importorskip("transformers")
    from halluscope.backends.llm import LLMConfig, complete_all, create_backend
    from support.tiny_hf import build_tiny_lm

    lm = build_tiny_lm(tmp_path_factory.mktemp("hf") / "tiny")

    b = create_backend(f"hf/{lm}", config=LLMConfig(), batch_size=1)  # one model load, the controls per request

    def reply(**params):
        req = b.request([{"role": "user", "content": "hello bank rate"}], params={"max_new_tokens": 12, **params})
        return complete_all(b, [req])[0][0].text

    greedy = reply()
    assert reply(temperature=5.0, top_k=1, seed=3) == greedy  # top_k reached generate: one candidate is greedy
    assert len({reply(temperature=5.0, seed=s) for s in range(3)}) > 1  # without it, this hot sampling varies
    assert reply(repetition_penalty=50.0) != greedy or len(set(greedy.split())) == len(greedy.split())


def test_mitigation_sampler_takes_top_k_and_the_penalty():
    torch = pytest.importorskip("torch")
    from halluscope.mitigation._contrast import choose, penalize

    logits = torch.tensor([3.0, 2.0, 1.0, -1.0])
    g = torch.Generator().manual_seed(0)
    assert {choose(logits, temperature=10.0, top_p=1.0, generator=g, top_k=1) for _ in range(20)} == {0}
    assert {choose(logits, temperature=10.0, top_p=1.0, generator=g, top_k=2) for _ in range(60)} == {0, 1}
    out = penalize(logits, torch.tensor([0, 3]), 2.0)
    assert out.tolist() == [1.5, 2.0, 1.0, -2.0] and logits.tolist() == [3.0, 2.0, 1.0, -1.0]
