"""Per-language speech specs, presets, Festival's input cleaning and what keys the TTS/ASR stages."""

import numpy as np
import pytest

from halluscope.backends.speech import tts as tts_mod
from halluscope.backends.speech.route import PRESETS, PerLanguageAsr, PerLanguageTts, canonical, resolve
from halluscope.backends.speech.tts import FestivalTts, RHVoiceTts, speakable
from halluscope.core.errors import HalluscopeError
from halluscope.core.stages import Stage
from halluscope.spoken.build import asr_config, tts_config

LANGS = ("en", "ru", "kk")


def test_one_spec_means_every_language_and_per_language_specs_are_read():
    assert resolve("espeak/en-us", kind="tts", langs=LANGS, option="--tts") == dict.fromkeys(LANGS, "espeak/en-us")
    got = resolve(
        "en=espeak/en-us, ru=festival/msu_ru_nsh_clunits,kk=espeak/kk", kind="tts", langs=LANGS, option="--tts"
    )
    assert got == {"en": "espeak/en-us", "ru": "festival/msu_ru_nsh_clunits", "kk": "espeak/kk"}
    assert canonical(got) == "en=espeak/en-us,ru=festival/msu_ru_nsh_clunits,kk=espeak/kk"
    assert canonical(dict.fromkeys(LANGS, "whisper/base")) == "whisper/base"
    # a spec's own options may hold '=': it is still one spec
    assert resolve("hf-asr/m?punct=hf-punct/p", kind="asr", langs=("kk",), option="--asr") == {
        "kk": "hf-asr/m?punct=hf-punct/p"
    }
    assert resolve("offline-best", kind="tts", langs=("ru",), option="--tts") == {
        "ru": PRESETS["offline-best"]["tts"]["ru"]
    }


@pytest.mark.parametrize(
    "value, match",
    [
        ("en=espeak,ru=espeak", "no engine for kk"),
        ("en=espeak,xx=espeak,ru=espeak,kk=espeak", "'xx=espeak'"),
        ("en=espeak,en=espeak/en-us,ru=espeak,kk=espeak", "'en' twice"),
        ("espeak,whisper/base", "need a language each"),
        (" , ", "empty"),
    ],
)
def test_bad_per_language_specs_say_what_to_write(value, match):
    with pytest.raises(HalluscopeError, match=match):
        resolve(value, kind="tts", langs=LANGS, option="--tts")


def test_speakable_reads_numbers_in_the_language_and_drops_what_festival_chokes_on():
    ru = speakable("В 2024 году «Казатомпром» — крупнейший: рост 3,5% (№ 7), 1 000 000 тенге…", "ru")
    assert ru == (
        "В две тысячи двадцать четыре году Казатомпром, крупнейший: рост три целых пять десятых процентов "
        "(номер семь), один миллион тенге."
    )
    assert (
        speakable("Бұл 2023 жылы 15% өсті — «жаңа» рекорд.", "kk")
        == "Бұл екі мың жиырма үш жылы он бес пайыз өсті, жаңа рекорд."
    )
    assert (
        speakable("Revenue rose 12.5% to $300 — a record.", "en")
        == "Revenue rose twelve point five percent to three hundred dollars, a record."
    )


def _tts_key(tts) -> str:
    return Stage("tts", tts_config(tts, {lang: tts.voices(lang) for lang in tts.backends}, 1)).fingerprint


def test_tts_stage_key_changes_with_engine_voice_version_and_cleaning_rule(monkeypatch):
    base = _tts_key(PerLanguageTts.create("en=espeak,ru=festival/msu_ru_nsh_clunits", ("en", "ru")))
    assert base == _tts_key(PerLanguageTts.create("en=espeak,ru=festival/msu_ru_nsh_clunits", ("en", "ru")))
    assert base != _tts_key(PerLanguageTts.create("en=espeak,ru=espeak", ("en", "ru")))  # engine
    assert base != _tts_key(
        PerLanguageTts.create("en=espeak/en-gb,ru=festival/msu_ru_nsh_clunits", ("en", "ru"))
    )  # voice
    monkeypatch.setattr(tts_mod, "CLEANING_VERSION", tts_mod.CLEANING_VERSION + 1)  # cleaning rule
    assert base != _tts_key(PerLanguageTts.create("en=espeak,ru=festival/msu_ru_nsh_clunits", ("en", "ru")))
    monkeypatch.undo()
    monkeypatch.setattr(tts_mod, "festival_version", lambda: "9.9.9")  # engine version
    assert base != _tts_key(PerLanguageTts.create("en=espeak,ru=festival/msu_ru_nsh_clunits", ("en", "ru")))


