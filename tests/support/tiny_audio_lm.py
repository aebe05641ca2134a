"""Tiny random-weight Qwen2-Audio and Qwen2.5-Omni thinker, built locally (no downloads), and espeak clips."""

from __future__ import annotations

from pathlib import Path

import numpy as np

WORDS = [
    "yes",
    "no",
    "{",
    "}",
    '"',
    ":",
    "binary",
    "type",
    "degree",
    "none",
    "mild",
    "moderate",
    "severe",
    "hello",
    "the",
    "audio",
    "text",
]
TEMPLATE = (
    "{% for m in messages %}<|im_start|> {{ m['role'] }} {% if m['content'] is string %}{{ m['content'] }}"
    "{% else %}{% for c in m['content'] %}{% if c['type'] == 'audio' %}<|audio_bos|><|AUDIO|><|audio_eos|> "
    "{% else %}{{ c['text'] }} {% endif %}{% endfor %}{% endif %} <|im_end|> {% endfor %}"
    "{% if add_generation_prompt %}<|im_start|> assistant {% endif %}"
)
AUDIO = dict(
    d_model=16,
    encoder_layers=1,
    encoder_attention_heads=2,
    encoder_ffn_dim=32,
    num_mel_bins=80,
    max_source_positions=1500,
)
TEXT = dict(
    hidden_size=32,
    intermediate_size=64,
    num_hidden_layers=2,
    num_attention_heads=4,
    num_key_value_heads=2,
    max_position_embeddings=8192,
)


def _tokenizer(specials: list[str], **kwargs):
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    vocab = {w: i for i, w in enumerate([*specials, *WORDS])}
    tok = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok, pad_token="<pad>", unk_token="<unk>", eos_token="<|im_end|>", **kwargs
    )
    return fast, vocab


def _omni_tokenizer(path: Path) -> dict[str, int]:
    """The Qwen Omni thinkers' tokenizer (audio and vision specials, the chat template), saved to ``path``: its vocab."""
    specials = [
        "<pad>",
        "<unk>",
        "<|im_start|>",
        "<|im_end|>",
        "<|AUDIO|>",
        "<|audio_bos|>",
        "<|audio_eos|>",
        "<|IMAGE|>",
        "<|VIDEO|>",
        "<|vision_bos|>",
        "<|vision_eos|>",
    ]
    extra = {
        "audio_token": "<|AUDIO|>",
        "audio_bos_token": "<|audio_bos|>",
        "audio_eos_token": "<|audio_eos|>",
        "image_token": "<|IMAGE|>",
        "video_token": "<|VIDEO|>",
        "vision_bos_token": "<|vision_bos|>",
        "vision_eos_token": "<|vision_eos|>",
    }
    fast, vocab = _tokenizer(specials, extra_special_tokens=extra)
    fast.chat_template = TEMPLATE
    fast.save_pretrained(path)
    return vocab


def build_qwen2_audio(path: Path, *, text: dict | None = None, vocab_size: int | None = None) -> Path:
    """A random Qwen2-Audio: the tiny decoder (TEXT), or ``text`` config values with ``vocab_size`` LM-head rows
    (the benchmark's real-size shape; rows past the tokenizer's words are never produced by it)."""
    import torch
    from transformers import (
        Qwen2AudioConfig,
        Qwen2AudioForConditionalGeneration,
        Qwen2AudioProcessor,
        WhisperFeatureExtractor,
    )

    specials = ["<pad>", "<unk>", "<|im_start|>", "<|im_end|>", "<|AUDIO|>", "<|audio_bos|>", "<|audio_eos|>"]
    fast, vocab = _tokenizer(specials, additional_special_tokens=specials[2:])
    Qwen2AudioProcessor(
        feature_extractor=WhisperFeatureExtractor(), tokenizer=fast, chat_template=TEMPLATE
    ).save_pretrained(path)
    cfg = Qwen2AudioConfig(
        audio_config=AUDIO,
        text_config=dict(model_type="qwen2", vocab_size=vocab_size or len(vocab), **(text or TEXT)),
        audio_token_index=vocab["<|AUDIO|>"],
    )
    torch.manual_seed(0)
    Qwen2AudioForConditionalGeneration(cfg).save_pretrained(path)
    return path


def build_qwen25_omni_thinker(path: Path) -> Path:
    import torch
    from transformers import (
        Qwen2_5OmniThinkerConfig,
        Qwen2_5OmniThinkerForConditionalGeneration,
        WhisperFeatureExtractor,
    )

    vocab = _omni_tokenizer(path)
    WhisperFeatureExtractor().save_pretrained(path)
    cfg = Qwen2_5OmniThinkerConfig(
        audio_config={**AUDIO, "output_dim": 32, "n_window": 100},
        vision_config=dict(
            depth=1, hidden_size=16, intermediate_size=32, num_heads=2, out_hidden_size=32, fullatt_block_indexes=[0]
        ),
        text_config=dict(vocab_size=len(vocab), **TEXT, rope_scaling={"type": "default", "mrope_section": [2, 1, 1]}),
        audio_token_index=vocab["<|AUDIO|>"],
        image_token_index=vocab["<|IMAGE|>"],
        video_token_index=vocab["<|VIDEO|>"],
        audio_start_token_id=vocab["<|audio_bos|>"],
        audio_end_token_id=vocab["<|audio_eos|>"],
        vision_start_token_id=vocab["<|vision_bos|>"],
        vision_end_token_id=vocab["<|vision_eos|>"],
        pad_token_id=0,
    )
    torch.manual_seed(0)
    Qwen2_5OmniThinkerForConditionalGeneration(cfg).save_pretrained(path)
    return path


def espeak(text: str, voice: str = "en-us") -> np.ndarray:
    """A real espeak-ng clip at 16 kHz."""
    from halluscope.backends.speech.tts import EspeakTts

    return EspeakTts().synthesize(text, language="en", voice=voice)


def espeak_of_length(
    seconds: float, text: str = "The national bank raised the base rate because of inflation."
) -> np.ndarray:
    """Real speech repeated to exactly ``seconds``."""
    one = espeak(text)
    n = int(seconds * 16_000)
    return np.tile(one, n // len(one) + 1)[:n]


# -- fixtures (imported by the test modules; no conftest.py, so no 'conftest' module shadows another) ----------
import pytest


@pytest.fixture(scope="module")
def qwen2_audio_dir(tmp_path_factory):
    return build_qwen2_audio(tmp_path_factory.mktemp("qwen2-audio"))


@pytest.fixture(scope="module")
def omni_dir(tmp_path_factory):
    return build_qwen25_omni_thinker(tmp_path_factory.mktemp("qwen25-omni-thinker"))


@pytest.fixture(scope="module")
def clip45():
    return espeak_of_length(45.0)
