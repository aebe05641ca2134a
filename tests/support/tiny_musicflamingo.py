"""A tiny random-weight Music Flamingo (transformers 'musicflamingo'), built locally (no downloads)."""

from __future__ import annotations

from pathlib import Path

from support.tiny_af3 import TEMPLATE
from support.tiny_audio_lm import TEXT, _tokenizer


def build_musicflamingo(path: Path, seed: int = 0) -> Path:
    import torch
    from transformers import (
        MusicFlamingoConfig,
        MusicFlamingoForConditionalGeneration,
        MusicFlamingoProcessor,
        WhisperFeatureExtractor,
    )

    specials = ["<pad>", "<unk>", "<|im_start|>", "<|im_end|>", "<sound>", "<|sound_bos|>", "<|sound_eos|>"]
    fast, vocab = _tokenizer(specials, additional_special_tokens=specials[2:])
    MusicFlamingoProcessor(
        feature_extractor=WhisperFeatureExtractor(feature_size=128), tokenizer=fast, chat_template=TEMPLATE
    ).save_pretrained(path)
    cfg = MusicFlamingoConfig(
        audio_config=dict(
            model_type="audioflamingo3_encoder",
            hidden_size=16,
            num_hidden_layers=1,
            num_attention_heads=2,
            intermediate_size=32,
            num_mel_bins=128,
            max_source_positions=1500,
        ),
        text_config=dict(model_type="qwen2", vocab_size=len(vocab), **TEXT),
        audio_token_id=vocab["<sound>"],
        audio_bos_token_id=vocab["<|sound_bos|>"],
        audio_eos_token_id=vocab["<|sound_eos|>"],
    )
    torch.manual_seed(seed)
    MusicFlamingoForConditionalGeneration(cfg).save_pretrained(path)
    return path
