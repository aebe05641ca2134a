"""A tiny random-weight Audio Flamingo 3 (transformers 'audioflamingo3'), built locally (no downloads)."""

from __future__ import annotations

from pathlib import Path

from support.tiny_audio_lm import TEXT, _tokenizer

TEMPLATE = (
    "{% for m in messages %}<|im_start|> {{ m['role'] }} {% if m['content'] is string %}{{ m['content'] }}"
    "{% else %}{% for c in m['content'] %}{% if c['type'] == 'audio' %}<sound> "
    "{% else %}{{ c['text'] }} {% endif %}{% endfor %}{% endif %} <|im_end|> {% endfor %}"
    "{% if add_generation_prompt %}<|im_start|> assistant {% endif %}"
)


def build_af3(path: Path, seed: int = 3) -> Path:
    """Seed 3: greedy decoding says several words and never the <sound> token (test_adapters_families needs both)."""
    import torch
    from transformers import (
        AudioFlamingo3Config,
        AudioFlamingo3ForConditionalGeneration,
        AudioFlamingo3Processor,
        WhisperFeatureExtractor,
    )

    specials = ["<pad>", "<unk>", "<|im_start|>", "<|im_end|>", "<sound>"]
    fast, vocab = _tokenizer(specials, additional_special_tokens=specials[2:])
    AudioFlamingo3Processor(
        feature_extractor=WhisperFeatureExtractor(feature_size=128), tokenizer=fast, chat_template=TEMPLATE
    ).save_pretrained(path)
    cfg = AudioFlamingo3Config(
        audio_config=dict(
            hidden_size=16,
            num_hidden_layers=1,
            num_attention_heads=2,
            intermediate_size=32,
            num_mel_bins=128,
            max_source_positions=1500,
        ),
        text_config=dict(model_type="qwen2", vocab_size=len(vocab), **TEXT),
        audio_token_id=vocab["<sound>"],
    )
    torch.manual_seed(seed)
    AudioFlamingo3ForConditionalGeneration(cfg).save_pretrained(path)
    return path
