"""Granite Speech (transformers 'granite_speech', 'granite_speech_plus'): conformer CTC encoder, windowed q-former
projector and a Granite decoder, text output. ('granite_speech5' is a CTC recogniser, not a chat model: no adapter.)

Front end in torch alone: transformers' GraniteSpeechFeatureExtractor builds a torchaudio MelSpectrogram, and
torchaudio is not a halluscope dependency (its last wheel does not load against current torch), so ``MelFrontEnd``
computes the same features: the power spectrogram (torch.stft, centred with reflect padding, periodic Hann window
of win_length centred in n_fft), HTK mel filters without norm over 0 .. sr/2 (transformers.audio_utils), log10
floored at 1e-10 and at 8 below each clip's maximum, then /4 + 1; the last frame dropped if the count is odd and
pairs of frames stacked (2 x n_mels per encoder frame); in float64 (see ``MelFrontEnd.log_mel``). Clips of a batch
are zero-padded to the longest first, as the extractor does. Sizes come from the checkpoint's
preprocessor_config.json. Audio tokens per clip are the extractor's own count (``_get_num_audio_features``:
projector windows of encoder frames, window/downsample queries each) and ``input_features_mask`` picks each clip's
embeddings out of the padded batch. The features are checked against transformers' own extractor run with torchaudio
2.9.1 on real speech (within 3.6e-5; a reference stored by scripts/granite_reference.py) and against an
independent numpy front end (tests/backends/audio_lm/test_granite.py).

Window: 30 s by default, halluscope's choice as for Phi-4 (the model card states no training clip length; the
encoder attends in 4 s blocks and the projector in windows, so nothing fixes a length): a larger ``audio_window_s``
sends the clip whole up to that length. What is heard is read from the encoder frames the features hold.

Prompt: from the tokenizer's chat template, which concatenates string contents, so the clips' audio tokens lead
the last user turn's text (as in the model card), each repeated to its clip's token count.

LoRA: the released checkpoints carry an audio LoRA (adapter_config.json, which transformers loads only when peft is
installed) that the model's own generate enables with audio and disables without. Without peft such a checkpoint is
refused (its audio would reach the decoder without the LoRA it was trained with). With it, building inputs sets
the LoRA for the request: on with clips, off without; AAD's two branches run in one batch, so both get it on.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from importlib.util import find_spec
from pathlib import Path
from typing import Any

import numpy as np

from halluscope.backends.audio_lm._adapters import AudioLMAdapter, ModelInputs, _transformers, register_adapter
from halluscope.backends.speech.audio import SAMPLE_RATE
from halluscope.core.errors import HalluscopeError
from halluscope.core.records import AudioClip, ChatMessage

CLASSES = {
    "granite_speech": "GraniteSpeechForConditionalGeneration",
    "granite_speech_plus": "GraniteSpeechPlusForConditionalGeneration",
}


@dataclass(frozen=True)
class MelFrontEnd:
    """GraniteSpeechFeatureExtractor's features without torchaudio (its __init__ defaults)."""

    sampling_rate: int = 16000
    n_fft: int = 512
    win_length: int = 400
    hop_length: int = 160
    n_mels: int = 80
    projector_window_size: int = 15
    projector_downsample_rate: int = 5

    @classmethod
    def from_checkpoint(cls, path: str | Path) -> MelFrontEnd:
        """The sizes in preprocessor_config.json (or a processor_config.json's audio_processor section)."""
        root = Path(path)
        pre, proc = root / "preprocessor_config.json", root / "processor_config.json"
        if pre.is_file():
            cfg = json.loads(pre.read_text(encoding="utf-8"))
        elif proc.is_file():
            cfg = json.loads(proc.read_text(encoding="utf-8")).get("audio_processor") or {}
        else:
            raise HalluscopeError(f"{path}: no preprocessor_config.json (Granite Speech's front-end sizes)")
        fields = cls.__dataclass_fields__
        return cls(**{k: int(v) for k, v in cfg.items() if k in fields})

    def filters(self) -> Any:
        """The mel filter bank, [n_fft // 2 + 1, n_mels] (torchaudio's melscale_fbanks defaults: HTK, no norm)."""
        import torch
        from transformers.audio_utils import mel_filter_bank

        fb = mel_filter_bank(
            num_frequency_bins=self.n_fft // 2 + 1,
            num_mel_filters=self.n_mels,
            min_frequency=0.0,
            max_frequency=self.sampling_rate / 2,
            sampling_rate=self.sampling_rate,
            norm=None,
            mel_scale="htk",
        )
        return torch.from_numpy(fb)

    def log_mel(self, audio: Any) -> Any:
        """[batch, samples] float waveforms -> [batch, frames // 2, 2 * n_mels] (``_extract_mel_spectrograms``).

        In float64, returned as float32: torchaudio works in float32, whose rounding moves the log-mel of the
        weakest bins by up to about 2e-5 (measured against a float64 reference); float64 keeps the features within
        1e-5 of the definition everywhere."""
        import torch

        x = audio.double()
        window = torch.hann_window(self.win_length, periodic=True, dtype=torch.float64)
        spec = (
            torch.stft(
                x,
                self.n_fft,
                hop_length=self.hop_length,
                win_length=self.win_length,
                window=window,
                center=True,
                pad_mode="reflect",
                normalized=False,
                onesided=True,
                return_complex=True,
            )
            .abs()
            .pow(2)
        )
        logmel = (spec.transpose(-1, -2) @ self.filters()).clamp(min=1e-10).log10()
        top = logmel.amax(dim=(-2, -1), keepdim=True)
        logmel = torch.maximum(logmel, top - 8.0) / 4 + 1
        if logmel.shape[1] % 2 == 1:
            logmel = logmel[:, :-1]
        return logmel.reshape(x.shape[0], -1, 2 * logmel.shape[-1]).float()

    def encoder_frames(self, n_samples: int) -> int:
        """Stacked frames (encoder inputs) of one clip's own samples."""
        return (n_samples // self.hop_length + 1) // 2

    def audio_embed_sizes(self, lengths: Sequence[int]) -> list[int]:
        """Projector outputs (audio tokens) per clip (``_get_num_audio_features``)."""
        queries = self.projector_window_size // self.projector_downsample_rate
        return [math.ceil(self.encoder_frames(n) / self.projector_window_size) * queries for n in lengths]

    def __call__(self, arrays: Sequence[np.ndarray]) -> dict:
        """``input_features``, ``input_features_mask`` and ``audio_embed_sizes`` of clips at ``sampling_rate``."""
        import torch

        lengths = [len(a) for a in arrays]
        batch = torch.zeros((len(arrays), max(lengths)), dtype=torch.float32)
        for row, a in enumerate(arrays):
            batch[row, : len(a)] = torch.from_numpy(np.asarray(a, dtype=np.float32))
        sizes = self.audio_embed_sizes(lengths)
        mask = torch.arange(max(sizes)).view(1, -1) < torch.tensor(sizes).view(-1, 1)
        with torch.no_grad():
            feats = self.log_mel(batch)
        return {"input_features": feats, "input_features_mask": mask, "audio_embed_sizes": sizes}


@register_adapter(*CLASSES)
class GraniteSpeechAdapter(AudioLMAdapter):
    name = "granite-speech"
    string_content = True  # its chat template joins string contents
    default_window_s = 30.0
    languages = "en, fr, de, es, pt (model card, granite-speech-3.3 revision 3.3.2)"

    def load(self) -> GraniteSpeechAdapter:
        tf = _transformers()
        config = tf.AutoConfig.from_pretrained(self.path)
        if (
            getattr(config, "has_lora_adapter", False)
            and (Path(self.path) / "adapter_config.json").is_file()
            and find_spec("peft") is None
        ):
            raise HalluscopeError(
                f"{self.path}: this Granite Speech checkpoint carries an audio LoRA "
                "(adapter_config.json), which transformers loads only with peft. "
                "Fix: pip install peft"
            )
        fe = self.feature_extractor = MelFrontEnd.from_checkpoint(self.path)
        if fe.sampling_rate != SAMPLE_RATE:
            raise HalluscopeError(
                f"{self.path}: the front end expects {fe.sampling_rate} Hz; clips are {SAMPLE_RATE} Hz"
            )
        projector = (fe.projector_window_size, fe.projector_downsample_rate)
        mels = config.encoder_config.input_dim
        if projector != (config.window_size, config.downsample_rate) or 2 * fe.n_mels != mels:
            raise HalluscopeError(
                f"{self.path}: preprocessor_config.json (projector window "
                f"{fe.projector_window_size}/{fe.projector_downsample_rate}, {fe.n_mels} mels) "
                f"disagrees with config.json ({config.window_size}/{config.downsample_rate}, "
                f"encoder input {mels} = 2 x mels)"
            )
        self.tokenizer = tf.AutoTokenizer.from_pretrained(self.path)
        self.audio_token_id = int(config.audio_token_id)
        self.audio_token = self.tokenizer.convert_ids_to_tokens(self.audio_token_id)
        self.model = (
            getattr(tf, CLASSES[config.model_type])
            .from_pretrained(self.path, dtype=self.torch_dtype())
            .to(self.device)
            .eval()
        )
        return self

    def _lora(self, on: bool) -> None:
        """The audio LoRA on or off, as the model's own generate sets it (only when peft loaded one)."""
        if not getattr(self.model, "_hf_peft_config_loaded", False):
            return
        if on:
            self.model.enable_adapters()
        else:
            self.model.disable_adapters()

    def inputs_pair(
        self, messages: Sequence[ChatMessage], clips: Sequence[AudioClip]
    ) -> tuple[ModelInputs, ModelInputs]:
        neg = self.inputs(messages, ())
        return self.inputs(messages, clips), neg  # the audio one last: the LoRA stays on for both branches

    def inputs(self, messages: Sequence[ChatMessage], clips: Sequence[AudioClip]) -> ModelInputs:
        audio = [a[: int(self.window_s * SAMPLE_RATE)] for a in self.arrays(clips)]
        text = self.prompt(messages, len(audio))
        extra: dict = {}
        heard = 0.0
        if audio:
            fe = self.feature_extractor
            feats = fe(audio)
            text = self.expand(text, self.audio_token, feats.pop("audio_embed_sizes"))
            heard = sum(fe.encoder_frames(len(a)) for a in audio) * 2 * fe.hop_length / fe.sampling_rate
            extra = feats
        self._lora(bool(audio))
        enc = self.tokenizer([text], return_tensors="pt", add_special_tokens=False)
        tensors = self.on_device({**enc, **extra})
        tokens = int((tensors["input_ids"] == self.audio_token_id).sum())
        return ModelInputs(tensors, heard if tokens else 0.0, tokens)
