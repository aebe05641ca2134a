"""The audio-LM families transformers implements natively, each on tiny random weights built in the test: the
declared window and what is heard (from the front end's own mask or frame count), audio-aware contrastive decoding
checked against uncached forward passes, all four mitigations at zero strength equal to plain greedy decoding, and
zero-shot detection on audio (plain and with AAD) through 'detect' and the hf-audio backend, a chunked closed-form
yes/no set with VCD, and MISHAP answers with DoLa.

Qwen3-Omni thinker, Phi-4 multimodal, Voxtral, Audio Flamingo 3, Music Flamingo (test_af3.py has what is AF3's
own: its 30 s windows, and Table 8) and Gemma-3n (built without its timm vision tower: it hears audio and text
only). Granite Speech runs with its mel front end in torch (no torchaudio; test_granite.py checks it against an
independent numpy one). Nemotron-3-Nano-Omni runs with its hybrid Mamba decoder (AAD's branches stepped one after
the other, MTI's rollback restoring the Mamba layers' recurrent states)."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from halluscope.backends.audio_lm import ADAPTERS, clip_of, load_adapter
from halluscope.core.errors import HalluscopeError
from halluscope.core.records import ChatMessage
from halluscope.mitigation import parse_mitigation
from halluscope.mitigation._audio import branches, generate
from support.tiny_af3 import build_af3
from support.tiny_audio_lm import espeak, espeak_of_length
from support.tiny_gemma3n import build_gemma3n
from support.tiny_granite import build_granite_speech
from support.tiny_musicflamingo import build_musicflamingo
from support.tiny_nemotron import build_nemotron_omni
from support.tiny_phi4 import build_phi4
from support.tiny_qwen3_omni import build_qwen3_omni_thinker
from support.tiny_voxtral import build_voxtral, build_voxtral_tekken

MSG = [ChatMessage(role="user", content="hello is there audio in the text")]
# adapter name -> (tiny-model builder, declared window in s)
FAMILIES = {
    "qwen3-omni-thinker": (build_qwen3_omni_thinker, 30.0),
    "phi-4-multimodal": (build_phi4, 30.0),
    "voxtral": (build_voxtral, 2400.0),
    "voxtral-tekken": (build_voxtral_tekken, 2400.0),  # the released tokenizer format (mistral-common)
    "audio-flamingo-3": (build_af3, 600.0),
    "music-flamingo": (build_musicflamingo, 1200.0),
    "gemma-3n": (build_gemma3n, 30.0),
    "granite-speech": (build_granite_speech, 30.0),
    "nemotron-3-nano-omni": (build_nemotron_omni, 30.0),
}
ADAPTER = {"voxtral-tekken": "voxtral"}  # FAMILIES keys that name a tokenizer variant -> the adapter they load


# MISHAP answers with DoLa in the default run: the families with their own DoLa exit (the rest: -m slow, and
# tests/mitigation runs the chain on Qwen2-Audio)
DOLA_DEFAULT = ("gemma-3n", "nemotron-3-nano-omni")


@pytest.fixture(scope="module")
def family_dir(tmp_path_factory):
    """Each family's tiny checkpoint, built once per module whichever test asks first."""
    built: dict[str, str] = {}

    def get(name: str) -> str:
        if name not in built:
            built[name] = str(FAMILIES[name][0](tmp_path_factory.mktemp(name)))
        return built[name]

    return get


@pytest.fixture(scope="module", params=sorted(FAMILIES))
def family(request, family_dir):
    name = request.param
    path = family_dir(name)
    return name, path, FAMILIES[name][1], load_adapter(path)


@pytest.fixture(scope="module")
def clip1():
    return clip_of(espeak("hello the audio")[:16_000])


def test_window_declared_and_heard(family):
    name, path, window, ad = family
    assert ad.name == ADAPTER.get(name, name) and ad.window_s == window == type(ad).default_window_s
    assert {cls.name for cls in ADAPTERS.values()} >= {ad.name}
    clip = clip_of(espeak_of_length(45.0))
    heard = ad.inputs(MSG, [clip])
    assert heard.delivered and heard.heard_s == pytest.approx(min(45.0, window), abs=0.05)
    for w in (30, 60):  # below and above the clip: the window decides what reaches the encoder
        assert load_adapter(path, window_s=w).inputs(MSG, [clip]).heard_s == pytest.approx(min(45.0, w), abs=0.05)
    none = ad.inputs(MSG, [])
    assert none.heard_s == 0 and not none.delivered and ad.features_key not in none.tensors
    if ad.name in ("voxtral", "audio-flamingo-3", "music-flamingo"):  # whole 30 s chunks only
        with pytest.raises(HalluscopeError, match="multiple of 30"):
            load_adapter(path, window_s=45)


