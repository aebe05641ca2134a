"""The paper's speech stack as plug-ins (issue 29; seed 000, 3.3): each engine loads a model built here with
random weights and really synthesises through its library's loading, synthesis and the 16 kHz resampling."""

import json
import sys
import textwrap

import numpy as np
import pytest

from halluscope.backends.speech.audio import SAMPLE_RATE
from halluscope.backends.speech.route import PRESETS, PerLanguageTts
from halluscope.backends.speech.tts import TTS_BACKENDS
from halluscope.core.errors import HalluscopeError, ItemError

TEXT = "Астана қаласында жаңа мектеп ашылды. Оқушылар қуанышты."


def tiny_piper_voice(folder, speakers=("f1", "m1"), hop=256):
    """A piper voice: PiperConfig (piper's own class) with an id per symbol, and a random-weight ONNX network with
    piper's input signature (input, input_lengths, scales, sid), exported by torch."""
    torch = pytest.importorskip("torch")
    pytest.importorskip("onnx")
    from piper.config import PhonemeType, PiperConfig

    symbols = ["_", "^", "$", *map(chr, range(32, 127)), *map(chr, range(0x250, 0x370)), *"ˈˌːʲ"]
    id_map = {s: [i] for i, s in enumerate(dict.fromkeys(symbols))}
    cfg = PiperConfig(
        num_symbols=len(id_map),
        num_speakers=len(speakers),
        sample_rate=22050,
        espeak_voice="kk",
        phoneme_id_map=id_map,
        phoneme_type=PhonemeType.ESPEAK,
        speaker_id_map={s: i for i, s in enumerate(speakers)},
    )

    class Tiny(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = torch.nn.Embedding(len(id_map), 16)
            self.spk = torch.nn.Embedding(len(speakers), 16)
            self.out = torch.nn.Linear(16, hop)

        def forward(self, input, input_lengths, scales, sid):
            x = self.emb(input) + self.spk(sid).unsqueeze(1)
            y = torch.tanh(self.out(x)) * scales[1] * (input_lengths.float() / input_lengths.float()).reshape(1, 1, 1)
            return y.reshape(1, 1, -1)

    torch.manual_seed(0)
    onnx_path = folder / "kk_KZ-tiny-medium.onnx"
    args = (torch.zeros(1, 4, dtype=torch.long), torch.tensor([4]), torch.tensor([0.0, 1.0, 0.0]), torch.tensor([0]))
    torch.onnx.export(
        Tiny().eval(),
        args,
        str(onnx_path),
        input_names=["input", "input_lengths", "scales", "sid"],
        output_names=["output"],
        dynamic_axes={"input": {1: "t"}, "output": {2: "n"}},
        dynamo=False,
        opset_version=17,
    )
    (folder / f"{onnx_path.name}.json").write_text(json.dumps(cfg.to_dict()), encoding="utf-8")
    return onnx_path


def test_piper_voice_synthesises_at_16k_per_speaker_reproducibly(tmp_path):
    pytest.importorskip("piper")
    onnx_path = tiny_piper_voice(tmp_path)
    tts = TTS_BACKENDS.create(f"piper/{onnx_path}")
    assert tts.voices("kk") == ["f1", "m1"]
    a = tts.synthesize(TEXT, language="kk", voice="f1")
    b = tts.synthesize(TEXT, language="kk", voice="m1")
    assert a.dtype == np.float32 and a.ndim == 1 and 0.5 < len(a) / SAMPLE_RATE < 60
    # two sentences of espeak-ng phonemes, hop 256 at 22.05 kHz, resampled to 16 kHz
    assert not np.allclose(a[:1000], b[:1000])  # the speaker embedding changes the clip
    assert np.array_equal(a, tts.synthesize(TEXT, language="kk", voice="f1"))  # fixed sampling
    cfg = tts.config()
    assert cfg["engine"] == "piper-tts" and set(cfg["files"]) == {onnx_path.name, onnx_path.name + ".json"}
    with pytest.raises(ItemError, match="no speaker 'x'"):
        tts.synthesize(TEXT, language="kk", voice="x")


SILERO_STANDIN = '''
import torch


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = torch.nn.Embedding(4096, 8)
        self.spk = torch.nn.Embedding(3, 8)
        self.out = torch.nn.Linear(8, 120)

    def forward(self, ids: torch.Tensor, speaker: int, noise: torch.Tensor) -> torch.Tensor:
        x = self.emb(ids) + self.spk(torch.tensor([speaker])) + noise
        return torch.tanh(self.out(x)).reshape(-1)


class StandIn(torch.nn.Module):
    """A stand-in with Silero's model interface (speakers, apply_tts and its keywords) and random weights. Silero's
    own network code ships only inside its weights file (a torch.package); the stand-in keeps its network as
    TorchScript inside the package, so loading restores an interned module and a scripted one."""

    speakers = ["aidar", "baya", "random"]

    def __init__(self):
        super().__init__()
        self.net = torch.jit.script(Net())

    def apply_tts(self, text=None, ssml_text=None, speaker="xenia", sample_rate=48000, put_accent=True, put_yo=True,
                  voice_path=None):
        ids = torch.tensor([ord(c) % 4096 for c in text])
        return self.net(ids, self.speakers.index(speaker), 0.01 * torch.randn(len(text), 8))
'''


def test_silero_model_file_loads_through_torch_package(tmp_path, monkeypatch):
    torch = pytest.importorskip("torch")
    (tmp_path / "silero_standin.py").write_text(textwrap.dedent(SILERO_STANDIN), encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    import silero_standin

    torch.manual_seed(0)
    path = tmp_path / "v4_ru.pt"
    # a beta torch.package feature behind a gate; loading such a file needs nothing special
    monkeypatch.setattr(torch.package.package_exporter, "_gate_torchscript_serialization", False)
    with torch.package.PackageExporter(str(path)) as exp:
        exp.extern("torch.**")
        exp.intern("silero_standin")
        exp.save_pickle("tts_models", "model", silero_standin.StandIn())
    sys.modules.pop("silero_standin")
    names = __import__("zipfile").ZipFile(path).namelist()
    assert any("/.data/ts_code/" in n for n in names), names  # the network is stored as TorchScript
    tts = TTS_BACKENDS.create(f"silero/{path}")
    assert tts.voices("ru") == ["aidar", "baya"]
    a = tts.synthesize("Привет, мир.", language="ru", voice="baya")
    assert len(a) == round(len("Привет, мир.") * 120 * SAMPLE_RATE / 48_000)  # 48 kHz resampled to 16 kHz
    assert np.array_equal(a, tts.synthesize("Привет, мир.", language="ru", voice="baya"))  # seeded from the text
    assert isinstance(tts._load().net, torch.jit.ScriptModule)
    assert not np.allclose(a, tts.synthesize("Привет, мир.", language="ru", voice="aidar"))
    bad = tmp_path / "bad.pt"
    bad.write_bytes(b"not a package")
    with pytest.raises(HalluscopeError, match="not a Silero TTS package"):
        TTS_BACKENDS.create(f"silero/{bad}").voices("ru")


def test_paper_preset_names_the_papers_engines_and_missing_weights_say_where(tmp_path, monkeypatch):
    assert PRESETS["paper"]["tts"]["en"].startswith("xtts/") and PRESETS["paper"]["tts"]["ru"].startswith("silero/")
    assert PRESETS["paper"]["tts"]["kk"].startswith("espnet-tts/")
    assert "whisper-large-v3" in PRESETS["paper"]["asr"]["en"] and "punct=" in PRESETS["paper"]["asr"]["kk"]
    with pytest.raises(HalluscopeError, match=r"xtts: dir '.*xtts-v2' not found.*docs/lost-in-speech.md"):
        PerLanguageTts.create("paper", ["en"])
    (tmp_path / "speakers").mkdir()
    with pytest.raises(HalluscopeError, match="holds no reference clips"):
        TTS_BACKENDS.create(f"xtts/{tmp_path}")
    with pytest.raises(HalluscopeError, match="needs config.yaml and a model .pth"):
        TTS_BACKENDS.create(f"espnet-tts/{tmp_path}").config()


def test_xtts_and_espnet_without_a_loadable_library_name_the_extra_and_torchaudio(tmp_path, monkeypatch):
    """coqui-tts' XTTS and espnet2's TTS cannot run here (issue 29): both import torchaudio, whose PyPI wheels are CUDA
    builds that do not load with the CPU torch; the engines say which extra and which torchaudio to install."""
    import importlib.util

    from halluscope.backends.speech.neural import import_engine

    (tmp_path / "speakers").mkdir()
    (tmp_path / "speakers" / "ann.wav").write_bytes(b"RIFF")
    (tmp_path / "config.yaml").write_text("tts: vits\n", encoding="utf-8")
    (tmp_path / "model.pth").write_bytes(b"0")
    for spec, extra, lib in ((f"xtts/{tmp_path}", "xtts", "TTS"), (f"espnet-tts/{tmp_path}", "espnet", "espnet2")):
        tts = TTS_BACKENDS.create(spec)
        assert tts.voices("en")[0] in ("ann", "default")
        with pytest.raises(HalluscopeError, match=rf"pip install 'halluscope\[{extra}\]'") as err:
            tts.synthesize("Hello.", language="en", voice=tts.voices("en")[0])
        if importlib.util.find_spec(lib) is None:
            assert "is not installed" in str(err.value)
    # a library that imports torchaudio where torchaudio cannot load: that cause, and the matching build to get
    monkeypatch.setitem(sys.modules, "torchaudio", None)

    def load():
        import torchaudio  # noqa: F401

    with pytest.raises(
        HalluscopeError,
        match=r"xtts: coqui-tts needs torchaudio, which is missing or does not "
        r"load with torch .*pip install torchaudio==\S+ --index-url",
    ):
        import_engine(load, engine="xtts", package="coqui-tts", extra="xtts")

    def broken():
        raise OSError("disk")

    with pytest.raises(OSError, match="disk"):  # any other failure is not dressed up as a missing extra
        import_engine(broken, engine="xtts", package="coqui-tts", extra="xtts")
