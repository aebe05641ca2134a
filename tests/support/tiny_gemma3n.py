"""A tiny random-weight Gemma-3n (transformers 'gemma3n'), built locally (no downloads), without its vision tower.

The vocabulary keeps the released layout: text ids first (the per-layer embeddings cover only those), then the
vision block starting at <end_of_image>, then the audio block starting at <end_of_audio> (the vocab_offsets of the
multimodal embedders); the decoder keeps AltUp, per-layer inputs, LAuReL, sliding and full attention and KV sharing,
with a sliding window shorter than an audio prompt so that the sliding caches do slide."""

from __future__ import annotations

import json
from pathlib import Path

from support.tiny_audio_lm import WORDS

TEMPLATE = (
    "{{ bos_token }}{% for m in messages %}<start_of_turn> "
    "{{ 'model' if m['role'] == 'assistant' else m['role'] }} {% if m['content'] is string %}"
    "{{ m['content'] }} {% else %}{% for c in m['content'] %}{% if c['type'] == 'audio' %}<audio_soft_token> "
    "{% else %}{{ c['text'] }} {% endif %}{% endfor %}{% endif %}<end_of_turn> {% endfor %}"
    "{% if add_generation_prompt %}<start_of_turn> model {% endif %}"
)
SPECIALS = [
    "<pad>",
    "<eos>",
    "<bos>",
    "<unk>",
    "<start_of_turn>",
    "<end_of_turn>",
    "<start_of_image>",
    "<start_of_audio>",
]
VISION = ["<end_of_image>", "<image_soft_token>", "<vision_2>", "<vision_3>"]  # vision_config.vocab_offset onwards
AUDIO = ["<end_of_audio>", "<audio_soft_token>", "<audio_2>", "<audio_3>"]  # audio_config.vocab_offset onwards
NAMED = {
    "image_token": "<image_soft_token>",
    "boi_token": "<start_of_image>",
    "eoi_token": "<end_of_image>",
    "audio_token": "<audio_soft_token>",
    "boa_token": "<start_of_audio>",
    "eoa_token": "<end_of_audio>",
}


def _tokenizer(path: Path) -> dict[str, int]:
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    vocab = {w: i for i, w in enumerate([*SPECIALS, *WORDS, "user", "model", *VISION, *AUDIO])}
    tok = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok,
        pad_token="<pad>",
        unk_token="<unk>",
        bos_token="<bos>",
        eos_token="<end_of_turn>",
        extra_special_tokens=NAMED,
    )
    fast.add_special_tokens({"additional_special_tokens": ["<start_of_turn>", "<eos>", *VISION[2:], *AUDIO[2:]]})
    fast.chat_template = TEMPLATE
    fast.save_pretrained(path)
    return vocab


def build_gemma3n(path: Path, seed: int = 0) -> Path:
    import torch
    from transformers import Gemma3nAudioFeatureExtractor, Gemma3nConfig

    from halluscope.backends.audio_lm._gemma3n import audio_text_classes

    vocab = _tokenizer(path)
    Gemma3nAudioFeatureExtractor().save_pretrained(path)
    n_text, n_vision = vocab[VISION[0]], len(VISION)
    cfg = Gemma3nConfig(
        text_config=dict(
            vocab_size=len(vocab),
            vocab_size_per_layer_input=n_text,
            hidden_size=32,
            intermediate_size=64,
            num_hidden_layers=4,
            num_attention_heads=4,
            num_key_value_heads=2,
            head_dim=8,
            hidden_size_per_layer_input=8,
            laurel_rank=4,
            sliding_window=64,
            layer_types=["sliding_attention", "full_attention"] * 2,
            num_kv_shared_layers=2,
            max_position_embeddings=4096,
            pad_token_id=vocab["<pad>"],
            bos_token_id=vocab["<bos>"],
            eos_token_id=vocab["<end_of_turn>"],
        ),
        audio_config=dict(
            hidden_size=16,
            conf_num_attention_heads=2,
            conf_num_hidden_layers=1,
            sscp_conv_channel_size=[8, 4],
            vocab_size=len(AUDIO),
            vocab_offset=vocab[AUDIO[0]],
        ),
        vision_config=dict(hidden_size=16, vocab_size=n_vision, vocab_offset=n_text),
        audio_token_id=vocab["<audio_soft_token>"],
        boa_token_id=vocab["<start_of_audio>"],
        eoa_token_id=vocab["<end_of_audio>"],
        image_token_id=vocab["<image_soft_token>"],
        boi_token_id=vocab["<start_of_image>"],
        eoi_token_id=vocab["<end_of_image>"],
    )
    torch.manual_seed(seed)
    audio_text_classes()[1](cfg).save_pretrained(path)
    config = path / "config.json"  # the released checkpoints' class name (the tower-less subclass loads it)
    data = json.loads(config.read_text(encoding="utf-8"))
    config.write_text(
        json.dumps({**data, "architectures": ["Gemma3nForConditionalGeneration"]}, indent=2), encoding="utf-8"
    )
    return path
