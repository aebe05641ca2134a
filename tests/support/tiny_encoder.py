"""Tiny random-weight encoders with word-level tokenizers built locally, and a text-carrying TTS/ASR pair.

The TTS writes the text's UTF-8 bytes into the samples and the ASR reads them back lower-cased, so a
build runs in milliseconds and transcripts differ from the text (case) the way real ones differ more.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from halluscope.backends.speech import ASR_BACKENDS, TTS_BACKENDS

SPECIALS = ["<pad>", "<unk>", "<s>", "</s>", "<mask>"]


def build_tiny_encoder(path: Path, texts: list[str], *, kind: str = "xlmr") -> Path:
    """A 2-layer encoder (XLM-R or DeBERTa-v2 architecture) whose vocabulary covers ``texts``."""
    import torch
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers
    from transformers import (
        DebertaV2Config,
        DebertaV2Model,
        PreTrainedTokenizerFast,
        XLMRobertaConfig,
        XLMRobertaModel,
    )

    words = sorted({w for t in texts for w in re.findall(r"\w+|[^\w\s]", t.lower())})
    vocab = {w: i for i, w in enumerate([*SPECIALS, *words])}
    tok = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
    tok.normalizer = normalizers.Lowercase()
    tok.pre_tokenizer = pre_tokenizers.Sequence([pre_tokenizers.Whitespace()])
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok,
        pad_token="<pad>",
        unk_token="<unk>",
        bos_token="<s>",
        eos_token="</s>",
        cls_token="<s>",
        sep_token="</s>",
        mask_token="<mask>",
        model_max_length=128,
    )
    fast.save_pretrained(path)
    torch.manual_seed(0)
    common = {
        "vocab_size": len(vocab),
        "hidden_size": 32,
        "num_hidden_layers": 2,
        "num_attention_heads": 2,
        "intermediate_size": 64,
        "max_position_embeddings": 160,
        "pad_token_id": 0,
        "bos_token_id": 2,
        "eos_token_id": 3,
    }
    if kind == "xlmr":
        XLMRobertaModel(XLMRobertaConfig(**common)).save_pretrained(path)
    else:
        DebertaV2Model(
            DebertaV2Config(
                **common,
                relative_attention=True,
                position_buckets=16,
                max_relative_positions=32,
                pos_att_type=["p2c", "c2p"],
            )
        ).save_pretrained(path)
    return path


class TextTts:
    spec = "test-bytes"

    def voices(self, language: str) -> list[str]:
        return ["v1", "v2"]

    def synthesize(self, text: str, *, language: str, voice: str) -> np.ndarray:
        wav = np.frombuffer(text.encode("utf-8"), dtype=np.uint8).astype(np.float32) / 512.0
        # at least 1 s (silence after the text): audio LMs get a clip of a real length, not a few ms
        return np.pad(wav, (0, max(0, 16000 - wav.size)))


class TextAsr:
    spec = "test-bytes"

    def transcribe(self, samples: np.ndarray, *, language: str) -> str:
        raw = bytes(np.round(samples * 512).astype(np.uint8).tolist()).rstrip(b"\0")  # the padding
        return raw.decode("utf-8", "replace").lower()


def register_text_speech() -> None:
    """Idempotent registration of TTS 'test-bytes' and ASR 'test-bytes'."""
    if "test-bytes" not in TTS_BACKENDS.providers:
        TTS_BACKENDS.register("test-bytes")(lambda model, **o: TextTts())
    if "test-bytes" not in ASR_BACKENDS.providers:
        ASR_BACKENDS.register("test-bytes")(lambda model, **o: TextAsr())
