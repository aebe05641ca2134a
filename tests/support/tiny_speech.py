"""Tiny random-weight transformers speech models built locally: wav2vec2-CTC, Whisper, VITS and a punctuation
token classifier. Their outputs are noise; what they test is the wiring, not quality."""

from __future__ import annotations

import json
from pathlib import Path

CYRILLIC = "абвгдежзийклмнопрстуфхцчшщъыьэюяәғқңөұүһі"


def build_wav2vec2_ctc(path: Path) -> Path:
    import torch
    from transformers import (
        Wav2Vec2Config,
        Wav2Vec2CTCTokenizer,
        Wav2Vec2FeatureExtractor,
        Wav2Vec2ForCTC,
        Wav2Vec2Processor,
    )

    path.mkdir(parents=True, exist_ok=True)
    vocab = {"<pad>": 0, "<unk>": 1, "|": 2, **{c: i + 3 for i, c in enumerate(CYRILLIC)}}
    (path / "vocab.json").write_text(json.dumps(vocab, ensure_ascii=False), encoding="utf-8")
    tok = Wav2Vec2CTCTokenizer(str(path / "vocab.json"), unk_token="<unk>", pad_token="<pad>", word_delimiter_token="|")
    fe = Wav2Vec2FeatureExtractor(
        feature_size=1, sampling_rate=16000, padding_value=0.0, do_normalize=True, return_attention_mask=False
    )
    Wav2Vec2Processor(feature_extractor=fe, tokenizer=tok).save_pretrained(path)
    torch.manual_seed(0)
    cfg = Wav2Vec2Config(
        vocab_size=len(vocab),
        hidden_size=16,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=32,
        conv_dim=(16, 16),
        conv_stride=(5, 4),
        conv_kernel=(10, 4),
        num_conv_pos_embeddings=16,
        num_conv_pos_embedding_groups=2,
        pad_token_id=0,
    )
    Wav2Vec2ForCTC(cfg).save_pretrained(path)
    return path


def build_whisper(path: Path) -> Path:
    """Whisper with the real multilingual tokenizer (shipped with halluscope[asr]) and a 1-layer, 16-wide model."""
    import torch
    from transformers import (
        GenerationConfig,
        WhisperConfig,
        WhisperFeatureExtractor,
        WhisperForConditionalGeneration,
        WhisperProcessor,
        WhisperTokenizerFast,
    )

    from halluscope.backends.speech.asr import whisper_base_dir

    path.mkdir(parents=True, exist_ok=True)
    eot = "<|endoftext|>"
    tok = WhisperTokenizerFast(
        tokenizer_file=str(whisper_base_dir() / "tokenizer.json"),
        bos_token=eot,
        eos_token=eot,
        unk_token=eot,
        pad_token=eot,
    )
    WhisperProcessor(feature_extractor=WhisperFeatureExtractor(feature_size=80), tokenizer=tok).save_pretrained(path)
    ids = tok.convert_tokens_to_ids
    torch.manual_seed(0)
    cfg = WhisperConfig(
        vocab_size=51865,
        d_model=16,
        encoder_layers=1,
        decoder_layers=1,
        encoder_attention_heads=2,
        decoder_attention_heads=2,
        encoder_ffn_dim=32,
        decoder_ffn_dim=32,
        num_mel_bins=80,
        max_source_positions=1500,
        max_target_positions=64,
        decoder_start_token_id=ids("<|startoftranscript|>"),
        pad_token_id=ids(eot),
        bos_token_id=ids(eot),
        eos_token_id=ids(eot),
    )
    model = WhisperForConditionalGeneration(cfg)
    model.generation_config = GenerationConfig(
        decoder_start_token_id=ids("<|startoftranscript|>"),
        eos_token_id=ids(eot),
        pad_token_id=ids(eot),
        bos_token_id=ids(eot),
        lang_to_id={f"<|{x}|>": ids(f"<|{x}|>") for x in ("en", "ru", "kk")},
        task_to_id={"transcribe": ids("<|transcribe|>"), "translate": ids("<|translate|>")},
        no_timestamps_token_id=ids("<|notimestamps|>"),
        is_multilingual=True,
        max_length=12,
    )
    model.save_pretrained(path)
    return path


def build_vits(path: Path) -> Path:
    import torch
    from transformers import VitsConfig, VitsModel, VitsTokenizer

    path.mkdir(parents=True, exist_ok=True)
    chars = " " + CYRILLIC + "abcdefghijklmnopqrstuvwxyz.,'-"
    vocab = {c: i for i, c in enumerate(["<pad>", *chars])}
    (path / "vocab.json").write_text(json.dumps(vocab, ensure_ascii=False), encoding="utf-8")
    VitsTokenizer(
        str(path / "vocab.json"),
        language="kaz",
        add_blank=True,
        normalize=True,
        phonemize=False,
        is_uroman=False,
        pad_token="<pad>",
        unk_token="<pad>",
    ).save_pretrained(path)
    torch.manual_seed(0)
    cfg = VitsConfig(
        vocab_size=len(vocab),
        hidden_size=16,
        num_hidden_layers=1,
        num_attention_heads=2,
        ffn_dim=32,
        flow_size=16,
        spectrogram_bins=33,
        upsample_initial_channel=16,
        upsample_rates=[8, 8],
        upsample_kernel_sizes=[16, 16],
        resblock_kernel_sizes=[3],
        resblock_dilation_sizes=[[1, 3]],
        prior_encoder_num_flows=1,
        prior_encoder_num_wavenet_layers=1,
        posterior_encoder_num_wavenet_layers=1,
        duration_predictor_filter_channels=16,
        depth_separable_num_layers=1,
        sampling_rate=22050,
    )
    VitsModel(cfg).save_pretrained(path)
    return path


def build_punctuation(path: Path, words: list[str], labels: tuple[str, ...] = ("O", "PERIOD", "COMMA")) -> Path:
    import torch
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers
    from transformers import BertConfig, BertForTokenClassification, PreTrainedTokenizerFast

    path.mkdir(parents=True, exist_ok=True)
    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    vocab = {w: i for i, w in enumerate([*specials, *sorted({w.lower() for w in words})])}
    tok = Tokenizer(models.WordLevel(vocab=vocab, unk_token="[UNK]"))
    tok.normalizer = normalizers.Lowercase()
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    PreTrainedTokenizerFast(
        tokenizer_object=tok,
        pad_token="[PAD]",
        unk_token="[UNK]",
        cls_token="[CLS]",
        sep_token="[SEP]",
        mask_token="[MASK]",
        model_max_length=256,
    ).save_pretrained(path)
    torch.manual_seed(0)
    cfg = BertConfig(
        vocab_size=len(vocab),
        hidden_size=16,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=32,
        max_position_embeddings=260,
        num_labels=len(labels),
        id2label=dict(enumerate(labels)),
        label2id={x: i for i, x in enumerate(labels)},
    )
    BertForTokenClassification(cfg).save_pretrained(path)
    return path
