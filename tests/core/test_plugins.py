"""Third-party plug-ins through real entry points: a tiny installed distribution (a dist-info folder with
entry_points.txt next to its module) on sys.path is found by every registry it names, lazily."""

import sys
import textwrap

import numpy as np
import pytest

from halluscope.backends.audio_lm import AUDIO_LM_BACKENDS
from halluscope.backends.llm import CHAT_BACKENDS, LLM_BACKENDS, LLMConfig, create_chat_backend
from halluscope.backends.speech import ASR_BACKENDS, TTS_BACKENDS
from halluscope.core.errors import HalluscopeError
from halluscope.core.registry import Registry
from halluscope.core.spec import ModelSpec

PLUGIN = """
import numpy as np

LOADED = []


class Tone:
    def __init__(self, model, **options):
        self.spec = "plug-tone/" + model
        self.options = options

    def voices(self, language):
        return ["default"]

    def synthesize(self, text, *, language, voice):
        return np.full(1600, 0.1, dtype=np.float32)


def make_tts(model, **options):
    LOADED.append(model)
    return Tone(model, **options)


class EchoChat:
    def __init__(self, spec, options):
        self.spec, self.options = str(spec), options


def make_chat(spec, *, config=None, **options):
    return EchoChat(spec, options)


make_chat.capabilities = ("hears_audio", "server")
make_chat.takes_spec = True  # gets the parsed ModelSpec, as halluscope's own chat backends do
"""


def install(root, name: str, entry_points: str, module: str = PLUGIN, module_name: str = "hs_plugin_pkg"):
    (root / f"{module_name}.py").write_text(module, encoding="utf-8")
    info = root / f"{name}-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1\n", encoding="utf-8")
    (info / "entry_points.txt").write_text(textwrap.dedent(entry_points), encoding="utf-8")


@pytest.fixture
def plugin(tmp_path, monkeypatch):
    install(
        tmp_path,
        "hs-plugin",
        """
        [halluscope.tts]
        plug-tone = hs_plugin_pkg:make_tts

        [halluscope.chat_backends]
        plug-chat = hs_plugin_pkg:make_chat

        [halluscope.asr]
        plug-broken = hs_plugin_missing:create
    """,
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop("hs_plugin_pkg", None)
    yield tmp_path
    sys.modules.pop("hs_plugin_pkg", None)


def test_a_tts_plugin_is_found_through_its_entry_point_and_loaded_on_first_use(plugin):
    assert "plug-tone" in TTS_BACKENDS.names
    assert "hs_plugin_pkg" not in sys.modules  # listed from metadata, not imported
    tts = TTS_BACKENDS.create("plug-tone/x?ignored=1", seed=2)
    assert tts.spec == "plug-tone/x?ignored=1" and tts.options == {"seed": 2}
    assert sys.modules["hs_plugin_pkg"].LOADED == ["x?ignored=1"]  # a plain factory gets the text after 'provider/'
    assert tts.synthesize("hi", language="en", voice="default").dtype == np.float32
    assert TTS_BACKENDS.entry("plug-tone").dist == "hs-plugin 0.1"
    assert "plug-tone" not in ASR_BACKENDS.names  # each registry reads its own group


def test_a_chat_backend_plugin_declares_its_capabilities(plugin):
    assert "plug-chat" in CHAT_BACKENDS and "plug-chat" in AUDIO_LM_BACKENDS.names
    assert "plug-chat" not in LLM_BACKENDS.names  # it does not declare 'text'
    assert CHAT_BACKENDS.capabilities("plug-chat") == {"hears_audio", "server"}
    backend = create_chat_backend("plug-chat/m", config=LLMConfig(), temperature=0)
    assert backend.spec == "plug-chat/m" and backend.options == {"temperature": 0}
    assert CHAT_BACKENDS.create(ModelSpec.parse("plug-chat/m", {"a": 1}), config=None).spec == "plug-chat/m?a=1"


def test_a_broken_plugin_names_its_distribution(plugin):
    assert "plug-broken" in ASR_BACKENDS.names
    with pytest.raises(HalluscopeError, match=r"plug-broken.*distribution 'hs-plugin 0.1'.*ModuleNotFoundError"):
        ASR_BACKENDS.create("plug-broken/x")
    ASR_BACKENDS.create("whisper/base")  # the rest of the registry still works


def test_plugins_go_when_their_distribution_leaves_sys_path(tmp_path):
    registry: Registry[object] = Registry("thing", "halluscope.test_things")
    registry.register("builtin", "builtins:dict")
    assert registry.names == ["builtin"]
    install(
        tmp_path,
        "hs-things",
        """
        [halluscope.test_things]
        extra = hs_things_mod:Extra
        builtin = hs_things_mod:Extra
    """,
        module="class Extra:\n    capabilities = ('x',)\n",
        module_name="hs_things_mod",
    )
    with pytest.MonkeyPatch.context() as mp:
        mp.syspath_prepend(str(tmp_path))
        assert registry.names == ["builtin", "extra"]
        assert registry["builtin"] is dict  # halluscope's own name wins over a plug-in's
        assert registry["extra"].__name__ == "Extra" and registry.where("x") == ["extra"]
    assert "extra" not in registry and registry.names == ["builtin"]


def test_an_unknown_name_says_where_plugins_come_from():
    with pytest.raises(HalluscopeError, match="entry-point group 'halluscope.tts'"):
        TTS_BACKENDS.entry("nonesuch")
    with pytest.raises(HalluscopeError, match="Did you mean 'espeak'"):
        TTS_BACKENDS.create("espek/en")
