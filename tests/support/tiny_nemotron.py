"""A tiny random-weight Nemotron-3-Nano-Omni (transformers 'nemotron_h_omni'), built locally (no downloads).

The decoder keeps the released hybrid layout in miniature: a Mamba-2 layer (linear attention: conv and recurrent
state in the cache), a mixture-of-experts layer, a full-attention layer and an MLP layer; the Parakeet
(FastConformer) sound encoder and the RADIO vision tower are one layer each. The feature extractor is transformers'
ParakeetFeatureExtractor (torch only). The chat template is ChatML-like and renders string contents, so the audio
placeholder <so_embedding> leads the user's text; the adapter expands it to <so_start>, the audio embeddings'
tokens, <so_end>, as the processor does."""

from __future__ import annotations

from pathlib import Path

from support.tiny_audio_lm import _tokenizer

TEMPLATE = (
    "{% for m in messages %}<|im_start|> {{ m['role'] }} {{ m['content'] }} <|im_end|> {% endfor %}"
    "{% if add_generation_prompt %}<|im_start|> assistant {% endif %}"
)
SPECIALS = [
    "<pad>",
    "<unk>",
    "<|im_start|>",
    "<|im_end|>",
    "<so_start>",
    "<so_end>",
    "<so_embedding>",
    "<image>",
    "<img>",
    "</img>",
]
LAYERS = ["linear_attention", "moe", "full_attention", "mlp"]
# At the default init (std 0.02, steps dt of 0.001-0.1, out_proj scaled down) the Mamba layer moves the logits by
# under 1e-6, so no test could tell a stale recurrent state. Larger weights and steps dt of about softplus(3) make
# its state decide tokens: with seed 0, a state that MTI's rollback left holding the instruction changes the greedy
# output at the second token. time_step_min is kept tiny because transformers clamps dt at it in the chunked scan
# (prefill) but not in the one-token update (decode), which would split cached from uncached logits by ~1e-4.
MAMBA = dict(initializer_range=0.2, time_step_min=1e-6)
DT_BIAS = 3.0


def build_nemotron_omni(path: Path, seed: int = 0) -> Path:
    import torch
    from transformers import NemotronH_Omni_Reasoning_V3, NemotronH_Omni_Reasoning_V3_Config, ParakeetFeatureExtractor

    fast, vocab = _tokenizer(SPECIALS, extra_special_tokens={"audio_token": "<so_embedding>", "image_token": "<image>"})
    fast.add_special_tokens({"additional_special_tokens": SPECIALS[2:]})
    fast.eos_token = "<|im_end|>"
    fast.chat_template = TEMPLATE
    fast.save_pretrained(path)
    ParakeetFeatureExtractor().save_pretrained(path)
    text = dict(
        vocab_size=len(vocab),
        hidden_size=32,
        layers_block_type=LAYERS,
        num_attention_heads=4,
        num_key_value_heads=2,
        head_dim=8,
        intermediate_size=64,
        mamba_num_heads=4,
        mamba_head_dim=8,
        n_groups=1,
        ssm_state_size=8,
        chunk_size=64,
        n_routed_experts=4,
        num_experts_per_tok=2,
        moe_intermediate_size=16,
        moe_shared_expert_intermediate_size=16,
        max_position_embeddings=8192,
        pad_token_id=vocab["<pad>"],
        bos_token_id=vocab["<|im_start|>"],
        eos_token_id=vocab["<|im_end|>"],
        **MAMBA,
    )
    audio = dict(
        hidden_size=16,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=32,
        subsampling_conv_channels=8,
        num_mel_bins=80,
        projection_hidden_size=32,
        projection_bias=False,
    )
    vision = dict(
        hidden_size=16,
        num_hidden_layers=1,
        num_attention_heads=2,
        patch_size=16,
        image_size=32,
        max_img_size=64,
        video_temporal_patch_size=2,
    )
    cfg = NemotronH_Omni_Reasoning_V3_Config(
        text_config=text,
        audio_config=audio,
        vision_config=vision,
        vision_hidden_size=16,
        projector_hidden_size=32,
        force_image_size=32,
        audio_token_id=vocab["<so_embedding>"],
        image_token_id=vocab["<image>"],
        video_token_id=vocab["<image>"],
    )
    torch.manual_seed(seed)
    model = NemotronH_Omni_Reasoning_V3(cfg)
    with torch.no_grad():
        for module in model.modules():
            if hasattr(module, "dt_bias"):
                module.dt_bias.fill_(DT_BIAS)
    model.save_pretrained(path)
    return path
