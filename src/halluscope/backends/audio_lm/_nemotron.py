"""Nemotron-3-Nano-Omni (transformers 'nemotron_h_omni'): Parakeet (FastConformer) sound encoder, RADIO vision tower
and a hybrid Nemotron-H decoder (Mamba-2, attention and mixture-of-experts layers), text output; heard in audio and
text here.

The prompt is assembled from the tokenizer's chat template and ``ParakeetFeatureExtractor`` (torch only), so the
processor and its image and video processors (torchvision) are not needed; the RADIO tower itself is plain torch
and is built as the checkpoint has it. As the processor does, each audio placeholder (the tokenizer's audio token,
``<so_embedding>``) becomes ``<so_start>``, one audio token per embedding, ``<so_end>``; the count is the model's
own (``audio_tower._get_subsampling_output_length`` of the mel frames + 1, as ``get_audio_features`` reads the
mask), and the features' mask goes to the model as ``input_features_mask``. Contents are rendered as strings with
the clips' placeholders leading the last user turn's text (as for Granite Speech): every template renders string
contents; the released template's own audio layout is not checked here.

Window: 30 s by default, halluscope's choice: neither the installed processor nor the feature extractor truncates
(the FastConformer has no fixed window), and the installed sources state no clip length. A larger
``audio_window_s`` sends the clip whole up to that length. What is heard is read from the extractor's mask.
The features are ``input_features`` (normalised log-mel; VCD diffuses them).

Decoding: the cache mixes attention layers with Mamba layers (conv and recurrent state, no key/value); AAD's and
VCD's branches still advance in one batch-of-2 forward (``BranchPair`` stacks the Mamba states) and MTI's temporary
instruction is rolled back by the decoder's own means (past recording for the conv state, the recurrent state
saved and restored: see halluscope.mitigation._decode). DoLa: the decoder's final norm is ``norm_f``;
``dola_exit`` reads premature layers through it and the LM head.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from halluscope.backends.audio_lm._adapters import AudioLMAdapter, ModelInputs, _transformers, register_adapter
from halluscope.backends.speech.audio import SAMPLE_RATE
from halluscope.core.errors import HalluscopeError
from halluscope.core.records import AudioClip, ChatMessage

START, END = "<so_start>", "<so_end>"  # the processor's fixed audio delimiters


@register_adapter("nemotron_h_omni")
class NemotronOmniAdapter(AudioLMAdapter):
    name = "nemotron-3-nano-omni"
    string_content = True  # its chat template joins string contents
    default_window_s = 30.0
    languages = "-"

    def load(self) -> NemotronOmniAdapter:
        tf = _transformers()
        config = tf.AutoConfig.from_pretrained(self.path)
        if config.audio_config is None:
            raise HalluscopeError(
                f"{self.path}: this Nemotron-H Omni checkpoint has no audio_config (no sound "
                "encoder): it cannot hear audio"
            )
        self.tokenizer = tf.AutoTokenizer.from_pretrained(self.path)
        fe = self.feature_extractor = tf.ParakeetFeatureExtractor.from_pretrained(self.path)
        if fe.sampling_rate != SAMPLE_RATE:
            raise HalluscopeError(
                f"{self.path}: the feature extractor expects {fe.sampling_rate} Hz; clips are {SAMPLE_RATE} Hz"
            )
        self.audio_token_id = int(config.audio_token_id)
        self.audio_token = self.tokenizer.convert_ids_to_tokens(self.audio_token_id)
        for t in (START, END):
            if self.tokenizer.convert_tokens_to_ids(t) in (None, self.tokenizer.unk_token_id):
                raise HalluscopeError(f"{self.path}: the tokenizer has no {t} token (the processor's audio delimiter)")
        self.model = (
            tf.NemotronH_Omni_Reasoning_V3.from_pretrained(self.path, dtype=self.torch_dtype()).to(self.device).eval()
        )
        return self

    def audio_tokens_of(self, mask: Any) -> list[int]:
        """Audio embeddings per clip from the feature mask, as ``get_audio_features`` counts them."""
        lengths = self.model.audio_tower._get_subsampling_output_length(mask.sum(-1) + 1)
        return [int(n) for n in lengths.tolist()]

    def inputs(self, messages: Sequence[ChatMessage], clips: Sequence[AudioClip]) -> ModelInputs:
        audio = [a[: int(self.window_s * SAMPLE_RATE)] for a in self.arrays(clips)]
        text = self.prompt(messages, len(audio))
        extra: dict = {}
        heard = 0.0
        if audio:
            feats = self.feature_extractor(
                audio, sampling_rate=SAMPLE_RATE, return_attention_mask=True, return_tensors="pt"
            )
            mask = feats["attention_mask"]
            pieces = text.split(self.audio_token)
            if len(pieces) != len(audio) + 1:
                raise HalluscopeError(
                    f"{self.path}: the chat template rendered {len(pieces) - 1} audio placeholders "
                    f"for {len(audio)} clips"
                )
            blocks = [START + self.audio_token * n + END for n in self.audio_tokens_of(mask)]
            text = pieces[0] + "".join(b + rest for b, rest in zip(blocks, pieces[1:]))
            heard = self._heard(mask)
            extra = {"input_features": feats["input_features"], "input_features_mask": mask}
        enc = self.tokenizer([text], return_tensors="pt", add_special_tokens=False)
        enc = {k: v for k, v in enc.items() if k in ("input_ids", "attention_mask")}
        tensors = self.on_device({**enc, **extra})
        tokens = int((tensors["input_ids"] == self.audio_token_id).sum())
        return ModelInputs(tensors, heard if tokens else 0.0, tokens)

    def dola_exit(self, model: Any) -> Callable[[Sequence[Any]], Any]:
        """DoLa's early exit: last-position logits [len(layers), vocab] through the decoder's ``norm_f`` and the
        LM head (NemotronHModel's final norm, as it reads its last layer)."""
        import torch

        lm = model.language_model
        norm, head = lm.get_decoder().norm_f, lm.get_output_embeddings()
        return lambda states: head(norm(torch.stack([h[0, -1] for h in states]))).float()
