"""A tiny random-weight Voxtral (transformers 'voxtral'), built locally (no downloads), with either tokenizer.

``build_voxtral``: a plain transformers tokenizer with a chat template in Voxtral's instruct layout, which the
adapter's template path serves (converted checkpoints). ``build_voxtral_tekken``: a tiny tekken.json, the format the
released checkpoints ship, read by mistral-common (transformers loads it as MistralCommonBackend): 35 control tokens
([AUDIO] at 24, the id VoxtralProcessor hard-codes), then 256 byte tokens and a few merges, with the audio section
(16 kHz, 12.5 tokens/s, 30 s chunks: 375 audio tokens per chunk, as the tiny encoder gives) from which mistral-common
counts audio tokens and pads clips."""

from __future__ import annotations

import base64
import json
from pathlib import Path

from support.tiny_audio_lm import TEXT, _tokenizer

TEMPLATE = (
    "<s> {% for m in messages %}{% if m['role'] == 'user' %}[INST] {% for c in m['content'] %}"
    "{% if c['type'] == 'audio' %}[BEGIN_AUDIO] [AUDIO] {% else %}{{ c['text'] }} {% endif %}{% endfor %}"
    "[/INST] {% elif m['role'] == 'assistant' %}{{ m['content'][0]['text'] }} </s> {% endif %}{% endfor %}"
)

# rank = position: mistral-common's legacy order for 0-19, then the audio ones; None: a <SPECIAL_i> filler
TEKKEN_SPECIALS = [
    "<unk>",
    "<s>",
    "</s>",
    "[INST]",
    "[/INST]",
    "[AVAILABLE_TOOLS]",
    "[/AVAILABLE_TOOLS]",
    "[TOOL_RESULTS]",
    "[/TOOL_RESULTS]",
    "[TOOL_CALLS]",
    "[IMG]",
    "<pad>",
    "[IMG_BREAK]",
    "[IMG_END]",
    "[PREFIX]",
    "[MIDDLE]",
    "[SUFFIX]",
    "[SYSTEM_PROMPT]",
    "[/SYSTEM_PROMPT]",
    "[TOOL_CONTENT]",
    None,
    None,
    None,
    None,
    "[AUDIO]",
    "[BEGIN_AUDIO]",
    None,
    None,
    None,
    None,
    None,
    None,
    "[ARGS]",
    "[CALL_ID]",
    "[TRANSCRIBE]",
]
MERGES = [b"th", b"he", b"the", b" t"]
PATTERN = (
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+|[^\r\n\p{L}\p{N}]?"
    r"[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|"
    r"\s+(?!\S)|\s+"
)


def _save_model(path: Path, vocab_size: int, audio_token_id: int, seed: int) -> Path:
    import torch
    from transformers import VoxtralConfig, VoxtralForConditionalGeneration, WhisperFeatureExtractor

    WhisperFeatureExtractor(feature_size=128).save_pretrained(path)
    cfg = VoxtralConfig(
        audio_config={
            "hidden_size": 16,
            "intermediate_size": 64,
            "num_hidden_layers": 1,
            "num_attention_heads": 2,
            "num_mel_bins": 128,
            "max_source_positions": 1500,
        },
        text_config=dict(model_type="llama", vocab_size=vocab_size, head_dim=8, **TEXT),
        audio_token_id=audio_token_id,
    )
    torch.manual_seed(seed)
    VoxtralForConditionalGeneration(cfg).save_pretrained(path)
    return path


def build_voxtral(path: Path, seed: int = 1) -> Path:
    specials = ["<pad>", "<unk>", "<s>", "</s>", "[INST]", "[/INST]", "[AUDIO]", "[BEGIN_AUDIO]"]
    fast, vocab = _tokenizer(specials, additional_special_tokens=specials[4:])
    fast.eos_token, fast.bos_token = "</s>", "<s>"
    fast.chat_template = TEMPLATE
    fast.save_pretrained(path)
    return _save_model(path, len(vocab), vocab["[AUDIO]"], seed)


def tekken_json() -> dict:
    """The tekken.json of the tiny model: config, vocab (base64 bytes and ranks), special tokens and audio."""
    specials = [
        {"rank": i, "token_str": s or f"<SPECIAL_{i}>", "is_control": True} for i, s in enumerate(TEKKEN_SPECIALS)
    ]
    pieces = [bytes([i]) for i in range(256)] + MERGES
    vocab = [
        {"rank": i, "token_bytes": base64.b64encode(b).decode(), "token_str": b.decode("utf-8", "replace")}
        for i, b in enumerate(pieces)
    ]
    config = {
        "pattern": PATTERN,
        "num_vocab_tokens": len(vocab),
        "default_vocab_size": len(vocab) + len(specials),
        "default_num_special_tokens": len(specials),
        "version": "v7",
    }
    audio = {
        "sampling_rate": 16_000,
        "frame_rate": 12.5,
        "chunk_length_s": 30.0,
        "audio_encoding_config": {"num_mel_bins": 128, "hop_length": 160, "window_size": 400},
    }
    return {
        "config": config,
        "vocab": vocab,
        "special_tokens": specials,
        "version": 1,
        "type": "Tekken",
        "audio": audio,
    }


def build_voxtral_tekken(path: Path, seed: int = 1) -> Path:
    import pytest

    pytest.importorskip("mistral_common")  # the hf extra's (Python >= 3.11); without it tekken.json is not read
    data = tekken_json()
    Path(path).mkdir(parents=True, exist_ok=True)
    (Path(path) / "tekken.json").write_text(json.dumps(data), encoding="utf-8")
    return _save_model(path, data["config"]["default_vocab_size"], TEKKEN_SPECIALS.index("[AUDIO]"), seed)
