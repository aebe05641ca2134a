"""AAD, VCD, MTI and DoLa on tiny random-weight Qwen2-Audio, Qwen2.5-Omni thinker and a causal LM built here.

Every reference below is computed in the test from separate full forward passes (no cache, the whole
sequence each time) and the formulas written out here, never from the library's own step functions.
"""

import pytest

from support.tiny_audio_lm import espeak, omni_dir, qwen2_audio_dir  # noqa: F401 - fixtures

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

import torch.nn.functional as F

from halluscope.backends.audio_lm import clip_of, load_adapter
from halluscope.core.records import ChatMessage
from halluscope.mitigation import MitigationConfig, dola_candidates, parse_mitigation
from halluscope.mitigation._audio import branches, generate

MSG = [ChatMessage(role="user", content="hello is there audio in the text")]
STEPS = 4


@pytest.fixture(scope="module")
def clip():
    return clip_of(espeak("hello the audio")[:16_000])


@pytest.fixture(scope="module")
def adapters(qwen2_audio_dir, omni_dir):
    return {"qwen2-audio": load_adapter(str(qwen2_audio_dir)), "omni": load_adapter(str(omni_dir))}


def full(model, tensors, extra=(), hidden=False):
    """One uncached forward over the prompt plus ``extra`` tokens: the last position's output."""
    ids = torch.cat([tensors["input_ids"], torch.tensor([list(extra)], dtype=torch.long)], dim=1)
    inputs = {**tensors, "input_ids": ids, "attention_mask": torch.ones_like(ids)}
    with torch.inference_mode():
        return model(**inputs, use_cache=False, output_hidden_states=hidden, return_dict=True)


def ref_contrast(z, zn, alpha, beta):
    out = (1 + alpha) * z - alpha * zn
    if beta is not None:
        p = torch.softmax(z, -1)
        out = out.masked_fill(p < beta * p.max(), float("-inf"))
    return out


def check_steps(res, reference):
    """Each cached step's adjusted logits match the uncached reference, whose argmax is the token chosen.

    By induction this is also 'the cached loop decodes the same tokens as an uncached loop'.
    """
    assert len(res.steps) >= 1
    for t, step in enumerate(res.steps):
        want = reference(res.tokens[:t])
        got = step.logits
        finite = torch.isfinite(want)
        assert torch.equal(finite, torch.isfinite(got)), f"step {t}: plausible sets differ"
        assert torch.allclose(got[finite], want[finite], atol=2e-4, rtol=1e-4), f"step {t}"
        assert int(torch.argmax(want)) == step.token == res.tokens[t]


@pytest.mark.parametrize("which", ["qwen2-audio", "omni"])
def test_aad_contrasts_with_the_audio_removed_and_prefix_on_both(adapters, clip, which):
    ad = adapters[which]
    cfg = parse_mitigation("aad", alpha=1.0)
    _, main, res = generate(ad, MSG, [clip], {"max_new_tokens": STEPS}, cfg, keep_logits=True)
    prefixed = [
        ChatMessage(
            role="user", content="Focus on the given audio and answer the following question: " + MSG[0].content
        )
    ]
    with_a, without = ad.inputs(prefixed, [clip]), ad.inputs(prefixed, [])
    assert torch.equal(main.tensors["input_ids"], with_a.tensors["input_ids"]) and without.audio_tokens == 0
    check_steps(
        res,
        lambda ys: ref_contrast(
            full(ad.model, with_a.tensors, ys).logits[0, -1],
            full(ad.model, without.tensors, ys).logits[0, -1],
            1.0,
            None,
        ),
    )
    assert all(s.contrasted for s in res.steps)


@pytest.mark.parametrize("which", ["qwen2-audio", "omni"])
def test_vcd_contrasts_with_diffused_log_mel_features(adapters, clip, which):
    ad = adapters[which]
    cfg = parse_mitigation("vcd", alpha=1.0, beta=0.1, noise_steps=500, eta=0.002, noise_seed=7)
    _, main, res = generate(ad, MSG, [clip], {"max_new_tokens": STEPS}, cfg, keep_logits=True)
    x = main.tensors["input_features"]
    abar = (1 - 0.002) ** 500
    eps = torch.randn(x.shape, generator=torch.Generator().manual_seed(7))
    noisy = {**main.tensors, "input_features": abar**0.5 * x + (1 - abar) ** 0.5 * eps}
    assert cfg.abar == pytest.approx(abar)
    check_steps(
        res,
        lambda ys: ref_contrast(
            full(ad.model, main.tensors, ys).logits[0, -1], full(ad.model, noisy, ys).logits[0, -1], 1.0, 0.1
        ),
    )


