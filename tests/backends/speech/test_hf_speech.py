"""hf-asr (wav2vec2-CTC, Whisper), the pluggable punctuation restorer and hf-tts (VITS) on tiny random-weight models."""

import sys

import numpy as np
import pytest

from halluscope.backends.speech import ASR_BACKENDS, TTS_BACKENDS
from halluscope.backends.speech.audio import SAMPLE_RATE
from halluscope.backends.speech.hf import TEXT_RESTORERS
from halluscope.backends.speech.route import PerLanguageAsr, PerLanguageTts
from halluscope.core.errors import HalluscopeError, MissingExtraError
from halluscope.core.stages import Stage
from halluscope.spoken.build import BuildConfig, asr_config, build_spoken, tts_config

KK = [
    "Қазақстан Ұлттық банкі базалық мөлшерлемені көтерді.",
    "Энергетика министрлігі жаңа тарифті бекітті.",
    "Алматыда бағалар өсті.",
    "Астанада жаңа мектеп ашылды.",
]


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    from support.tiny_speech import build_punctuation, build_vits, build_wav2vec2_ctc, build_whisper

    root = tmp_path_factory.mktemp("tiny_speech")
    words = sorted({w for t in KK for w in t.replace(".", " ").split()})
    return {
        "w2v": build_wav2vec2_ctc(root / "w2v"),
        "whisper": build_whisper(root / "whisper"),
        "vits": build_vits(root / "vits"),
        "punct": build_punctuation(root / "punct", words),
        "bad_punct": build_punctuation(root / "bad", words, labels=("O", "SHOUT")),
    }


def _noise(seconds: float) -> np.ndarray:
    return (np.random.RandomState(0).randn(int(SAMPLE_RATE * seconds)) * 0.1).astype(np.float32)


def test_wav2vec2_ctc_transcribes_short_and_chunked_long_audio(tiny):
    asr = ASR_BACKENDS.create(f"hf-asr/{tiny['w2v']}")
    for seconds in (2.0, 40.0):  # over 30 s: the pipeline's chunking
        text = asr.transcribe(_noise(seconds), language="kk")
        assert isinstance(text, str) and set(text) <= set(" абвгдежзийклмнопрстуфхцчшщъыьэюяәғқңөұүһі<unk>")
    assert asr.spec == f"hf-asr/{tiny['w2v']}"


def test_whisper_checkpoint_runs_with_the_language_forced(tiny):
    asr = ASR_BACKENDS.create(f"hf-asr/{tiny['whisper']}")
    assert isinstance(asr.transcribe(_noise(2.0), language="kk"), str)
    assert asr._whisper


def test_punctuation_restorer_keeps_the_words_and_capitalises_sentences(tiny):
    restorer = TEXT_RESTORERS.create(f"hf-punct/{tiny['punct']}")
    text = "алматыда бағалар өсті астанада жаңа мектеп ашылды"
    out = restorer.restore(text, language="kk")
    assert [w.strip(".,").lower() for w in out.split()] == text.split()
    assert out[0].isupper()
    for i, w in enumerate(out.split()[:-1]):
        if w.endswith("."):
            assert out.split()[i + 1][0].isupper()
    with pytest.raises(HalluscopeError, match="labels SHOUT name no punctuation mark"):
        TEXT_RESTORERS.create(f"hf-punct/{tiny['bad_punct']}").restore(text, language="kk")


def test_asr_with_punctuation_is_another_stage_key(tiny):
    plain = PerLanguageAsr.create(f"hf-asr/{tiny['w2v']}", ["kk"])
    with_p = PerLanguageAsr.create(f"hf-asr/{tiny['w2v']}?punct=hf-punct/{tiny['punct']}", ["kk"])
    assert Stage("asr", asr_config(plain)).fingerprint != Stage("asr", asr_config(with_p)).fingerprint
    assert with_p.spec_for("kk").endswith(f"?punct=hf-punct/{tiny['punct']}")
    with pytest.raises(HalluscopeError, match="unknown option.*nope"):
        ASR_BACKENDS.create(f"hf-asr/{tiny['w2v']}?nope=1")


def test_vits_speaks_16k_mono_reproducibly_and_its_files_key_the_stage(tiny):
    tts = TTS_BACKENDS.create(f"hf-tts/{tiny['vits']}")
    a = tts.synthesize(KK[0], language="kk", voice="default")
    b = tts.synthesize(KK[0], language="kk", voice="default")
    assert a.dtype == np.float32 and a.ndim == 1 and len(a) > 0 and np.array_equal(a, b)
    key = Stage("tts", tts_config(PerLanguageTts.create(f"hf-tts/{tiny['vits']}", ["kk"]), {"kk": ["default"]}, 1))
    (tiny["vits"] / "config.json").write_text((tiny["vits"] / "config.json").read_text() + " ")
    key2 = Stage("tts", tts_config(PerLanguageTts.create(f"hf-tts/{tiny['vits']}", ["kk"]), {"kk": ["default"]}, 1))
    assert key.fingerprint != key2.fingerprint


@pytest.mark.slow  # about 60 s on 2 shared cores
def test_a_build_with_hf_tts_and_hf_asr_plus_punctuation(tiny, tmp_path):
    from support.corpus_fixtures import write_jsonl

    corpus = write_jsonl(
        tmp_path / "c.jsonl", [{"id": f"kk-{i}", "language": "kk", "text": t} for i, t in enumerate(KK)]
    )
    cfg = BuildConfig(
        corpus=str(corpus),
        langs=("kk",),
        rewrites_per_article=0,
        tts=f"hf-tts/{tiny['vits']}",
        asr=f"kk=hf-asr/{tiny['w2v']}?punct=hf-punct/{tiny['punct']}",
        compare_asr=(f"hf-asr/{tiny['whisper']}",),
    )
    result = build_spoken(tmp_path / "run", cfg, quiet=True)
    assert not result.failures, result.failures
    assert {a.engine for a in result.audio.values()} == {f"hf-tts/{tiny['vits']}"}
    assert len(result.transcripts) == len(result.compared[f"hf-asr/{tiny['whisper']}"]) == len(KK)


def test_missing_transformers_names_the_extra(tiny, monkeypatch):
    monkeypatch.setitem(sys.modules, "transformers", None)
    with pytest.raises(MissingExtraError, match=r"pip install 'halluscope\[hf\]'"):
        ASR_BACKENDS.create(f"hf-asr/{tiny['w2v']}").transcribe(_noise(1.0), language="kk")
    with pytest.raises(MissingExtraError, match=r"pip install 'halluscope\[hf\]'"):
        TTS_BACKENDS.create(f"hf-tts/{tiny['vits']}").synthesize("сәлем", language="kk", voice="default")
