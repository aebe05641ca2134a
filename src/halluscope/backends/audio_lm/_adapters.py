"""Local audio-language models in transformers, one adapter per architecture, with model and processor exposed.

An adapter turns chat messages plus clips into model inputs, reports how much audio the front end kept (from
the feature mask, not from documentation), generates, and offers the pieces contrastive decoding needs:
inputs with and without audio, and a single forward step that returns logits, hidden states and the cache.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from halluscope.backends.speech.audio import SAMPLE_RATE, read_audio
from halluscope.core.errors import HalluscopeError, MissingExtraError
from halluscope.core.hashing import TORCH_SEED_MAX, seed_from
from halluscope.core.records import AudioClip, ChatMessage
from halluscope.core.registry import Registry

# adapter classes by transformers ``config.model_type``; plug-ins join through the group 'halluscope.audio_adapters'
ADAPTERS: Registry[type[AudioLMAdapter]] = Registry("audio adapter", "halluscope.audio_adapters")


def register_adapter(*model_types: str) -> Callable[[type[AudioLMAdapter]], type[AudioLMAdapter]]:
    """Map transformers ``config.model_type`` values to an adapter class."""

    def deco(cls: type[AudioLMAdapter]) -> type[AudioLMAdapter]:
        for t in model_types:
            ADAPTERS.register(t, cls)
        return cls

    return deco


@dataclass
class ModelInputs:
    """Tensors for the model plus what the front end kept of the audio."""

    tensors: Any
    heard_s: float = 0.0
    audio_tokens: int = 0

    @property
    def delivered(self) -> bool:
        return self.heard_s > 0 and self.audio_tokens > 0


class AudioLMAdapter:
    """Base adapter: ``model``, ``tokenizer`` and ``feature_extractor`` stay public for later decoding methods."""

    name = "base"
    default_window_s: float = 30.0
    features_key = "input_features"  # the audio feature tensor of the model's inputs (VCD diffuses it)
    languages = "-"  # speech languages its model card or a seed documents (Table 8)
    string_content = False  # True: the chat template takes string contents, not lists of parts (see prompt)
    audio_token = ""  # the audio placeholder of string-content prompts

    def __init__(
        self,
        path: str,
        *,
        device: str = "cpu",
        dtype: str = "auto",
        window_s: float | None = None,
        chat_template: str | None = None,
    ) -> None:
        self.path, self.device = path, device
        self.window_s = float(window_s or self.default_window_s)
        self._chat_template = chat_template
        self.model: Any = None
        self.tokenizer: Any = None
        self.feature_extractor: Any = None
        self.processor: Any = None
        self._dtype = dtype

    # -- loading --------------------------------------------------------------------------------
    def torch_dtype(self) -> Any:
        import torch

        if self._dtype == "auto":
            return torch.bfloat16 if self.device.startswith("cuda") else torch.float32
        return getattr(torch, self._dtype)

    def load(self) -> AudioLMAdapter:
        raise NotImplementedError

    def check_whole_chunks(self, chunk_s: float) -> None:
        """For encoders that hear whole fixed chunks: refuse a window that is not a multiple of ``chunk_s``."""
        if self.window_s < chunk_s or self.window_s % chunk_s:
            raise HalluscopeError(
                f"{self.path}: {self.name} hears whole {chunk_s:g} s chunks; audio_window_s="
                f"{self.window_s:g} is not a multiple of {chunk_s:g}. Fix: give e.g. {chunk_s:g} "
                f"or {self.default_window_s:g}"
            )

    def template(self) -> str:
        """The chat template: configured, else the tokenizer's or processor's, else a chat_template file."""
        if self._chat_template:
            return self._chat_template
        for owner in (self.processor, self.tokenizer):
            if owner is not None and getattr(owner, "chat_template", None):
                return owner.chat_template
        for name in ("chat_template.jinja", "chat_template.json"):
            f = Path(self.path) / name
            if f.is_file():
                text = f.read_text(encoding="utf-8")
                return json.loads(text)["chat_template"] if name.endswith(".json") else text
        raise HalluscopeError(
            f"{self.path} has no chat template; set chat_template in the "
            f'[models."hf-audio/{self.path}"] section of the LLM config'
        )

    # -- inputs ---------------------------------------------------------------------------------
    @staticmethod
    def conversation(messages: Sequence[ChatMessage], n_clips: int) -> list[dict]:
        """Chat messages in the processors' list-of-parts form; clips go first in the last user turn."""
        conv: list[dict] = [{"role": m.role, "content": [{"type": "text", "text": m.content}]} for m in messages]
        if n_clips:
            last = max(i for i, m in enumerate(conv) if m["role"] == "user")
            conv[last]["content"] = [{"type": "audio"} for _ in range(n_clips)] + conv[last]["content"]
        return conv

    def prompt(self, messages: Sequence[ChatMessage], n_clips: int) -> str:
        if self.string_content:  # the template joins strings: one audio token per clip leads the last user turn
            conv = [{"role": m.role, "content": m.content} for m in messages]
            if n_clips:
                last = max(i for i, m in enumerate(conv) if m["role"] == "user")
                conv[last]["content"] = self.audio_token * n_clips + conv[last]["content"]
            return self.tokenizer.apply_chat_template(
                conv, chat_template=self.template(), add_generation_prompt=True, tokenize=False
            )
        owner = self.processor if self.processor is not None else self.tokenizer
        return owner.apply_chat_template(
            self.conversation(messages, n_clips),
            chat_template=self.template(),
            add_generation_prompt=True,
            tokenize=False,
        )

    @staticmethod
    def arrays(clips: Sequence[AudioClip]) -> list:
        out = []
        for c in clips:
            out.append(
                read_audio(
                    c.wav, name=f"clip {c.sha256[:12]}", rate=SAMPLE_RATE, fix="re-run the TTS stage to regenerate it"
                )[0]
            )
        return out

    def inputs(self, messages: Sequence[ChatMessage], clips: Sequence[AudioClip]) -> ModelInputs:
        raise NotImplementedError

    def expand(self, text: str, token: str, counts: Sequence[int]) -> str:
        """The rendered prompt with its i-th audio placeholder repeated counts[i] times (one per audio embedding)."""
        pieces = text.split(token)
        if len(pieces) != len(counts) + 1:
            raise HalluscopeError(
                f"{self.path}: the chat template rendered {len(pieces) - 1} audio placeholders for {len(counts)} clips"
            )
        return pieces[0] + "".join(token * int(n) + rest for n, rest in zip(counts, pieces[1:]))

    def on_device(self, tensors: dict) -> dict:
        """Model inputs on the adapter's device, the audio features (``features_key``) in the model's dtype."""
        out = {k: v.to(self.device) for k, v in tensors.items()}
        if self.features_key in out:
            out[self.features_key] = out[self.features_key].to(self.model.dtype)
        return out

    def inputs_pair(
        self, messages: Sequence[ChatMessage], clips: Sequence[AudioClip]
    ) -> tuple[ModelInputs, ModelInputs]:
        """The same prompt with and without its audio (the contrast of audio-aware contrastive decoding)."""
        return self.inputs(messages, clips), self.inputs(messages, ())

    def _heard(self, mask: Any) -> float:
        hop = int(getattr(self.feature_extractor, "hop_length", 160))
        rate = int(getattr(self.feature_extractor, "sampling_rate", SAMPLE_RATE))
        return float(mask.sum()) * hop / rate

    # -- model ----------------------------------------------------------------------------------
    def forward(self, inputs: ModelInputs, past_key_values: Any = None, **kwargs: Any) -> Any:
        """One forward pass: ``.logits``, ``.hidden_states`` (all layers) and ``.past_key_values`` for the next step."""
        import torch

        if past_key_values is not None:
            kwargs["past_key_values"] = past_key_values
        with torch.inference_mode():
            return self.model(**inputs.tensors, use_cache=True, output_hidden_states=True, return_dict=True, **kwargs)

    def generate(self, inputs: ModelInputs, params: dict) -> dict:
        """Decode (greedy at temperature 0); returns the text, finish reason and token counts."""
        import torch

        tok = self.tokenizer
        eos = tok.eos_token_id
        kwargs: dict[str, Any] = {
            "max_new_tokens": int(params["max_new_tokens"]),
            "eos_token_id": eos,
            "pad_token_id": tok.pad_token_id if tok.pad_token_id is not None else eos,
        }
        if float(params.get("temperature", 0)) > 0:
            torch.manual_seed(seed_from(json.dumps(params, sort_keys=True)) % TORCH_SEED_MAX)
            kwargs.update(
                do_sample=True, temperature=float(params["temperature"]), top_p=float(params.get("top_p", 1.0))
            )
            if params.get("top_k"):  # the model card's top-k (seed 001, Table 5)
                kwargs["top_k"] = int(params["top_k"])
        else:
            kwargs.update(do_sample=False, temperature=None, top_p=None, top_k=None)
        if params.get("repetition_penalty") not in (None, 1, 1.0):
            kwargs["repetition_penalty"] = float(params["repetition_penalty"])
        enc = inputs.tensors
        with torch.inference_mode():
            out = self.model.generate(**enc, **kwargs)
        n_prompt = enc["input_ids"].shape[1]
        ids = out[0, n_prompt:].tolist()
        finish = "length"
        if eos is not None and eos in ids:
            ids, finish = ids[: ids.index(eos)], "stop"
        return {
            "text": tok.decode(ids, skip_special_tokens=True),
            "finish_reason": finish,
            "prompt_tokens": int(enc["attention_mask"][0].sum()),
            "completion_tokens": len(ids) + (finish == "stop"),
        }


