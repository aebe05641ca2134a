"""Gemma-3n (transformers 'gemma3n'): USM conformer audio encoder + Gemma-3n decoder (AltUp, per-layer inputs,
KV sharing), text output; heard in audio and text only.

The model is built without its vision tower: stock ``Gemma3nModel`` builds a timm wrapper for it on load, and
timm (with torchvision) is no halluscope dependency, so ``audio_text_classes`` gives subclasses that build every
other part (the vision token embedder included, which is a plain embedding) and leave ``vision_tower`` None;
``from_pretrained`` on a released checkpoint drops the vision weights. The prompt is assembled from the
tokenizer's chat template and ``Gemma3nAudioFeatureExtractor`` (numpy only: no torchaudio, no image processor):
each audio placeholder becomes the processor's block, ``<start_of_audio>``, the soft tokens, ``<end_of_audio>``.
Turns end with ``<end_of_turn>``, which is made the tokenizer's eos where the vocabulary has it.

Window: 30 s, from transformers' Gemma-3n sources: the feature extractor truncates to ``max_length=480_000``
samples (30 s at 16 kHz) by default, and the processor inserts a fixed ``audio_seq_length=188`` soft tokens per
clip, the model padding each clip's encoder output to ``config.audio_soft_tokens_per_image`` (188; "expects all
audio will be 30s in length"): 30 s is 2997 mel frames, 4x subsampled by the convolutions and 4x by the
conformer, 188 tokens (Google's Gemma audio guide: 6.25 tokens per second, clips up to 30 s). The conformer's
attention is local (chunks of 12, 13 left), so it has no position limit: a larger ``audio_window_s`` raises the
soft-token count to what that window's clip yields and the whole clip reaches the encoder; that is how the test
measures it, not a quality claim. What is heard is read from the extractor's ``input_features_mask``. The
features are ``input_features`` (log-mel; VCD diffuses them).

DoLa: the decoder's hidden states are AltUp stacks ``[streams, batch, seq, hidden]``; ``dola_exit`` reads a
premature layer as the model reads its last one (AltUp unembedding, final norm, LM head, logit soft-capping).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from halluscope.backends.audio_lm._adapters import AudioLMAdapter, ModelInputs, _transformers, register_adapter
from halluscope.backends.speech.audio import SAMPLE_RATE
from halluscope.core.errors import HalluscopeError
from halluscope.core.records import AudioClip, ChatMessage

_CLASSES: dict[str, type] = {}


def audio_text_classes() -> tuple[type, type]:
    """(base model, conditional-generation model) classes of Gemma-3n without the vision tower (built once)."""
    if _CLASSES:
        return _CLASSES["model"], _CLASSES["lm"]
    _transformers()
    from torch import nn
    from transformers.models.auto import AutoModel
    from transformers.models.gemma3n import modeling_gemma3n as g

    class Gemma3nAudioTextModel(g.Gemma3nModel):
        """Gemma3nModel with every part but the (timm) vision tower; images are refused."""

        input_modalities = ("text", "audio")
        _keys_to_ignore_on_load_unexpected = [r"vision_tower\."]

        def __init__(self, config: Any) -> None:
            g.Gemma3nPreTrainedModel.__init__(self, config)
            self.vision_tower = None
            self.vocab_size = config.text_config.vocab_size
            self.language_model = AutoModel.from_config(config.text_config)
            self.vocab_size_per_layer_input = config.text_config.vocab_size_per_layer_input
            self.audio_tower = AutoModel.from_config(config.audio_config)
            self.embed_vision = g.Gemma3nMultimodalEmbedder(config.vision_config, config.text_config)
            self.embed_audio = g.Gemma3nMultimodalEmbedder(config.audio_config, config.text_config)
            self.post_init()

        def get_image_features(self, *args: Any, **kwargs: Any) -> Any:
            raise HalluscopeError("gemma-3n is loaded for audio and text only: its vision tower is not built")

    class Gemma3nAudioTextForConditionalGeneration(g.Gemma3nForConditionalGeneration):
        input_modalities = ("text", "audio")
        _keys_to_ignore_on_load_unexpected = [r"vision_tower\."]

        def __init__(self, config: Any) -> None:
            g.Gemma3nPreTrainedModel.__init__(self, config)
            self.model = Gemma3nAudioTextModel(config)
            self.lm_head = nn.Linear(config.text_config.hidden_size, config.text_config.vocab_size, bias=False)
            self.post_init()

    _CLASSES.update(model=Gemma3nAudioTextModel, lm=Gemma3nAudioTextForConditionalGeneration)
    return Gemma3nAudioTextModel, Gemma3nAudioTextForConditionalGeneration


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


@register_adapter("gemma3n")
class Gemma3nAdapter(AudioLMAdapter):
    name = "gemma-3n"
    default_window_s = 30.0
    languages = "over 100 spoken languages, not listed (Gemma docs, audio)"

    def load(self) -> Gemma3nAdapter:
        tf = _transformers()
        tok = self.tokenizer = tf.AutoTokenizer.from_pretrained(self.path)
        self.feature_extractor = tf.Gemma3nAudioFeatureExtractor.from_pretrained(self.path)
        self.audio_token = getattr(tok, "audio_token", None) or "<audio_soft_token>"
        self.boa_token = getattr(tok, "boa_token", None) or "<start_of_audio>"
        self.eoa_token = getattr(tok, "eoa_token", None) or "<end_of_audio>"
        self.audio_token_id = tok.convert_tokens_to_ids(self.audio_token)
        if "<end_of_turn>" in tok.get_vocab() and tok.eos_token != "<end_of_turn>":
            tok.eos_token = "<end_of_turn>"
        model = audio_text_classes()[1].from_pretrained(self.path, dtype=self.torch_dtype())
        self.model = model.to(self.device).eval()
        cfg = self.model.config
        if self.audio_token_id != cfg.audio_token_id:
            raise HalluscopeError(
                f"{self.path}: the tokenizer's {self.audio_token} is id {self.audio_token_id}, "
                f"the model's audio_token_id is {cfg.audio_token_id}"
            )
        # one clip's soft tokens: the model's fixed count, more only where the window yields more
        self.soft_tokens = max(int(cfg.audio_soft_tokens_per_image), self.encoder_tokens(self.window_s))
        cfg.audio_soft_tokens_per_image = self.soft_tokens
        return self

    def encoder_tokens(self, seconds: float) -> int:
        """Audio embeddings the encoder emits for a clip of ``seconds``: the extractor's frames, then the two
        stride-s convolutions (time padded by kernel - 1: ceil(T / s) each) and the conformer's reduction."""
        import numpy as np

        frames = int(
            self.feature_extractor(
                np.zeros(int(seconds * SAMPLE_RATE), dtype=np.float32), max_length=None, truncation=False
            )["input_features"][0].shape[0]
        )
        ac = self.model.config.audio_config
        for stride_t, _ in ac.sscp_conv_stride_size:
            frames = _ceil_div(frames, int(stride_t))
        return _ceil_div(frames, int(ac.conf_reduction_factor))

    def audio_block(self) -> str:
        """What the processor puts in place of one audio placeholder."""
        return f"\n\n{self.boa_token}{self.audio_token * self.soft_tokens}{self.eoa_token}\n\n"

    def inputs(self, messages: Sequence[ChatMessage], clips: Sequence[AudioClip]) -> ModelInputs:
        text = self.prompt(messages, len(clips))
        extra: dict = {}
        heard, tokens = 0.0, 0
        if clips:
            n = int(self.window_s * SAMPLE_RATE)
            audio = [a[:n] for a in self.arrays(clips)]
            feats = self.feature_extractor(audio, max_length=n, truncation=True, return_tensors="pt")
            pieces = text.split(self.audio_token)
            if len(pieces) != len(clips) + 1:
                raise HalluscopeError(
                    f"{self.path}: the chat template rendered {len(pieces) - 1} audio placeholders "
                    f"for {len(clips)} clips"
                )
            text = self.audio_block().join(pieces)
            mask = feats["input_features_mask"]
            heard = self._heard(mask)
            extra = {"input_features": feats["input_features"], "input_features_mask": mask}
        enc = self.tokenizer([text], return_tensors="pt", add_special_tokens=False)
        enc = {k: v for k, v in enc.items() if k in ("input_ids", "attention_mask")}
        if clips:
            tokens = int((enc["input_ids"] == self.audio_token_id).sum())
        tensors = self.on_device({**enc, **extra})
        return ModelInputs(tensors, heard, tokens)

    def dola_exit(self, model: Any) -> Callable[[Sequence[Any]], Any]:
        """DoLa's early exit: last-position logits [len(layers), vocab] from AltUp hidden states, each
        [streams, 1, seq, hidden], read as Gemma3nTextModel and the LM head read the last layer."""
        import torch

        text = model.get_decoder()
        head = model.get_output_embeddings()
        cap = model.config.get_text_config().final_logit_softcapping

        def exit_(states: Sequence[Any]) -> Any:
            h = torch.stack([s[:, 0, -1] for s in states], dim=1)  # [streams, layers, hidden]
            first = h[0]
            target = torch.mean(first**2, dim=-1, keepdim=True) ** 0.5
            streams = [first]
            for i, proj in enumerate(text.altup_unembed_projections, start=1):
                x = proj(h[i]).to(first.dtype)
                x = x * target / torch.sqrt(torch.mean(x**2, dim=-1, keepdim=True).clamp(min=1e-5))
                streams.append(x)
            z = head(text.norm(torch.stack(streams).mean(dim=0)))
            return z if cap is None else torch.tanh(z / cap) * cap

        return exit_
