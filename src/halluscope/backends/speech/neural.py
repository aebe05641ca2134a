"""Neural TTS engines of Lost in Speech (000, 3.3), loaded from local weights (halluscope ships none):

- 'piper/<voice.onnx>' (piper-tts; the voice's '<voice.onnx>.json' beside it; Kazakh, Russian and English voices
  exist): extra 'piper'.
- 'silero/<model .pt file>' (Silero TTS v3/v4 as distributed: a torch.package file, loaded the way silero-models
  documents; the paper's Russian engine): extra 'silero' (torch).
- 'xtts/<dir>' (Coqui XTTS-v2: config.json, model.pth, vocab.json and speakers/*.wav, one reference clip per
  voice; the paper's English engine): extra 'xtts' (coqui-tts).
- 'espnet-tts/<dir>' (an ESPnet2 model such as KazakhTTS2: config.yaml and a model .pth, optionally
  vocoder/config.yaml and a vocoder .pkl/.pth; the paper's Kazakh engine): extra 'espnet'.

Reproducible per item: the voice is picked per item by the build (seeded), sampling is fixed (piper: noise 0 unless
asked; silero, xtts, espnet: torch seeded from the text before each clip), and ``config()`` holds the model files'
sha256, so new weights re-key the TTS stage. Output is resampled to the benchmark's 16 kHz.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from halluscope.backends.speech.audio import SAMPLE_RATE, resample
from halluscope.backends.speech.tts import TTS_BACKENDS
from halluscope.core.errors import HalluscopeError, ItemError, MissingExtraError
from halluscope.core.hashing import file_sha256, seed_from
from halluscope.core.spec import options_model


@functools.lru_cache(maxsize=64)
def _sha(path: str, mtime_ns: int, size: int) -> str:
    return file_sha256(path, 16)


def files_sha(paths: list[Path]) -> dict[str, str]:
    """name -> sha256 (16 hex) of each model file: what keys the TTS stage."""
    return {p.name: _sha(str(p), p.stat().st_mtime_ns, p.stat().st_size) for p in sorted(paths)}


def _path(model: str, engine: str, what: str, *, is_dir: bool) -> Path:
    if not model:
        raise HalluscopeError(f"'{engine}' names no model; expected {engine}/<{what}>")
    p = Path(model).expanduser()
    if not (p.is_dir() if is_dir else p.is_file()):
        raise HalluscopeError(
            f"{engine}: {what} '{p}' not found. Fix: download the weights (see docs/lost-in-speech.md) "
            f"and pass {engine}/<{what}>"
        )
    return p


def _version(dist: str) -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(dist)
    except PackageNotFoundError:
        return "missing"


def import_engine(load: Any, *, engine: str, package: str, extra: str) -> Any:
    """``load()`` (the engine library's imports); a missing library names its extra, and a torchaudio/torchcodec that
    is missing or does not load with the installed torch (coqui-tts' XTTS and espnet2's TTS import them) says so."""
    try:
        return load()
    except (ImportError, OSError) as exc:
        said = f"{getattr(exc, 'name', None) or ''} {exc}".lower()
        needs = [m for m in ("torchaudio", "torchcodec") if m in said]
        if not needs:
            if isinstance(exc, OSError):
                raise
            raise MissingExtraError(package, extra) from None
        torch_version = _version("torch")
        first = next((line.strip() for line in str(exc).splitlines() if line.strip()), "")
        raise HalluscopeError(
            f"{engine}: {package} needs {' and '.join(needs)}, which is missing or does not load with torch "
            f"{torch_version} ({type(exc).__name__}: {first}). Fix: pip install 'halluscope[{extra}]' and the "
            f"torchaudio (and, for torch >= 2.9, torchcodec) build made for this torch: same version, same CPU/CUDA "
            f"flavour, e.g. pip install torchaudio=={torch_version.split('+')[0]} --index-url "
            "https://download.pytorch.org/whl/cpu for a CPU torch"
        ) from None


def _torch_seed(text: str) -> None:
    import torch

    torch.manual_seed(seed_from(text, 4))


def _clip(samples: Any, rate: int, engine: str, voice: str) -> np.ndarray:
    x = np.asarray(samples.detach().cpu().numpy() if hasattr(samples, "detach") else samples, dtype=np.float32).reshape(
        -1
    )
    if x.size == 0 or not np.isfinite(x).all() or float(np.abs(x).max()) == 0.0:
        raise ItemError(f"{engine} produced no audio (or silence) for voice '{voice}'")
    return resample(x, int(rate), SAMPLE_RATE)


# ---- piper ----------------------------------------------------------------------------------------------------


@dataclass
class PiperTts:
    model: str
    noise_scale: float = 0.0  # fixed sampling by default: the same text gives the same clip
    noise_w: float = 0.0
    length_scale: float | None = None
    _model: Any = field(default=None, init=False, repr=False)  # route._unloaded clears it before pickling

    def __post_init__(self) -> None:
        self._onnx = _path(self.model, "piper", "voice.onnx", is_dir=False)
        self._json = Path(f"{self._onnx}.json")
        if not self._json.is_file():
            raise HalluscopeError(
                f"piper: the voice config {self._json} is missing (every piper voice ships "
                "'<voice>.onnx.json' beside its .onnx). Fix: put it next to the model"
            )

    @property
    def spec(self) -> str:
        return f"piper/{self.model}"

    def _load(self) -> Any:
        if self._model is None:
            try:
                from piper import PiperVoice
            except ImportError:
                raise MissingExtraError("piper-tts", "piper") from None
            self._model = PiperVoice.load(self._onnx, config_path=self._json)
        return self._model

    def config(self) -> dict:
        return {
            "engine": "piper-tts",
            "version": _version("piper-tts"),
            "files": files_sha([self._onnx, self._json]),
            "noise_scale": self.noise_scale,
            "noise_w": self.noise_w,
            "length_scale": self.length_scale,
            "cleaning": None,
        }  # piper's espeak-ng phonemizer reads digits itself

    def voices(self, language: str) -> list[str]:
        import json

        speakers = json.loads(self._json.read_text(encoding="utf-8")).get("speaker_id_map") or {}
        return sorted(speakers, key=speakers.get) or ["default"]

    def synthesize(self, text: str, *, language: str, voice: str) -> np.ndarray:
        from piper import SynthesisConfig

        if not text.strip():
            raise ItemError("TTS input is empty; nothing to speak")
        v = self._load()
        sid = v.config.speaker_id_map.get(voice) if voice != "default" else None
        if voice != "default" and sid is None:
            raise ItemError(f"piper voice {self._onnx.name} has no speaker '{voice}'")
        syn = SynthesisConfig(
            speaker_id=sid, noise_scale=self.noise_scale, noise_w_scale=self.noise_w, length_scale=self.length_scale
        )
        chunks = [c.audio_float_array for c in v.synthesize(text, syn_config=syn)]
        if not chunks:
            raise ItemError(f"piper produced no sentence audio for voice '{voice}'")
        return _clip(np.concatenate(chunks), v.config.sample_rate, "piper", voice)


@TTS_BACKENDS.register("piper", options=options_model(PiperTts))
def _piper(model: str, **options: object) -> PiperTts:
    return PiperTts(model=model, **options)  # type: ignore[arg-type]


# ---- silero ---------------------------------------------------------------------------------------------------


@dataclass
class SileroTts:
    model: str
    sample_rate: int = 48_000  # Silero v3/v4 speak at 8, 24 or 48 kHz
    _model: Any = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        self._file = _path(self.model, "silero", "model .pt file", is_dir=False)

    @property
    def spec(self) -> str:
        return f"silero/{self.model}"

    def _load(self) -> Any:
        if self._model is None:
            try:
                import torch
            except ImportError:
                raise MissingExtraError("torch", "silero") from None
            try:  # silero-models' documented local loading of a downloaded model file
                imp = torch.package.PackageImporter(str(self._file))
                self._model = imp.load_pickle("tts_models", "model")
            except Exception as exc:  # noqa: BLE001 - any unreadable package is the user's file
                raise HalluscopeError(
                    f"silero: {self._file} is not a Silero TTS package ({type(exc).__name__}: "
                    f"{exc}). Fix: pass a v3/v4 model file, e.g. v4_ru.pt"
                ) from None
            self._model.to(torch.device("cpu"))
        return self._model

    def config(self) -> dict:
        return {
            "engine": "silero",
            "torch": _version("torch"),
            "files": files_sha([self._file]),
            "sample_rate": self.sample_rate,
            "seeded": "text",
            "cleaning": None,
        }

    def voices(self, language: str) -> list[str]:
        return [s for s in self._load().speakers if s != "random"]  # 'random' is a new voice per call

    def synthesize(self, text: str, *, language: str, voice: str) -> np.ndarray:
        if not text.strip():
            raise ItemError("TTS input is empty; nothing to speak")
        model = self._load()
        _torch_seed(text)
        try:
            audio = model.apply_tts(
                text=text, speaker=voice, sample_rate=self.sample_rate, put_accent=True, put_yo=True
            )
        except (ValueError, RuntimeError, KeyError) as exc:
            raise ItemError(f"silero failed with voice '{voice}': {exc}") from None
        return _clip(audio, self.sample_rate, "silero", voice)


@TTS_BACKENDS.register("silero", options=options_model(SileroTts))
def _silero(model: str, **options: object) -> SileroTts:
    return SileroTts(model=model, **options)  # type: ignore[arg-type]


# ---- xtts (coqui-tts) -- not run here: coqui-tts installs, but its XTTS module imports torchaudio, and PyPI's only
# torchaudio wheels (<= 2.11.1) are CUDA builds that do not load with this project's CPU torch 2.13 --------------

XTTS_LANG = {"en": "en", "ru": "ru", "kk": "ru"}  # XTTS-v2 has no Kazakh; it is used for English in the paper


@dataclass
class XttsTts:
    model: str
    temperature: float = 0.7
    _model: Any = field(default=None, init=False, repr=False)
    _latents: dict = field(default_factory=dict, init=False, repr=False)

    def __post_init__(self) -> None:
        self._dir = _path(self.model, "xtts", "dir", is_dir=True)
        if not sorted((self._dir / "speakers").glob("*.wav")):
            raise HalluscopeError(
                f"xtts: {self._dir}/speakers/ holds no reference clips. Fix: put one WAV per voice "
                "there (a few seconds of clean speech each); the file name is the voice"
            )

    @property
    def spec(self) -> str:
        return f"xtts/{self.model}"

    def config(self) -> dict:
        files = [p for p in self._dir.rglob("*") if p.is_file()]
        return {
            "engine": "coqui-tts xtts",
            "version": _version("coqui-tts"),
            "files": files_sha(files),
            "temperature": self.temperature,
            "seeded": "text",
            "cleaning": None,
        }

    def voices(self, language: str) -> list[str]:
        return [p.stem for p in sorted((self._dir / "speakers").glob("*.wav"))]

    def _load(self) -> Any:
        if self._model is None:

            def load() -> tuple[Any, Any]:
                from TTS.tts.configs.xtts_config import XttsConfig
                from TTS.tts.models.xtts import Xtts

                return XttsConfig, Xtts

            XttsConfig, Xtts = import_engine(load, engine="xtts", package="coqui-tts", extra="xtts")
            cfg = XttsConfig()
            cfg.load_json(str(self._dir / "config.json"))
            model = Xtts.init_from_config(cfg)
            model.load_checkpoint(cfg, checkpoint_dir=str(self._dir), eval=True)
            self._model, self._cfg = model, cfg
        return self._model

    def synthesize(self, text: str, *, language: str, voice: str) -> np.ndarray:
        model = self._load()
        if voice not in self._latents:
            self._latents[voice] = model.get_conditioning_latents(
                audio_path=[str(self._dir / "speakers" / f"{voice}.wav")]
            )
        gpt_latent, speaker_embedding = self._latents[voice]
        _torch_seed(text)
        out = model.inference(
            text, XTTS_LANG.get(language, language), gpt_latent, speaker_embedding, temperature=self.temperature
        )
        return _clip(out["wav"], self._cfg.audio.output_sample_rate, "xtts", voice)


@TTS_BACKENDS.register("xtts", options=options_model(XttsTts))
def _xtts(model: str, **options: object) -> XttsTts:
    return XttsTts(model=model, **options)  # type: ignore[arg-type]


# ---- espnet-tts -- not run here: espnet2's TTS inference imports torchaudio (see xtts above), and pip cannot
# install espnet 202511 next to this project's packages (setuptools<74; ci_sdr's git URL dependency) ---------------


@dataclass
class EspnetTts:
    model: str
    _model: Any = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        self._dir = _path(self.model, "espnet-tts", "dir", is_dir=True)

    @property
    def spec(self) -> str:
        return f"espnet-tts/{self.model}"

    def _files(self) -> tuple[Path, Path, Path | None, Path | None]:
        def one(pattern: str, where: Path) -> Path | None:
            found = sorted(where.rglob(pattern)) if where.is_dir() else []
            return found[0] if found else None

        voc = self._dir / "vocoder"
        cfg = one("config.yaml", self._dir / "exp") or (self._dir / "config.yaml")
        model = one("*.pth", self._dir / "exp") or one("*.pth", self._dir)
        if not cfg.is_file() or model is None:
            raise HalluscopeError(
                f"espnet-tts: {self._dir} needs config.yaml and a model .pth (as KazakhTTS2 ships "
                "them). Fix: unpack the model there"
            )
        return cfg, model, one("config.yaml", voc), one("*.pkl", voc) or one("*.pth", voc)

    def config(self) -> dict:
        return {
            "engine": "espnet2",
            "version": _version("espnet"),
            "files": files_sha([p for p in self._files() if p is not None]),
            "seeded": "text",
            "cleaning": None,
        }

    def voices(self, language: str) -> list[str]:
        return ["default"]

    def synthesize(self, text: str, *, language: str, voice: str) -> np.ndarray:
        if self._model is None:

            def load() -> Any:
                from espnet2.bin.tts_inference import Text2Speech

                return Text2Speech

            Text2Speech = import_engine(load, engine="espnet-tts", package="espnet", extra="espnet")
            cfg, model, vcfg, vfile = self._files()
            self._model = Text2Speech(
                train_config=str(cfg),
                model_file=str(model),
                vocoder_config=str(vcfg) if vcfg else None,
                vocoder_file=str(vfile) if vfile else None,
                device="cpu",
            )
        _torch_seed(text)
        return _clip(self._model(text)["wav"], self._model.fs, "espnet-tts", voice)


@TTS_BACKENDS.register("espnet-tts", options=options_model(EspnetTts))
def _espnet(model: str, **options: object) -> EspnetTts:
    return EspnetTts(model=model, **options)  # type: ignore[arg-type]