def test_asr_stage_key_changes_with_the_engine_of_one_language():
    a = Stage("asr", asr_config(PerLanguageAsr.create("whisper/base", LANGS))).fingerprint
    b = Stage(
        "asr", asr_config(PerLanguageAsr.create("en=whisper/base,ru=whisper/base,kk=whisper/base?beam_size=5", LANGS))
    ).fingerprint
    assert a != b


def test_missing_festival_or_voice_names_the_package(tmp_path):
    with pytest.raises(HalluscopeError, match="apt-get install -y festival festvox-ru"):
        FestivalTts(binary="no-such-text2wave")
    with pytest.raises(
        HalluscopeError, match="Festival voice .msu_ru_nsh_clunits. is not installed.*apt-get install -y festvox-ru"
    ):
        FestivalTts(voice_dirs=tmp_path)
    with pytest.raises(HalluscopeError, match="apt-cache search festvox"):
        FestivalTts(voice="nobody_clunits", voice_dirs=tmp_path)


def test_engines_travel_to_workers_without_loaded_weights():
    import pickle

    asr = PerLanguageAsr.create("whisper/base", LANGS)
    assert asr.backends["en"] is asr.backends["kk"]  # one model for the languages that share a spec
    asr.backends["en"]._model = object()  # stands for loaded weights (not picklable as such)
    back = pickle.loads(pickle.dumps(asr))
    assert back.backends["en"]._model is None and back.backends["en"] is back.backends["ru"]
    assert asr.backends["en"]._model is not None  # the driver's copy keeps its model


def test_every_engine_names_what_to_install_when_missing(monkeypatch):
    import sys

    from halluscope.backends.speech import ASR_BACKENDS
    from halluscope.backends.speech.tts import EspeakTts
    from halluscope.core.errors import MissingExtraError

    with pytest.raises(HalluscopeError, match="apt-get install -y espeak-ng"):
        EspeakTts(binary="no-such-espeak")
    monkeypatch.setitem(sys.modules, "faster_whisper", None)
    with pytest.raises(MissingExtraError, match=r"faster-whisper.*pip install 'halluscope\[asr\]'"):
        ASR_BACKENDS.create("whisper/base").transcribe(np.zeros(160, dtype=np.float32), language="en")
    monkeypatch.setitem(sys.modules, "num2words", None)
    with pytest.raises(HalluscopeError, match="pip install num2words"):
        speakable("1 2 3", "ru")


def test_rhvoice_key_changes_with_voice_version_and_revision_and_missing_parts_name_the_package(monkeypatch, tmp_path):
    base = _tts_key(PerLanguageTts.create("en=espeak,ru=rhvoice/elena", ("en", "ru")))
    assert base == _tts_key(PerLanguageTts.create("en=espeak,ru=rhvoice/elena", ("en", "ru")))
    assert base != _tts_key(PerLanguageTts.create("en=espeak,ru=rhvoice/irina", ("en", "ru")))  # voice
    assert base != _tts_key(PerLanguageTts.create("en=espeak,ru=rhvoice", ("en", "ru")))  # the pool
    monkeypatch.setattr(tts_mod, "rhvoice_version", lambda: "9.9.9")  # engine version
    assert base != _tts_key(PerLanguageTts.create("en=espeak,ru=rhvoice/elena", ("en", "ru")))
    monkeypatch.undo()
    real = tts_mod.rhvoice_info
    monkeypatch.setattr(tts_mod, "rhvoice_info", lambda v, d=tts_mod.RHVOICE_DIR: {**real(v, d), "revision": "99"})
    assert base != _tts_key(PerLanguageTts.create("en=espeak,ru=rhvoice/elena", ("en", "ru")))  # voice data revision
    monkeypatch.undo()
    with pytest.raises(HalluscopeError, match="apt-get install -y rhvoice rhvoice-russian.*non-free"):
        RHVoiceTts(binary="no-such-RHVoice-test")
    with pytest.raises(HalluscopeError, match="voice 'elena' is not installed.*rhvoice-<language>"):
        RHVoiceTts(voice="elena", data_dir=tmp_path)
    with pytest.raises(HalluscopeError, match="ru pool needs the voices .*apt-get install -y rhvoice rhvoice-russian"):
        RHVoiceTts(data_dir=tmp_path).voices("ru")
    with pytest.raises(HalluscopeError, match="no voice pool for language 'kk'"):
        RHVoiceTts().voices("kk")
