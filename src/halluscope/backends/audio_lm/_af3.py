"""Audio Flamingo 3 (transformers 'audioflamingo3'): AF-Whisper encoder + Qwen2.5 decoder (seed 001, B.1).

Window: the processor cuts a clip into 30 s Whisper windows and keeps at most ``max_audio_len`` seconds (the
model card's 10 minutes); the adapter sets ``max_audio_len`` to the declared window, so what it reports as heard
is what the encoder gets (from the feature mask). The processor pairs one audio with one prompt, so several clips
of one request (the 'chunk' policy) are joined in order into one audio.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from halluscope.backends.audio_lm._adapters import (
    AudioLMAdapter,
    ModelInputs,
    _transformers,
    register_adapter,
)
from halluscope.backends.speech.audio import SAMPLE_RATE
from halluscope.core.records import AudioClip, ChatMessage


@register_adapter("audioflamingo3")
class AudioFlamingo3Adapter(AudioLMAdapter):
    name = "audio-flamingo-3"
    default_window_s = 600.0
    model_class = "AudioFlamingo3ForConditionalGeneration"

    def load(self) -> AudioFlamingo3Adapter:
        tf = _transformers()
        self.processor = tf.AutoProcessor.from_pretrained(self.path)
        self.tokenizer, self.feature_extractor = self.processor.tokenizer, self.processor.feature_extractor
        self.check_whole_chunks(float(self.feature_extractor.chunk_length))
        self.processor.max_audio_len = self.window_s
        self.model = (
            getattr(tf, self.model_class).from_pretrained(self.path, dtype=self.torch_dtype()).to(self.device).eval()
        )
        return self

    def inputs(self, messages: Sequence[ChatMessage], clips: Sequence[AudioClip]) -> ModelInputs:
        text = self.prompt(messages, 1 if clips else 0)
        if clips:
            audio = np.concatenate(self.arrays(clips))[: int(self.window_s * SAMPLE_RATE)]
            enc = self.processor(text=[text], audio=[audio], sampling_rate=SAMPLE_RATE, return_tensors="pt")
            heard = self._heard(enc["input_features_mask"])
            tokens = int((enc["input_ids"] == self.processor.audio_token_id).sum())
        else:
            enc = self.processor(text=[text], return_tensors="pt")
            heard, tokens = 0.0, 0
        enc = enc.to(self.device)
        if "input_features" in enc:
            enc["input_features"] = enc["input_features"].to(self.model.dtype)
        return ModelInputs(enc, heard, tokens)


@register_adapter("musicflamingo")
class MusicFlamingoAdapter(AudioFlamingo3Adapter):
    """Music Flamingo (transformers 'musicflamingo'): Audio Flamingo 3's encoder and processor with time-aware rotary
    positions; the processor's default ``max_audio_len`` is 20 minutes, the declared window here."""

    name = "music-flamingo"
    default_window_s = 1200.0
    model_class = "MusicFlamingoForConditionalGeneration"
