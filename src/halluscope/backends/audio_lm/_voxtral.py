"""Voxtral (transformers 'voxtral'): Whisper-style encoder on 30 s chunks + Mistral decoder, text output.

Every clip is padded to whole 30 s chunks (as Voxtral's processor does) and each chunk becomes a fixed number of
audio embeddings (encoder positions x hidden / projector input: 375 for the released models). Window: the model
card's 40 minutes for audio understanding (2400 s); ``audio_window_s`` must be a multiple of 30.

Prompt: with a transformers tokenizer that has a chat template (converted checkpoints) the adapter renders it and
repeats each clip's audio token. The released checkpoints' tekken tokenizer (tekken.json, MistralCommonBackend, the
mistral-common package) renders conversations itself: the clips go in as base64 WAV parts of
VoxtralProcessor.apply_chat_template, which counts the audio tokens and pads to whole chunks without a mask, so
what is heard is the clips' length, checked against the chunks of features and the audio tokens it returned. Tekken
files before v13 refuse a system message beside audio; there its text opens the user turn that carries the clips
(mistral-common's own rule for system prompts in those versions). Both tokenizers are tested on tiny models.
"""

from __future__ import annotations

import base64
import math
from collections.abc import Sequence

import numpy as np

from halluscope.backends.audio_lm._adapters import AudioLMAdapter, ModelInputs, _transformers, register_adapter
from halluscope.backends.speech.audio import SAMPLE_RATE
from halluscope.core.errors import HalluscopeError
from halluscope.core.records import AudioClip, ChatMessage

CHUNK_S = 30.0


@register_adapter("voxtral")
class VoxtralAdapter(AudioLMAdapter):
    name = "voxtral"
    default_window_s = 2400.0
    languages = "en, es, fr, pt, hi, de, nl, it (model card)"

    def load(self) -> VoxtralAdapter:
        tf = _transformers()
        self.check_whole_chunks(CHUNK_S)
        self.tokenizer = tf.AutoTokenizer.from_pretrained(self.path)
        self.feature_extractor = tf.AutoFeatureExtractor.from_pretrained(self.path)
        self.model = (
            tf.VoxtralForConditionalGeneration.from_pretrained(self.path, dtype=self.torch_dtype())
            .to(self.device)
            .eval()
        )
        audio = self.model.config.audio_config
        self.tokens_per_chunk = audio.max_source_positions * audio.hidden_size // audio.intermediate_size
        self.audio_token_id = int(self.model.config.audio_token_id)
        self.audio_token = self.tokenizer.convert_ids_to_tokens(self.audio_token_id)
        self.mistral = type(self.tokenizer).__name__ == "MistralCommonBackend"
        if self.mistral:
            self.processor = tf.VoxtralProcessor(self.feature_extractor, self.tokenizer)
        return self

    def _features(self, audio: list[np.ndarray]):
        """Mel features of each clip padded to whole chunks, stacked chunk by chunk, and the mask of real frames."""
        import torch

        n = int(CHUNK_S * SAMPLE_RATE)
        feats, masks = [], []
        for a in audio:
            out = self.feature_extractor(
                a,
                sampling_rate=SAMPLE_RATE,
                padding="longest",
                pad_to_multiple_of=n,
                truncation=False,
                return_attention_mask=True,
                return_tensors="pt",
            )
            x, m = out["input_features"], out["attention_mask"]
            frames = self.feature_extractor.nb_max_frames  # mel frames per chunk (3000)
            feats.append(x.reshape(x.shape[1], -1, frames).transpose(0, 1))
            masks.append(m.reshape(-1, frames))
        return torch.cat(feats), torch.cat(masks)

    def inputs(self, messages: Sequence[ChatMessage], clips: Sequence[AudioClip]) -> ModelInputs:
        audio = [a[: int(self.window_s * SAMPLE_RATE)] for a in self.arrays(clips)]
        if self.mistral:
            return self._mistral_inputs(messages, audio)
        text = self.prompt(messages, len(audio))
        extra, heard = {}, 0.0
        if audio:
            chunks = [math.ceil(len(a) / (CHUNK_S * SAMPLE_RATE)) for a in audio]
            text = self.expand(text, self.audio_token, [c * self.tokens_per_chunk for c in chunks])
            feats, mask = self._features(audio)
            extra, heard = {"input_features": feats}, self._heard(mask)
        enc = self.tokenizer([text], return_tensors="pt", add_special_tokens=False)
        return self._finish({**enc, **extra}, heard)

    def _mistral_inputs(self, messages: Sequence[ChatMessage], audio: list[np.ndarray]) -> ModelInputs:
        from halluscope.backends.speech.audio import encode_wav

        conv = self._fold_system(self.conversation(messages, len(audio))) if audio else self.conversation(messages, 0)
        parts = iter(base64.b64encode(encode_wav(a, SAMPLE_RATE)).decode() for a in audio)
        for turn in conv:
            turn["content"] = [
                {"type": "audio", "base64": next(parts)} if c["type"] == "audio" else c for c in turn["content"]
            ]
        enc = dict(self.processor.apply_chat_template(conv, tokenize=True, return_dict=True, return_tensors="pt"))
        if not audio:
            return self._finish(enc, 0.0)
        chunks = sum(math.ceil(len(a) / (CHUNK_S * SAMPLE_RATE)) for a in audio)
        feats, tokens = enc.get("input_features"), int((enc["input_ids"] == self.audio_token_id).sum())
        if feats is None or feats.shape[0] != chunks or tokens != chunks * self.tokens_per_chunk:
            raise HalluscopeError(
                f"{self.path}: the tekken tokenizer gave {tokens} audio tokens and "
                f"{0 if feats is None else feats.shape[0]} feature chunks for {len(audio)} clip(s); expected "
                f"{chunks * self.tokens_per_chunk} and {chunks} ({self.tokens_per_chunk} per {CHUNK_S:g} s chunk): "
                "the audio section of tekken.json must match the model's audio encoder"
            )
        return self._finish(enc, sum(len(a) for a in audio) / SAMPLE_RATE)  # the chunks checked above hold it all

    def _fold_system(self, conv: list[dict]) -> list[dict]:
        """System turns' text moved to the front of the user turn with the clips, where tekken refuses both."""
        from mistral_common.tokens.tokenizers.base import TokenizerVersion

        version = self.tokenizer.tokenizer.instruct_tokenizer.tokenizer.version
        system = [c["text"] for t in conv if t["role"] == "system" for c in t["content"]]
        if not system or version >= TokenizerVersion.v13:
            return conv
        conv = [t for t in conv if t["role"] != "system"]
        turn = next(t for t in reversed(conv) if t["role"] == "user")
        first = next(i for i, c in enumerate(turn["content"]) if c["type"] == "text")
        text = "\n\n".join([*system, turn["content"][first]["text"]])
        turn["content"][first] = {"type": "text", "text": text}
        return conv

    def _finish(self, tensors: dict, heard: float) -> ModelInputs:
        tensors = self.on_device(tensors)
        tokens = int((tensors["input_ids"] == self.audio_token_id).sum())
        return ModelInputs(tensors, heard if tokens else 0.0, tokens)
