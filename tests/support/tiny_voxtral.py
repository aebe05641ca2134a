"""A tiny random-weight Voxtral (transformers 'voxtral'), built locally (no downloads).

The real checkpoints ship a tekken tokenizer read by mistral-common; this one is a plain transformers tokenizer with
a chat template in Voxtral's instruct layout, which the adapter's template path serves."""

from __future__ import annotations

from pathlib import Path

from support.tiny_audio_lm import TEXT, _tokenizer

TEMPLATE = ("<s> {% for m in messages %}{% if m['role'] == 'user' %}[INST] {% for c in m['content'] %}"
            "{% if c['type'] == 'audio' %}[BEGIN_AUDIO] [AUDIO] {% else %}{{ c['text'] }} {% endif %}{% endfor %}"
            "[/INST] {% elif m['role'] == 'assistant' %}{{ m['content'][0]['text'] }} </s> {% endif %}{% endfor %}")


def build_voxtral(path: Path, seed: int = 1) -> Path:
    import torch
    from transformers import VoxtralConfig, VoxtralForConditionalGeneration, WhisperFeatureExtractor

    specials = ["<pad>", "<unk>", "<s>", "</s>", "[INST]", "[/INST]", "[AUDIO]", "[BEGIN_AUDIO]"]
    fast, vocab = _tokenizer(specials, additional_special_tokens=specials[4:])
    fast.eos_token, fast.bos_token = "</s>", "<s>"
    fast.chat_template = TEMPLATE
    fast.save_pretrained(path)
    WhisperFeatureExtractor(feature_size=128).save_pretrained(path)
    cfg = VoxtralConfig(
        audio_config=dict(hidden_size=16, intermediate_size=64, num_hidden_layers=1, num_attention_heads=2,
                          num_mel_bins=128, max_source_positions=1500),
        text_config=dict(model_type="llama", vocab_size=len(vocab), head_dim=8, **TEXT),
        audio_token_id=vocab["[AUDIO]"])
    torch.manual_seed(seed)
    VoxtralForConditionalGeneration(cfg).save_pretrained(path)
    return path
