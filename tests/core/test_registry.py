import pytest

from halluscope.spoken.detect.run import DETECTORS
from halluscope.core.errors import HalluscopeError
from halluscope.spoken.generate import GENERATORS
from halluscope.backends.speech import ASR_BACKENDS, TTS_BACKENDS


@pytest.mark.parametrize("registry", [GENERATORS, TTS_BACKENDS, ASR_BACKENDS])
def test_every_registered_name_builds(registry):
    assert registry.providers
    built = 0
    for provider in registry.providers:
        try:
            backend = registry.create(provider)
        except HalluscopeError as exc:  # a provider with no default model (hf-asr/, hf-tts/) must say so, not crash
            assert "names no model" in str(exc) and f"{provider}/<" in str(exc), (provider, str(exc))
            continue
        assert backend is not None
        built += 1
    assert built, "no provider of the registry builds with its default"


def test_unknown_name_suggests_the_closest():
    with pytest.raises(HalluscopeError, match="Did you mean 'espeak'"):
        TTS_BACKENDS.create("espek/en")


def test_whisper_without_offline_weights_says_what_to_do():
    asr = ASR_BACKENDS.create("whisper/large-v3")
    with pytest.raises(HalluscopeError, match="only 'whisper/base' ships"):
        asr._load()


def test_every_detector_kind_has_a_runner_and_inputs():
    assert "tfidf" in DETECTORS
    for name, kind in DETECTORS.items():
        assert callable(kind.run) and kind.inputs, name
        assert isinstance(kind.config("m", {"seed": 0}), dict)
