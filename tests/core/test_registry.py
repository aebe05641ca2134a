import pytest

from halluscope.backends.speech import ASR_BACKENDS, TTS_BACKENDS
from halluscope.core.errors import HalluscopeError
from halluscope.spoken.detect.run import DETECTORS
from halluscope.spoken.generate import GENERATORS


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


def test_whisper_without_offline_weights_says_what_to_do_when_it_is_made():
    with pytest.raises(HalluscopeError, match="only 'whisper/base' ships") as info:
        ASR_BACKENDS.create("whisper/large-v3")  # before any clip is read, not on the first one
    assert "Fix: put a CTranslate2 Whisper model" in str(info.value)


def test_every_detector_kind_has_a_runner_and_inputs():
    assert "tfidf" in DETECTORS
    for name, kind in DETECTORS.items():
        assert callable(kind.run) and kind.inputs, name
        assert isinstance(kind.config("m", {"seed": 0}), dict)


# ---- every entry of every registry resolves -----------------------------------------------------------------------


def _registries():
    import importlib

    import halluscope.spoken.detect  # noqa: F401 - registers the detector kinds
    from halluscope.backends.audio_lm import ADAPTERS, AUDIO_LM_BACKENDS
    from halluscope.backends.llm import CHAT_BACKENDS, LLM_BACKENDS
    from halluscope.backends.speech.hf import TEXT_RESTORERS
    from halluscope.report.sections import SECTION_MODULES, SECTIONS

    for name in SECTION_MODULES:  # their builders register as a report imports them
        importlib.import_module(name)
    return {
        "chat": CHAT_BACKENDS,
        "llm": LLM_BACKENDS,
        "audio_lm": AUDIO_LM_BACKENDS,
        "tts": TTS_BACKENDS,
        "asr": ASR_BACKENDS,
        "restorer": TEXT_RESTORERS,
        "generator": GENERATORS,
        "detector": DETECTORS,
        "adapter": ADAPTERS,
        "section": SECTIONS,
    }


ENTRIES = [(kind, name) for kind, reg in _registries().items() for name in reg.names]


def test_the_registries_hold_what_halluscope_ships():
    regs = _registries()
    assert set(regs["chat"].names) >= {"openai", "hf", "hf-audio", "cascade"}
    assert set(regs["llm"].names) == {"openai", "hf"} and set(regs["audio_lm"].names) == {
        "openai",
        "hf-audio",
        "cascade",
    }
    assert {"espeak", "rhvoice", "festival", "hf-tts"} <= set(regs["tts"].names) and {"whisper", "hf-asr"} <= set(
        regs["asr"].names
    )
    assert {"tfidf", "encoder", "openai", "hf", "hf-audio", "cascade"} <= set(regs["detector"].names)
    assert {"qwen2_audio", "audioflamingo3"} & set(regs["adapter"].names) and len(regs["section"].names) >= 6
    groups = [r.group for k, r in regs.items() if k not in ("llm", "audio_lm")]
    assert len(set(groups)) == len(groups) and all(g.startswith("halluscope.") for g in groups)


@pytest.mark.parametrize("kind, name", ENTRIES, ids=[f"{k}:{n}" for k, n in ENTRIES])
def test_every_entry_resolves(kind, name):
    from halluscope.backends.llm import LLMConfig

    reg = _registries()[kind]
    target = reg[name]
    assert target is not None and reg.entry(name).name == name
    if kind in ("chat", "llm", "audio_lm"):
        assert (
            callable(target)
            and reg.capabilities(name)
            and ({"local", "server"} & reg.capabilities(name) or name == "cascade")
        )
        model = {"cascade": "whisper/base+hf/some-dir"}.get(name, "some-dir")  # built lazily: nothing is loaded
        backend = reg.create(f"{name}/{model}", config=LLMConfig())
        assert backend.spec == f"{name}/{model}"
    elif kind == "detector":
        assert callable(target.run) and target.inputs and isinstance(target.config("m", {"seed": 0}), dict)
    elif kind == "adapter":
        from halluscope.backends.audio_lm import AudioLMAdapter

        assert issubclass(target, AudioLMAdapter) and target.default_window_s > 0
    else:
        assert callable(target)


def test_capabilities_decide_who_hears_audio_and_who_can_be_mitigated():
    from halluscope.backends.llm import CHAT_BACKENDS

    assert CHAT_BACKENDS.where("exposes_logits") == ["hf", "hf-audio"]
    assert CHAT_BACKENDS.where("hears_audio", "server") == ["openai"]
    with pytest.raises(HalluscopeError, match="unknown LLM backend 'hf-audio/x'"):
        from halluscope.backends.llm import create_backend

        create_backend("hf-audio/x")


def test_a_registry_view_adds_to_its_parent_and_a_swap_keeps_the_capabilities():
    from halluscope.core.registry import Registry, RegistryView

    parent: Registry[object] = Registry("thing", "halluscope.test_view")
    view = RegistryView(parent, "loud thing", "loud")
    view.register("a", dict)
    parent.register("b", list, capabilities=("quiet",))
    assert parent.names == ["a", "b"] and view.names == ["a"] and "b" not in view
    parent["a"] = tuple
    assert view["a"] is tuple and parent.capabilities("a") == {"loud"}
    with pytest.raises(HalluscopeError, match="registered twice"):
        parent.register("a", set)