@pytest.mark.parametrize("which", ["qwen2-audio", "omni"])
def test_mti_contrasts_exactly_at_the_steps_above_tau(adapters, clip, which):
    ad = adapters[which]
    _, _, plain = generate(ad, MSG, [clip], {"max_new_tokens": 8}, None)
    ents = sorted(s.entropy for s in plain.steps)
    tau = (ents[len(ents) // 2 - 1] + ents[len(ents) // 2]) / 2  # some steps above, some below
    cfg = parse_mitigation("mti", alpha=0.8, tau=tau, instruction=" the audio text none")
    _, main, res = generate(ad, MSG, [clip], {"max_new_tokens": 8}, cfg, keep_logits=True)
    instr = ad.tokenizer(" the audio text none", add_special_tokens=False)["input_ids"]
    flags = []

    def reference(ys):
        z = full(ad.model, main.tensors, ys).logits[0, -1]
        h = float(-(F.softmax(z, -1) * F.log_softmax(z, -1)).sum())
        flags.append(h > tau)
        if h <= tau:
            return z
        return ref_contrast(z, full(ad.model, main.tensors, [*ys, *instr]).logits[0, -1], 0.8, None)

    check_steps(res, reference)
    assert [s.contrasted for s in res.steps] == flags and any(flags)
    assert not all(flags) or len(flags) == 1


@torch.inference_mode()
def dola_reference(model, tensors, ys, layers, alpha=1.0, beta=0.1, penalty=1.2):
    out = full(model, tensors, ys, hidden=True)
    dec = model.get_decoder()
    final = out.logits[0, -1]
    lq = F.log_softmax(final, -1)
    js = {}
    for i in layers:
        lp = F.log_softmax(model.get_output_embeddings()(dec.norm(out.hidden_states[i][0, -1])), -1)
        m = 0.5 * (lq.exp() + lp.exp())
        js[i] = 0.5 * (
            F.kl_div(m.log(), lq, log_target=True, reduction="sum")
            + F.kl_div(m.log(), lp, log_target=True, reduction="sum")
        )
    best = max(js, key=lambda i: float(js[i].detach()))
    lm = F.log_softmax(model.get_output_embeddings()(dec.norm(out.hidden_states[best][0, -1])), -1)
    adj = (lq - alpha * lm).masked_fill(lq.exp() < beta * lq.exp().max(), float("-inf"))
    for tok in set(ys):
        adj[tok] = adj[tok] * penalty if adj[tok] < 0 else adj[tok] / penalty
    return adj, best, js


@pytest.fixture(scope="module")
def deep_lm(tmp_path_factory):
    """The tiny causal LM of tests/llm with 7 layers, so DoLa has several candidates (3, 5)."""
    from transformers import AutoModelForCausalLM, AutoTokenizer, LlamaForCausalLM

    from support.tiny_hf import build_tiny_lm

    path = build_tiny_lm(tmp_path_factory.mktemp("tiny-lm"))
    cfg = AutoModelForCausalLM.from_pretrained(path).config
    cfg.num_hidden_layers = 7
    torch.manual_seed(1)
    LlamaForCausalLM(cfg).save_pretrained(path)
    return path, AutoModelForCausalLM.from_pretrained(path).eval(), AutoTokenizer.from_pretrained(path)


def test_dola_picks_the_layer_of_largest_js_divergence(deep_lm):
    from halluscope.mitigation import decode

    _, model, tok = deep_lm
    assert dola_candidates(7) == (3, 5) and dola_candidates(32) == tuple(range(16, 32, 2))
    enc = dict(tok("<|user|> hello the bank rate <|end|> <|assistant|>", return_tensors="pt", add_special_tokens=False))
    res = decode(model, enc, parse_mitigation("dola"), max_tokens=8, eos=[], keep_logits=True)
    picked = []

    def reference(ys):
        adj, best, js = dola_reference(model, enc, ys, (3, 5))
        picked.append((best, js))
        return adj

    check_steps(res, reference)
    assert [s.layer for s in res.steps] == [b for b, _ in picked]
    assert all(float(js[b]) == max(float(v) for v in js.values()) for b, js in picked)


def test_dola_on_an_audio_model(adapters, clip):
    ad = adapters["omni"]  # (the random Qwen2-Audio emits <|AUDIO|> here, which a full forward cannot take back)
    _, main, res = generate(ad, MSG, [clip], {"max_new_tokens": 3}, parse_mitigation("dola"), keep_logits=True)
    check_steps(res, lambda ys: dola_reference(ad.model, main.tensors, ys, (1,))[0])


@pytest.mark.parametrize(
    "which,method", [("qwen2-audio", "aad"), ("omni", "aad"), ("omni", "vcd"), ("qwen2-audio", "mti"), ("omni", "dola")]
)
def test_zero_strength_is_plain_greedy_decoding(adapters, clip, which, method):
    ad = adapters[which]
    extra = {"tau": 0.0} if method == "mti" else {"repetition_penalty": 1.0} if method == "dola" else {}
    cfg = parse_mitigation(method, alpha=0.0, **extra)
    _, main, res = generate(ad, MSG, [clip], {"max_new_tokens": 6}, cfg)
    if method == "mti":
        assert all(s.contrasted for s in res.steps)  # tau 0: the contrast ran, at no strength
    with torch.inference_mode():
        plain = ad.model.generate(
            **main.tensors,
            max_new_tokens=6,
            do_sample=False,
            eos_token_id=ad.tokenizer.eos_token_id,
            pad_token_id=ad.tokenizer.eos_token_id,
        )
    assert res.tokens == plain[0, main.tensors["input_ids"].shape[1] :].tolist()


def test_sampling_is_seeded(adapters, clip):
    ad = adapters["qwen2-audio"]
    cfg = parse_mitigation("aad")
    runs = [
        generate(
            ad,
            MSG,
            [clip],
            {"max_new_tokens": 8, "temperature": 1.5, "top_p": 0.95, "seed": s, "mitigation": cfg.key()},
            cfg,
        )[2].tokens
        for s in (0, 0, 1, 2)
    ]
    assert runs[0] == runs[1] and len({tuple(r) for r in runs}) > 1


def test_options_are_validated_before_any_work():
    from halluscope.core.errors import HalluscopeError
    from halluscope.mitigation import split_mitigation

    rest, cfg = split_mitigation({"mitigation": "VCD", "alpha": 0.5, "device": "cpu"})
    assert rest == {"device": "cpu"} and cfg.key() == {
        "method": "vcd",
        "alpha": 0.5,
        "beta": 0.1,
        "noise_steps": 500,
        "eta": 5.9e-4,
        "noise_seed": 0,
    }
    assert cfg.label() == "VCD (alpha=0.5)" and MitigationConfig(method="aad").label() == "AAD"
    assert 0.74 < MitigationConfig(method="vcd").abar < 0.75  # VCD's own schedule at T = 500
    with pytest.raises(HalluscopeError, match="expected one of aad, vcd, mti, dola"):
        parse_mitigation("cd")
    with pytest.raises(HalluscopeError, match="without a mitigation"):
        split_mitigation({"alpha": 1.0})
    with pytest.raises(HalluscopeError, match="invalid aad options"):
        parse_mitigation("aad", alpha=-1)


def test_audio_methods_refuse_requests_without_audio(adapters):
    from halluscope.core.errors import HalluscopeError

    with pytest.raises(HalluscopeError, match="carries none"):
        branches(adapters["qwen2-audio"], MSG, [], parse_mitigation("aad"))


def test_backends_take_the_mitigation_as_an_option(qwen2_audio_dir, tmp_path):
    from halluscope.backends.audio_lm import create_audio_backend
    from halluscope.backends.llm import LLMConfig, create_backend
    from halluscope.core.errors import HalluscopeError

    plain = create_audio_backend(f"hf-audio/{qwen2_audio_dir}", config=LLMConfig())
    aad = create_audio_backend(f"hf-audio/{qwen2_audio_dir}", config=LLMConfig(), mitigation="aad", alpha=0.5)
    spec = create_audio_backend(f"hf-audio/{qwen2_audio_dir}?mitigation=aad&alpha=0.5", config=LLMConfig())
    assert "mitigation" not in plain.identity()["params"] and plain.mitigation_label == "W/O"
    assert aad.identity()["params"]["mitigation"] == {
        "method": "aad",
        "alpha": 0.5,
        "beta": None,
        "prefix": "Focus on the given audio and answer the following question:",
    }
    assert aad.request(MSG).key() != plain.request(MSG).key() and aad.mitigation_label == "AAD (alpha=0.5)"
    assert spec.path == str(qwen2_audio_dir) and spec.request(MSG).params == aad.request(MSG).params
    assert spec.spec != aad.spec  # a distinct model name for stages keyed by it (MISHAP answers)
    with pytest.raises(HalluscopeError, match="offers mitigation=dola"):
        create_backend(f"hf/{tmp_path}", config=LLMConfig(), mitigation="aad")


def test_hf_text_backend_decodes_with_dola(deep_lm, tmp_path):
    from halluscope.backends.llm import LLMConfig, complete_all, create_backend
    from halluscope.core.store import Store

    path = deep_lm[0]
    backend = create_backend(f"hf/{path}", config=LLMConfig(), mitigation="dola", params={"max_new_tokens": 4})
    plain = create_backend(f"hf/{path}", config=LLMConfig(), params={"max_new_tokens": 4})
    msgs = [{"role": "user", "content": "hello the bank rate"}]
    (r,), _ = complete_all(backend, [backend.request(msgs)], store=Store(tmp_path))
    assert r.status == "ok" and backend.request(msgs).key() != plain.request(msgs).key()
    import json

    stored = [c["response"] for c in Store(tmp_path).calls()]
    stored = [json.loads(x) if isinstance(x, str) else x for x in stored]
    assert [x["mitigation"]["method"] for x in stored] == ["dola"]


@pytest.mark.parametrize("which", ["qwen2-audio", "omni"])
@pytest.mark.parametrize("method", ["aad", "vcd"])
def test_two_branches_decode_as_one_batch_with_the_same_result(adapters, clip, which, method, monkeypatch):
    """AAD/VCD step both branches in one batch-of-2 forward (left-padded caches; Omni's mRoPE delta per row): the
    tests above check it against uncached references; here, that the batched path really ran and that stepping the
    branches one after the other gives the same tokens and logits."""
    from halluscope.mitigation import _decode

    merged = []
    real_merge = _decode.BranchPair.merge.__func__
    monkeypatch.setattr(
        _decode.BranchPair, "merge", classmethod(lambda cls, a, b: merged.append(real_merge(cls, a, b)) or merged[-1])
    )
    ad, cfg = adapters[which], parse_mitigation(method)
    runs = []
    for batched in (True, False):
        main, neg, _ = branches(ad, MSG, [clip], cfg)
        runs.append(
            _decode.decode(
                ad.model,
                dict(main.tensors),
                cfg,
                max_tokens=12,
                eos=[],
                contrast_inputs=neg,
                keep_logits=True,
                batch_branches=batched,
            )
        )
    assert len(merged) == 1 and merged[0] is not None  # the batched run merged its caches, the other never tried
    assert runs[0].tokens == runs[1].tokens
    for a, b in zip(runs[0].steps, runs[1].steps):
        finite = torch.isfinite(a.logits)
        assert torch.equal(finite, torch.isfinite(b.logits))
        assert torch.allclose(a.logits[finite], b.logits[finite], atol=1e-4)


def test_dola_repetition_penalty_once_per_said_token_from_a_list_or_the_loop_buffer():
    from halluscope.mitigation._contrast import dola

    final = torch.tensor([2.0, -1.0, 0.5, 3.0, -2.0])
    premature = torch.zeros(1, 5)
    plain, _, _ = dola(final, premature, layers=[1], beta=None)
    for said in ([1, 3, 3, 1], torch.tensor([1, 3, 3, 1])):
        for penalty in (2.0, 0.5):  # below 1 the penalty rewards repeats (the same formula)
            out, _, _ = dola(final, premature, layers=[1], beta=None, generated=said, repetition_penalty=penalty)
            want = plain.clone()
            for i in (1, 3):  # negative logits are multiplied by the penalty, positive ones divided, each once
                want[i] = plain[i] * penalty if plain[i] < 0 else plain[i] / penalty
            assert torch.allclose(out, want, rtol=1e-6, atol=0)


def test_decoders_stepped_in_turn_on_one_model_decode_as_each_alone(adapters, clip):
    """The benchmark steps a plain and a mitigated Decoder in turn on one model: neither may see the other's state
    (Omni's mRoPE delta lives on a module; AAD's merged pair sets it per row)."""
    from halluscope.mitigation import Decoder

    ad = adapters["omni"]
    cfgs = [None, parse_mitigation("aad"), parse_mitigation("dola")]

    def decoder(cfg):
        main, neg, _ = branches(ad, MSG, [clip], cfg)
        return Decoder(ad.model, dict(main.tensors), cfg, max_tokens=10, eos=[], contrast_inputs=neg, keep_logits=True)

    alone = []
    for cfg in cfgs:
        d = decoder(cfg)
        d.prefill()
        while d.step() is not None:
            pass
        alone.append(d)
    together = [decoder(cfg) for cfg in cfgs]
    for d in together:
        d.prefill()
    for i in range(10):
        for d in together if i % 2 == 0 else together[::-1]:
            assert d.step() is not None
    assert all(d.step() is None and d.finish == "length" for d in together)
    for a, b in zip(alone, together):
        assert a.tokens == b.tokens
        for x, y in zip(a.steps, b.steps):
            assert torch.equal(x.logits, y.logits)
