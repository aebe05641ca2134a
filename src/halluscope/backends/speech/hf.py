"""transformers speech engines: 'hf-asr/<path>' (Whisper or wav2vec2-CTC, any local or hub checkpoint, with an
optional punctuation/casing restorer as seed 000 post-processes Kazakh) and 'hf-tts/<path>' (VITS, e.g. MMS-TTS).

Options ride in the spec after '?': 'hf-asr/<dir>?punct=hf-punct/<dir>&device=cuda&chunk_s=30'. Real weights are
the user's (halluscope ships none); the tests build tiny random-weight models.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from halluscope.backends.speech.asr import ASR_BACKENDS, WINDOW_S
from halluscope.backends.speech.audio import SAMPLE_RATE, resample
from halluscope.backends.speech.tts import TTS_BACKENDS
from halluscope.core.errors import HalluscopeError, ItemError, MissingExtraError
from halluscope.core.hashing import chunks_sha256
from halluscope.core.registry import Registry
from halluscope.core.spec import ModelSpec, _looks_local, options_model


def _transformers() -> Any:
    try:
        import torch  # noqa: F401
        import transformers
    except ImportError:
        raise MissingExtraError("transformers and torch", "hf") from None
    return transformers


def model_identity(path: str) -> dict:
    """What re-keys a stage when the model changes: for a local folder, sha256 of its small files (configs,
    vocabularies) and the size of each large one (weights); for a hub id, the id (its revision is the user's)."""
    p = Path(path)
    if not p.is_dir():
        return {"model": path}

    def pieces(f: Path) -> tuple:
        size = f.stat().st_size
        return (f"{f.relative_to(p).as_posix()}:{size}", f.read_bytes() if size < 4 << 20 else b"")

    files = sorted(x for x in p.rglob("*") if x.is_file())
    return {"model": path, "files_sha256": chunks_sha256((c for f in files for c in pieces(f)), 16)}


def _versions() -> dict:
    t = _transformers()
    import torch

    return {"transformers": t.__version__, "torch": torch.__version__}


# ---- punctuation / casing restoration (a pluggable text model) ------------------------------------------------


class TextRestorer(Protocol):
    @property
    def spec(self) -> str: ...

    def config(self) -> dict: ...

    def restore(self, text: str, *, language: str) -> str: ...


TEXT_RESTORERS: Registry[TextRestorer] = Registry("punctuation restorer", "halluscope.text_restorers")

# label -> mark written after the word; 'O'/'0' and empty labels add none (common token-classification label sets)
PUNCT_LABELS = {
    "o": "",
    "0": "",
    "": "",
    "period": ".",
    "comma": ",",
    "question": "?",
    "exclamation": "!",
    "colon": ":",
    "semicolon": ";",
    "dash": " -",
    ".": ".",
    ",": ",",
    "?": "?",
    "!": "!",
    ":": ":",
    ";": ";",
    "-": " -",
}


@dataclass
class HfPunctuation:
    """A token-classification model whose label per word is the punctuation after it (PERIOD, COMMA, '.', ',', O
    ...); sentences are then capitalised. 'hf-punct/<dir or hub id>'."""

    model: str
    device: str = "cpu"
    words_per_window: int = 150
    _model: Any = field(default=None, init=False, repr=False)
    _tok: Any = field(default=None, init=False, repr=False)

    @property
    def spec(self) -> str:
        return f"hf-punct/{self.model}"

    def config(self) -> dict:
        return {"spec": self.spec, **model_identity(self.model), "window": self.words_per_window, **_versions()}

    def _load(self) -> None:
        if self._model is not None:
            return
        t = _transformers()
        self._tok = t.AutoTokenizer.from_pretrained(self.model)
        self._model = t.AutoModelForTokenClassification.from_pretrained(self.model).to(self.device).eval()
        labels = {i: str(v) for i, v in self._model.config.id2label.items()}
        bad = sorted(v for v in labels.values() if v.lower().removeprefix("b-").removeprefix("i-") not in PUNCT_LABELS)
        if bad:
            raise HalluscopeError(
                f"punctuation model {self.model}: labels {', '.join(bad)} name no punctuation mark; "
                f"expected labels among {', '.join(sorted(k for k in PUNCT_LABELS if k))} (any case)"
            )
        self._marks = {i: PUNCT_LABELS[v.lower().removeprefix("b-").removeprefix("i-")] for i, v in labels.items()}

    def restore(self, text: str, *, language: str) -> str:
        import torch

        words = re.sub(r"[.,!?;:]", " ", text).split()
        if not words:
            return text
        self._load()
        out: list[str] = []
        for start in range(0, len(words), self.words_per_window):
            chunk = words[start : start + self.words_per_window]
            enc = self._tok(chunk, is_split_into_words=True, return_tensors="pt", truncation=True)
            with torch.no_grad():
                pred = self._model(**{k: v.to(self.device) for k, v in enc.items()}).logits.argmax(-1)[0].tolist()
            last: dict[int, int] = {}
            for pos, w in enumerate(enc.word_ids()):
                if w is not None:
                    last[w] = pred[pos]  # the word's last sub-token decides
            out += [w + self._marks.get(last.get(i, -1), "") for i, w in enumerate(chunk)]
        restored = " ".join(out)
        return re.sub(r"(^|[.!?]\s+)(\w)", lambda m: m.group(1) + m.group(2).upper(), restored)


def local_weights(model: str, spec: str, what: str) -> None:
    """A model given as a local path must be there when the engine is made (before any work), not on the first item."""
    if _looks_local(model) and not Path(model).expanduser().is_dir():
        raise HalluscopeError(
            f"'{spec}': no weights at {model} (not a directory). Fix: put {what} there (docs/lost-in-speech.md), "
            "or pass another directory or hub id"
        )


@TEXT_RESTORERS.register("hf-punct", options=options_model(HfPunctuation))
def _hf_punct(model: str, **options: object) -> TextRestorer:
    if not model:
        raise HalluscopeError("'hf-punct' names no model; expected hf-punct/<token-classification dir or hub id>")
    local_weights(model, f"hf-punct/{model}", "a token-classification checkpoint")
    return HfPunctuation(model=model, **options)  # type: ignore[arg-type]


# ---- ASR ----------------------------------------------------------------------------------------------------------


@dataclass
class HfAsr:
    """transformers ASR pipeline over a Whisper (language forced per item) or CTC (wav2vec2) checkpoint; then the
    optional restorer. A clip longer than Whisper's 30 s window is decoded sequentially with timestamps (the window
    moves to the last timestamp decoded): the pipeline's chunks stitched by their overlap lost words at the seams
    (docs/byo/models.md, long clips). A CTC model takes the clip in ``chunk_s`` chunks with overlapping strides."""

    model: str
    punct: str | None = None
    device: str = "cpu"
    chunk_s: float = 30.0
    threads: int = 0  # torch CPU threads; 0: its default
    _pipe: Any = field(default=None, init=False, repr=False)
    _restorer: Any = field(default=None, init=False, repr=False)

    @property
    def spec(self) -> str:
        opts = "&".join(
            f"{k}={v}"
            for k, v in (
                ("punct", self.punct),
                ("device", self.device if self.device != "cpu" else None),
                ("chunk_s", self.chunk_s if self.chunk_s != 30.0 else None),
            )
            if v
        )
        return f"hf-asr/{self.model}" + (f"?{opts}" if opts else "")

    def options(self) -> dict:
        restorer = TEXT_RESTORERS.create(self.punct).config() if self.punct else None
        return {
            **model_identity(self.model),
            "chunk_s": self.chunk_s,  # CTC models
            "decoding": "greedy",
            "whisper_long_form": "sequential-timestamps",
            "punct": restorer,
            **_versions(),
        }

    def _load(self) -> Any:
        if self._pipe is None:
            t = _transformers()
            if self.threads:
                import torch

                torch.set_num_threads(self.threads)
            try:
                self._pipe = t.pipeline("automatic-speech-recognition", model=self.model, device=self.device)
            except OSError as exc:
                raise HalluscopeError(
                    f"hf-asr cannot load '{self.model}': {exc}. Fix: pass a local folder with a "
                    "Whisper or wav2vec2-CTC checkpoint (config, weights, processor files), or a hub "
                    "id with the hub reachable"
                ) from None
            self._whisper = self._pipe.model.config.model_type == "whisper"
            if self.punct:
                self._restorer = TEXT_RESTORERS.create(self.punct)
        return self._pipe

    def transcribe(self, samples: np.ndarray, *, language: str) -> str:
        pipe = self._load()
        if samples.size == 0:
            raise ItemError("ASR input audio is empty")
        kwargs: dict[str, Any] = {}
        if self._whisper:
            kwargs["generate_kwargs"] = {"language": language, "task": "transcribe"}
            if len(samples) > WINDOW_S * SAMPLE_RATE:
                kwargs["return_timestamps"] = True  # transformers' sequential long-form decoding
        elif len(samples) > self.chunk_s * SAMPLE_RATE:
            kwargs["chunk_length_s"] = self.chunk_s
        text = pipe({"raw": samples, "sampling_rate": SAMPLE_RATE}, **kwargs)["text"].strip()
        return self._restorer.restore(text, language=language) if self._restorer is not None else text


HF_ASR_OPTIONS = options_model(HfAsr, skip=("model", "threads"))  # threads: set per worker, not an option


@ASR_BACKENDS.register("hf-asr", takes_spec=True, options=HF_ASR_OPTIONS)
def _hf_asr(spec: ModelSpec, **options: object) -> Any:
    path = spec.require_model()
    opts: dict[str, Any] = spec.validate(HF_ASR_OPTIONS, kind="ASR backend").model_dump(exclude_unset=True)  # type: ignore[attr-defined]
    local_weights(path, str(spec), "a Whisper or wav2vec2-CTC checkpoint")
    if opts.get("punct"):
        TEXT_RESTORERS.create(opts["punct"])  # a bad restorer spec fails now, not on the first clip
    return HfAsr(model=path, **opts, **options)  # type: ignore[arg-type]


# ---- TTS ----------------------------------------------------------------------------------------------------------


@dataclass
class HfTts:
    """transformers VITS (MMS-TTS has eng, rus and kaz checkpoints); 'hf-tts/<dir or hub id>[?seed=N]'. The
    model is sampled (noise in the flow), so the torch seed is fixed per clip: a rerun gives the same audio."""

    model: str
    device: str = "cpu"
    seed: int = 0
    _model: Any = field(default=None, init=False, repr=False)
    _tok: Any = field(default=None, init=False, repr=False)

    @property
    def spec(self) -> str:
        return f"hf-tts/{self.model}" + (f"?seed={self.seed}" if self.seed else "")

    def config(self) -> dict:
        return {
            "engine": "vits",
            **model_identity(self.model),
            "seed": self.seed,
            "cleaning": "vits-tokenizer",
            **_versions(),
        }

    def voices(self, language: str) -> list[str]:
        return ["default"]

    def _load(self) -> None:
        if self._model is None:
            t = _transformers()
            try:
                self._tok = t.AutoTokenizer.from_pretrained(self.model)
                self._model = t.VitsModel.from_pretrained(self.model).to(self.device).eval()
            except OSError as exc:
                raise HalluscopeError(
                    f"hf-tts cannot load '{self.model}': {exc}. Fix: pass a local folder with a "
                    "VITS checkpoint (e.g. an MMS-TTS download), or a hub id with the hub reachable"
                ) from None

    def synthesize(self, text: str, *, language: str, voice: str) -> np.ndarray:
        import torch

        self._load()
        if getattr(self._tok, "is_uroman", False):
            try:
                import uroman
            except ImportError:
                raise HalluscopeError(
                    f"{self.model} reads romanized text: install uroman (pip install uroman)"
                ) from None
            text = uroman.Uroman().romanize_string(text)
        inputs = self._tok(text, return_tensors="pt")
        if inputs["input_ids"].shape[-1] == 0:
            raise ItemError(f"the VITS tokenizer of {self.model} keeps nothing of this text; nothing to speak")
        torch.manual_seed(self.seed)
        with torch.no_grad():
            wav = self._model(**{k: v.to(self.device) for k, v in inputs.items()}).waveform[0].cpu().numpy()
        if wav.size == 0 or float(np.abs(wav).max()) == 0.0:
            raise ItemError(f"{self.spec} produced silence")
        return resample(wav.astype(np.float32), int(self._model.config.sampling_rate), SAMPLE_RATE)


HF_TTS_OPTIONS = options_model(HfTts)


@TTS_BACKENDS.register("hf-tts", takes_spec=True, options=HF_TTS_OPTIONS)
def _hf_tts(spec: ModelSpec, **options: object) -> Any:
    path = spec.require_model()
    opts: dict[str, Any] = spec.validate(HF_TTS_OPTIONS, kind="TTS backend").model_dump(exclude_unset=True)  # type: ignore[attr-defined]
    local_weights(path, str(spec), "a VITS checkpoint")
    return HfTts(model=path, **opts, **options)  # type: ignore[arg-type]
