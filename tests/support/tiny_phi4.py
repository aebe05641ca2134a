"""A tiny random-weight Phi-4 multimodal (transformers 'phi4_multimodal'), built locally (no downloads)."""

from __future__ import annotations

from pathlib import Path

from support.tiny_audio_lm import TEXT, _tokenizer

TEMPLATE = (
    "{% for m in messages %}<|{{ m['role'] }}|> {% if m['content'] is string %}{{ m['content'] }}"
    "{% else %}{% for c in m['content'] %}{% if c['type'] == 'audio' %}<|audio|> "
    "{% else %}{{ c['text'] }} {% endif %}{% endfor %}{% endif %} <|end|> {% endfor %}"
    "{% if add_generation_prompt %}<|assistant|> {% endif %}"
)


def build_phi4(path: Path, seed: int = 2) -> Path:
    import torch
    from transformers import Phi4MultimodalConfig, Phi4MultimodalFeatureExtractor, Phi4MultimodalForCausalLM

    specials = [
        "<pad>",
        "<unk>",
        "<|user|>",
        "<|assistant|>",
        "<|system|>",
        "<|end|>",
        "<|endoftext|>",
        "<|audio|>",
        "<|image|>",
    ]
    fast, vocab = _tokenizer(specials, extra_special_tokens={"audio_token": "<|audio|>", "image_token": "<|image|>"})
    fast.eos_token = "<|end|>"
    fast.chat_template = TEMPLATE
    fast.save_pretrained(path)
    Phi4MultimodalFeatureExtractor().save_pretrained(path)
    text = {k: v for k, v in TEXT.items() if k != "max_position_embeddings"}
    cfg = Phi4MultimodalConfig(
        vocab_size=len(vocab),
        **text,
        max_position_embeddings=8192,
        original_max_position_embeddings=8192,
        bos_token_id=vocab["<|endoftext|>"],
        pad_token_id=vocab["<pad>"],
        eos_token_id=vocab["<|end|>"],
        vision_config=dict(
            hidden_size=16,
            intermediate_size=32,
            num_hidden_layers=1,
            num_attention_heads=2,
            image_size=28,
            crop_size=28,
            patch_size=14,
            image_token_id=vocab["<|image|>"],
        ),
        audio_config=dict(
            hidden_size=16,
            intermediate_size=32,
            num_blocks=1,
            num_attention_heads=2,
            ext_pw_out_channel=16,
            depthwise_separable_out_channel=16,
            nemo_conv_channels=16,
            input_size=80,
            audio_token_id=vocab["<|audio|>"],
        ),
    )
    torch.manual_seed(seed)
    Phi4MultimodalForCausalLM(cfg).save_pretrained(path)
    return path
