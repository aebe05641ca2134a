"""A tiny random-weight Qwen3-Omni thinker (transformers 'qwen3_omni_moe_thinker'), built locally (no downloads)."""

from __future__ import annotations

from pathlib import Path

from support.tiny_audio_lm import AUDIO, TEXT, _omni_tokenizer


def build_qwen3_omni_thinker(path: Path, seed: int = 0) -> Path:
    import torch
    from transformers import (
        Qwen3OmniMoeThinkerConfig,
        Qwen3OmniMoeThinkerForConditionalGeneration,
        WhisperFeatureExtractor,
    )

    vocab = _omni_tokenizer(path)
    WhisperFeatureExtractor(feature_size=128).save_pretrained(path)
    cfg = Qwen3OmniMoeThinkerConfig(
        audio_config={
            **AUDIO,
            "num_mel_bins": 128,
            "output_dim": 32,
            "n_window": 50,
            "n_window_infer": 400,
            "downsample_hidden_size": 8,
        },
        vision_config=dict(
            depth=1, hidden_size=16, intermediate_size=32, num_heads=2, out_hidden_size=32, deepstack_visual_indexes=[0]
        ),
        text_config=dict(
            vocab_size=len(vocab),
            **TEXT,
            num_experts=4,
            num_experts_per_tok=2,
            moe_intermediate_size=16,
            rope_parameters={
                "rope_type": "default",
                "rope_theta": 10000.0,
                "mrope_section": [2, 1, 1],
                "mrope_interleaved": True,
            },
        ),
        audio_token_id=vocab["<|AUDIO|>"],
        image_token_id=vocab["<|IMAGE|>"],
        video_token_id=vocab["<|VIDEO|>"],
        audio_start_token_id=vocab["<|audio_bos|>"],
        user_token_id=vocab["<|im_start|>"],
        vision_start_token_id=vocab["<|vision_bos|>"],
        vision_end_token_id=vocab["<|vision_eos|>"],
        audio_end_token_id=vocab["<|audio_eos|>"],
        pad_token_id=0,
    )
    torch.manual_seed(seed)
    Qwen3OmniMoeThinkerForConditionalGeneration(cfg).save_pretrained(path)
    return path
