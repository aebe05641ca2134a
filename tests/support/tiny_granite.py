"""A tiny random-weight Granite Speech (transformers 'granite_speech', or 'granite_speech_plus'), built locally.

GraniteSpeechFeatureExtractor cannot be instantiated here (it builds a torchaudio MelSpectrogram), so its
preprocessor_config.json is written as the released checkpoints have it. The chat template is in Granite's layout
and, like the released one, concatenates each message's content as a string (list-of-parts content fails)."""

from __future__ import annotations

import json
from pathlib import Path

from support.tiny_audio_lm import TEXT, _tokenizer

TEMPLATE = (
    "{% for m in messages %}{{ '<|start_of_role|>' + m['role'] + '<|end_of_role|>' + m['content'] + "
    "'<|end_of_text|>\n' }}{% endfor %}{% if add_generation_prompt %}<|start_of_role|>assistant"
    "<|end_of_role|>{% endif %}"
)
# the released checkpoints' front end (ibm-granite/granite-speech-3.3-*: preprocessor_config.json)
FEATURES = {
    "feature_extractor_type": "GraniteSpeechFeatureExtractor",
    "processor_class": "GraniteSpeechProcessor",
    "sampling_rate": 16000,
    "n_fft": 512,
    "win_length": 400,
    "hop_length": 160,
    "n_mels": 80,
    "projector_window_size": 15,
    "projector_downsample_rate": 5,
}


def build_granite_speech(path: Path, seed: int = 0, *, plus: bool = False) -> Path:
    import torch
    import transformers

    specials = ["<pad>", "<unk>", "<|start_of_role|>", "<|end_of_role|>", "<|end_of_text|>", "<|audio|>"]
    fast, vocab = _tokenizer(specials, extra_special_tokens={"audio_token": "<|audio|>"})
    fast.eos_token, fast.bos_token = "<|end_of_text|>", "<|end_of_text|>"
    fast.chat_template = TEMPLATE
    fast.save_pretrained(path)
    (Path(path) / "preprocessor_config.json").write_text(json.dumps(FEATURES, indent=2), encoding="utf-8")
    hidden, cat = 16, [1] if plus else None
    encoder = dict(
        input_dim=2 * FEATURES["n_mels"],
        num_layers=2,
        hidden_dim=hidden,
        feedforward_mult=2,
        num_heads=2,
        dim_head=8,
        output_dim=8,
        context_size=200,
        max_pos_emb=512,
        conv_kernel_size=3,
    )
    if plus:
        encoder["cat_hidden_layers"] = cat
    projector = dict(
        model_type="blip_2_qformer",
        hidden_size=16,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=32,
        encoder_hidden_size=hidden * (len(cat) + 1 if cat else 1),
        cross_attention_frequency=1,
    )
    end = vocab["<|end_of_text|>"]
    ids = dict(bos_token_id=end, eos_token_id=end, pad_token_id=vocab["<pad>"])
    name = "GraniteSpeechPlus" if plus else "GraniteSpeech"
    cfg = getattr(transformers, f"{name}Config")(
        text_config=dict(model_type="granite", vocab_size=len(vocab), **TEXT, **ids),
        encoder_config=encoder,
        projector_config=projector,
        audio_token_index=vocab["<|audio|>"],
        has_lora_adapter=False,
        tie_word_embeddings=False,  # tied random weights repeat the prompt's most frequent token
        window_size=FEATURES["projector_window_size"],
        downsample_rate=FEATURES["projector_downsample_rate"],
    )
    torch.manual_seed(seed)
    getattr(transformers, f"{name}ForConditionalGeneration")(cfg).save_pretrained(path)
    return path