def _transformers() -> Any:
    try:
        import torch  # noqa: F401
        import transformers
    except ImportError as exc:
        raise MissingExtraError("transformers", "hf") from exc
    return transformers


@register_adapter("qwen2_audio")
class Qwen2AudioAdapter(AudioLMAdapter):
    """Qwen2-Audio: Whisper-large-v3 front end, 1500 encoder positions = 30 s per clip; the processor truncates beyond."""

    name = "qwen2-audio"
    default_window_s = 30.0

    def load(self) -> Qwen2AudioAdapter:
        tf = _transformers()
        self.processor = tf.AutoProcessor.from_pretrained(self.path)
        self.tokenizer, self.feature_extractor = self.processor.tokenizer, self.processor.feature_extractor
        if self.window_s > self.feature_extractor.chunk_length:
            raise HalluscopeError(
                f"{self.path}: Qwen2-Audio's encoder has {self.feature_extractor.nb_max_frames // 2} "
                f"positions ({self.feature_extractor.chunk_length} s); audio_window_s={self.window_s:g} "
                "cannot be heard: use policy 'chunk' instead"
            )
        self.model = (
            tf.Qwen2AudioForConditionalGeneration.from_pretrained(self.path, dtype=self.torch_dtype())
            .to(self.device)
            .eval()
        )
        return self

    def inputs(self, messages: Sequence[ChatMessage], clips: Sequence[AudioClip]) -> ModelInputs:
        text = self.prompt(messages, len(clips))
        if clips:
            enc = self.processor(text=text, audio=self.arrays(clips), sampling_rate=SAMPLE_RATE, return_tensors="pt")
            heard = self._heard(enc["feature_attention_mask"])
            tokens = int((enc["input_ids"] == self.processor.audio_token_id).sum())
        else:
            enc = self.processor(text=text, return_tensors="pt")
            heard, tokens = 0.0, 0
        enc = enc.to(self.device)
        if "input_features" in enc:
            enc["input_features"] = enc["input_features"].to(self.model.dtype)
        return ModelInputs(enc, heard, tokens)