def _full(model, tensors, extra=()):
    ids = torch.cat([tensors["input_ids"], torch.tensor([list(extra)], dtype=torch.long)], dim=1)
    with torch.inference_mode():
        return model(**{**tensors, "input_ids": ids, "attention_mask": torch.ones_like(ids)}, use_cache=False).logits[
            0, -1
        ]


def test_aad_matches_uncached_contrast(family, clip1):
    ad = family[3]
    cfg = parse_mitigation("aad", alpha=1.0)
    _, main, res = generate(ad, MSG, [clip1], {"max_new_tokens": 4}, cfg, keep_logits=True)
    same, neg, _ = branches(ad, MSG, [clip1], cfg)  # both with AAD's prefix; the contrast without the audio
    assert torch.equal(same.tensors["input_ids"], main.tensors["input_ids"])
    assert ad.features_key in main.tensors and ad.features_key not in neg
    assert res.steps
    for t, step in enumerate(res.steps):
        z, zn = _full(ad.model, dict(main.tensors), res.tokens[:t]), _full(ad.model, dict(neg), res.tokens[:t])
        want = 2 * z - zn
        p = torch.softmax(z, -1)
        want = want.masked_fill(p < cfg.beta * p.max(), float("-inf")) if cfg.beta is not None else want
        finite = torch.isfinite(want)
        assert torch.allclose(step.logits[finite], want[finite], atol=2e-4, rtol=1e-4)
        assert int(torch.argmax(want)) == res.tokens[t]


@pytest.mark.parametrize("method", ["aad", "vcd", "mti", "dola"])
def test_zero_strength_is_plain_greedy(family, clip1, method):
    ad = family[3]
    extra = {"tau": 0.0} if method == "mti" else {"repetition_penalty": 1.0} if method == "dola" else {}
    cfg = parse_mitigation(method, alpha=0.0, **extra)
    _, main, res = generate(ad, MSG, [clip1], {"max_new_tokens": 5}, cfg)
    eos = ad.tokenizer.eos_token_id
    with torch.inference_mode():
        plain = ad.model.generate(**main.tensors, max_new_tokens=5, do_sample=False, eos_token_id=eos, pad_token_id=eos)
    assert res.tokens == plain[0, main.tensors["input_ids"].shape[1] :].tolist()
    assert len(res.tokens) > 1  # the tiny models are seeded to say more than end-of-turn


def test_vcd_diffuses_the_features_the_model_reads(family, clip1):
    ad = family[3]
    main, neg, _ = branches(ad, MSG, [clip1], parse_mitigation("vcd"))
    key = ad.features_key
    assert neg[key].shape == main.tensors[key].shape and not torch.equal(neg[key], main.tensors[key])
    assert all(torch.equal(v, main.tensors[k]) for k, v in neg.items() if k != key)


@pytest.fixture(scope="module")
def spoken_run(tmp_path_factory):
    from support import fakes

    return fakes.spoken_run(tmp_path_factory.mktemp("spoken"))


def test_detect_on_audio_plain_and_with_aad(family, spoken_run):
    from halluscope.spoken.detect import detect

    path = family[1]
    for extra in ({}, {"mitigation": "aad", "alpha": 0.5}):
        res = detect(
            spoken_run,
            detector=f"hf-audio/{path}",
            task="binary",
            input="audio",
            options={"max_tokens": 4, "audio_window_s": 30, "subset": 1, **extra},
        )
        assert len(res.predictions) == 2
        assert all(
            p.audio is not None and p.audio.delivered and p.audio.window_s == 30 for p in res.predictions.values()
        )


def test_closedform_yesno_chunked_with_vcd(family, tmp_path):
    from halluscope.backends.speech.audio import encode_wav
    from halluscope.closedform.run import run_closedform
    from support.tiny_audio_lm import espeak as speak

    clips = tmp_path / "clips"
    clips.mkdir()
    (clips / "dog.wav").write_bytes(encode_wav(speak("A dog is barking in the park.")))
    (clips / "long.wav").write_bytes(encode_wav(espeak_of_length(35.0)))
    questions = tmp_path / "q.tsv"
    questions.write_text(
        "entry_id\taudio_index\tprompt_text\tobject\tlabel\tsampling\n"
        "1\tdog\tIs there a dog in the audio?\tdog\tYes\trandom\n"
        "3\tlong\tIs there speech in the audio?\tspeech\tYes\tpopular\n",
        encoding="utf-8",
    )
    summary = run_closedform(
        f"hf-audio/{family[1]}",
        "yesno",
        [questions],
        out=tmp_path / "yesno.csv",
        audio_root=clips,
        audio_policy="chunk",
        max_tokens=3,
        quiet=True,
        backend_options={"audio_window_s": 30, "mitigation": "vcd"},
    )
    assert summary.answered == 2 and summary.delivered == 2 and dict(summary.actions) == {"whole": 1, "chunked": 1}


