"""Phi-4 multimodal (transformers 'phi4_multimodal'): conformer speech encoder + Phi-4-mini decoder, text output.

The prompt is assembled from the tokenizer's chat template and the feature extractor (so the image processor and
its torchvision dependency are not needed): one audio token per embedding, the count from the extractor's own
``audio_embed_sizes``. Window: 30 s by default (halluscope's choice, as for the Whisper front ends); the encoder
has no fixed window, so a larger ``audio_window_s`` sends the clip whole up to that length. What is heard is
read from the extractor's frame count. The features are ``audio_input_features`` (VCD diffuses them).
"""

from __future__ import annotations

from collections.abc import Sequence

from halluscope.backends.audio_lm._adapters import AudioLMAdapter, ModelInputs, _transformers, register_adapter
from halluscope.backends.speech.audio import SAMPLE_RATE
from halluscope.core.records import AudioClip, ChatMessage


@register_adapter("phi4_multimodal")
class Phi4MultimodalAdapter(AudioLMAdapter):
    name = "phi-4-multimodal"
    default_window_s = 30.0
    languages = "en, zh, de, fr, it, ja, es, pt (model card, audio)"
    features_key = "audio_input_features"

    def load(self) -> Phi4MultimodalAdapter:
        tf = _transformers()
        self.tokenizer = tf.AutoTokenizer.from_pretrained(self.path)
        self.feature_extractor = tf.Phi4MultimodalFeatureExtractor.from_pretrained(self.path)
        self.audio_token = getattr(self.tokenizer, "audio_token", None) or "<|audio|>"
        self.audio_token_id = self.tokenizer.convert_tokens_to_ids(self.audio_token)
        self.model = (
            tf.Phi4MultimodalForCausalLM.from_pretrained(self.path, dtype=self.torch_dtype()).to(self.device).eval()
        )
        return self

    def inputs(self, messages: Sequence[ChatMessage], clips: Sequence[AudioClip]) -> ModelInputs:
        text = self.prompt(messages, len(clips))
        extra: dict = {}
        heard, tokens = 0.0, 0
        if clips:
            fe = self.feature_extractor
            audio = [a[: int(self.window_s * SAMPLE_RATE)] for a in self.arrays(clips)]
            feats = fe(audio, sampling_rate=SAMPLE_RATE, return_tensors="pt")
            sizes = [int(n) for n in feats["audio_embed_sizes"].tolist()]
            text = self.expand(text, self.audio_token, sizes)
            frames = sum((len(a) - fe.win_length) // fe.hop_length + 1 for a in audio)
            heard = frames * fe.hop_length / fe.sampling_rate
            extra = {k: v for k, v in feats.items()}
        enc = self.tokenizer([text], return_tensors="pt", add_special_tokens=False)
        if clips:
            tokens = int((enc["input_ids"] == self.audio_token_id).sum())
        tensors = self.on_device({**enc, **extra})
        return ModelInputs(tensors, heard, tokens)