@register_adapter("qwen2_5_omni_thinker", "qwen2_5_omni")
class Qwen25OmniThinkerAdapter(AudioLMAdapter):
    """Qwen2.5-Omni thinker (text output only).

    Window: 30 s by default, because the stock transformers processor pads and truncates every clip to the
    Whisper feature extractor's 30 s. The audio encoder itself is block-wise (n_window), so a larger
    ``audio_window_s`` turns truncation off and the whole clip reaches it; that is how the test measures it,
    not a quality claim. The prompt is assembled here (tokenizer + feature extractor, the processor's own
    audio-token count) so no image/video processor (torchvision) is needed.
    """

    name = "qwen2.5-omni-thinker"
    default_window_s = 30.0
    full_type, full_class, thinker_class = (
        "qwen2_5_omni",
        "Qwen2_5OmniForConditionalGeneration",
        "Qwen2_5OmniThinkerForConditionalGeneration",
    )

    def load(self) -> Qwen25OmniThinkerAdapter:
        tf = _transformers()
        self.tokenizer = tf.AutoTokenizer.from_pretrained(self.path)
        self.feature_extractor = tf.AutoFeatureExtractor.from_pretrained(self.path)
        self.audio_token = getattr(self.tokenizer, "audio_token", None) or "<|AUDIO|>"
        self.audio_token_id = self.tokenizer.convert_tokens_to_ids(self.audio_token)
        model_type = tf.AutoConfig.from_pretrained(self.path).model_type
        if model_type == self.full_type:  # the full checkpoint: keep the thinker, drop the talker
            model = getattr(tf, self.full_class).from_pretrained(self.path, dtype=self.torch_dtype()).thinker
        else:
            model = getattr(tf, self.thinker_class).from_pretrained(self.path, dtype=self.torch_dtype())
        self.model = model.to(self.device).eval()
        return self

    def audio_tokens_of(self, feature_lengths: Any) -> list[int]:
        """Audio tokens the encoder emits per clip, from its mel-frame counts (the processor's own formula)."""
        from transformers.models.qwen2_5_omni.processing_qwen2_5_omni import _get_feat_extract_output_lengths

        return [int(n) for n in _get_feat_extract_output_lengths(feature_lengths).tolist()]

    def inputs(self, messages: Sequence[ChatMessage], clips: Sequence[AudioClip]) -> ModelInputs:
        import torch

        text = self.prompt(messages, len(clips))
        extra: dict[str, Any] = {}
        heard, tokens = 0.0, 0
        if clips:
            fe = self.feature_extractor
            truncate = self.window_s <= fe.chunk_length
            feats = fe(
                self.arrays(clips),
                sampling_rate=SAMPLE_RATE,
                return_attention_mask=True,
                padding="max_length",
                truncation=truncate,
                max_length=None if truncate else int(self.window_s * SAMPLE_RATE),
                return_tensors="pt",
            )
            mask = feats.pop("attention_mask")
            counts = self.audio_tokens_of(mask.sum(-1))
            text = self.expand(text, self.audio_token, counts)
            extra = {"input_features": feats["input_features"], "feature_attention_mask": mask}
            heard = self._heard(mask)
        enc = self.tokenizer([text], return_tensors="pt", add_special_tokens=False)
        if clips:
            tokens = int((enc["input_ids"] == self.audio_token_id).sum())
        tensors = {**enc, **extra}
        tensors = self.on_device(tensors)
        assert isinstance(tensors["input_ids"], torch.Tensor)
        return ModelInputs(tensors, heard, tokens)


def load_adapter(
    path: str,
    *,
    device: str = "cpu",
    dtype: str = "auto",
    window_s: float | None = None,
    chat_template: str | None = None,
) -> AudioLMAdapter:
    """The adapter for the model in ``path``, chosen by its config's model_type, loaded."""
    tf = _transformers()
    if not path or not Path(path).is_dir():
        raise HalluscopeError(f"'hf-audio/{path}': expected a directory holding a transformers audio-language model")
    model_type = tf.AutoConfig.from_pretrained(path).model_type
    if model_type not in ADAPTERS:
        raise HalluscopeError(
            f"{path}: no audio adapter for model type '{model_type}'; supported: "
            f"{', '.join(ADAPTERS.providers)} (add one with register_adapter or the entry-point "
            f"group '{ADAPTERS.group}')"
        )
    return ADAPTERS[model_type](path, device=device, dtype=dtype, window_s=window_s, chat_template=chat_template).load()