@pytest.mark.parametrize(
    "name", [pytest.param(n, marks=() if n in DOLA_DEFAULT else pytest.mark.slow) for n in sorted(FAMILIES)]
)
def test_mishap_answers_with_dola(name, family_dir, tmp_path, monkeypatch):
    from halluscope.backends.llm import LLMConfig
    from halluscope.mishap.answers import collect_answers
    from support import scripted

    run = scripted.build_run(tmp_path, monkeypatch, judge=False, seeds=(0,), per_category=1)
    res = collect_answers(
        run,
        f"hf-audio/{family_dir(name)}?mitigation=dola",
        config=LLMConfig(),
        audio_policy="chunk",
        quiet=True,
        backend_options={"params": {"max_new_tokens": 3}, "device": "cpu", "audio_window_s": 30},
    )
    assert len(res.results) == 12 and not res.failed
    assert all(a.status == "ok" and a.audio.delivered for a in res.results.values())


def test_voxtral_tekken_moves_a_system_message_into_the_clip_turn(tmp_path):
    # tekken files before v13 refuse a system message beside audio; the adapter puts its text first in that turn
    pytest.importorskip("mistral_common")
    from support.tiny_voxtral import build_voxtral_tekken

    ad = load_adapter(str(build_voxtral_tekken(tmp_path / "vt")))
    clip = clip_of(espeak("hello the audio")[:16_000])
    msgs = [ChatMessage(role="system", content="be brief"), ChatMessage(role="user", content="hi")]
    got = ad.inputs(msgs, [clip])
    text = ad.tokenizer.decode(got.tensors["input_ids"][0].tolist(), skip_special_tokens=False)
    assert got.delivered and "be brief" in text and "SYSTEM_PROMPT" not in text
    assert text.index("be brief") < text.index("hi")


def test_gemma3n_full_size_config_builds_without_timm():
    """transformers' default Gemma3nConfig is the released E4B's shape (35 layers of 2048, a 262400 vocab): the
    adapter's classes build it (on the meta device, no memory) without importing timm, with 7.5 B parameters, the
    vision tower's 0.3 B of the release's 7.85 B left out."""
    import sys

    from transformers import Gemma3nConfig

    from halluscope.backends.audio_lm._gemma3n import audio_text_classes

    cfg = Gemma3nConfig()
    assert (cfg.text_config.num_hidden_layers, cfg.text_config.hidden_size, cfg.text_config.vocab_size) == (
        35,
        2048,
        262400,
    )
    with torch.device("meta"):
        model = audio_text_classes()[1](cfg)
    assert "timm" not in sys.modules
    assert {"language_model", "audio_tower", "embed_audio"} <= {k for k, _ in model.model.named_children()}
    assert getattr(model.model, "vision_tower", None) is None
    assert 7.4e9 < sum(p.numel() for p in model.parameters()) < 7.6e9


@pytest.mark.parametrize("name", ["gemma-3n", "nemotron-3-nano-omni"])
def test_aad_branches_batch_through_sliding_shared_and_mamba_cache_layers(name, family_dir, clip1):
    """AAD's two branches advance in one batch-of-2 forward through Gemma-3n's sliding window layers (the
    audio-free branch, shorter than the window at first, grows past it here) and state-less KV-shared layers, and
    through Nemotron's Mamba layers (states stacked), MoE and attention layers: the tokens and logits are those of
    the branches stepped one after the other."""
    import math

    from halluscope.mitigation import Decoder

    ad = load_adapter(family_dir(name))
    with torch.no_grad():  # a long memory (A = -0.01; the tiny model's decays within a token), so each Mamba row's
        for module in ad.model.modules():  # state holds its own branch's history: a swapped row changes logits by .4
            if hasattr(module, "A_log"):
                module.A_log.fill_(math.log(0.01))
    cfg = parse_mitigation("aad")
    window = getattr(ad.model.config.get_text_config(), "sliding_window", None)
    runs = []
    for batch in (True, False):
        main, neg, _ = branches(ad, MSG, [clip1], cfg)
        d = Decoder(
            ad.model,
            dict(main.tensors),
            cfg,
            max_tokens=48,
            eos=[],
            contrast_inputs=neg,
            keep_logits=True,
            batch_branches=batch,
        )
        d.prefill()
        assert (d.pair is not None) == batch
        if window is not None:  # the audio-free prompt starts inside the window and ends past it
            assert neg["input_ids"].shape[1] < window - 1 < neg["input_ids"].shape[1] + 48
        while d.step() is not None:
            pass
        runs.append(d)
    assert runs[0].tokens == runs[1].tokens
    for a, b in zip(runs[0].steps, runs[1].steps):
        finite = torch.isfinite(a.logits)
        assert torch.equal(finite, torch.isfinite(b.logits))
        assert torch.allclose(a.logits[finite], b.logits[finite], atol=1e-4)
